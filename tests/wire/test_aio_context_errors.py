"""The asyncio JMSContext's own methods raise what the blocking JMSContext raises: the runtime
exceptions of JMS 2.0's simplified API."""

from __future__ import annotations

import asyncio

import jmspy
from jmspy.errors import IllegalStateRuntimeException

from .client_support import FAST_OPTIONS
from .peer import ScriptedPeer


def _blocking_error(peer: ScriptedPeer, action: str) -> BaseException:
    context = jmspy.ConnectionFactory(peer.url, **FAST_OPTIONS).createContext()
    try:
        getattr(context, action)()
    except BaseException as exc:  # noqa: BLE001 - compared with the asyncio one
        return exc
    finally:
        context.close()
    raise AssertionError(f"the blocking {action} raised nothing")


def test_context_methods_raise_runtime_exceptions(peer: ScriptedPeer) -> None:
    """``commit()`` and ``rollback()`` of a context that is not transacted: the blocking
    JMSContext raises IllegalStateRuntimeException (rule JMS-18); the asyncio one raised the
    checked IllegalStateException, which an ``except JMSRuntimeException`` does not catch."""

    async def main() -> list[BaseException | None]:
        from jmspy import aio

        context = await aio.ConnectionFactory(peer.url, **FAST_OPTIONS).create_context()
        outcomes: list[BaseException | None] = []
        async with context:
            for call in (context.commit, context.rollback):
                try:
                    await call()
                    outcomes.append(None)
                except BaseException as exc:  # noqa: BLE001 - checked below
                    outcomes.append(exc)
        return outcomes

    blocking = _blocking_error(peer, "commit")
    assert isinstance(blocking, IllegalStateRuntimeException), repr(blocking)
    outcomes = asyncio.run(main())
    assert [type(o) for o in outcomes] == [IllegalStateRuntimeException] * 2, outcomes
