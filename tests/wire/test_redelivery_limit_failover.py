"""jmspy on the wire: what a reconnect brings back is not a failed delivery.

Artemis sends what a dropped connection held unsettled again with its delivery count unchanged
(docs/redelivery.md: a disconnect is not a failed attempt). jmspy flags such a message
JMSRedelivered (and, as JMS requires with it, a JMSXDeliveryCount of at least 2), but the
redelivery limit is judged on the count the broker and local recovers gave it, as Qpid JMS
judges it (shared/reference/qpid-jms.md section 4): with maxRedeliveries=0 the message is still
delivered, not dead-lettered.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from proton import Message as AmqpMessage

import jmspy

from .client_support import Clients, FirstRestore, clients_fixture, wait_for_disposition
from .peer import ScriptedPeer

RECEIVE_MS = 20000


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def test_a_message_back_after_a_reconnect_is_not_over_a_zero_redelivery_limit(
    peer: ScriptedPeer, clients: Clients
) -> None:
    url = (
        f"failover:({peer.url})?failover.reconnectDelay=20&failover.maxReconnectDelay=100"
        "&jms.redeliveryPolicy.maxRedeliveries=0"
    )
    connection = clients.track(clients.factory(url).createConnection())
    restores = FirstRestore()
    connection.setConnectionListener(restores)
    session = connection.createSession(jmspy.INDIVIDUAL_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("q"))
    connection.start()
    peer.enqueue("q", AmqpMessage(id="m-1", body="first"), tag=b"first")
    first = consumer.receive(RECEIVE_MS)
    assert first is not None and first.getBody(str) == "first"

    peer.drop(reset=True)
    assert restores.restored.wait(30.0)
    # Held unsettled when the connection dropped: sent again, delivery count unchanged.
    peer.enqueue("q", AmqpMessage(id="m-1", body="again"), tag=b"again")
    peer.enqueue("q", AmqpMessage(id="m-2", body="later"), tag=b"later")
    again = consumer.receive(RECEIVE_MS)

    assert again is not None
    assert again.getBody(str) == "again", "the message was dead-lettered instead"
    assert again.getJMSRedelivered() is True
    assert again.getIntProperty("JMSXDeliveryCount") == 2
    again.acknowledge()
    assert wait_for_disposition(peer, b"again").kind == "accepted"
