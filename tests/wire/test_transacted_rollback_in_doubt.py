"""A rollback() whose discharge the broker does not answer within jms.requestTimeout raises
TransactionInDoubtException; the session lives on, and so do its consumers: the credit the
rollback stopped (to give the prefetched messages back first) is granted again, or a
MessageListener would never get another message.

The ``coordinator`` fixture (tests/wire/peer_coordinator.py) withholds discharge answers.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from proton import Message

import jmspy

from .client_support import Clients, clients_fixture, wait_until
from .peer import ScriptedPeer
from .peer_coordinator import Coordinator


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def test_a_listener_gets_messages_after_a_rollback_in_doubt(
    peer: ScriptedPeer, clients: Clients, coordinator: Coordinator
) -> None:
    peer.enqueue("q", Message(body="m0"))
    connection = clients.connect(
        peer, query="jms.prefetchPolicy.all=4", request_timeout=1000, start=True
    )
    session = connection.createSession(jmspy.SESSION_TRANSACTED)
    consumer = session.createConsumer(session.createQueue("q"))
    received: list[str] = []
    consumer.setMessageListener(lambda message: received.append(message.getBody(str)))
    wait_until(lambda: received == ["m0"], what="the first message")
    coordinator.answer_discharge = False
    with pytest.raises(jmspy.TransactionInDoubtException):
        session.rollback()
    coordinator.answer_discharge = True
    peer.enqueue("q", Message(body="m1"))
    wait_until(lambda: "m1" in received, timeout=10, what="a message after the rollback")
    session.commit()
