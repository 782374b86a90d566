"""JMSConsumer.receiveBody refuses a plain Message as it refuses a StreamMessage (the javadoc
lets it receive neither), with the session-mode outcome of any refused body; and a JMSContext
closed by two threads at once gives its share of the shared connection back once, so the
connection stays open for the other contexts sharing it (JMS 2.0 section 6.2.6)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message as AmqpMessage
from proton import byte, symbol

import jmspy
from jmspy.session import Session

from .client_support import Clients, clients_fixture, in_thread, wait_for_disposition
from .peer import AMQP_SEQUENCE, AMQP_VALUE, MESSAGE_ANNOTATIONS, ScriptedPeer
from .test_client_consumer import raw_message

MSG_TYPE = symbol("x-opt-jms-msg-type")


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _unreadable(kind: str) -> bytes:
    if kind == "Message":  # no body section: a plain Message
        return raw_message((MESSAGE_ANNOTATIONS, {MSG_TYPE: byte(0)}))
    return raw_message((MESSAGE_ANNOTATIONS, {MSG_TYPE: byte(4)}), (AMQP_SEQUENCE, [1, "two"]))


@pytest.mark.parametrize("kind", ["Message", "StreamMessage"])
@pytest.mark.parametrize(
    "mode", [jmspy.AUTO_ACKNOWLEDGE, jmspy.DUPS_OK_ACKNOWLEDGE], ids=["auto", "dups-ok"]
)
def test_receive_body_refuses_the_message_and_delivers_it_again(
    peer: ScriptedPeer, clients: Clients, kind: str, mode: int
) -> None:
    """A plain Message came back as None (read as "no message in time") and was consumed."""
    peer.enqueue("q", _unreadable(kind), tag=b"t1")
    peer.enqueue("q", AmqpMessage(body="after"), tag=b"t2")
    with clients.factory(peer).createContext(mode) as context:
        consumer = context.createConsumer(context.createQueue("q"))
        with pytest.raises(jmspy.MessageFormatRuntimeException):
            consumer.receiveBody(str, 5000)
        with pytest.raises(jmspy.MessageFormatRuntimeException):
            consumer.receiveBodyNoWait(object)
        # As if the calls had not happened: the same message next, not a redelivery.
        again = consumer.receive(5000)
        assert again is not None and type(again).__name__ == kind
        assert again.getJMSRedelivered() is False
        assert consumer.receiveBody(str, 5000) == "after"


@pytest.mark.parametrize("kind", ["Message", "StreamMessage"])
def test_receive_body_refusal_counts_as_delivered_in_client_acknowledge(
    peer: ScriptedPeer, clients: Clients, kind: str
) -> None:
    peer.enqueue("q", _unreadable(kind), tag=b"t1")
    peer.enqueue("q", AmqpMessage(body="after"), tag=b"t2")
    with clients.factory(peer).createContext(jmspy.CLIENT_ACKNOWLEDGE) as context:
        consumer = context.createConsumer(context.createQueue("q"))
        with pytest.raises(jmspy.MessageFormatRuntimeException):
            consumer.receiveBody(str, 5000)
        # Not delivered again, and acknowledged with the rest by JMSContext.acknowledge().
        assert consumer.receiveBody(str, 5000) == "after"
        context.acknowledge()
        for tag in (b"t1", b"t2"):
            disposition = wait_for_disposition(peer, tag)
            assert disposition.settled and disposition.kind == "accepted"


def test_a_typed_message_without_a_body_still_gives_none(
    peer: ScriptedPeer, clients: Clients
) -> None:
    # A TextMessage whose text is null: getBody returns null, and so does receiveBody.
    peer.enqueue("q", raw_message((MESSAGE_ANNOTATIONS, {MSG_TYPE: byte(5)}), (AMQP_VALUE, None)))
    peer.enqueue("q", AmqpMessage(body="after"))
    with clients.factory(peer).createContext() as context:
        consumer = context.createConsumer(context.createQueue("q"))
        assert consumer.receiveBody(str, 5000) is None
        assert consumer.receiveBody(str, 5000) == "after"


def test_a_context_closed_by_two_threads_at_once_releases_the_connection_once(
    peer: ScriptedPeer, clients: Clients, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both closes gave the context's share back: the connection closed under the context
    still sharing it."""
    context = clients.factory(peer).createContext()
    other = context.createContext(jmspy.AUTO_ACKNOWLEDGE)
    context.createQueue("q")  # the context's session exists
    assert context._session is not None
    both_inside = threading.Barrier(2, timeout=10)
    session_close = Session.close

    def close_together(session: Session) -> None:
        # Both threads are past the context's own closed check before either goes on.
        if session is context._session:
            both_inside.wait()
        session_close(session)

    monkeypatch.setattr(Session, "close", close_together)
    results: list[Any] = []
    for _ in range(2):
        results.append(in_thread(context.close))
    for done, errors in results:
        assert done.wait(10) and not errors, errors
    monkeypatch.undo()
    with pytest.raises(jmspy.IllegalStateRuntimeException):
        context.createProducer()
    other.createProducer().send(other.createQueue("q"), "the connection is still open")
    peer.wait_for_transfers(1)
    other.close()
    peer.wait_for_close()
