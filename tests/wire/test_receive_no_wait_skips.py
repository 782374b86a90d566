"""jmspy on the wire: receiveNoWait() on a consumer without prefetch (jms.prefetchPolicy.all=0)
whose drain brings a message it must skip (over jms.redeliveryPolicy.maxRedeliveries, or
expired with jms.localMessageExpiry) drains again, so it returns the message the broker holds
behind it instead of null, and leaves no credit on the link: a message sent afterwards stays on
the broker instead of being prefetched.

Expected values: shared/reference/qpid-jms.md section 4 (the outcomes of an expired and of an
over-limit message) and section 7, "Consumer credit" (with prefetch 0, receiveNoWait flows 1 and
drains at once: once the drain is answered the link holds no credit). Qpid JMS's
JmsMessageConsumer.dequeue pulls again after it filters an expired or over-limit message.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message as AmqpMessage

from jmspy import AUTO_ACKNOWLEDGE, Connection, MessageConsumer, TextMessage

from .client_support import (
    FAST_OPTIONS,
    Clients,
    clients_fixture,
    wait_for_disposition,
    wire_barrier,
)
from .peer import ScriptedPeer

# Bounds an asyncio receive that, with the client right, ends as soon as the peer answers.
BOUND_S = 30.0
QUERY = "jms.redeliveryPolicy.maxRedeliveries=1&jms.prefetchPolicy.all=0"


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _skipped_message(kind: str) -> AmqpMessage:
    if kind == "over-limit":
        return AmqpMessage(body="skipped", delivery_count=5)  # far over maxRedeliveries=1
    return AmqpMessage(body="skipped", expiry_time=int(time.time()) - 60)


# How the client settles what it skips: the generic adapter's dead-letter outcome for a message
# over the limit, modified(delivery-failed, undeliverable-here) for an expired one.
SKIPPED_OUTCOME = {"over-limit": "rejected", "expired": "modified"}


def _pull_consumer(peer: ScriptedPeer, clients: Clients) -> tuple[Connection, MessageConsumer]:
    connection = clients.connect(peer, start=True, query=QUERY)
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    return connection, session.createConsumer(session.createQueue("q"))


def _assert_no_credit_left(peer: ScriptedPeer, consumer: MessageConsumer, wire: Any) -> None:
    """A message the broker gets now stays there: had the receive left credit on the link,
    the broker would send it at once and the consumer would hold it in its buffer."""
    peer.enqueue("q", AmqpMessage(body="later"), tag=b"later")
    wire()  # the peer sent what that credit allowed before it answered; the client read it
    assert consumer.getPrefetchedCount() == 0, "credit left on the link after the receive"


def _assert_skipped(peer: ScriptedPeer, tag: bytes, kind: str) -> None:
    skipped = wait_for_disposition(peer, tag)
    assert skipped.kind == SKIPPED_OUTCOME[kind]
    assert skipped.settled


@pytest.mark.parametrize("kind", ["over-limit", "expired"])
def test_receive_no_wait_drains_again_after_a_skipped_message(
    peer: ScriptedPeer, clients: Clients, kind: str
) -> None:
    peer.enqueue("q", _skipped_message(kind), tag=b"skipped")
    peer.enqueue("q", AmqpMessage(body="next"), tag=b"next")
    connection, consumer = _pull_consumer(peer, clients)

    received = consumer.receiveNoWait()

    assert isinstance(received, TextMessage), "null although the broker held a message"
    assert received.getText() == "next"
    _assert_skipped(peer, b"skipped", kind)
    assert wait_for_disposition(peer, b"next").kind == "accepted"
    _assert_no_credit_left(peer, consumer, lambda: wire_barrier(connection))


def test_receive_no_wait_drains_past_several_skipped_messages(
    peer: ScriptedPeer, clients: Clients
) -> None:
    peer.enqueue("q", _skipped_message("over-limit"), tag=b"skipped-1")
    peer.enqueue("q", _skipped_message("expired"), tag=b"skipped-2")
    peer.enqueue("q", _skipped_message("over-limit"), tag=b"skipped-3")
    peer.enqueue("q", AmqpMessage(body="next"), tag=b"next")
    connection, consumer = _pull_consumer(peer, clients)

    received = consumer.receiveNoWait()

    assert isinstance(received, TextMessage)
    assert received.getText() == "next"
    _assert_skipped(peer, b"skipped-1", "over-limit")
    _assert_skipped(peer, b"skipped-2", "expired")
    _assert_skipped(peer, b"skipped-3", "over-limit")
    _assert_no_credit_left(peer, consumer, lambda: wire_barrier(connection))


@pytest.mark.parametrize("kind", ["over-limit", "expired"])
def test_receive_no_wait_returns_null_when_only_a_skipped_message_was_held(
    peer: ScriptedPeer, clients: Clients, kind: str
) -> None:
    peer.enqueue("q", _skipped_message(kind), tag=b"skipped")
    connection, consumer = _pull_consumer(peer, clients)

    assert consumer.receiveNoWait() is None

    _assert_skipped(peer, b"skipped", kind)
    _assert_no_credit_left(peer, consumer, lambda: wire_barrier(connection))


@pytest.mark.parametrize("kind", ["over-limit", "expired"])
@pytest.mark.parametrize("behind", ["next", None])
def test_asyncio_receive_no_wait_drains_again_after_a_skipped_message(
    peer: ScriptedPeer, kind: str, behind: str | None
) -> None:
    """The asyncio receive_no_wait() has the blocking one's semantics: the message behind the
    skipped one, or None when there is none, and no credit left either way."""
    peer.enqueue("q", _skipped_message(kind), tag=b"skipped")
    if behind is not None:
        peer.enqueue("q", AmqpMessage(body=behind), tag=b"next")

    async def main() -> tuple[Any, int]:
        from jmspy import aio

        url = f"{peer.url}?{QUERY}"
        async with aio.connect(url, **FAST_OPTIONS) as connection:
            session = await connection.create_session()
            consumer = await session.create_consumer(session.create_queue("q"))
            message = await asyncio.wait_for(consumer.receive_no_wait(), BOUND_S)
            body = None if message is None else message.getBody(str)
            _assert_skipped(peer, b"skipped", kind)
            peer.enqueue("q", AmqpMessage(body="later"), tag=b"later")
            # Answered after what the peer sent before (for credit left on the link, if any).
            await connection.create_session()
            return body, consumer.sync.getPrefetchedCount()

    body, prefetched = asyncio.run(main())
    assert body == behind, "None although the broker held a message"
    if behind is not None:
        assert wait_for_disposition(peer, b"next").kind == "accepted"
    assert prefetched == 0, "credit left on the link after the receive"
