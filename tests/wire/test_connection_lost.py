"""A connection reset after the open is reported as a lost connection, not as a failure to
connect; a refused connect still says it could not connect."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

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


def test_reset_mid_stream_is_reported_as_connection_lost(
    peer: ScriptedPeer, clients: Clients
) -> None:
    connection = clients.connect(peer)
    heard: list[JMSException] = []
    failed = threading.Event()

    def on_exception(exc: JMSException) -> None:
        heard.append(exc)
        failed.set()

    connection.setExceptionListener(on_exception)
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
