"""Messages far larger than a socket's buffers, both ways, byte for byte.

A write the socket takes only part of keeps the rest for the engine's next turn; a read takes
up to 64 KiB, which the engine hands to proton piece by piece as its input buffer (8 KiB at
first) makes room. A message of several MiB crosses many partial writes and many reads, and a
run of small messages many pieces of one read, frames cut anywhere between them: each must
arrive whole and in order with what follows it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from proton import Message as AmqpMessage

from jmspy import AUTO_ACKNOWLEDGE, BytesMessage, DeliveryMode

from .client_support import Clients, clients_fixture, sections_of
from .peer import AMQP_VALUE, DATA, ScriptedPeer

SIZE = 8 * 1024 * 1024 + 17  # beyond loopback TCP's buffers, and not a multiple of anything
RECEIVE_MS = 30_000  # generous for a busy machine; a receive that gets the message returns


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def test_a_message_larger_than_the_socket_buffers_is_sent_whole(
    peer: ScriptedPeer, clients: Clients
) -> None:
    body = os.urandom(SIZE)
    session = clients.connect(peer).createSession()
    producer = session.createProducer(session.createQueue("q"))
    producer.setDeliveryMode(DeliveryMode.PERSISTENT)  # returns once the peer settled it
    message = session.createBytesMessage()
    message.writeBytes(body)
    marker = session.createTextMessage("after")

    producer.send(message)
    producer.send(marker)  # the frames after a partial write come out in order too

    first, second = peer.wait_for_transfers(2, timeout=RECEIVE_MS / 1000)
    assert first.frames > 1  # split into transfer frames by the peer's max-frame-size
    assert sections_of(first)[DATA] == body
    assert second.section(AMQP_VALUE) == "after"


def test_a_message_larger_than_the_socket_buffers_is_received_whole(
    peer: ScriptedPeer, clients: Clients
) -> None:
    body = os.urandom(SIZE)
    peer.enqueue("q", AmqpMessage(body=body))
    peer.enqueue("q", AmqpMessage(body="after"))
    connection = clients.connect(peer, start=True)
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("q"))

    received = consumer.receive(RECEIVE_MS)
    after = consumer.receive(RECEIVE_MS)

    assert isinstance(received, BytesMessage)
    assert received.getBodyLength() == SIZE
    assert received.getBody(bytes) == body
    assert after is not None and after.getBody(str) == "after"


def test_a_run_of_messages_larger_than_protons_input_arrives_whole_and_in_order(
    peer: ScriptedPeer, clients: Clients
) -> None:
    # 300 transfers of a little over 1 KiB, sent as one burst once the consumer's credit
    # arrives: a socket read then holds several 8 KiB pieces with frames cut across them.
    bodies = [os.urandom(1024 + n % 7) for n in range(300)]
    for body in bodies:
        peer.enqueue("q", AmqpMessage(body=body))
    connection = clients.connect(peer, start=True)
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("q"))

    received = []
    for _ in bodies:
        message = consumer.receive(RECEIVE_MS)
        assert isinstance(message, BytesMessage)
        received.append(message.getBody(bytes))

    assert received == bodies
    assert consumer.receiveNoWait() is None
