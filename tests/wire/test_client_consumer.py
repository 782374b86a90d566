"""jmspy on the wire: receiving. Type inference for messages from non-JMS producers, received
headers, and the dispositions the client sends for each acknowledgement situation.

Expected values: shared/reference/qpid-jms.md sections 2.3 (received headers), 2.5 (the
inference table), 2.6 (reading message ids) and 4 (outcomes).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Data, Described, byte, symbol, ulong
from proton import Message as AmqpMessage

from jmspy import (
    AUTO_ACKNOWLEDGE,
    CLIENT_ACKNOWLEDGE,
    DUPS_OK_ACKNOWLEDGE,
    BytesMessage,
    Connection,
    DeliveryMode,
    MapMessage,
    Message,
    MessageConsumer,
    ObjectMessage,
    Session,
    StreamMessage,
    TextMessage,
    Topic,
)

from .client_support import (
    Clients,
    clients_fixture,
    dispositions_for,
    wait_for_disposition,
    wire_barrier,
)
from .peer import AMQP_VALUE, MESSAGE_ANNOTATIONS, PROPERTIES, DispositionRecord, ScriptedPeer

RECEIVE_MS = 2000


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def consume(
    peer: ScriptedPeer,
    clients: Clients,
    mode: int = AUTO_ACKNOWLEDGE,
    address: str = "q",
    **options: Any,
) -> tuple[Connection, Session, MessageConsumer]:
    connection = clients.connect(peer, start=True, **options)
    session = connection.createSession(mode)
    consumer = session.createConsumer(session.createQueue(address))
    return connection, session, consumer


def receive_one(peer: ScriptedPeer, clients: Clients, message: AmqpMessage | bytes) -> Message:
    peer.enqueue("q", message)
    _, _, consumer = consume(peer, clients)
    received = consumer.receive(RECEIVE_MS)
    assert received is not None
    return received


def raw_message(*sections: tuple[int, Any]) -> bytes:
    """A bare message made of exactly these (descriptor code, value) sections."""
    out = b""
    for code, value in sections:
        data = Data()
        data.put_object(Described(ulong(code), value))
        out += bytes(data.encode())
    return out


# ---- 2.5 type inference without x-opt-jms-msg-type -------------------------------------------

SERIALIZED = "application/x-java-serialized-object"
OCTETS = "application/octet-stream"


def _data(body: bytes, content_type: str | None = None) -> AmqpMessage:
    message = AmqpMessage(body=body, inferred=True)  # inferred binary: a data section
    if content_type is not None:
        message.content_type = content_type
    return message


INFERENCE = [
    # (id, message, expected JMS class)
    ("none+serialized", AmqpMessage(content_type=SERIALIZED), ObjectMessage),
    ("none+octet-stream", AmqpMessage(content_type=OCTETS), BytesMessage),
    ("none+no-content-type", AmqpMessage(), BytesMessage),
    ("none+textual", AmqpMessage(content_type="text/plain;charset=utf-8"), TextMessage),
    ("none+other", AmqpMessage(content_type="application/x-custom"), Message),
    ("data+octet-stream", _data(b"\x01\x02", OCTETS), BytesMessage),
    ("data+no-content-type", _data(b"\x01\x02"), BytesMessage),
    ("data+serialized", _data(b"\xac\xed\x00\x05", SERIALIZED), ObjectMessage),
    ("data+textual", _data("héllo".encode(), "text/plain; charset=utf-8"), TextMessage),
    ("data+json", _data(b'{"a": 1}', "application/json"), TextMessage),
    ("data+other", _data(b"\x89PNG", "image/png"), BytesMessage),
    ("value+string", AmqpMessage(body="hi"), TextMessage),
    ("value+null", raw_message((AMQP_VALUE, None)), TextMessage),
    ("value+binary", AmqpMessage(body=b"\x07\x08"), BytesMessage),
    ("value+map", AmqpMessage(body={"a": 1}), ObjectMessage),
    ("value+list", AmqpMessage(body=[1, 2]), ObjectMessage),
    ("value+int", AmqpMessage(body=42), ObjectMessage),
    ("sequence", AmqpMessage(body=[1, "two"], inferred=True), ObjectMessage),
]


@pytest.mark.parametrize(
    ("message", "expected"), [(m, e) for _, m, e in INFERENCE], ids=[i for i, _, _ in INFERENCE]
)
def test_type_inferred_without_jms_annotation(
    peer: ScriptedPeer, clients: Clients, message: AmqpMessage | bytes, expected: type
):
    received = receive_one(peer, clients, message)

    assert type(received) is expected


def test_inferred_text_from_data_uses_the_charset(peer: ScriptedPeer, clients: Clients):
    body = "grüße".encode("iso-8859-1")

    received = receive_one(peer, clients, _data(body, "text/plain; charset=iso-8859-1"))

    assert isinstance(received, TextMessage)
    assert received.getText() == "grüße"


def test_inferred_bodies_are_readable(peer: ScriptedPeer, clients: Clients):
    peer.enqueue("q", AmqpMessage(body="hi"))
    peer.enqueue("q", AmqpMessage(body=b"\x07\x08"))
    peer.enqueue("q", AmqpMessage(body={"a": 1}))
    peer.enqueue("q", AmqpMessage(body=[1, "two"], inferred=True))
    peer.enqueue("q", raw_message((AMQP_VALUE, None)))
    _, _, consumer = consume(peer, clients)

    text, raw, mapped, sequence, null = (consumer.receive(RECEIVE_MS) for _ in range(5))

    assert isinstance(text, TextMessage) and text.getText() == "hi"
    assert isinstance(raw, BytesMessage) and raw.getBodyLength() == 2
    buffer = bytearray(2)
    assert raw.readBytes(buffer) == 2 and bytes(buffer) == b"\x07\x08"
    assert isinstance(mapped, ObjectMessage) and mapped.getObject() == {"a": 1}
    assert isinstance(sequence, ObjectMessage) and sequence.getObject() == [1, "two"]
    assert isinstance(null, TextMessage) and null.getText() is None


@pytest.mark.parametrize(
    ("type_byte", "expected"),
    [
        (0, Message),
        (1, ObjectMessage),
        (2, MapMessage),
        (3, BytesMessage),
        (4, StreamMessage),
        (5, TextMessage),
    ],
)
def test_jms_annotation_picks_the_type(
    peer: ScriptedPeer, clients: Clients, type_byte: int, expected: type
):
    bodies = {1: None, 2: {"k": "v"}, 3: b"\x01", 4: [1], 5: "t"}
    sections: list[tuple[int, Any]] = [
        (MESSAGE_ANNOTATIONS, {symbol("x-opt-jms-msg-type"): byte(type_byte)})
    ]
    if type_byte in bodies:
        sections.append((AMQP_VALUE, bodies[type_byte]))

    received = receive_one(peer, clients, raw_message(*sections))

    assert type(received) is expected


# ---- 2.3 received headers ---------------------------------------------------------------------


def test_delivery_count_gives_redelivered_and_jmsx_delivery_count(
    peer: ScriptedPeer, clients: Clients
):
    peer.enqueue("q", AmqpMessage(body="x"), delivery_count=2)
    _, _, consumer = consume(peer, clients)

    received = consumer.receive(RECEIVE_MS)

    assert received is not None
    assert received.getJMSRedelivered() is True
    assert received.getIntProperty("JMSXDeliveryCount") == 3


def test_first_delivery_is_not_redelivered(peer: ScriptedPeer, clients: Clients):
    received = receive_one(peer, clients, AmqpMessage(body="x"))

    assert received.getJMSRedelivered() is False
    assert received.getIntProperty("JMSXDeliveryCount") == 1


def test_received_priority(peer: ScriptedPeer, clients: Clients):
    received = receive_one(peer, clients, AmqpMessage(body="x", priority=7))

    assert received.getJMSPriority() == 7


def test_received_priority_above_9_reads_as_9(peer: ScriptedPeer, clients: Clients):
    received = receive_one(peer, clients, AmqpMessage(body="x", priority=200))

    assert received.getJMSPriority() == 9


def test_missing_header_means_non_persistent_priority_4(peer: ScriptedPeer, clients: Clients):
    received = receive_one(peer, clients, raw_message((AMQP_VALUE, "x")))

    assert received.getJMSDeliveryMode() == DeliveryMode.NON_PERSISTENT
    assert received.getJMSPriority() == 4
    assert received.getJMSRedelivered() is False


@pytest.mark.parametrize(
    ("durable", "mode"), [(True, DeliveryMode.PERSISTENT), (False, DeliveryMode.NON_PERSISTENT)]
)
def test_received_durable(peer: ScriptedPeer, clients: Clients, durable: bool, mode: int):
    received = receive_one(peer, clients, AmqpMessage(body="x", durable=durable))

    assert received.getJMSDeliveryMode() == mode


def test_absolute_expiry_time_is_the_expiration(peer: ScriptedPeer, clients: Clients):
    expiry_s = int(time.time()) + 3600  # whole seconds: proton's float seconds stay exact

    received = receive_one(peer, clients, AmqpMessage(body="x", expiry_time=expiry_s))

    assert received.getJMSExpiration() == expiry_s * 1000


def test_header_ttl_without_expiry_gives_a_local_expiration(peer: ScriptedPeer, clients: Clients):
    before = time.time_ns() // 1_000_000

    received = receive_one(peer, clients, AmqpMessage(body="x", ttl=60))  # seconds in proton

    after = time.time_ns() // 1_000_000
    assert before + 60_000 <= received.getJMSExpiration() <= after + 60_000


def test_delivery_time_annotation_is_the_delivery_time(peer: ScriptedPeer, clients: Clients):
    message = AmqpMessage(body="x", creation_time=1_700_000_000)
    message.annotations = {symbol("x-opt-delivery-time"): 1_700_000_123_456}

    received = receive_one(peer, clients, message)

    assert received.getJMSDeliveryTime() == 1_700_000_123_456
    assert received.getJMSTimestamp() == 1_700_000_000_000


def test_without_delivery_time_it_is_the_timestamp(peer: ScriptedPeer, clients: Clients):
    received = receive_one(peer, clients, AmqpMessage(body="x", creation_time=1_700_000_000))

    assert received.getJMSDeliveryTime() == received.getJMSTimestamp() == 1_700_000_000_000


def test_destination_type_comes_from_the_consumer_without_annotation(
    peer: ScriptedPeer, clients: Clients
):
    peer.enqueue("t", AmqpMessage(body="x", address="t"))
    connection = clients.connect(peer, start=True)
    session = connection.createSession()
    consumer = session.createConsumer(session.createTopic("t"))

    received = consumer.receive(RECEIVE_MS)

    assert received is not None
    destination = received.getJMSDestination()
    assert isinstance(destination, Topic)
    assert destination.getTopicName() == "t"


def test_reply_to_annotation_gives_the_reply_to_type(peer: ScriptedPeer, clients: Clients):
    message = raw_message(
        (MESSAGE_ANNOTATIONS, {symbol("x-opt-jms-reply-to"): byte(1)}),
        (PROPERTIES, [None, None, "q", None, "replies"]),
        (AMQP_VALUE, "x"),
    )

    received = receive_one(peer, clients, message)

    reply_to = received.getJMSReplyTo()
    assert isinstance(reply_to, Topic)
    assert reply_to.getTopicName() == "replies"


MESSAGE_IDS = [
    (
        uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "ID:AMQP_UUID:12345678-1234-5678-1234-567812345678",
    ),
    (ulong(42), "ID:AMQP_ULONG:42"),
    (b"\x0a\xbc", "ID:AMQP_BINARY:0ABC"),
    ("plain", "ID:AMQP_NO_PREFIX:plain"),
    ("ID:already-jms", "ID:already-jms"),
]


@pytest.mark.parametrize(("amqp_id", "jms_id"), MESSAGE_IDS, ids=[j for _, j in MESSAGE_IDS])
def test_received_message_id_conversion(
    peer: ScriptedPeer, clients: Clients, amqp_id: Any, jms_id: str
):
    received = receive_one(peer, clients, AmqpMessage(body="x", id=amqp_id))

    assert received.getJMSMessageID() == jms_id


def test_received_string_correlation_id_without_prefix_is_unchanged(
    peer: ScriptedPeer, clients: Clients
):
    received = receive_one(peer, clients, AmqpMessage(body="x", correlation_id="order-42"))

    assert received.getJMSCorrelationID() == "order-42"


def test_received_binary_correlation_id_is_bytes(peer: ScriptedPeer, clients: Clients):
    received = receive_one(peer, clients, AmqpMessage(body="x", correlation_id=b"\x01\x02"))

    assert received.getJMSCorrelationIDAsBytes() == b"\x01\x02"


# ---- 4. dispositions --------------------------------------------------------------------------


def _assert_settled(disposition: DispositionRecord, kind: str) -> None:
    assert disposition.role == "receiver"
    assert disposition.settled is True
    assert disposition.kind == kind


def test_undecodable_message_is_modified_failed_undeliverable_and_engine_survives(
    peer: ScriptedPeer, clients: Clients
):
    peer.enqueue("q", b"this is not an AMQP message", tag=b"garbage")
    peer.enqueue("q", AmqpMessage(body="good"), tag=b"good")
    _, _, consumer = consume(peer, clients)

    received = consumer.receive(RECEIVE_MS)

    assert isinstance(received, TextMessage)
    assert received.getText() == "good"  # the garbage was never handed over
    bad = wait_for_disposition(peer, b"garbage")
    _assert_settled(bad, "modified")
    assert bad.outcome is not None
    assert bad.outcome.delivery_failed is True
    assert bad.outcome.undeliverable_here is True
    _assert_settled(wait_for_disposition(peer, b"good"), "accepted")


def test_message_with_invalid_type_annotation_is_modified_failed_undeliverable(
    peer: ScriptedPeer, clients: Clients
):
    invalid = raw_message(
        (MESSAGE_ANNOTATIONS, {symbol("x-opt-jms-msg-type"): byte(9)}), (AMQP_VALUE, "x")
    )
    peer.enqueue("q", invalid, tag=b"invalid")
    peer.enqueue("q", AmqpMessage(body="good"), tag=b"good")
    _, _, consumer = consume(peer, clients)

    received = consumer.receive(RECEIVE_MS)

    assert isinstance(received, TextMessage) and received.getText() == "good"
    bad = wait_for_disposition(peer, b"invalid")
    assert bad.outcome is not None
    assert (bad.kind, bad.outcome.delivery_failed, bad.outcome.undeliverable_here) == (
        "modified",
        True,
        True,
    )


@pytest.mark.parametrize("mode", [AUTO_ACKNOWLEDGE, DUPS_OK_ACKNOWLEDGE])
def test_receive_accepts_and_settles(peer: ScriptedPeer, clients: Clients, mode: int):
    peer.enqueue("q", AmqpMessage(body="x"), tag=b"m1")
    _, _, consumer = consume(peer, clients, mode)

    assert consumer.receive(RECEIVE_MS) is not None

    disposition = wait_for_disposition(peer, b"m1")
    _assert_settled(disposition, "accepted")
    assert len(dispositions_for(peer, b"m1")) == 1


def test_client_ack_sends_nothing_until_acknowledge_then_accepts_all_delivered(
    peer: ScriptedPeer, clients: Clients
):
    for tag in (b"m1", b"m2", b"m3"):
        peer.enqueue("q", AmqpMessage(body=tag.decode()), tag=tag)
    connection, _, consumer = consume(peer, clients, CLIENT_ACKNOWLEDGE)

    first = consumer.receive(RECEIVE_MS)
    second = consumer.receive(RECEIVE_MS)
    assert first is not None and second is not None
    wire_barrier(connection)
    assert peer.dispositions == []

    first.acknowledge()  # acknowledges every message the session delivered, m2 included

    wait_for_disposition(peer, b"m2")
    wire_barrier(connection)
    acked = [d for d in peer.dispositions if d.kind == "accepted"]
    assert all(d.settled and d.role == "receiver" for d in acked)
    assert sorted(t for d in acked for t in d.delivery_tags) == [b"m1", b"m2"]
    assert dispositions_for(peer, b"m3") == []  # prefetched, not delivered: untouched


def test_recover_redelivers_locally_without_a_disposition(peer: ScriptedPeer, clients: Clients):
    peer.enqueue("q", AmqpMessage(body="once", id="m-1"), tag=b"m1")
    connection, session, consumer = consume(peer, clients, CLIENT_ACKNOWLEDGE)
    first = consumer.receive(RECEIVE_MS)
    assert first is not None
    assert first.getJMSRedelivered() is False

    session.recover()
    again = consumer.receive(RECEIVE_MS)

    assert again is not None
    assert again.getJMSMessageID() == first.getJMSMessageID() == "ID:AMQP_NO_PREFIX:m-1"
    assert again.getJMSRedelivered() is True
    assert again.getIntProperty("JMSXDeliveryCount") == 2
    wire_barrier(connection)
    assert peer.dispositions == []

    again.acknowledge()
    _assert_settled(wait_for_disposition(peer, b"m1"), "accepted")


def test_consumer_close_releases_prefetched_messages_and_detaches_closed(
    peer: ScriptedPeer, clients: Clients
):
    for tag in (b"m1", b"m2", b"m3"):
        peer.enqueue("q", AmqpMessage(body=tag.decode()), tag=tag)
    connection, _, consumer = consume(peer, clients)
    attach = peer.wait_for_attach("q", role="receiver")
    assert consumer.receive(RECEIVE_MS) is not None
    wire_barrier(connection)  # m2 and m3 have reached the client's buffer

    consumer.close()

    detach = peer.wait_for_detach(attach.name)
    assert detach.closed is True
    _assert_settled(wait_for_disposition(peer, b"m1"), "accepted")
    for tag in (b"m2", b"m3"):
        (disposition,) = dispositions_for(peer, tag)
        _assert_settled(disposition, "released")
    # The releases precede the detach.
    records = peer.records()
    released_at = max(
        i
        for i, r in enumerate(records)
        if isinstance(r, DispositionRecord) and r.kind == "released"
    )
    assert released_at < records.index(detach)


def test_client_ack_consumer_close_modifies_unacknowledged_messages(
    peer: ScriptedPeer, clients: Clients
):
    peer.enqueue("q", AmqpMessage(body="x"), tag=b"m1")
    _, _, consumer = consume(peer, clients, CLIENT_ACKNOWLEDGE)
    assert consumer.receive(RECEIVE_MS) is not None

    consumer.close()

    disposition = wait_for_disposition(peer, b"m1")
    _assert_settled(disposition, "modified")
    assert disposition.outcome is not None
    assert disposition.outcome.delivery_failed is True


def test_listener_that_returns_accepts(peer: ScriptedPeer, clients: Clients):
    peer.enqueue("q", AmqpMessage(body="x"), tag=b"m1")
    _, _, consumer = consume(peer, clients)
    seen = threading.Event()

    consumer.setMessageListener(lambda message: seen.set())

    assert seen.wait(5.0)
    _assert_settled(wait_for_disposition(peer, b"m1"), "accepted")


def test_listener_that_raises_in_auto_ack_is_modified_delivery_failed(
    peer: ScriptedPeer, clients: Clients
):
    peer.enqueue("q", AmqpMessage(body="boom"), tag=b"boom")
    peer.enqueue("q", AmqpMessage(body="fine"), tag=b"fine")
    _, _, consumer = consume(peer, clients)
    done = threading.Event()

    def listener(message: Message) -> None:
        assert isinstance(message, TextMessage)
        if message.getText() == "boom":
            raise RuntimeError("listener failed on purpose")
        done.set()

    consumer.setMessageListener(listener)

    assert done.wait(5.0)  # the session's listener thread survived the exception
    failed = wait_for_disposition(peer, b"boom")
    _assert_settled(failed, "modified")
    assert failed.outcome is not None
    assert failed.outcome.delivery_failed is True
    assert failed.outcome.undeliverable_here is False
    _assert_settled(wait_for_disposition(peer, b"fine"), "accepted")


def test_expired_message_is_never_returned_and_is_modified_failed_undeliverable(
    peer: ScriptedPeer, clients: Clients
):
    past_s = int(time.time()) - 60
    peer.enqueue("q", AmqpMessage(body="stale", expiry_time=past_s), tag=b"stale")
    peer.enqueue("q", AmqpMessage(body="fresh"), tag=b"fresh")
    _, _, consumer = consume(peer, clients)

    received = consumer.receive(RECEIVE_MS)

    assert isinstance(received, TextMessage)
    assert received.getText() == "fresh"
    stale = wait_for_disposition(peer, b"stale")
    _assert_settled(stale, "modified")
    assert stale.outcome is not None
    assert stale.outcome.delivery_failed is True
    assert stale.outcome.undeliverable_here is True


def test_expired_message_alone_gives_no_message(peer: ScriptedPeer, clients: Clients):
    past_s = int(time.time()) - 60
    peer.enqueue("q", AmqpMessage(body="stale", expiry_time=past_s), tag=b"stale")
    connection, _, consumer = consume(peer, clients)
    peer.wait_for_attach("q", role="receiver")
    wire_barrier(connection)  # the stale message is in the client's buffer

    assert consumer.receiveNoWait() is None
    assert wait_for_disposition(peer, b"stale").kind == "modified"
