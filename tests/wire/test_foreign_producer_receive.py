"""A message from a plain AMQP producer (python-qpid-proton, no JMS annotations) received
through the scripted peer reads as Qpid JMS reads it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from proton import Message as AmqpMessage

from jmspy import AUTO_ACKNOWLEDGE, BytesMessage

from .client_support import Clients, clients_fixture, wait_for_disposition
from .peer import ScriptedPeer

RECEIVE_MS = 5000


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def test_plain_proton_message_types_and_property_names(
    peer: ScriptedPeer, clients: Clients
) -> None:
    svg = b"<svg xmlns='http://www.w3.org/2000/svg'/>"
    message = AmqpMessage(
        body=svg,
        inferred=True,  # a data section
        content_type="image/svg+xml",
        group_id="g",  # proton adds group-sequence 0
        user_id=b"alice",
        properties={"JMSXUserID": "alice", "n": 1},
    )
    peer.enqueue("q", message, tag=b"m")
    connection = clients.connect(peer, start=True)
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("q"))

    received = consumer.receive(RECEIVE_MS)

    # image/svg+xml is not textual for Qpid JMS (+xml counts under application/ only).
    assert isinstance(received, BytesMessage)
    assert received.getBody(bytes) == svg
    assert sorted(received.getPropertyNames()) == [
        "JMSXDeliveryCount",
        "JMSXGroupID",
        "JMSXUserID",
        "n",
    ]
    assert wait_for_disposition(peer, b"m").kind == "accepted"
