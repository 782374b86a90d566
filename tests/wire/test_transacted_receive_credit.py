"""A transacted receive() that cannot join a transaction puts its message back in front of
the consumer's buffer: the credit that message used is counted once, however often it is
taken, so the consumer's window never grows past its prefetch."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message

import jmspy

from .client_support import Clients, clients_fixture, wait_until
from .peer import ScriptedPeer
from .peer_coordinator import Coordinator

PREFETCH = 4


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _granted(peer: ScriptedPeer, link_name: str) -> int:
    """Deliveries the client has allowed on its link in all: delivery-count + link-credit of
    its last flow."""
    flows = [
        f
        for f in peer.flows
        if f.link_name == link_name and f.link_credit is not None and f.delivery_count is not None
    ]
    last = flows[-1]
    assert last.delivery_count is not None and last.link_credit is not None
    return last.delivery_count + last.link_credit


def test_a_message_put_back_after_a_refused_declare_is_credited_once(
    peer: ScriptedPeer, clients: Clients, coordinator: Coordinator
) -> None:
    for number in range(20):
        peer.enqueue("q", Message(body=f"m{number}"))
    connection = clients.connect(peer, query=f"jms.prefetchPolicy.all={PREFETCH}", start=True)
    session = connection.createSession(jmspy.SESSION_TRANSACTED)
    consumer = session.createConsumer(session.createQueue("q"))
    link = peer.wait_for_attach(role="receiver").name
    received: list[Any] = []
    first = consumer.receive(5000)
    assert first is not None
    received.append(first.getBody(str))
    # The broker cannot start the next transactions: the one after the commit, and the one
    # the next receive() asks for. That receive raises and keeps its message for the next.
    coordinator.reject_declares = coordinator.rejected + 2
    session.commit()
    with pytest.raises(jmspy.JMSException):
        consumer.receive(5000)
    for _ in range(10):
        message = consumer.receive(5000)
        assert message is not None
        received.append(message.getBody(str))
    session.commit()
    assert received == [f"m{n}" for n in range(11)], "the put-back message was lost or moved"
    # 11 taken, credit returned in halves of the window: 10 returned, one still to return.
    wait_until(lambda: consumer.getPrefetchedCount() == PREFETCH - 1, what="the consumer's window")
    assert _granted(peer, link) - len(received) == PREFETCH - 1
    assert consumer.getPrefetchedCount() == PREFETCH - 1
