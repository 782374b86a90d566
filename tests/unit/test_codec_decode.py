"""AMQP -> JMS codec: the Qpid JMS receive rules, type inference for messages from non-JMS
producers, and invalid payloads."""

from __future__ import annotations

from typing import Any

import pytest
from codec_support import (
    APP,
    DA,
    DATA,
    FOOTER,
    HEADER,
    MA,
    PROPS,
    SEQ,
    VALUE,
    U,
    build,
    codes,
    encode,
)
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

from jmspy._amqp.codec import CodecError, decode_message
from jmspy.destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from jmspy.errors import MessageFormatException
from jmspy.message import (
    JAVA_SERIALIZED_CONTENT_TYPE,
    PYTHON_SERIALIZED_CONTENT_TYPE,
    BytesMessage,
    DeliveryMode,
    JavaType,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)

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


# ---------------------------------------------------------------------------------------------
# JMS_AMQP_TYPED_ENCODING on receive (Qpid JMS: true for a typed-object body)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ((VALUE, {"k": [1, 2]}), {"k": [1, 2]}),
        ((VALUE, None), None),
        ((SEQ, [1, "two"]), [1, "two"]),
    ],
)
def test_received_typed_object_reports_typed_encoding(body: tuple[int, Any], expected: Any) -> None:
    payload = build((MA, {symbol("x-opt-jms-msg-type"): byte(1)}), body)
    r = decode_message(payload, Queue("q"))
    assert isinstance(r, ObjectMessage)
    assert r.getObject() == expected
    assert r.propertyExists("JMS_AMQP_TYPED_ENCODING")
    assert r.getBooleanProperty("JMS_AMQP_TYPED_ENCODING") is True
    assert r.getObjectProperty("JMS_AMQP_TYPED_ENCODING") is True
    assert "JMS_AMQP_TYPED_ENCODING" in r.getPropertyNames()
    # Sent on, it keeps the typed encoding (an amqp-value body, no serialized data section).
    r.set_read_only(False)
    resent = encode(r)
    assert DATA not in codes(resent) and VALUE in codes(resent)
    assert APP not in codes(resent)  # the vendor property itself is never sent


def test_received_typed_object_without_annotation_reports_typed_encoding() -> None:
    r = decode_message(build((VALUE, [1, 2])), None)
    assert isinstance(r, ObjectMessage)
    assert r.getBooleanProperty("JMS_AMQP_TYPED_ENCODING") is True


def test_received_serialized_object_does_not_report_typed_encoding() -> None:
    m = ObjectMessage({"a": 1})
    r = decode_message(encode(m), None)
    assert isinstance(r, ObjectMessage)
    assert not r.propertyExists("JMS_AMQP_TYPED_ENCODING")
    assert r.getBooleanProperty("JMS_AMQP_TYPED_ENCODING") is False
    assert "JMS_AMQP_TYPED_ENCODING" not in r.getPropertyNames()


def test_typed_encoding_survives_clear_properties() -> None:
    r = decode_message(build((MA, {symbol("x-opt-jms-msg-type"): byte(1)}), (VALUE, [1])), None)
    r.clearProperties()
    assert r.getBooleanProperty("JMS_AMQP_TYPED_ENCODING") is True
    m = ObjectMessage([1, 2])
    m.setBooleanProperty("JMS_AMQP_TYPED_ENCODING", True)
    m.setStringProperty("other", "x")
    m.clearProperties()
    assert m.getPropertyNames() == ["JMS_AMQP_TYPED_ENCODING"]
    assert VALUE in codes(encode(m))


_DESTINATION_CASES: list[tuple[dict[str, Any], str, str | None]] = [
    ({"x-opt-jms-dest": byte(0), "x-opt-jms-reply-to": byte(1)}, "q", "r"),
    ({"x-opt-jms-dest": byte(1)}, "t", None),
    ({"x-opt-jms-dest": byte(2), "x-opt-jms-reply-to": byte(3)}, "tq", "tt"),
    ({"x-opt-to-type": "topic", "x-opt-reply-type": "temporary,queue"}, "t2", "r2"),
    ({}, "plain", "plain-reply"),
    ({"x-opt-jms-dest": byte(0)}, "q", None),  # the first case's address again
]


def test_a_consumers_destination_cache_changes_no_received_destination() -> None:
    """The decoder keeps one consumer's received destinations from message to message; what
    it gives must be what the decoder without the cache gives, and temporary destinations
    (which carry state) are never reused."""
    cache: dict[tuple[str, int], Destination | None] = {}
    for _ in range(2):  # the second round is served from the cache
        for annotation_values, to, reply_to in _DESTINATION_CASES:
            ma = {symbol(k): v for k, v in annotation_values.items()}
            parts = ((MA, ma), (PROPS, [None, None, to, None, reply_to]), (VALUE, "x"))
            cached = decode_message(build(*parts), Topic("c"), destinations=cache)
            plain = decode_message(build(*parts), Topic("c"))
            for got, want in (
                (cached.getJMSDestination(), plain.getJMSDestination()),
                (cached.getJMSReplyTo(), plain.getJMSReplyTo()),
            ):
                assert got == want
                assert type(got) is type(want)
    assert all(not d.is_temporary for d in cache.values() if d is not None)
    first = decode_message(
        build((MA, {symbol("x-opt-jms-dest"): byte(2)}), (PROPS, [None, None, "tq"])),
        None,
        destinations=cache,
    )
    again = decode_message(
        build((MA, {symbol("x-opt-jms-dest"): byte(2)}), (PROPS, [None, None, "tq"])),
        None,
        destinations=cache,
    )
    assert first.getJMSDestination() == again.getJMSDestination()
    assert first.getJMSDestination() is not again.getJMSDestination()


def test_one_data_section_is_the_body_as_it_came() -> None:
    r = _received((MA, {symbol("x-opt-jms-msg-type"): byte(3)}), (DATA, b"abc"))
    assert isinstance(r, BytesMessage)
    assert r.getBody(bytes) == b"abc"
