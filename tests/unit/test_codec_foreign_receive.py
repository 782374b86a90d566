"""Messages from non-JMS AMQP producers read as Qpid JMS reads them: textual content types
(ContentTypeSupport), destination type annotations (AmqpDestinationHelper), JMSXGroupSeq 0,
an absolute-expiry-time of 0, and the property names of a message that also carries JMSX
names as application properties."""

from __future__ import annotations

from typing import Any

import pytest
from codec_support import APP, DATA, HEADER, MA, PROPS, VALUE, build
from proton import Message as ProtonMessage
from proton import byte, int32, symbol, timestamp, ubyte, uint

from jmspy._amqp.codec import decode_message
from jmspy.destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from jmspy.message import BytesMessage, Message, TextMessage


def _with_content_type(content_type: str, body: bytes) -> Message:
    return decode_message(
        build((PROPS, [None] * 6 + [symbol(content_type)]), (DATA, body)), Queue("in")
    )


@pytest.mark.parametrize(
    ("content_type", "text"),
    [
        ("application/xml-dtd", True),  # textual in Qpid JMS
        ('TEXT/Plain ; Charset="ISO-8859-1"', True),
        ("text/plain; format=flowed; charset=utf-16", True),
        ("image/svg+xml", False),  # +xml is textual under application/ only
        ("text/vnd.a+json", True),
        ("text/", False),  # no subtype: not a content type
        ("text", False),  # no '/'
        ("text/plain; charset=", False),  # an empty charset names none
        ('text/plain; charset="utf-8', False),  # half-quoted: not a charset name
        ("text/plain; charset=utf 8", False),  # Java refuses the name
        ("text/plain; charset=no-such-charset", False),
    ],
)
def test_data_body_is_text_only_for_what_qpid_jms_finds_textual(
    content_type: str, text: bool
) -> None:
    charset = (
        "utf-16" if "utf-16" in content_type else "latin-1" if "8859" in content_type else None
    )
    body = "é<a/>".encode(charset or "utf-8")
    received = _with_content_type(content_type, body)
    if text:
        assert isinstance(received, TextMessage)
        assert received.getText() == "é<a/>"
    else:
        assert type(received) is BytesMessage
        assert received.getBody(bytes) == body


def _received(annotations: dict[str, Any], consumer: Destination, **kw: Any) -> Message:
    ma = {symbol(k): v for k, v in annotations.items()}
    return decode_message(
        build((MA, ma), (PROPS, [None, None, "pre.addr", None, "pre.addr"]), (VALUE, "x")),
        consumer,
        **kw,
    )


def _to(annotations: dict[str, Any], consumer: Destination, **kw: Any) -> Destination | None:
    return _received(annotations, consumer, **kw).getJMSDestination()


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        # Qpid JMS reads only a byte as the type; other ints give no type (the consumer's).
        ({"x-opt-jms-dest": int32(1), "x-opt-jms-reply-to": int32(1)}, Queue("pre.addr")),
        ({"x-opt-jms-dest": ubyte(1), "x-opt-jms-reply-to": ubyte(1)}, Queue("pre.addr")),
        # ... and a string as the legacy list, under the new key too.
        ({"x-opt-jms-dest": "topic", "x-opt-jms-reply-to": "topic"}, Topic("pre.addr")),
        # An unknown byte falls back to the legacy annotation.
        (
            {
                "x-opt-jms-dest": byte(-1),
                "x-opt-jms-reply-to": byte(-1),
                "x-opt-to-type": "topic",
                "x-opt-reply-type": "topic",
            },
            Topic("pre.addr"),
        ),
        # The legacy list may hold other words; its words are case-sensitive.
        (
            {"x-opt-to-type": "durable, topic", "x-opt-reply-type": "topic ,durable"},
            Topic("pre.addr"),
        ),
        (
            {"x-opt-to-type": "queue,temporary,x", "x-opt-reply-type": "x,temporary,queue"},
            TemporaryQueue("pre.addr"),
        ),
        (
            {"x-opt-to-type": "topic,temporary", "x-opt-reply-type": "temporary , topic"},
            TemporaryTopic("pre.addr"),
        ),
        ({"x-opt-to-type": "Topic", "x-opt-reply-type": "TOPIC"}, Queue("pre.addr")),
    ],
)
def test_destination_type_annotations_as_qpid_jms_reads_them(
    annotations: dict[str, Any], expected: Destination
) -> None:
    received = _received(annotations, Queue("c"))
    for got in (received.getJMSDestination(), received.getJMSReplyTo()):
        assert got == expected and type(got) is type(expected)


def test_untyped_address_loses_whichever_prefix_it_has() -> None:
    # Qpid JMS strips the queue or the topic prefix from an address without a type
    # annotation, then takes the kind from the consumer's destination.
    got = _to({}, Queue("c"), queue_prefix="queue://", topic_prefix="pre.")
    assert got == Queue("addr") and type(got) is Queue
    got = _to({}, TemporaryTopic("c"), queue_prefix="pre.", topic_prefix="topic://")
    assert got == TemporaryTopic("addr") and type(got) is TemporaryTopic
    # With a type, only that type's prefix.
    got = _to({"x-opt-jms-dest": byte(1)}, Queue("c"), queue_prefix="pre.", topic_prefix="t.")
    assert got == Topic("pre.addr")
    got = _to({"x-opt-jms-dest": byte(2)}, Queue("c"), queue_prefix="pre.")
    assert got == TemporaryQueue("pre.addr")


def test_group_sequence_zero_from_proton_is_no_sequence() -> None:
    # proton writes group-sequence 0 with every group-id; Qpid JMS: JMSXGroupSeq 0 does not
    # exist, as jmspy does not send it.
    received = decode_message(ProtonMessage(body="x", group_id="g").encode(), Queue("in"))
    assert received.getStringProperty("JMSXGroupID") == "g"
    assert not received.propertyExists("JMSXGroupSeq")
    assert "JMSXGroupSeq" not in received.getPropertyNames()
    assert received.getObjectProperty("JMSXGroupSeq") is None


def test_absolute_expiry_time_zero_is_not_replaced_by_the_ttl() -> None:
    header = [True, None, uint(5000)]
    present = build((HEADER, header), (PROPS, [None] * 8 + [timestamp(0)]), (VALUE, "x"))
    assert decode_message(present, None, now_ms=1_000).getJMSExpiration() == 0
    absent = build((HEADER, header), (PROPS, [None] * 8), (VALUE, "x"))
    assert decode_message(absent, None, now_ms=1_000).getJMSExpiration() == 6_000


def test_jmsx_names_also_sent_as_application_properties_are_listed_once() -> None:
    received = decode_message(
        build(
            (PROPS, [None, b"broker-user", None, None, None, None, None, None, None, None, "g"]),
            (APP, {"JMSXDeliveryCount": 7, "JMSXUserID": "app", "JMSXGroupID": "h", "a": 1}),
            (VALUE, "x"),
        ),
        Queue("in"),
    )
    names = list(received.getPropertyNames())
    assert sorted(names) == ["JMSXDeliveryCount", "JMSXGroupID", "JMSXUserID", "a"]
    # The AMQP fields win, as in Qpid JMS's intercepters.
    assert received.getIntProperty("JMSXDeliveryCount") == 1
    assert received.getStringProperty("JMSXUserID") == "broker-user"
    assert received.getStringProperty("JMSXGroupID") == "g"
