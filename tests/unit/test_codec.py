"""JMS <-> AMQP codec: exact sections on the wire and the Qpid JMS receive rules."""

from __future__ import annotations

import math
import uuid
from typing import Any

import pytest
from proton import (
    Data,
    Described,
    byte,
    char,
    float32,
    int32,
    short,
    symbol,
    timestamp,
    ubyte,
    uint,
    ulong,
    ushort,
)
from proton import Message as ProtonMessage

from jmspy._amqp.codec import CodecError, decode_message, encode_message
from jmspy.destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from jmspy.errors import MessageFormatException
from jmspy.message import (
    JAVA_SERIALIZED_CONTENT_TYPE,
    PYTHON_SERIALIZED_CONTENT_TYPE,
    BytesMessage,
    DeliveryMode,
    DeserializationPolicy,
    JavaType,
    JByte,
    JChar,
    JFloat,
    JShort,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)

HEADER, DA, MA, PROPS, APP, DATA, SEQ, VALUE, FOOTER = range(0x70, 0x79)
U = uuid.UUID("0e8a4a1c-8d2c-4a0e-9b51-3b0f2a6f9e11")

# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _owned(value: Any) -> Any:
    """Copy memoryviews out of a Data before it is dropped."""
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, list):
        return [_owned(v) for v in value]
    if isinstance(value, dict):
        return {_owned(k): _owned(v) for k, v in value.items()}
    if isinstance(value, Described):
        return Described(_owned(value.descriptor), _owned(value.value))
    return value


def sections(payload: bytes) -> list[tuple[int, Any]]:
    """(descriptor code, value) for each section, with proton's typed Python values."""
    out: list[tuple[int, Any]] = []
    view = memoryview(payload)
    while view:
        d = Data()
        n = d.decode(bytes(view))
        view = view[n:]
        d.rewind()
        d.next()
        described = d.get_object()
        assert isinstance(described, Described)
        descriptor = described.descriptor
        assert isinstance(descriptor, int)
        out.append((int(descriptor), _owned(described.value)))
    return out


def section(payload: bytes, code: int) -> Any:
    found = [v for c, v in sections(payload) if c == code]
    assert len(found) == 1, f"expected one section 0x{code:x}, got {sections(payload)}"
    return found[0]


def codes(payload: bytes) -> list[int]:
    return [c for c, _ in sections(payload)]


def encode(msg: Message, ttl: int = 0, delivery_time: bool = False, **kw: Any) -> bytes:
    return encode_message(msg, ttl=ttl, delivery_time_transmitted=delivery_time, **kw)


def build(*parts: tuple[int, Any]) -> bytes:
    """A raw AMQP message from (descriptor, python value) pairs, encoded with proton.Data."""
    out = b""
    for code, value in parts:
        d = Data()
        d.put_py_described(Described(ulong(code), value))
        out += bytes(d.encode())
    return out


def stamp(msg: Message, dest: Destination | None = None) -> Message:
    """What the producer does before encoding."""
    msg.setJMSDestination(dest if dest is not None else Queue("q"))
    msg.setJMSMessageID("ID:conn:1:1:1-1")
    msg.setJMSTimestamp(1_700_000_000_000)
    return msg


def round_trip(msg: Message, **kw: Any) -> Message:
    return decode_message(encode(msg, **kw), None)


# ---------------------------------------------------------------------------------------------
# Round trips
# ---------------------------------------------------------------------------------------------


def _with_everything(msg: Message) -> Message:
    stamp(msg, Topic("news"))
    msg.setJMSReplyTo(TemporaryQueue("reply-1"))
    msg.setJMSCorrelationID("corr-7")
    msg.setJMSDeliveryMode(DeliveryMode.NON_PERSISTENT)
    msg.setJMSPriority(8)
    msg.setJMSType("kind")
    msg.setJMSExpiration(1_700_000_060_000)
    msg.setJMSDeliveryTime(1_700_000_005_000)
    msg.setBooleanProperty("bool", True)
    msg.setByteProperty("byte", -7)
    msg.setShortProperty("short", -300)
    msg.setIntProperty("int", 70000)
    msg.setLongProperty("long", -(2**40))
    msg.setFloatProperty("float", 1.25)
    msg.setDoubleProperty("double", 0.1)
    msg.setStringProperty("string", "héllo")
    msg.setObjectProperty("null", None)
    msg.setObjectProperty("char", JChar("c"))
    msg.setStringProperty("JMSXGroupID", "group")
    msg.setIntProperty("JMSXGroupSeq", 5)
    msg.setStringProperty("JMSXUserID", "alice")
    msg.setStringProperty("JMS_AMQP_REPLY_TO_GROUP_ID", "rgroup")
    return msg


def _check_everything(r: Message) -> None:
    assert r.getJMSDestination() == Topic("news")
    assert r.getJMSReplyTo() == TemporaryQueue("reply-1")
    assert r.getJMSMessageID() == "ID:conn:1:1:1-1"
    assert r.getJMSCorrelationID() == "corr-7"
    assert r.getJMSDeliveryMode() == DeliveryMode.NON_PERSISTENT
    assert r.getJMSPriority() == 8
    assert r.getJMSType() == "kind"
    assert r.getJMSTimestamp() == 1_700_000_000_000
    assert r.getJMSExpiration() == 1_700_000_060_000
    assert r.getJMSDeliveryTime() == 1_700_000_005_000
    assert r.getJMSRedelivered() is False
    assert r.getIntProperty("JMSXDeliveryCount") == 1
    expected = {
        "bool": (JavaType.BOOLEAN, True),
        "byte": (JavaType.BYTE, -7),
        "short": (JavaType.SHORT, -300),
        "int": (JavaType.INT, 70000),
        "long": (JavaType.LONG, -(2**40)),
        "float": (JavaType.FLOAT, 1.25),
        "double": (JavaType.DOUBLE, 0.1),
        "string": (JavaType.STRING, "héllo"),
        "null": (JavaType.STRING, None),
        "char": (JavaType.CHAR, "c"),
    }
    for name, (jt, value) in expected.items():
        assert r._get_property_type(name) is jt, name
        assert r.getObjectProperty(name) == value, name
    assert r.getStringProperty("JMSXGroupID") == "group"
    assert r.getIntProperty("JMSXGroupSeq") == 5
    assert r.getStringProperty("JMSXUserID") == "alice"
    assert r.getStringProperty("JMS_AMQP_REPLY_TO_GROUP_ID") == "rgroup"
    assert set(r.getPropertyNames()) == set(expected) | {
        "JMSXGroupID",
        "JMSXGroupSeq",
        "JMSXUserID",
        "JMSXDeliveryCount",
        "JMS_AMQP_REPLY_TO_GROUP_ID",
    }


def test_round_trip_message() -> None:
    r = round_trip(_with_everything(Message()), delivery_time=True)
    assert type(r) is Message
    _check_everything(r)


def test_round_trip_text() -> None:
    r = round_trip(_with_everything(TextMessage("text ✓")), delivery_time=True)
    assert isinstance(r, TextMessage)
    assert r.getText() == "text ✓"
    _check_everything(r)


def test_round_trip_bytes() -> None:
    m = BytesMessage()
    m.writeInt(42)
    m.writeUTF("x")
    r = round_trip(_with_everything(m), delivery_time=True)
    assert isinstance(r, BytesMessage)
    assert r.readInt() == 42
    assert r.readUTF() == "x"
    _check_everything(r)


def test_round_trip_map() -> None:
    m = MapMessage()
    m.setBoolean("b", False)
    m.setByte("y", -1)
    m.setShort("s", 2)
    m.setChar("c", "z")
    m.setInt("i", 3)
    m.setLong("l", 2**50)
    m.setFloat("f", 0.5)
    m.setDouble("d", math.pi)
    m.setString("t", "str")
    m.setString("n", None)
    m.setBytes("raw", b"\x00\x01")
    r = round_trip(_with_everything(m), delivery_time=True)
    assert isinstance(r, MapMessage)
    assert r._map == m._map
    _check_everything(r)


def test_round_trip_stream() -> None:
    m = StreamMessage()
    for v in (True, JByte(1), JShort(2), JChar("c"), 3, 2**40, JFloat(1.5), 2.5, "s", b"b", None):
        m.writeObject(v)
    r = round_trip(_with_everything(m), delivery_time=True)
    assert isinstance(r, StreamMessage)
    assert r._items == m._items
    assert r.readBoolean() is True
    assert r.readByte() == 1
    _check_everything(r)


def test_round_trip_object() -> None:
    r = round_trip(_with_everything(ObjectMessage({"k": [1, (2, 3)]})), delivery_time=True)
    assert isinstance(r, ObjectMessage)
    assert r.getObject() == {"k": [1, (2, 3)]}
    _check_everything(r)


def test_round_trip_ids() -> None:
    m = stamp(Message())
    m.setJMSMessageID(f"ID:AMQP_UUID:{U}")
    m.setJMSCorrelationID("ID:AMQP_ULONG:12")
    r = round_trip(m)
    assert r.getJMSMessageID() == f"ID:AMQP_UUID:{U}"
    assert r.getJMSCorrelationID() == "ID:AMQP_ULONG:12"
    m.setJMSCorrelationIDAsBytes(b"\x01\x02")
    r = round_trip(m)
    assert r.getJMSCorrelationIDAsBytes() == b"\x01\x02"
    assert r.getJMSCorrelationID() == "ID:AMQP_BINARY:0102"


def test_decoded_message_is_read_only_and_in_read_mode() -> None:
    from jmspy.errors import MessageNotWriteableException

    m = BytesMessage()
    m.writeInt(1)
    m.setIntProperty("p", 1)
    r = round_trip(stamp(m))
    assert isinstance(r, BytesMessage)
    with pytest.raises(MessageNotWriteableException):
        r.setIntProperty("q", 1)
    with pytest.raises(MessageNotWriteableException):
        r.writeInt(1)
    assert r.getBodyLength() == 4
    writable = decode_message(encode(m), None, read_only=False)
    writable.setIntProperty("q", 1)


# ---------------------------------------------------------------------------------------------
# Header section
# ---------------------------------------------------------------------------------------------


def test_no_header_for_non_persistent_priority_4() -> None:
    m = stamp(TextMessage("x"))
    m.setJMSDeliveryMode(DeliveryMode.NON_PERSISTENT)
    assert HEADER not in codes(encode(m))


def test_header_durable_true_only() -> None:
    header = section(encode(stamp(TextMessage("x"))), HEADER)
    assert header == [True]
    assert type(header[0]) is bool


def test_header_priority_only_when_not_4() -> None:
    m = stamp(TextMessage("x"))
    m.setJMSDeliveryMode(DeliveryMode.NON_PERSISTENT)
    m.setJMSPriority(7)
    header = section(encode(m), HEADER)
    assert header == [False, 7]
    assert type(header[1]) is ubyte


def test_header_ttl() -> None:
    m = stamp(TextMessage("x"))
    header = section(encode(m, ttl=5000), HEADER)
    assert header == [True, None, 5000]
    assert type(header[2]) is uint


@pytest.mark.parametrize("ttl", [0, -5, 2**32 - 1, 2**32, 2**40])
def test_header_ttl_out_of_uint_range_is_not_written(ttl: int) -> None:
    m = stamp(TextMessage("x"))
    assert section(encode(m, ttl=ttl), HEADER) == [True]


def test_no_delivery_count_on_send() -> None:
    m = stamp(TextMessage("x"))
    m.setJMSRedelivered(True)
    m.set_delivery_count(3)
    header = section(encode(m, ttl=10), HEADER)
    assert len(header) <= 3


def test_amqp_ttl_property_overrides() -> None:
    m = stamp(TextMessage("x"))
    m.setLongProperty("JMS_AMQP_TTL", 1000)
    payload = encode(m, ttl=5000)
    assert section(payload, HEADER) == [True, None, 1000]
    assert APP not in codes(payload)  # vendor properties are never application properties
    m.setLongProperty("JMS_AMQP_TTL", 0)
    assert section(encode(m, ttl=5000), HEADER) == [True]


def test_amqp_ttl_invalid_value_at_encode() -> None:
    m = stamp(TextMessage("x"))
    m._store("JMS_AMQP_TTL", (JavaType.LONG, 2**32))
    with pytest.raises(MessageFormatException, match="JMS_AMQP_TTL"):
        encode(m)


# ---------------------------------------------------------------------------------------------
# Message annotations
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "code"),
    [
        (Message, 0),
        (ObjectMessage, 1),
        (MapMessage, 2),
        (BytesMessage, 3),
        (StreamMessage, 4),
        (TextMessage, 5),
    ],
)
def test_msg_type_annotation(cls: type[Message], code: int) -> None:
    annotations = section(encode(stamp(cls())), MA)
    assert annotations[symbol("x-opt-jms-msg-type")] == code
    assert type(annotations[symbol("x-opt-jms-msg-type")]) is byte
    assert all(type(k) is symbol for k in annotations)


@pytest.mark.parametrize(
    ("dest", "code"),
    [(Queue("a"), 0), (Topic("a"), 1), (TemporaryQueue("a"), 2), (TemporaryTopic("a"), 3)],
)
def test_destination_and_reply_to_annotations(dest: Destination, code: int) -> None:
    m = stamp(TextMessage("x"), dest)
    m.setJMSReplyTo(dest)
    annotations = section(encode(m), MA)
    assert annotations[symbol("x-opt-jms-dest")] == code
    assert type(annotations[symbol("x-opt-jms-dest")]) is byte
    assert annotations[symbol("x-opt-jms-reply-to")] == code
    assert type(annotations[symbol("x-opt-jms-reply-to")]) is byte


def test_annotations_without_destination() -> None:
    annotations = section(encode(TextMessage("x")), MA)
    assert annotations == {symbol("x-opt-jms-msg-type"): 5}


def test_delivery_time_only_when_transmitted() -> None:
    m = stamp(TextMessage("x"))
    m.setJMSDeliveryTime(1_700_000_009_000)
    assert symbol("x-opt-delivery-time") not in section(encode(m), MA)
    annotations = section(encode(m, delivery_time=True), MA)
    value = annotations[symbol("x-opt-delivery-time")]
    assert value == 1_700_000_009_000
    assert type(value) is int  # an AMQP long, not a timestamp
    # And the cached annotations without it are still right afterwards.
    assert symbol("x-opt-delivery-time") not in section(encode(m), MA)


# ---------------------------------------------------------------------------------------------
# Properties section
# ---------------------------------------------------------------------------------------------


def test_properties_section_fields() -> None:
    m = stamp(BytesMessage(), Queue("orders"))
    m.setJMSReplyTo(Topic("replies"))
    m.setJMSType("subject")
    m.setJMSCorrelationID("corr")
    m.setJMSExpiration(1_700_000_001_000)
    m.setStringProperty("JMSXUserID", "alice")
    m.setStringProperty("JMSXGroupID", "g")
    m.setIntProperty("JMSXGroupSeq", 9)
    m.setStringProperty("JMS_AMQP_REPLY_TO_GROUP_ID", "rg")
    props = section(encode(m), PROPS)
    assert props == [
        "ID:conn:1:1:1-1",
        b"alice",
        "orders",
        "subject",
        "replies",
        "corr",
        "application/octet-stream",
        None,
        1_700_000_001_000,
        1_700_000_000_000,
        "g",
        9,
        "rg",
    ]
    assert type(props[0]) is str
    assert type(props[1]) is bytes
    assert type(props[6]) is symbol
    assert type(props[8]) is timestamp
    assert type(props[9]) is timestamp
    assert type(props[11]) is uint


def test_properties_trailing_nulls_trimmed_and_section_omitted() -> None:
    assert PROPS not in codes(encode(Message()))
    m = Message()
    m.setJMSMessageID("ID:x")
    assert section(encode(m), PROPS) == ["ID:x"]


@pytest.mark.parametrize(
    ("jms_id", "wire"),
    [
        (f"ID:AMQP_UUID:{U}", U),
        ("ID:AMQP_ULONG:77", ulong(77)),
        ("ID:AMQP_BINARY:0A0B", b"\x0a\x0b"),
        ("ID:AMQP_STRING:ID:AMQP_UUID:x", "ID:AMQP_UUID:x"),
        ("ID:AMQP_NO_PREFIX:bare", "bare"),
        ("ID:generated", "ID:generated"),
    ],
)
def test_id_fields_use_amqp_types(jms_id: str, wire: Any) -> None:
    m = Message()
    m.setJMSMessageID(jms_id)
    m.setJMSCorrelationID(jms_id)
    props = section(encode(m), PROPS)
    assert props[0] == wire and type(props[0]) is type(wire)
    assert props[5] == wire and type(props[5]) is type(wire)
    r = decode_message(encode(m), None)
    assert r.getJMSMessageID() == jms_id
    # A correlation id that reached the wire as a string without "ID:" is application data
    # and reads back unescaped.
    assert r.getJMSCorrelationID() == ("bare" if wire == "bare" else jms_id)


def test_plain_correlation_id_and_binary() -> None:
    m = Message()
    m.setJMSCorrelationID("app-corr")
    assert section(encode(m), PROPS)[5] == "app-corr"
    m.setJMSCorrelationIDAsBytes(b"\xff")
    value = section(encode(m), PROPS)[5]
    assert value == b"\xff" and type(value) is bytes


def test_bad_id_string_fails_encode() -> None:
    m = Message()
    m.setJMSCorrelationID("ID:AMQP_UUID:nope")
    with pytest.raises(MessageFormatException, match="JMSCorrelationID"):
        encode(m)


@pytest.mark.parametrize(("seq", "wire"), [(1, 1), (-1, 2**32 - 1), (-(2**31), 2**31)])
def test_group_sequence_wraps(seq: int, wire: int) -> None:
    m = Message()
    m.setIntProperty("JMSXGroupSeq", seq)
    assert section(encode(m), PROPS)[11] == wire
    assert decode_message(encode(m), None).getIntProperty("JMSXGroupSeq") == seq


def test_group_sequence_zero_not_encoded() -> None:
    m = Message()
    m.setIntProperty("JMSXGroupSeq", 0)
    assert PROPS not in codes(encode(m))


def test_object_message_content_type() -> None:
    props = section(encode(ObjectMessage([1])), PROPS)
    assert props[6] == PYTHON_SERIALIZED_CONTENT_TYPE
    assert type(props[6]) is symbol


def test_prefixes() -> None:
    m = Message()
    m.setJMSDestination(Queue("orders"))
    m.setJMSReplyTo(Topic("news"))
    payload = encode(m, queue_prefix="queue://", topic_prefix="topic://")
    props = section(payload, PROPS)
    assert props[2] == "queue://orders"
    assert props[4] == "topic://news"
    r = decode_message(payload, None, queue_prefix="queue://", topic_prefix="topic://")
    assert r.getJMSDestination() == Queue("orders")
    assert r.getJMSReplyTo() == Topic("news")
    m.setJMSDestination(TemporaryQueue("tmp"))  # temporary names are used verbatim
    assert section(encode(m, queue_prefix="queue://"), PROPS)[2] == "tmp"


# ---------------------------------------------------------------------------------------------
# Application properties
# ---------------------------------------------------------------------------------------------


def test_application_property_amqp_types() -> None:
    m = Message()
    m.setBooleanProperty("bool", True)
    m.setByteProperty("byte", 1)
    m.setShortProperty("short", 2)
    m.setIntProperty("int", 3)
    m.setLongProperty("long", 4)
    m.setFloatProperty("float", 1.5)
    m.setDoubleProperty("double", 2.5)
    m.setStringProperty("string", "s")
    m.setObjectProperty("null", None)
    m.setObjectProperty("char", JChar("c"))
    m.setLongProperty("JMS_AMQP_TTL", 10)
    m.setStringProperty("JMS_AMQP_REPLY_TO_GROUP_ID", "x")
    m.setStringProperty("JMSXGroupID", "g")  # a properties-section field, not here
    app = section(encode(m), APP)
    expected_types = {
        "bool": bool,
        "byte": byte,
        "short": short,
        "int": int32,
        "long": int,
        "float": float32,
        "double": float,
        "string": str,
        "null": type(None),
        "char": char,
    }
    assert set(app) == set(expected_types)
    for name, t in expected_types.items():
        assert type(app[name]) is t, name
    assert all(type(k) is str for k in app)


def test_no_application_properties_section_when_empty() -> None:
    m = Message()
    m.setLongProperty("JMS_AMQP_TTL", 10)
    assert APP not in codes(encode(m))


# ---------------------------------------------------------------------------------------------
# Body sections
# ---------------------------------------------------------------------------------------------


def test_message_has_no_body_section() -> None:
    assert codes(encode(stamp(Message()))) == [HEADER, MA, PROPS]


def test_text_body() -> None:
    payload = encode(TextMessage("hi"))
    assert codes(payload)[-1] == VALUE
    assert section(payload, VALUE) == "hi"
    assert section(encode(TextMessage()), VALUE) is None


@pytest.mark.parametrize("size", [0, 1, 255, 256, 70000])
def test_text_and_bytes_framing_sizes(size: int) -> None:
    text = "é" * size
    assert section(encode(TextMessage(text)), VALUE) == text
    bm = BytesMessage()
    bm.writeBytes(b"\x07" * size)
    assert section(encode(bm), DATA) == b"\x07" * size
    r = round_trip(bm)
    assert isinstance(r, BytesMessage) and r.getBodyLength() == size


def test_bytes_body_and_content_type() -> None:
    bm = BytesMessage()
    payload = encode(bm)
    assert section(payload, DATA) == b""  # an empty data section, not a missing one
    assert section(payload, PROPS)[6] == "application/octet-stream"
    bm.writeBytes(b"abc")
    bm.reset()  # read mode must not change what is sent
    assert section(encode(bm), DATA) == b"abc"


def test_map_body() -> None:
    m = MapMessage()
    m.setByte("y", 1)
    m.setInt("i", 2)
    m.setBytes("b", b"x")
    m.setChar("c", "z")
    m.setString("n", None)
    value = section(encode(m), VALUE)
    assert value == {"y": 1, "i": 2, "b": b"x", "c": "z", "n": None}
    assert type(value["y"]) is byte
    assert type(value["i"]) is int32
    assert type(value["b"]) is bytes
    assert type(value["c"]) is char
    assert all(type(k) is str for k in value)


def test_stream_body() -> None:
    m = StreamMessage()
    m.writeShort(3)
    m.writeFloat(0.5)
    m.writeBytes(b"q")
    seq = section(encode(m), SEQ)
    assert seq == [3, 0.5, b"q"]
    assert [type(v) for v in seq] == [short, float32, bytes]
    assert VALUE not in codes(encode(m))


def test_object_body() -> None:
    m = ObjectMessage({"a": 1})
    payload = encode(m)
    assert section(payload, DATA) == m.getSerializedBytes()


def test_object_typed_encoding() -> None:
    m = ObjectMessage({"a": [1, JShort(2)], "b": b"x"})
    m.setBooleanProperty("JMS_AMQP_TYPED_ENCODING", True)
    payload = encode(m)
    value = section(payload, VALUE)
    assert value == {"a": [1, 2], "b": b"x"}
    assert type(value["a"][1]) is short
    assert DATA not in codes(payload)
    assert APP not in codes(payload)
    r = decode_message(payload, None)
    assert isinstance(r, ObjectMessage)
    assert r.getObject() == {"a": [1, 2], "b": b"x"}


def test_object_typed_encoding_rejects_unencodable() -> None:
    m = ObjectMessage({1, 2})
    m.setBooleanProperty("JMS_AMQP_TYPED_ENCODING", True)
    with pytest.raises(MessageFormatException, match="set"):
        encode(m)


def test_empty_object_message() -> None:
    r = round_trip(ObjectMessage())
    assert isinstance(r, ObjectMessage)
    assert r.getObject() is None


def test_resend_of_java_serialized_object_keeps_content_type() -> None:
    m = ObjectMessage()
    m.set_serialized_body(b"\xac\xed", JAVA_SERIALIZED_CONTENT_TYPE)
    payload = encode(m)
    assert section(payload, PROPS)[6] == JAVA_SERIALIZED_CONTENT_TYPE
    r = decode_message(payload, None)
    assert isinstance(r, ObjectMessage)
    assert r.getSerializedBytes() == b"\xac\xed"
    with pytest.raises(MessageFormatException, match="Java"):
        r.getObject()


def test_deserialization_policy_applied_on_decode() -> None:
    payload = encode(ObjectMessage(Queue("q")))
    r = decode_message(payload, None)
    assert isinstance(r, ObjectMessage)
    with pytest.raises(MessageFormatException, match="jmspy.destination.Queue"):
        r.getObject()
    policy = DeserializationPolicy(allow_list=["jmspy.destination"])
    r = decode_message(payload, None, deserialization_policy=policy)
    assert isinstance(r, ObjectMessage)
    assert r.getObject() == Queue("q")


def test_unencodable_text_raises_message_format() -> None:
    with pytest.raises(MessageFormatException):
        encode(TextMessage("\ud800"))


# ---------------------------------------------------------------------------------------------
# Receive rules
# ---------------------------------------------------------------------------------------------


def _received(*parts: tuple[int, Any], dest: Destination | None = None, **kw: Any) -> Message:
    return decode_message(build(*parts), dest, **kw)


def test_decode_header_defaults() -> None:
    r = _received((VALUE, "x"))
    assert r.getJMSDeliveryMode() == DeliveryMode.NON_PERSISTENT
    assert r.getJMSPriority() == 4
    assert r.getJMSRedelivered() is False
    assert r.getIntProperty("JMSXDeliveryCount") == 1
    assert r.getJMSMessageID() is None
    assert r.getJMSTimestamp() == 0
    assert r.getJMSDeliveryTime() == 0
    assert r.getJMSExpiration() == 0


def test_decode_header_fields() -> None:
    r = _received((HEADER, [True, ubyte(200), None, None, uint(2)]), (VALUE, "x"))
    assert r.getJMSDeliveryMode() == DeliveryMode.PERSISTENT
    assert r.getJMSPriority() == 9  # clamped
    assert r.getJMSRedelivered() is True
    assert r.getIntProperty("JMSXDeliveryCount") == 3


def test_decode_synthetic_expiration_from_ttl() -> None:
    r = _received((HEADER, [False, None, uint(500)]), now_ms=1000)
    assert r.getJMSExpiration() == 1500
    r = _received(
        (HEADER, [False, None, uint(500)]),
        (PROPS, [None] * 8 + [timestamp(9000)]),
        now_ms=1000,
    )
    assert r.getJMSExpiration() == 9000


@pytest.mark.parametrize("value", [2_000, timestamp(2_000), int32(2_000), 2_000.0])
def test_decode_delivery_time_types(value: Any) -> None:
    r = _received(
        (MA, {symbol("x-opt-delivery-time"): value}),
        (PROPS, [None] * 9 + [timestamp(1_000)]),
    )
    assert r.getJMSTimestamp() == 1_000
    assert r.getJMSDeliveryTime() == 2_000


def test_decode_delivery_time_defaults_to_timestamp() -> None:
    r = _received((PROPS, [None] * 9 + [timestamp(1_000)]))
    assert r.getJMSDeliveryTime() == 1_000


@pytest.mark.parametrize("value", ["2000", True, [1]])
def test_decode_delivery_time_bad_type(value: Any, caplog: pytest.LogCaptureFixture) -> None:
    # Ignored with a warning (as Qpid JMS ignores annotations it cannot use), not dropped.
    r = _received(
        (MA, {symbol("x-opt-delivery-time"): value}), (PROPS, [None] * 9 + [timestamp(1_000)])
    )
    assert r.getJMSDeliveryTime() == 1_000
    assert any("x-opt-delivery-time" in m for m in caplog.messages)


def test_decode_group_sequence_and_user_id() -> None:
    props = [None, b"bob", None, None, None, None, None, None, None, None, "g", uint(2**32 - 2)]
    r = _received((PROPS, props))
    assert r.getStringProperty("JMSXUserID") == "bob"
    assert r.getIntProperty("JMSXGroupSeq") == -2
    assert r.getStringProperty("JMSXGroupID") == "g"


@pytest.mark.parametrize(
    ("annotations", "consumer", "expected"),
    [
        ({"x-opt-jms-dest": byte(0)}, Topic("c"), Queue("addr")),
        ({"x-opt-jms-dest": byte(1)}, None, Topic("addr")),
        ({"x-opt-jms-dest": byte(2)}, None, TemporaryQueue("addr")),
        ({"x-opt-jms-dest": byte(3)}, None, TemporaryTopic("addr")),
        ({}, Topic("c"), Topic("addr")),
        ({}, TemporaryTopic("c"), TemporaryTopic("addr")),
        ({}, Queue("c"), Queue("addr")),
        ({}, None, Queue("addr")),
        ({"x-opt-to-type": "topic"}, None, Topic("addr")),
        ({"x-opt-to-type": "queue"}, Topic("c"), Queue("addr")),
        ({"x-opt-to-type": "temporary,queue"}, None, TemporaryQueue("addr")),
        ({"x-opt-to-type": "topic,temporary"}, None, TemporaryTopic("addr")),
        ({"x-opt-to-type": "bogus"}, Topic("c"), Topic("addr")),
    ],
)
def test_decode_destination_type(
    annotations: dict[str, Any], consumer: Destination | None, expected: Destination
) -> None:
    ma = {symbol(k): v for k, v in annotations.items()}
    r = _received((MA, ma), (PROPS, [None, None, "addr"]), dest=consumer)
    assert r.getJMSDestination() == expected
    assert type(r.getJMSDestination()) is type(expected)


def test_decode_missing_to_uses_consumer_destination() -> None:
    r = _received((VALUE, "x"), dest=Topic("sub"))
    assert r.getJMSDestination() == Topic("sub")
    assert r.getJMSReplyTo() is None


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        ({"x-opt-jms-reply-to": byte(1)}, Topic("r")),
        ({"x-opt-jms-reply-to": byte(2)}, TemporaryQueue("r")),
        ({"x-opt-reply-type": "temporary,topic"}, TemporaryTopic("r")),
        ({}, Topic("r")),  # the consumer's kind (a Topic here)
    ],
)
def test_decode_reply_to_type(annotations: dict[str, Any], expected: Destination) -> None:
    ma = {symbol(k): v for k, v in annotations.items()}
    r = _received((MA, ma), (PROPS, [None, None, None, None, "r"]), dest=Topic("c"))
    assert r.getJMSReplyTo() == expected


@pytest.mark.parametrize(
    ("amqp_value", "jt", "value"),
    [
        (True, JavaType.BOOLEAN, True),
        (byte(-1), JavaType.BYTE, -1),
        (short(-2), JavaType.SHORT, -2),
        (int32(-3), JavaType.INT, -3),
        (-4, JavaType.LONG, -4),
        (float32(0.5), JavaType.FLOAT, 0.5),
        (0.25, JavaType.DOUBLE, 0.25),
        ("s", JavaType.STRING, "s"),
        (None, JavaType.STRING, None),
        (char("c"), JavaType.CHAR, "c"),
        (ubyte(255), JavaType.SHORT, 255),
        (ushort(65535), JavaType.INT, 65535),
        (uint(2**32 - 1), JavaType.LONG, 2**32 - 1),
        (ulong(5), JavaType.LONG, 5),
        (ulong(2**64 - 1), JavaType.LONG, -1),
        (symbol("sym"), JavaType.STRING, "sym"),
        (timestamp(123), JavaType.LONG, 123),
        (U, JavaType.STRING, str(U)),
        (b"bin", JavaType.OBJECT, b"bin"),
        ([1, "a"], JavaType.OBJECT, [1, "a"]),
    ],
)
def test_decode_application_property_types(amqp_value: Any, jt: JavaType, value: Any) -> None:
    r = _received((APP, {"p": amqp_value}))
    assert r._get_property_type("p") is jt
    got = r.getObjectProperty("p")
    assert got == value
    if value is not None:
        assert type(got) is type(value)


def test_decode_application_property_non_string_key() -> None:
    with pytest.raises(CodecError, match="key"):
        _received((APP, {ulong(1): "x"}))


def test_decode_application_property_illegal_name_hidden() -> None:
    r = _received((APP, {"sentry-trace": "abc", "ok": 1}))
    assert r.getPropertyNames() == ["ok", "JMSXDeliveryCount"]
    r = _received((APP, {"sentry-trace": "abc"}), validate_property_names=False)
    assert r.getStringProperty("sentry-trace") == "abc"


def test_decode_ignores_delivery_annotations_and_footer() -> None:
    r = _received(
        (DA, {symbol("x-opt-lock-token"): 1}),
        (MA, {symbol("x-opt-jms-msg-type"): byte(5), symbol("x-opt-custom"): "x"}),
        (VALUE, "body"),
        (FOOTER, {symbol("x-opt-hash"): b"h"}),
    )
    assert isinstance(r, TextMessage) and r.getText() == "body"


def test_decode_symbolic_descriptors() -> None:
    d = Data()
    d.put_py_described(Described(symbol("amqp:amqp-value:*"), "hello"))
    r = decode_message(bytes(d.encode()), None)
    assert isinstance(r, TextMessage) and r.getText() == "hello"


def test_decode_multiple_data_and_sequence_sections() -> None:
    r = _received((MA, {symbol("x-opt-jms-msg-type"): byte(3)}), (DATA, b"ab"), (DATA, b"cd"))
    assert isinstance(r, BytesMessage) and r.getBody(bytes) == b"abcd"
    r = _received((MA, {symbol("x-opt-jms-msg-type"): byte(4)}), (SEQ, [1]), (SEQ, ["x"]))
    assert isinstance(r, StreamMessage)
    assert r.readLong() == 1 and r.readString() == "x"


@pytest.mark.parametrize(
    ("msg_type", "body", "cls"),
    [
        (5, (DATA, "déjà".encode()), TextMessage),
        (3, (VALUE, b"raw"), BytesMessage),
        (3, (VALUE, None), BytesMessage),
        (4, (VALUE, [1, 2]), StreamMessage),
        (2, (VALUE, None), MapMessage),
        (1, (VALUE, {"k": 1}), ObjectMessage),
        (1, (SEQ, [1, 2]), ObjectMessage),
        (0, (VALUE, "ignored"), Message),
    ],
)
def test_decode_alternative_bodies_for_annotated_types(
    msg_type: int, body: tuple[int, Any], cls: type[Message]
) -> None:
    r = _received((MA, {symbol("x-opt-jms-msg-type"): byte(msg_type)}), body)
    assert type(r) is cls
    if cls is TextMessage:
        assert isinstance(r, TextMessage) and r.getText() == "déjà"
    if cls is StreamMessage:
        assert isinstance(r, StreamMessage) and r.readLong() == 1


# ---------------------------------------------------------------------------------------------
# Type inference for messages without x-opt-jms-msg-type (reference 2.5), built by proton
# ---------------------------------------------------------------------------------------------


OCTET = "application/octet-stream"
JAVA = JAVA_SERIALIZED_CONTENT_TYPE
PY = PYTHON_SERIALIZED_CONTENT_TYPE
NONE, DATA_BODY, VALUE_BODY, SEQ_BODY = "none", "data", "amqp-value", "amqp-sequence"


def _foreign(kind: str, body: Any, content_type: str | None) -> Message:
    """A message from a plain proton producer (no JMS annotations)."""
    kw: dict[str, Any] = {}
    if content_type is not None:
        kw["content_type"] = content_type
    if kind != NONE:
        kw["body"] = body
        # proton writes bytes as data and lists as amqp-sequence only when inferred is set.
        kw["inferred"] = kind in (DATA_BODY, SEQ_BODY)
    return decode_message(ProtonMessage(**kw).encode(), Queue("in"))


@pytest.mark.parametrize(
    ("kind", "body", "content_type", "cls", "check"),
    [
        (NONE, None, JAVA, ObjectMessage, None),
        (NONE, None, PY, ObjectMessage, None),
        (NONE, None, OCTET, BytesMessage, b""),
        (NONE, None, None, BytesMessage, b""),
        (NONE, None, "text/plain", TextMessage, None),
        (NONE, None, "application/json", TextMessage, None),
        (NONE, None, "image/png", Message, None),
        (DATA_BODY, b"\x01", OCTET, BytesMessage, b"\x01"),
        (DATA_BODY, b"\x01", None, BytesMessage, b"\x01"),
        (DATA_BODY, b"\xac\xed", JAVA, ObjectMessage, b"\xac\xed"),
        (DATA_BODY, "é".encode("latin-1"), "text/plain;charset=iso-8859-1", TextMessage, "é"),
        (DATA_BODY, b"{}", "application/vnd.api+json", TextMessage, "{}"),
        (DATA_BODY, b"<a/>", "application/xml", TextMessage, "<a/>"),
        (DATA_BODY, b"\x89PNG", "image/png", BytesMessage, b"\x89PNG"),
        (DATA_BODY, b"x", "text/plain;charset=nope", BytesMessage, b"x"),
        (VALUE_BODY, "text", None, TextMessage, "text"),
        (VALUE_BODY, b"bin", None, BytesMessage, b"bin"),
        (VALUE_BODY, {"k": "v"}, None, ObjectMessage, {"k": "v"}),
        (VALUE_BODY, [1, 2], None, ObjectMessage, [1, 2]),
        (VALUE_BODY, 42, None, ObjectMessage, 42),
        (SEQ_BODY, [1, "a"], None, ObjectMessage, [1, "a"]),
    ],
)
def test_inference_table(
    kind: str, body: Any, content_type: str | None, cls: type[Message], check: Any
) -> None:
    r = _foreign(kind, body, content_type)
    assert type(r) is cls
    if isinstance(r, BytesMessage):
        assert r.getBody(bytes) == (check or None)
        assert r.getBodyLength() == len(check)
    elif isinstance(r, TextMessage):
        assert r.getText() == check
    elif isinstance(r, ObjectMessage) and check is not None:
        if isinstance(check, bytes):
            assert r.getSerializedBytes() == check
        else:
            assert r.getObject() == check


def test_inference_amqp_value_null_is_text() -> None:
    r = _received((VALUE, None))
    assert isinstance(r, TextMessage) and r.getText() is None


def test_foreign_message_headers() -> None:
    pm = ProtonMessage(
        body="x",
        id=U,
        correlation_id=ulong(5),
        address="addr",
        reply_to="back",
        subject="subj",
        durable=True,
        priority=6,
        delivery_count=1,
        group_id="g",
        properties={"color": "red", "n": 3},
        creation_time=1_700_000_000.0,
    )
    r = decode_message(pm.encode(), Topic("t"))
    assert isinstance(r, TextMessage)
    assert r.getJMSMessageID() == f"ID:AMQP_UUID:{U}"
    assert r.getJMSCorrelationID() == "ID:AMQP_ULONG:5"
    assert r.getJMSDestination() == Topic("addr")
    assert r.getJMSReplyTo() == Topic("back")
    assert r.getJMSType() == "subj"
    assert r.getJMSDeliveryMode() == DeliveryMode.PERSISTENT
    assert r.getJMSPriority() == 6
    assert r.getJMSRedelivered() is True
    assert r.getIntProperty("JMSXDeliveryCount") == 2
    assert r.getStringProperty("JMSXGroupID") == "g"
    assert r.getStringProperty("color") == "red"
    assert r.getLongProperty("n") == 3
    assert r.getJMSTimestamp() == 1_700_000_000_000


# ---------------------------------------------------------------------------------------------
# Invalid payloads
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"\xff\xff\xff",
        b"\x00\x53",  # truncated described type
        b"\xa1\x03abc",  # a bare string, not a section
        build((VALUE, "x"))[:-1],  # truncated body
        build((0x99, "x")),  # unknown descriptor
        build((HEADER, "not a list")),
        build((MA, [1])),
        build((DATA, "not binary")),
        build((SEQ, "not a list")),
        build((VALUE, "a"), (VALUE, "b")),
        build((DATA, b"a"), (VALUE, "b")),
        build((VALUE, "a"), (DATA, b"b")),
        build((MA, {symbol("x-opt-jms-msg-type"): byte(9)})),
        build((MA, {symbol("x-opt-jms-msg-type"): "text"})),
        build((MA, {symbol("x-opt-jms-msg-type"): byte(5)}), (SEQ, [1])),
        build((MA, {symbol("x-opt-jms-msg-type"): byte(5)}), (VALUE, 5)),
        build((MA, {symbol("x-opt-jms-msg-type"): byte(3)}), (SEQ, [1])),
        build((MA, {symbol("x-opt-jms-msg-type"): byte(2)}), (VALUE, [1])),
        build((MA, {symbol("x-opt-jms-msg-type"): byte(2)}), (VALUE, {1: 2})),
        build((MA, {symbol("x-opt-jms-msg-type"): byte(4)}), (VALUE, "x")),
    ],
)
def test_invalid_payloads_raise_codec_error(payload: bytes) -> None:
    with pytest.raises(CodecError) as info:
        decode_message(payload, None)
    assert str(info.value)
    assert not isinstance(info.value, MessageFormatException)


def test_decode_accepts_bytearray_and_memoryview() -> None:
    payload = encode(TextMessage("x"))
    for form in (bytearray(payload), memoryview(payload)):
        r = decode_message(form, None)
        assert isinstance(r, TextMessage) and r.getText() == "x"


def test_encode_returns_bytes() -> None:
    assert type(encode(TextMessage("x"))) is bytes
