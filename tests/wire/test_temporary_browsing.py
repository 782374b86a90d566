"""A temporary queue is browsed only by the connection that created it, and only until it is
deleted, as it is consumed (JMS 2.0 section 6.2.2; Qpid JMS checks a browser as a consumer):
nothing is attached for a browser of another connection's temporary queue, which would show
one application's replies to another."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import jmspy

from .client_support import Clients, clients_fixture, wire_barrier
from .peer import ScriptedPeer


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _browse_attaches(peer: ScriptedPeer) -> list[str]:
    return [a.name for a in peer.attaches if a.name.startswith("jmspy:browser:")]


def test_another_connections_temporary_queue_cannot_be_browsed(
    peer: ScriptedPeer, clients: Clients
) -> None:
    owner = clients.connect(peer).createSession()
    temp = owner.createTemporaryQueue()
    other_connection = clients.connect(peer)
    other = other_connection.createSession()

    with pytest.raises(jmspy.InvalidDestinationException, match="another connection"):
        list(other.createBrowser(temp).getEnumeration())
    wire_barrier(other_connection)
    assert _browse_attaches(peer) == [], "no link for another connection's temporary queue"

    # Its own connection browses it.
    assert list(owner.createBrowser(temp).getEnumeration()) == []
    assert len(_browse_attaches(peer)) == 1


def test_a_deleted_temporary_queue_cannot_be_browsed(peer: ScriptedPeer, clients: Clients) -> None:
    connection = clients.connect(peer)
    session = connection.createSession()
    temp = session.createTemporaryQueue()
    made_before = session.createBrowser(temp)
    temp.delete()

    with pytest.raises(jmspy.InvalidDestinationException, match="deleted"):
        made_before.getEnumeration()
    with pytest.raises(jmspy.InvalidDestinationException, match="deleted"):
        session.createBrowser(temp)
    wire_barrier(connection)
    assert _browse_attaches(peer) == []
