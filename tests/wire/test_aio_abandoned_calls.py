"""jmspy.aio calls that outlive their caller: a create whose await is cancelled while the
attach is in flight closes what it created, a task a coroutine listener started awaits a call
just after the listener returned, and concurrent first ``JMSContext.create_producer()`` calls
share one anonymous link."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from proton import Message as AmqpMessage

from .client_support import FAST_OPTIONS, wait_until
from .conftest import PeerFactory
from .peer import AttachRecord, LinkScript, ScriptedPeer

# Generous: only a broken client gets near it, so a busy machine does not fail the test.
BOUND_S = 30.0


def test_a_consumer_whose_create_was_cancelled_is_closed_once_attached(
    make_peer: PeerFactory,
) -> None:
    """The peer holds its answer to the consumer's attach until the awaiting task is
    cancelled. The attach then completes on the control thread; the consumer nobody holds is
    closed at once (its link detached, its prefetched messages given back), where it used to
    stay open with credit until the connection closed."""
    asked = threading.Event()
    answer = threading.Event()

    def links(attach: AttachRecord) -> LinkScript | None:
        if attach.role == "receiver":
            # The peer thread: the client's attach waits for this answer.
            asked.set()
            answer.wait(BOUND_S)
        return None

    peer = make_peer(links=links)
    for i in range(3):
        peer.enqueue("q", AmqpMessage(body=f"m{i}"))

    async def main() -> None:
        from jmspy import aio

        options: dict[str, Any] = {**FAST_OPTIONS, "request_timeout": int(BOUND_S * 1000)}
        loop = asyncio.get_running_loop()
        async with aio.connect(peer.url, **options) as connection:
            session = await connection.create_session()
            creating = asyncio.create_task(session.create_consumer(session.create_queue("q")))
            assert await loop.run_in_executor(None, asked.wait, BOUND_S), "no attach"
            creating.cancel()
            with pytest.raises(asyncio.CancelledError):
                await creating
            answer.set()
            attach = await loop.run_in_executor(
                None, lambda: peer.wait_for_attach("q", role="receiver", timeout=BOUND_S)
            )
            detach = await loop.run_in_executor(
                None, lambda: peer.wait_for_detach(attach.name, timeout=BOUND_S)
            )
            assert detach.closed
            await loop.run_in_executor(
                None,
                lambda: wait_until(
                    lambda: not session.sync._consumers,  # type: ignore[attr-defined]
                    timeout=BOUND_S,
                    what="the session to let go of the abandoned consumer",
                ),
            )

    asyncio.run(main())


def test_tasks_a_coroutine_listener_starts_can_await_calls_after_it_returned(
    peer: ScriptedPeer,
) -> None:
    """Each listener call starts a task that awaits ``create_session()`` right after the
    listener returned. Those calls used to be queued for the session's dispatch thread after
    it had been told the listener was done, so nobody ran them and the await never ended (about
    half of them); now they go to the control threads."""
    count = 20
    for i in range(count):
        peer.enqueue("q", AmqpMessage(body=f"m{i}"))

    async def main() -> list[str]:
        from jmspy import aio

        async with aio.connect(peer.url, **FAST_OPTIONS) as connection:
            session = await connection.create_session()
            consumer = await session.create_consumer(session.create_queue("q"))
            tasks: list[asyncio.Task[str]] = []
            all_started = asyncio.Event()

            async def later() -> str:
                await asyncio.sleep(0)  # lets the listener's own task finish first
                try:
                    await asyncio.wait_for(connection.create_session(), BOUND_S)
                except TimeoutError:
                    return "hung"
                return "ok"

            async def listener(message: Any) -> None:
                tasks.append(asyncio.create_task(later()))
                if len(tasks) == count:
                    all_started.set()

            consumer.set_message_listener(listener)
            await asyncio.wait_for(all_started.wait(), BOUND_S)
            return list(await asyncio.gather(*tasks))

    outcomes = asyncio.run(main())
    assert outcomes == ["ok"] * count, f"{outcomes.count('hung')} of {count} calls hung"


def test_concurrent_first_create_producer_calls_attach_one_anonymous_link(
    peer: ScriptedPeer,
) -> None:
    """Five ``create_producer()`` awaited together on a new context: one anonymous sender link
    is attached and shared, where each used to attach its own (four left open, unused, until
    the context closed)."""

    async def main() -> int:
        from jmspy import aio

        factory = aio.ConnectionFactory(peer.url, **FAST_OPTIONS)
        async with await factory.create_context() as context:
            producers = await asyncio.gather(*[context.create_producer() for _ in range(5)])
            assert len(producers) == 5
            return len(context.session.sync._producers)  # type: ignore[attr-defined]

    held = asyncio.run(main())
    senders = [r for r in peer.attaches if r.role == "sender"]
    assert len(senders) == 1, senders
    assert held == 1
