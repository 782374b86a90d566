"""Anonymous producers whose links the broker ends: a cached fallback link is replaced, and the
relay link's end is the producer's, reported as a fixed producer's is."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

import jmspy

from .client_support import Clients, clients_fixture, wait_until, wire_barrier

# No ANONYMOUS-RELAY offered: an anonymous producer attaches a link per destination.
NO_RELAY_CAPS = ("sole-connection-for-container", "DELAYED_DELIVERY", "SHARED-SUBS")


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _sender_attaches(peer: Any, address: str) -> list[str]:
    return [
        a.name
        for a in peer.attaches
        if a.role == "sender" and a.target is not None and a.target.address == address
    ]


def test_fallback_link_ended_by_the_broker_is_replaced_at_the_next_send(
    make_peer: Any, clients: Clients
) -> None:
    """The broker detaches the cached link of an anonymous producer (its queue was deleted and
    created again). The next send to that destination attaches a new link, as Qpid JMS's
    fallback producer does; the dead link used to stay cached, and every later send to the
    destination failed with "the producer link ... has failed"."""
    peer = make_peer(offered_capabilities=NO_RELAY_CAPS, strict=False)
    connection = clients.connect(peer, **{"amqp.anonymousFallbackCacheSize": 2})
    session = connection.createSession()
    producer = session.createProducer(None)
    queue = session.createQueue("a")
    producer.send(queue, session.createTextMessage("first"))
    first_link = _sender_attaches(peer, "a")[0]
    peer.close_link(first_link, "amqp:not-found", "queue deleted")
    wire_barrier(connection)
    producer.send(queue, session.createTextMessage("second"))  # raised before the fix
    links = _sender_attaches(peer, "a")
    assert len(links) == 2, links
    wait_until(lambda: len(peer.transfers) == 2, what="the second transfer")
    assert peer.transfers[1].link_name == links[1]
    # A dead link evicted to make room for others is dropped, not kept to be closed later.
    peer.close_link(links[1], "amqp:not-found", "queue deleted")
    wire_barrier(connection)
    for name in ("b", "c"):
        producer.send(session.createQueue(name), session.createTextMessage(name))
    assert producer._retiring == [], producer._retiring


def test_anonymous_relay_link_ended_by_the_broker_is_reported_as_the_producer_closed(
    peer: Any, clients: Clients
) -> None:
    """An anonymous producer on a broker with the anonymous relay has one link. When the
    broker closes it the producer can send nothing more, exactly as a fixed producer whose
    link the broker closed, so the ConnectionListener hears onProducerClosed as it does for
    that one. It used to hear nothing: the producer failed every later send in silence."""
    connection = clients.connect(peer)
    closed: list[tuple[Any, Exception]] = []
    told = threading.Event()

    class Listener:
        def onProducerClosed(self, producer: Any, exception: Exception) -> None:
            closed.append((producer, exception))
            told.set()

    connection.setConnectionListener(Listener())
    session = connection.createSession()
    producer = session.createProducer(None)
    queue = session.createQueue("orders")
    producer.send(queue, session.createTextMessage("first"))
    relay = [a for a in peer.attaches if a.role == "sender"]
    assert len(relay) == 1 and (relay[0].target is None or relay[0].target.address is None)
    peer.close_link(relay[0].name, "amqp:unauthorized-access", "no longer allowed")
    assert told.wait(10.0), "onProducerClosed was not called"
    assert closed[0][0] is producer and "no longer allowed" in str(closed[0][1])
    with pytest.raises(jmspy.JMSException, match="no longer allowed"):
        producer.send(queue, session.createTextMessage("refused"))
