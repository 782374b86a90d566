"""Selectors on the wire: validated before anything is sent, sent as the jms-selector filter,
and evaluated by the client for topic subscriptions on brokers that cannot filter."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message as ProtonMessage

import jmspy

from .client_support import Clients, clients_fixture, wire_barrier
from .peer import ScriptedPeer


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


@pytest.mark.parametrize(
    "bad",
    ["colour = ", "'foo' > 1", "a IN (1, 2)", "a LIKE 7", "NOT", "x BETWEEN 'a' AND 'b'"],
)
def test_invalid_selector_raises_before_attach(
    peer: ScriptedPeer, clients: Clients, bad: str
) -> None:
    connection = clients.connect(peer)
    session = connection.createSession()
    with pytest.raises(jmspy.InvalidSelectorException):
        session.createConsumer(session.createQueue("q"), bad)
    with pytest.raises(jmspy.InvalidSelectorException):
        session.createBrowser(session.createQueue("q"), bad)
    wire_barrier(connection)
    assert [a for a in peer.attaches if a.role == "receiver"] == []


def test_jms_context_invalid_selector_is_runtime(peer: ScriptedPeer, clients: Clients) -> None:
    with clients.factory(peer).createContext() as context:
        with pytest.raises(jmspy.InvalidSelectorRuntimeException):
            context.createConsumer(context.createQueue("q"), "a >")


def test_blank_selector_means_none(peer: ScriptedPeer, clients: Clients) -> None:
    session = clients.connect(peer).createSession()
    session.createConsumer(session.createQueue("q"), "   ")
    attach = peer.wait_for_attach("q", role="receiver")
    assert attach.source.filter == {}


def _properties_message(colour: str) -> ProtonMessage:
    return ProtonMessage(body=colour, properties={"colour": colour})


def test_client_side_filtering_for_topics_on_a_broker_that_cannot(
    make_peer: Any, clients: Clients
) -> None:
    peer = make_peer(properties={"product": "RabbitMQ"}, offered_capabilities=())
    connection = clients.connect(peer, start=True)
    session = connection.createSession()
    consumer = session.createConsumer(session.createTopic("prices"), "colour = 'red'")
    attach = peer.wait_for_attach(role="receiver")
    assert attach.source.filter == {}, "no filter is sent to a broker that cannot filter"
    for colour in ("blue", "red", "green", "red"):
        peer.enqueue(attach.source.address, _properties_message(colour))
    got = [consumer.receive(5000).getText() for _ in range(2)]
    assert got == ["red", "red"]
    assert consumer.receive(200) is None
    # Every non-matching message was accepted (dropped for this subscriber), none left open.
    wire_barrier(connection)
    # proton may settle neighbouring deliveries in one ranged disposition frame.
    settled = sum(d.last - d.first + 1 for d in peer.dispositions if d.kind == "accepted")
    assert settled == 4


def test_queue_selector_refused_on_a_broker_that_cannot_filter(
    make_peer: Any, clients: Clients
) -> None:
    peer = make_peer(properties={"product": "RabbitMQ"}, offered_capabilities=())
    session = clients.connect(peer).createSession()
    with pytest.raises(jmspy.JMSException) as info:
        session.createConsumer(session.createQueue("orders"), "colour = 'red'")
    assert "cannot filter" in str(info.value)
