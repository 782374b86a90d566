"""A connection reset after the open is reported as a lost connection, not as a failure to
connect; a refused connect still says it could not connect."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

import jmspy
from jmspy.errors import JMSException

from .client_support import Clients, clients_fixture
from .peer import ScriptedPeer


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _reset_connections(peer: ScriptedPeer) -> None:
    """Close the peer's sockets with an RST (SO_LINGER 0), as a crashed broker or a middlebox
    does, instead of a FIN."""

    def run() -> None:
        for conn in peer._live(None):
            conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    peer._call(run)
    peer.drop()


def _hear_failures(connection: jmspy.Connection) -> tuple[list[JMSException], threading.Event]:
    """The exceptions ``connection``'s exception listener is given, and an event set at the
    first."""
    heard: list[JMSException] = []
    failed = threading.Event()

    def on_exception(exc: JMSException) -> None:
        heard.append(exc)
        failed.set()

    connection.setExceptionListener(on_exception)
    return heard, failed


def test_reset_mid_stream_is_reported_as_connection_lost(
    peer: ScriptedPeer, clients: Clients
) -> None:
    connection = clients.connect(peer)
    heard, failed = _hear_failures(connection)
    connection.start()
    session = connection.createSession()
    session.createConsumer(session.createQueue("q"))

    _reset_connections(peer)

    assert failed.wait(10), "the exception listener was not called"
    text = str(heard[0])
    assert "was lost" in text
    assert "could not connect" not in text
    with pytest.raises(JMSException) as caught:
        connection.createSession()
    assert "could not connect" not in str(caught.value)


def test_refused_connect_still_says_could_not_connect() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound but not listening: the connect is refused
        factory = jmspy.ConnectionFactory(f"amqp://127.0.0.1:{port}", connect_timeout=5000)
        connection = factory.createConnection()
        with pytest.raises(JMSException, match="could not connect"):
            connection.start()
        connection.close()


def test_waits_on_a_lost_connection_end_promptly(peer: ScriptedPeer, clients: Clients) -> None:
    """An asyncio receive waiting for a message and a CompletionListener waiting for the
    outcome of a send the peer never settled both hear of the lost connection when it is
    lost, not at a timeout: the engine's last wake-ups run although its thread is ending."""
    peer.script("silent", outcome=None)  # never settles

    async def main() -> tuple[Any, float, str, float]:
        from jmspy import aio

        async with aio.connect(peer.url, connect_timeout=5000, send_timeout=60000) as connection:
            session = await connection.create_session()
            consumer = await session.create_consumer(session.create_queue("q"))
            await connection.start()
            blocking = connection.sync.createSession()
            producer = blocking.createProducer(blocking.createQueue("silent"))
            outcome: list[str] = []
            heard = threading.Event()

            class Listener:
                def onCompletion(self, message: Any) -> None:
                    outcome.append("completed")
                    heard.set()

                def onException(self, message: Any, exception: BaseException) -> None:
                    outcome.append(str(exception))
                    heard.set()

            producer.send(blocking.createTextMessage("x"), Listener())
            peer.wait_for_transfers(1)
            waiting = asyncio.ensure_future(consumer.receive())  # no timeout: until an event
            await asyncio.sleep(0)  # let it start waiting
            started = time.monotonic()
            _reset_connections(peer)
            try:
                result: Any = await asyncio.wait_for(waiting, 20)
            except JMSException as exc:
                result = exc
            receive_s = time.monotonic() - started
            assert await asyncio.get_running_loop().run_in_executor(None, heard.wait, 20)
            listener_s = time.monotonic() - started
            return result, receive_s, outcome[0], listener_s

    result, receive_s, outcome, listener_s = asyncio.run(main())
    assert result is None or isinstance(result, JMSException)
    assert receive_s < 15, f"the asyncio receive ended {receive_s:.1f} s after the loss"
    assert outcome != "completed" and "jms.sendTimeout" not in outcome, outcome
    assert listener_s < 15, f"the CompletionListener heard {listener_s:.1f} s after the loss"


def test_socket_closed_without_an_amqp_close_says_so(peer: ScriptedPeer, clients: Clients) -> None:
    """A peer that ends the socket (FIN) without an AMQP close, as a killed broker's kernel
    does, is a lost connection: proton's "framing error" condition for it is kept as the error
    code, the text says what happened."""
    connection = clients.connect(peer)
    heard, failed = _hear_failures(connection)
    connection.start()

    peer.drop()

    assert failed.wait(10), "the exception listener was not called"
    text = str(heard[0])
    assert "was lost: the peer closed the socket without closing the AMQP connection" in text
    assert heard[0].getErrorCode() == "amqp:connection:framing-error"
