"""jmspy on the wire: the JMS -> AMQP message mapping of a send, one mapping per test.

Each test sends one message through the real producer and asserts on the sections the scripted
peer decoded from the transfer. Expected values: shared/reference/qpid-jms.md sections 2.1
(message type annotation), 2.2 (destinations), 2.3 (header and properties), 2.5 (bodies) and 2.6
(message ids).
"""

from __future__ import annotations

import pickle
import re
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from proton import byte, float32, int32, short, symbol, timestamp, ubyte, uint

from jmspy import DeliveryMode, Message, MessageProducer, Session

from .client_support import (
    P_ABSOLUTE_EXPIRY,
    P_CONTENT_TYPE,
    P_CORRELATION_ID,
    P_CREATION_TIME,
    P_GROUP_ID,
    P_GROUP_SEQUENCE,
    P_MESSAGE_ID,
    P_REPLY_TO,
    P_SUBJECT,
    P_TO,
    P_USER_ID,
    Clients,
    clients_fixture,
    prop,
    sections_of,
)
from .peer import (
    AMQP_SEQUENCE,
    AMQP_VALUE,
    APPLICATION_PROPERTIES,
    DATA,
    HEADER,
    MESSAGE_ANNOTATIONS,
    PROPERTIES,
    ScriptedPeer,
    TransferRecord,
)

MSG_TYPE = symbol("x-opt-jms-msg-type")
DEST = symbol("x-opt-jms-dest")
REPLY_TO = symbol("x-opt-jms-reply-to")
DELIVERY_TIME = symbol("x-opt-delivery-time")


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def send_one(
    peer: ScriptedPeer,
    clients: Clients,
    build: Callable[[Session], Message],
    configure: Callable[[MessageProducer], None] | None = None,
    *,
    topic: bool = False,
    **options: Any,
) -> tuple[TransferRecord, Message]:
    """Send one message built by ``build`` to queue "q" (or topic "t"); return what the peer
    recorded and the message object after the send."""
    session = clients.connect(peer, **options).createSession()
    destination = session.createTopic("t") if topic else session.createQueue("q")
    producer = session.createProducer(destination)
    if configure is not None:
        configure(producer)
    message = build(session)
    producer.send(message)
    (transfer,) = peer.wait_for_transfers(1)
    return transfer, message


def text(session: Session) -> Message:
    return session.createTextMessage("hello")


def non_persistent(producer: MessageProducer) -> None:
    producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)


def annotations(transfer: TransferRecord) -> dict[Any, Any]:
    return transfer.section(MESSAGE_ANNOTATIONS)


def properties(transfer: TransferRecord) -> list[Any]:
    return transfer.section(PROPERTIES)


# ---- 2.1 message type annotation --------------------------------------------------------------


def _object(session: Session) -> Message:
    return session.createObjectMessage({"k": 1})


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        (lambda s: s.createMessage(), 0),
        (_object, 1),
        (lambda s: s.createMapMessage(), 2),
        (lambda s: s.createBytesMessage(), 3),
        (lambda s: s.createStreamMessage(), 4),
        (lambda s: s.createTextMessage("x"), 5),
    ],
    ids=["Message", "ObjectMessage", "MapMessage", "BytesMessage", "StreamMessage", "TextMessage"],
)
def test_message_type_annotation_is_a_byte(
    peer: ScriptedPeer, clients: Clients, build: Callable[[Session], Message], expected: int
):
    transfer, _ = send_one(peer, clients, build)

    value = annotations(transfer)[MSG_TYPE]
    assert type(value) is byte
    assert value == expected


def test_message_annotations_hold_only_type_and_destination(peer: ScriptedPeer, clients: Clients):
    transfer, _ = send_one(peer, clients, text)

    assert annotations(transfer) == {MSG_TYPE: byte(5), DEST: byte(0)}
    assert all(type(k) is symbol for k in annotations(transfer))


def test_sections_are_in_amqp_order(peer: ScriptedPeer, clients: Clients):
    def build(session: Session) -> Message:
        message = session.createTextMessage("x")
        message.setStringProperty("p", "v")
        return message

    transfer, _ = send_one(peer, clients, build)

    assert transfer.section_codes == [
        HEADER,
        MESSAGE_ANNOTATIONS,
        PROPERTIES,
        APPLICATION_PROPERTIES,
        AMQP_VALUE,
    ]


# ---- 2.2 destinations -------------------------------------------------------------------------


def test_queue_destination_annotation_and_to(peer: ScriptedPeer, clients: Clients):
    transfer, message = send_one(peer, clients, text)

    assert annotations(transfer)[DEST] == byte(0)
    assert type(annotations(transfer)[DEST]) is byte
    assert prop(properties(transfer), P_TO) == "q"
    assert message.getJMSDestination() is not None
    assert message.getJMSDestination().getQueueName() == "q"


def test_topic_destination_annotation_and_to(peer: ScriptedPeer, clients: Clients):
    transfer, _ = send_one(peer, clients, text, topic=True)

    assert annotations(transfer)[DEST] == byte(1)
    assert prop(properties(transfer), P_TO) == "t"


@pytest.mark.parametrize(("kind", "expected"), [("queue", 0), ("topic", 1)])
def test_reply_to_annotation_and_reply_to(
    peer: ScriptedPeer, clients: Clients, kind: str, expected: int
):
    def build(session: Session) -> Message:
        message = session.createTextMessage("x")
        reply = session.createQueue("replies") if kind == "queue" else session.createTopic("rt")
        message.setJMSReplyTo(reply)
        return message

    transfer, _ = send_one(peer, clients, build)

    assert annotations(transfer)[REPLY_TO] == byte(expected)
    assert type(annotations(transfer)[REPLY_TO]) is byte
    assert prop(properties(transfer), P_REPLY_TO) == ("replies" if kind == "queue" else "rt")


def test_no_reply_to_sends_neither_annotation_nor_field(peer: ScriptedPeer, clients: Clients):
    transfer, _ = send_one(peer, clients, text)

    assert REPLY_TO not in annotations(transfer)
    assert prop(properties(transfer), P_REPLY_TO) is None


# ---- 2.3 header -------------------------------------------------------------------------------


def test_no_header_for_non_persistent_default_priority_without_ttl(
    peer: ScriptedPeer, clients: Clients
):
    transfer, _ = send_one(peer, clients, text, non_persistent)

    assert HEADER not in transfer.section_codes
    assert transfer.section_codes[0] == MESSAGE_ANNOTATIONS


def test_persistent_header_is_durable_true_only(peer: ScriptedPeer, clients: Clients):
    transfer, message = send_one(peer, clients, text)

    assert transfer.section(HEADER) == [True]
    assert message.getJMSDeliveryMode() == DeliveryMode.PERSISTENT


def test_priority_is_written_when_not_4(peer: ScriptedPeer, clients: Clients):
    def configure(producer: MessageProducer) -> None:
        producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)
        producer.setPriority(7)

    transfer, _ = send_one(peer, clients, text, configure)

    header = transfer.section(HEADER)
    assert header == [False, 7]  # durable written explicitly once the header is sent
    assert type(header[1]) is ubyte


def test_priority_0_is_written(peer: ScriptedPeer, clients: Clients):
    session = clients.connect(peer).createSession()
    producer = session.createProducer(session.createQueue("q"))

    producer.send(session.createTextMessage("x"), DeliveryMode.PERSISTENT, 0, 0)

    assert peer.wait_for_transfers(1)[0].section(HEADER) == [True, ubyte(0)]


def test_priority_4_is_not_written(peer: ScriptedPeer, clients: Clients):
    transfer, _ = send_one(peer, clients, text, lambda p: p.setPriority(4))

    assert transfer.section(HEADER) == [True]


def test_ttl_goes_to_header_and_absolute_expiry_is_creation_plus_ttl(
    peer: ScriptedPeer, clients: Clients
):
    transfer, message = send_one(peer, clients, text, lambda p: p.setTimeToLive(60_000))

    header = transfer.section(HEADER)
    assert header[0] is True
    assert header[1] is None  # priority 4: not written
    assert header[2] == 60_000
    assert type(header[2]) is uint
    props = properties(transfer)
    creation, expiry = prop(props, P_CREATION_TIME), prop(props, P_ABSOLUTE_EXPIRY)
    assert type(creation) is timestamp and type(expiry) is timestamp
    assert expiry == creation + 60_000
    assert message.getJMSExpiration() == expiry


def test_no_ttl_means_no_expiry(peer: ScriptedPeer, clients: Clients):
    transfer, message = send_one(peer, clients, text)

    assert prop(properties(transfer), P_ABSOLUTE_EXPIRY) is None
    assert len(transfer.section(HEADER)) == 1
    assert message.getJMSExpiration() == 0


def test_amqp_ttl_property_overrides_header_ttl(peer: ScriptedPeer, clients: Clients):
    def build(session: Session) -> Message:
        message = session.createTextMessage("x")
        message.setLongProperty("JMS_AMQP_TTL", 1234)
        return message

    transfer, _ = send_one(peer, clients, build, lambda p: p.setTimeToLive(60_000))

    assert transfer.section(HEADER)[2] == 1234
    assert APPLICATION_PROPERTIES not in transfer.section_codes  # vendor property not sent


def test_redelivered_is_never_sent(peer: ScriptedPeer, clients: Clients):
    def build(session: Session) -> Message:
        message = session.createTextMessage("x")
        message.setJMSRedelivered(True)
        return message

    transfer, message = send_one(peer, clients, build)

    assert transfer.section(HEADER) == [True]  # no delivery-count
    assert message.getJMSRedelivered() is False


# ---- 2.3 delivery time ------------------------------------------------------------------------


def test_delivery_time_annotation_with_delivery_delay(peer: ScriptedPeer, clients: Clients):
    transfer, message = send_one(peer, clients, text, lambda p: p.setDeliveryDelay(5000))

    value = annotations(transfer)[DELIVERY_TIME]
    assert type(value) is int  # an AMQP long, not a timestamp
    creation = prop(properties(transfer), P_CREATION_TIME)
    assert value == creation + 5000
    assert message.getJMSDeliveryTime() == value
    assert symbol("x-opt-delivery-delay") not in annotations(transfer)


def test_no_delivery_time_annotation_without_delay(peer: ScriptedPeer, clients: Clients):
    transfer, message = send_one(peer, clients, text)

    assert DELIVERY_TIME not in annotations(transfer)
    assert message.getJMSDeliveryTime() == message.getJMSTimestamp()


def test_no_delivery_time_annotation_with_zero_delay(peer: ScriptedPeer, clients: Clients):
    transfer, _ = send_one(peer, clients, text, lambda p: p.setDeliveryDelay(0))

    assert DELIVERY_TIME not in annotations(transfer)


# ---- 2.3 / 2.6 properties ---------------------------------------------------------------------

MESSAGE_ID = re.compile(
    r"ID:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:\d+:\d+:\d+-\d+"
)


def test_message_id_is_an_id_prefixed_string(peer: ScriptedPeer, clients: Clients):
    transfer, message = send_one(peer, clients, text)

    message_id = prop(properties(transfer), P_MESSAGE_ID)
    assert type(message_id) is str
    assert MESSAGE_ID.fullmatch(message_id), message_id
    assert message.getJMSMessageID() == message_id


def test_message_ids_count_up_per_producer(peer: ScriptedPeer, clients: Clients):
    session = clients.connect(peer).createSession()
    producer = session.createProducer(session.createQueue("q"))

    producer.send(session.createTextMessage("1"))
    producer.send(session.createTextMessage("2"))

    first, second = (prop(properties(t), P_MESSAGE_ID) for t in peer.wait_for_transfers(2))
    stem, _, seq = first.rpartition("-")
    assert second == f"{stem}-{int(seq) + 1}"


def test_disabled_message_id_is_absent(peer: ScriptedPeer, clients: Clients):
    transfer, message = send_one(peer, clients, text, lambda p: p.setDisableMessageID(True))

    assert prop(properties(transfer), P_MESSAGE_ID) is None
    assert message.getJMSMessageID() is None


def test_creation_time_is_the_jms_timestamp(peer: ScriptedPeer, clients: Clients):
    transfer, message = send_one(peer, clients, text)

    creation = prop(properties(transfer), P_CREATION_TIME)
    assert type(creation) is timestamp
    assert creation == message.getJMSTimestamp() > 0


def test_disabled_timestamp_means_no_creation_time(peer: ScriptedPeer, clients: Clients):
    transfer, message = send_one(peer, clients, text, lambda p: p.setDisableMessageTimestamp(True))

    assert prop(properties(transfer), P_CREATION_TIME) is None
    assert message.getJMSTimestamp() == 0


def test_jms_type_is_the_subject(peer: ScriptedPeer, clients: Clients):
    def build(session: Session) -> Message:
        message = session.createTextMessage("x")
        message.setJMSType("order-created")
        return message

    transfer, _ = send_one(peer, clients, build)

    assert prop(properties(transfer), P_SUBJECT) == "order-created"


def test_no_jms_type_means_no_subject(peer: ScriptedPeer, clients: Clients):
    transfer, _ = send_one(peer, clients, text)

    assert prop(properties(transfer), P_SUBJECT) is None


def test_string_correlation_id_is_sent_as_a_string(peer: ScriptedPeer, clients: Clients):
    def build(session: Session) -> Message:
        message = session.createTextMessage("x")
        message.setJMSCorrelationID("order-42")
        return message

    transfer, _ = send_one(peer, clients, build)

    value = prop(properties(transfer), P_CORRELATION_ID)
    assert type(value) is str
    assert value == "order-42"


def test_bytes_correlation_id_is_sent_as_binary(peer: ScriptedPeer, clients: Clients):
    def build(session: Session) -> Message:
        message = session.createTextMessage("x")
        message.setJMSCorrelationIDAsBytes(b"\x00\x01\xfe")
        return message

    transfer, _ = send_one(peer, clients, build)

    value = prop(properties(transfer), P_CORRELATION_ID)
    assert type(value) is bytes
    assert value == b"\x00\x01\xfe"


def test_amqp_uuid_correlation_id_is_sent_as_a_uuid(peer: ScriptedPeer, clients: Clients):
    ident = uuid.UUID("12345678-1234-5678-1234-567812345678")

    def build(session: Session) -> Message:
        message = session.createTextMessage("x")
        message.setJMSCorrelationID(f"ID:AMQP_UUID:{ident}")
        return message

    transfer, _ = send_one(peer, clients, build)

    assert prop(properties(transfer), P_CORRELATION_ID) == ident


def test_group_id_and_sequence(peer: ScriptedPeer, clients: Clients):
    def build(session: Session) -> Message:
        message = session.createTextMessage("x")
        message.setStringProperty("JMSXGroupID", "basket-9")
        message.setIntProperty("JMSXGroupSeq", 3)
        return message

    transfer, _ = send_one(peer, clients, build)

    props = properties(transfer)
    assert prop(props, P_GROUP_ID) == "basket-9"
    assert prop(props, P_GROUP_SEQUENCE) == 3
    assert type(prop(props, P_GROUP_SEQUENCE)) is uint
    assert APPLICATION_PROPERTIES not in transfer.section_codes


def test_user_id_is_not_sent_by_default(peer: ScriptedPeer, clients: Clients):
    def build(session: Session) -> Message:
        message = session.createTextMessage("x")
        message.setStringProperty("JMSXUserID", "mallory")
        return message

    transfer, _ = send_one(peer, clients, build)

    # Without jms.populateJMSXUserID Qpid JMS clears JMSXUserID on every send.
    assert prop(properties(transfer), P_USER_ID) is None


def test_user_id_is_the_authenticated_user_with_populate_jmsx_user_id(
    peer: ScriptedPeer, clients: Clients
):
    session = clients.connect(
        peer, "alice", "secret", query="jms.populateJMSXUserID=true"
    ).createSession()
    producer = session.createProducer(session.createQueue("q"))

    producer.send(session.createTextMessage("x"))

    assert prop(properties(peer.wait_for_transfers(1)[0]), P_USER_ID) == b"alice"


def test_application_properties_have_exact_amqp_types(peer: ScriptedPeer, clients: Clients):
    def build(session: Session) -> Message:
        message = session.createMessage()
        message.setByteProperty("b", -5)
        message.setShortProperty("s", 300)
        message.setIntProperty("i", 70_000)
        message.setLongProperty("l", 2**40)
        message.setFloatProperty("f", 1.5)
        message.setDoubleProperty("d", 2.25)
        message.setBooleanProperty("z", True)
        message.setStringProperty("t", "text")
        return message

    transfer, _ = send_one(peer, clients, build)

    app = transfer.section(APPLICATION_PROPERTIES)
    expected = {
        "b": (byte, -5),
        "s": (short, 300),
        "i": (int32, 70_000),
        "l": (int, 2**40),
        "f": (float32, 1.5),
        "d": (float, 2.25),
        "z": (bool, True),
        "t": (str, "text"),
    }
    assert {k: (type(v), v) for k, v in app.items()} == expected
    assert all(type(k) is str for k in app)  # keys are AMQP strings, not symbols


# ---- 2.5 bodies -------------------------------------------------------------------------------


def test_message_has_no_body_section(peer: ScriptedPeer, clients: Clients):
    transfer, _ = send_one(peer, clients, lambda s: s.createMessage())

    assert transfer.section_codes == [HEADER, MESSAGE_ANNOTATIONS, PROPERTIES]


def test_text_body_is_an_amqp_value_string(peer: ScriptedPeer, clients: Clients):
    transfer, _ = send_one(peer, clients, lambda s: s.createTextMessage("héllo"))

    body = sections_of(transfer)[AMQP_VALUE]
    assert type(body) is str
    assert body == "héllo"
    assert prop(properties(transfer), P_CONTENT_TYPE) is None


def test_null_text_body_is_an_amqp_value_null(peer: ScriptedPeer, clients: Clients):
    transfer, _ = send_one(peer, clients, lambda s: s.createTextMessage())

    assert transfer.section_codes[-1] == AMQP_VALUE
    assert transfer.section(AMQP_VALUE) is None


def test_bytes_body_is_data_with_octet_stream_content_type(peer: ScriptedPeer, clients: Clients):
    def build(session: Session) -> Message:
        message = session.createBytesMessage()
        message.writeBytes(b"\x00\x01\x02\xff")
        return message

    transfer, _ = send_one(peer, clients, build)

    body = sections_of(transfer)[DATA]
    assert type(body) is bytes
    assert body == b"\x00\x01\x02\xff"
    content_type = prop(properties(transfer), P_CONTENT_TYPE)
    assert content_type == "application/octet-stream"
    assert type(content_type) is symbol


def test_empty_bytes_body_is_an_empty_data_section(peer: ScriptedPeer, clients: Clients):
    transfer, _ = send_one(peer, clients, lambda s: s.createBytesMessage())

    assert transfer.section(DATA) == b""


def test_map_body_is_an_amqp_value_map(peer: ScriptedPeer, clients: Clients):
    def build(session: Session) -> Message:
        message = session.createMapMessage()
        message.setString("name", "widget")
        message.setInt("count", 3)
        message.setLong("big", 2**40)
        message.setBoolean("ok", True)
        message.setDouble("price", 9.5)
        message.setBytes("raw", b"\x01\x02")
        return message

    transfer, _ = send_one(peer, clients, build)

    body = sections_of(transfer)[AMQP_VALUE]
    assert {k: (type(v), v) for k, v in body.items()} == {
        "name": (str, "widget"),
        "count": (int32, 3),
        "big": (int, 2**40),
        "ok": (bool, True),
        "price": (float, 9.5),
        "raw": (bytes, b"\x01\x02"),
    }
    assert prop(properties(transfer), P_CONTENT_TYPE) is None


def test_stream_body_is_an_amqp_sequence(peer: ScriptedPeer, clients: Clients):
    def build(session: Session) -> Message:
        message = session.createStreamMessage()
        message.writeString("a")
        message.writeInt(1)
        message.writeShort(2)
        message.writeBoolean(False)
        message.writeBytes(b"\x09")
        return message

    transfer, _ = send_one(peer, clients, build)

    body = sections_of(transfer)[AMQP_SEQUENCE]
    assert [(type(v), v) for v in body] == [
        (str, "a"),
        (int32, 1),
        (short, 2),
        (bool, False),
        (bytes, b"\x09"),
    ]


def test_object_body_is_data_with_a_serialized_object(peer: ScriptedPeer, clients: Clients):
    payload = {"order": 42, "items": ["a", "b"]}

    transfer, _ = send_one(peer, clients, lambda s: s.createObjectMessage(payload))

    body = sections_of(transfer)[DATA]
    assert type(body) is bytes
    assert pickle.loads(body) == payload
    # jmspy serializes with pickle and says so; Java-serialized bodies use the Java type.
    assert prop(properties(transfer), P_CONTENT_TYPE) == "application/x-python-serialized-object"
    assert annotations(transfer)[MSG_TYPE] == byte(1)
