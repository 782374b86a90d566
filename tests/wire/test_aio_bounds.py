"""jmspy.aio's waits stay bounded at their edges: sends awaited when the connection is closed
during a failover reconnect."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from jmspy.errors import JMSException

from .client_support import FAST_OPTIONS, wait_until
from .conftest import PeerFactory
from .peer import LinkScript


def test_sends_awaited_when_closed_while_reconnecting_fail_at_the_close(
    make_peer: PeerFactory,
) -> None:
    """The peer never settles the send, then drops the connection and refuses to serve again;
    the connection is closed while failover reconnects. With jms.sendTimeout at 60 s the
    awaited send fails at the close instead of never completing (the close cancelled the
    timer that bounded it)."""
    peer = make_peer(
        links=lambda attach: LinkScript(outcome=None) if attach.conn == 0 else LinkScript()
    )
    url = f"failover:({peer.url})?failover.reconnectDelay=20&failover.maxReconnectDelay=100"

    async def main() -> BaseException | None:
        from jmspy import aio

        options: dict[str, Any] = {**FAST_OPTIONS, "send_timeout": 60000}
        connection = await aio.connect(url, **options)
        session = await connection.create_session()
        producer = await session.create_producer(session.create_queue("q"))
        sent = producer.send(session.create_text_message("x"))
        await asyncio.get_running_loop().run_in_executor(None, peer.wait_for_transfers, 1)
        amqp = connection.sync._amqp  # type: ignore[attr-defined]
        serving = peer.options
        peer.options = dataclasses.replace(serving, hang_on_connect=True)
        peer.drop(reset=True)
        await asyncio.get_running_loop().run_in_executor(
            None, lambda: wait_until(lambda: amqp.interrupted, timeout=20, what="interruption")
        )
        await connection.close()
        try:
            await asyncio.wait_for(sent, 20)
        except JMSException as exc:
            return exc
        except TimeoutError as exc:
            return exc
        return None

    outcome = asyncio.run(main())
    assert isinstance(outcome, JMSException), f"the awaited send ended with {outcome!r}"
    assert "closed" in str(outcome), str(outcome)
