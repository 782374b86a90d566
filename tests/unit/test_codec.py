"""JMS -> AMQP codec: round trips and the exact sections written on send (header, annotations,
properties, application properties, body sections)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from codec_support import (
    APP,
    DATA,
    HEADER,
    MA,
    PROPS,
    SEQ,
    VALUE,
    U,
    codes,
    encode,
    round_trip,
    section,
    stamp,
)
from proton import (
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
)

from jmspy._amqp.codec import decode_message
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
