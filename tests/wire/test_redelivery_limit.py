"""jmspy on the wire: a message over the redelivery limit (jms.redeliveryPolicy.maxRedeliveries)
is settled with the dead-letter outcome, never handed to the application, and the consumer goes
on to the next message on every receive path.

Expected values: shared/reference/qpid-jms.md section 4 (the "exceeded" test: the message's
delivery count is over maxRedeliveries; JmsMessageConsumer.dequeue pulls again after filtering
an expired or over-limit message).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from proton import Message as AmqpMessage

from jmspy import AUTO_ACKNOWLEDGE, Message, MessageConsumer, TextMessage

from .client_support import Clients, clients_fixture, in_thread, wait_for_disposition
from .peer import ScriptedPeer

# Bounds a wait that, with the client right, ends as soon as the peer's transfer is read.
WAIT_S = 10.0


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _skipped_message(kind: str) -> AmqpMessage:
    if kind == "over-limit":
        # delivery-count 2 is JMSXDeliveryCount 3: two redeliveries, one more than allowed.
        message = AmqpMessage(body="skipped")
        message.delivery_count = 2
        return message
    return AmqpMessage(body="skipped", expiry_time=int(time.time()) - 60)


def _pull_consumer(peer: ScriptedPeer, clients: Clients) -> MessageConsumer:
    connection = clients.connect(
        peer,
        start=True,
        # No final drain: receive() returns what its pulls brought and nothing else.
        query="jms.redeliveryPolicy.maxRedeliveries=1&jms.prefetchPolicy.all=0"
        "&jms.receiveLocalOnly=true",
    )
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    return session.createConsumer(session.createQueue("q"))


@pytest.mark.parametrize("kind", ["over-limit", "expired"])
def test_pull_consumer_receive_with_timeout_pulls_again_after_a_skipped_message(
    peer: ScriptedPeer, clients: Clients, kind: str
) -> None:
    peer.enqueue("q", _skipped_message(kind), tag=b"skipped")
    peer.enqueue("q", AmqpMessage(body="next"), tag=b"next")
    consumer = _pull_consumer(peer, clients)

    received = consumer.receive(int(WAIT_S * 1000))

    assert isinstance(received, TextMessage)
    assert received.getText() == "next"
    assert wait_for_disposition(peer, b"skipped").outcome is not None
    assert wait_for_disposition(peer, b"next").kind == "accepted"


def test_pull_consumer_receive_without_timeout_does_not_hang_after_an_over_limit_message(
    peer: ScriptedPeer, clients: Clients
) -> None:
    peer.enqueue("q", _skipped_message("over-limit"), tag=b"skipped")
    peer.enqueue("q", AmqpMessage(body="next"), tag=b"next")
    consumer = _pull_consumer(peer, clients)
    got: list[Message | None] = []

    done, errors = in_thread(lambda: got.append(consumer.receive()))

    assert done.wait(WAIT_S), "receive() still waits although the queue holds a message"
    assert not errors
    assert isinstance(got[0], TextMessage)
    assert got[0].getText() == "next"
    over = wait_for_disposition(peer, b"skipped")
    assert over.kind == "rejected"  # the generic adapter's dead-letter outcome
    assert over.settled
