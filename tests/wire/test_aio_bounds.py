"""jmspy.aio's waits stay bounded at their edges: sends awaited when the connection is closed
during a failover reconnect, and a coroutine listener whose event loop goes away."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import warnings
from typing import Any

from proton import Message as AmqpMessage

from jmspy.errors import JMSException

from .client_support import FAST_OPTIONS, wait_until
from .conftest import PeerFactory
from .peer import LinkScript, ScriptedPeer


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


def test_a_coroutine_listener_whose_event_loop_goes_away_lets_go_of_the_session(
    peer: ScriptedPeer,
) -> None:
    """The event loop is stopped and closed while a coroutine listener is in progress, so the
    listener never completes. The session's dispatch thread gives up on it as on a listener
    that raised (the message is settled for redelivery) and lets go of the session: closing
    the connection returns, where the dispatch thread used to wait for ever."""
    from jmspy import aio

    peer.enqueue("q", AmqpMessage(body="x"))
    loop = asyncio.new_event_loop()
    runner = threading.Thread(target=loop.run_forever, name="test-event-loop", daemon=True)
    runner.start()
    entered = threading.Event()

    async def never_done(message: Any) -> None:
        entered.set()
        await asyncio.Event().wait()

    async def setup() -> Any:
        connection = await aio.connect(peer.url, **FAST_OPTIONS)
        session = await connection.create_session()
        consumer = await session.create_consumer(session.create_queue("q"))
        consumer.set_message_listener(never_done)
        return connection

    connection = asyncio.run_coroutine_threadsafe(setup(), loop).result(30)
    assert entered.wait(30), "the listener was not called"
    loop.call_soon_threadsafe(loop.stop)
    runner.join(30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        loop.close()
    (disposition,) = peer.wait_for_dispositions(1, timeout=30)
    assert disposition.kind in ("modified", "released"), disposition
    closer = threading.Thread(target=connection.sync.close, daemon=True)
    closer.start()
    closer.join(30)
    assert not closer.is_alive(), "closing the connection hung on the dispatch thread"
