"""The first open of a connection against what may happen meanwhile: a ConnectionListener that
uses the connection from onConnectionEstablished, and a close() from another thread while the
open is still waiting for the peer."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from jmspy.conformance.faultproxy import FaultProxy

import jmspy

from .client_support import Clients, clients_fixture, wait_until
from .peer import ScriptedPeer


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


class _UsesConnectionWhenEstablished:
    """Starts the connection and creates a session from onConnectionEstablished."""

    def __init__(self) -> None:
        self.connection: Any = None
        self.session: Any = None
        self.error: BaseException | None = None

    def onConnectionEstablished(self, uri: str) -> None:
        try:
            self.connection.start()
            self.session = self.connection.createSession()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc


def test_listener_may_use_the_connection_when_told_it_is_established(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """The event used to come with the open lock held and before the connection was
    published: the listener's createSession() opened a second AMQP connection, whose own
    event then waited forever for the first one's, and every thread with it."""
    listener = _UsesConnectionWhenEstablished()
    connection = clients.connect(peer)
    listener.connection = connection
    connection.setConnectionListener(listener)
    opener = threading.Thread(target=connection.createSession, daemon=True)
    opener.start()
    opener.join(20.0)
    assert not opener.is_alive(), "the first open never returned"
    assert listener.error is None, listener.error
    assert listener.session is not None
    assert len(peer.connections) == 1, "the listener's calls opened a second connection"
    assert connection.getMetaData().getJMSProviderName()  # the connection is usable


def test_close_while_opening_closes_what_the_open_brings(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """close() while the first open waits for the peer: the open, once answered, must not
    leave a live AMQP connection (engine thread, socket) behind a closed Connection."""
    with FaultProxy(peer.host, peer.port) as proxy:
        connection = clients.connect(proxy.url)
        proxy.freeze_replies()
        outcome: list[BaseException | None] = []

        def first_use() -> None:
            try:
                connection.createSession()
                outcome.append(None)
            except BaseException as exc:  # noqa: BLE001 - inspected below
                outcome.append(exc)

        opener = threading.Thread(target=first_use, daemon=True)
        opener.start()
        proxy.wait_for_connections(1)
        wait_until(lambda: proxy.bytes_held > 0, 10.0, "the peer's answer held in the proxy")
        connection.close()
        proxy.thaw()
        opener.join(20.0)
        assert not opener.is_alive(), "the first open never returned"
        assert outcome and isinstance(outcome[0], jmspy.IllegalStateException), outcome
        wait_until(
            lambda: bool(peer.connections) and all(view.disconnected for view in peer.connections),
            10.0,
            "the connection the open brought to be closed",
        )
