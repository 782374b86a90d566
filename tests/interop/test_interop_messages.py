"""Messages cross between jmspy and Qpid JMS (Java) unchanged, in both directions.

For every message type and two header sets, one client sends and the other receives; the
receiver's view (JMSMessageID, JMSTimestamp, JMSExpiration, JMSDeliveryTime, correlation id as
string or bytes, JMSType, JMSReplyTo with its kind, delivery mode, priority, JMSRedelivered,
JMSXDeliveryCount, JMSXGroupID/Seq, every property with its Java type, the body with its item
types) must equal what the sender set and saw. Each direction is sent and received as one batch
per module (two JVM runs for all its cases), and each case is asserted in its own test.

ObjectMessage bodies do not cross languages: jmspy pickles Python objects (content type
``application/x-python-serialized-object``) and Qpid JMS serializes Java objects
(``application/x-java-serialized-object``). What is tested instead: a Java ObjectMessage
arrives in Python as an ObjectMessage whose getObject() raises MessageFormatException and whose
getSerializedBytes() are exactly the Java serialization; a pickled one arrives in Java as an
ObjectMessage whose getObject() raises MessageFormatException; with JMS_AMQP_TYPED_ENCODING the
body is an AMQP map and does cross, both ways.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from interop_support import (
    JavaClient,
    JsonObject,
    b64,
    comparable,
    describe_message,
    expected_description,
    queue,
    send_with_jmspy,
    topic,
    unb64,
)

import jmspy

PROPERTIES: list[JsonObject] = [
    {"name": "aBool", "type": "boolean", "value": True},
    {"name": "aByte", "type": "byte", "value": -128},
    {"name": "aShort", "type": "short", "value": 32767},
    {"name": "anInt", "type": "int", "value": -(2**31)},
    {"name": "aLong", "type": "long", "value": 2**63 - 1},
    {"name": "smallLong", "type": "long", "value": 5},
    {"name": "aFloat", "type": "float", "value": 0.1},
    {"name": "aDouble", "type": "double", "value": -3.141592653589793},
    {"name": "aString", "type": "string", "value": "héllo ✓ 𝄞"},
    {"name": "emptyString", "type": "string", "value": ""},
]

_ITEMS: list[tuple[str, str, Any]] = [
    ("b", "boolean", False),
    ("y", "byte", 127),
    ("h", "short", -32768),
    ("c", "char", "é"),
    ("i", "int", 2**31 - 1),
    ("l", "long", -(2**63)),
    ("f", "float", 2.5),
    ("f2", "float", 0.3),
    ("d", "double", 1e300),
    ("s", "string", "map ✓ 𝄞"),
    ("e", "string", ""),
    ("raw", "bytes", b64(b"\x00\x01\xfe\xff")),
]

BODIES: dict[str, JsonObject] = {
    "message": {"type": "message"},
    "text": {"type": "text", "body": "text body ✓ 𝄞 and a tab\there"},
    "bytes": {"type": "bytes", "body": b64(bytes(range(256)))},
    "map": {
        "type": "map",
        "body": {name: {"type": kind, "value": value} for name, kind, value in _ITEMS},
    },
    "stream": {
        "type": "stream",
        "body": [{"type": kind, "value": value} for _, kind, value in _ITEMS],
    },
}

HEADERS: dict[str, JsonObject] = {
    # A plain string correlation id, reply-to a queue, persistent, a group.
    "string-correlation": {
        "correlationId": "order-17 ✓",
        "jmsType": "interop.type",
        "replyTo": queue("interop-replies"),
        "deliveryMode": "PERSISTENT",
        "priority": 7,
        "timeToLive": 600_000,
        "groupId": "group-A",
        "groupSeq": 3,
    },
    # A binary correlation id, reply-to a topic, non-persistent, no expiry.
    "bytes-correlation": {
        "correlationIdBytes": b64(b"\x00\x01\xfe\xff"),
        "jmsType": "type/2",
        "replyTo": topic("interop-announcements"),
        "deliveryMode": "NON_PERSISTENT",
        "priority": 0,
        "timeToLive": 0,
    },
}

CASES = [(kind, headers) for kind in BODIES for headers in HEADERS]
CASE_IDS = [f"{kind}-{headers}" for kind, headers in CASES]


def _spec(kind: str, headers: str) -> JsonObject:
    props = [*PROPERTIES, {"name": "caseId", "type": "string", "value": f"{kind}-{headers}"}]
    return {**BODIES[kind], **HEADERS[headers], "properties": props}


def _case_id(description: JsonObject) -> str:
    value: str = description["properties"]["caseId"]["value"]
    return value


def _receive_all(factory: Any, destination: JsonObject, count: int) -> list[JsonObject]:
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        consumer = session.createConsumer(session.createQueue(destination["name"]))
        connection.start()
        out = []
        for _ in range(count):
            message = consumer.receive(10_000)
            if message is None:
                break
            out.append(describe_message(message))
        return out


Batch = dict[str, tuple[JsonObject, JsonObject, JsonObject | None]]


@pytest.fixture(scope="module")
def python_to_java(java: JavaClient, broker: Any) -> Batch:
    """jmspy sends every case; Qpid JMS receives them: case -> (spec, sent, received)."""
    name = f"interop-py2java-{uuid.uuid4().hex[:8]}"
    specs = [_spec(kind, headers) for kind, headers in CASES]
    factory = jmspy.ConnectionFactory(broker.url, broker.username, broker.password)
    with factory.createConnection() as connection:
        sent = send_with_jmspy(connection.createSession(), queue(name), specs)
    received = java.receive(queue(name), count=len(specs), timeout_ms=10_000)["messages"]
    by_case = {_case_id(d): d for d in received}
    return {cid: (s, x, by_case.get(cid)) for cid, s, x in zip(CASE_IDS, specs, sent, strict=True)}


@pytest.fixture(scope="module")
def java_to_python(java: JavaClient, broker: Any) -> Batch:
    """Qpid JMS sends every case; jmspy receives them: case -> (spec, sent, received)."""
    name = f"interop-java2py-{uuid.uuid4().hex[:8]}"
    specs = [_spec(kind, headers) for kind, headers in CASES]
    sent = java.send(queue(name), specs)
    factory = jmspy.ConnectionFactory(broker.url, broker.username, broker.password)
    received = _receive_all(factory, queue(name), len(specs))
    by_case = {_case_id(d): d for d in received}
    return {cid: (s, x, by_case.get(cid)) for cid, s, x in zip(CASE_IDS, specs, sent, strict=True)}


def _check(batch: Batch, case: str, destination_name: str) -> None:
    spec, sent, received = batch[case]
    assert received is not None, f"{case} was not received"
    assert comparable(received) == expected_description(spec, sent, queue(destination_name))


@pytest.mark.parametrize("case", CASE_IDS)
def test_python_to_java(python_to_java: Batch, case: str) -> None:
    spec, sent, received = python_to_java[case]
    assert received is not None, f"{case} was not received by Java"
    _check(python_to_java, case, received["destination"]["name"])
    assert sent["messageId"].startswith("ID:")


@pytest.mark.parametrize("case", CASE_IDS)
def test_java_to_python(java_to_python: Batch, case: str) -> None:
    spec, sent, received = java_to_python[case]
    assert received is not None, f"{case} was not received by jmspy"
    _check(java_to_python, case, received["destination"]["name"])


def test_batches_keep_order(python_to_java: Batch, java_to_python: Batch) -> None:
    """Both receivers saw the cases in send order (one producer, one consumer, one queue)."""
    for batch in (python_to_java, java_to_python):
        ids = [received["messageId"] for _, _, received in batch.values() if received]
        assert ids == [sent["messageId"] for _, sent, _ in batch.values()]


# ---- delivery delay --------------------------------------------------------------------------

DELAY_MS = 1500
DELAYED: JsonObject = {
    "type": "text",
    "body": "delayed",
    "deliveryDelay": DELAY_MS,
    "timeToLive": 120_000,
    "priority": 6,
    "properties": [{"name": "n", "type": "int", "value": 1}],
}


def test_delayed_python_to_java(java: JavaClient, connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    (sent,) = send_with_jmspy(session, queue(unique_name), [DELAYED])
    assert sent["deliveryTime"] == sent["timestamp"] + DELAY_MS
    assert sent["expiration"] == sent["timestamp"] + 120_000
    (received,) = java.receive(queue(unique_name), count=1, timeout_ms=15_000)["messages"]
    assert comparable(received) == expected_description(DELAYED, sent, queue(unique_name))
    assert received["receivedAt"] >= sent["deliveryTime"]


def test_delayed_java_to_python(java: JavaClient, factory: Any, unique_name: str) -> None:
    (sent,) = java.send(queue(unique_name), [DELAYED])
    assert sent["deliveryTime"] == sent["timestamp"] + DELAY_MS
    with factory.createConnection() as connection:
        session = connection.createSession()
        consumer = session.createConsumer(session.createQueue(unique_name))
        connection.start()
        message = consumer.receive(15_000)
        received_at = time.time_ns() // 1_000_000
        assert message is not None
        received = describe_message(message)
    assert comparable(received) == expected_description(DELAYED, sent, queue(unique_name))
    assert received_at >= sent["deliveryTime"]


# ---- correlation ids in every AMQP form --------------------------------------------------------

CORRELATION_IDS = [
    "plain",
    "ID:a-qpid-style-id:1:1:1-1",
    f"ID:AMQP_UUID:{uuid.UUID(int=0x0123456789ABCDEF0123456789ABCDEF)}",
    "ID:AMQP_ULONG:42",
    "ID:AMQP_BINARY:0A0BFF",
    "ID:AMQP_NO_PREFIX:bare",
    "ID:AMQP_STRING:ID:AMQP_ULONG:7",
]


def _correlations(descriptions: list[JsonObject]) -> list[tuple[Any, Any]]:
    return [(d["correlationId"], d["correlationIdBytes"]) for d in descriptions]


def test_correlation_id_forms_match_java_to_java(
    java: JavaClient, factory: Any, unique_name: str
) -> None:
    """Every JMSCorrelationID form (escaped AMQP uuid/ulong/binary/string ids) reads the same
    in jmspy as in Qpid JMS, whichever client sent it; Java-to-Java is the reference."""
    specs = [{"type": "message", "correlationId": cid} for cid in CORRELATION_IDS]
    java.send(queue(unique_name + "-ref"), specs)
    reference = java.receive(queue(unique_name + "-ref"), count=len(specs))["messages"]
    assert len(reference) == len(specs)

    java.send(queue(unique_name + "-j2p"), specs)
    in_python = _receive_all(factory, queue(unique_name + "-j2p"), len(specs))

    with factory.createConnection() as connection:
        send_with_jmspy(connection.createSession(), queue(unique_name + "-p2j"), specs)
    in_java = java.receive(queue(unique_name + "-p2j"), count=len(specs))["messages"]

    assert _correlations(in_python) == _correlations(reference)
    assert _correlations(in_java) == _correlations(reference)


def test_reply_correlated_by_message_id(java: JavaClient, factory: Any, unique_name: str) -> None:
    """Request/reply: each side sets the other's JMSMessageID as JMSCorrelationID."""
    (request,) = java.send(queue(unique_name), [{"type": "text", "body": "request"}])
    with factory.createConnection() as connection:
        session = connection.createSession()
        consumer = session.createConsumer(session.createQueue(unique_name))
        connection.start()
        message = consumer.receive(10_000)
        assert message is not None and message.getJMSMessageID() == request["messageId"]
        reply_spec = {"type": "text", "body": "reply", "correlationId": request["messageId"]}
        (reply,) = send_with_jmspy(session, queue(unique_name + "-reply"), [reply_spec])
    (in_java,) = java.receive(queue(unique_name + "-reply"))["messages"]
    assert in_java["correlationId"] == request["messageId"]
    assert in_java["messageId"] == reply["messageId"]


# ---- ObjectMessage ---------------------------------------------------------------------------

JAVA_OBJECTS = {
    "String": {"class": "java.lang.String", "value": "a Java string ✓"},
    "HashMap": {
        "class": "java.util.HashMap",
        "value": {
            "order": {"type": "int", "value": 17},
            "customer": {"type": "string", "value": "ACME"},
        },
    },
}


@pytest.mark.parametrize("payload", list(JAVA_OBJECTS))
def test_java_serialized_object_reaches_python_as_raw_bytes(
    java: JavaClient, factory: Any, unique_name: str, payload: str
) -> None:
    spec: JsonObject = {
        "type": "object",
        "body": JAVA_OBJECTS[payload],
        "correlationId": "obj",
        "properties": PROPERTIES,
    }
    (sent,) = java.send(queue(unique_name), [spec])
    with factory.createConnection() as connection:
        session = connection.createSession()
        consumer = session.createConsumer(session.createQueue(unique_name))
        connection.start()
        message = consumer.receive(10_000)
        assert isinstance(message, jmspy.ObjectMessage)
        with pytest.raises(jmspy.MessageFormatException, match="Java serialized object"):
            message.getObject()
        assert message.isBodyAssignableTo(object) is False
        raw = message.getSerializedBytes()
        received = describe_message(message)
    # Exactly the bytes ObjectOutputStream wrote in Java (stream magic 0xACED, version 5).
    assert raw == unb64(sent["serialized"])
    assert raw[:4] == b"\xac\xed\x00\x05"
    expected = expected_description({**spec, "body": None}, sent, queue(unique_name))
    assert {
        k: v for k, v in comparable(received).items() if k not in ("bodyError", "serialized")
    } == (expected)


def test_pickled_object_reaches_java_as_unreadable_object_message(
    java: JavaClient, connection: Any, unique_name: str
) -> None:
    spec: JsonObject = {
        "type": "object",
        "body": {"value": {"order": 17, "items": ["a", "b"]}},
        "jmsType": "pickled",
        "properties": PROPERTIES,
    }
    (sent,) = send_with_jmspy(connection.createSession(), queue(unique_name), [spec])
    assert sent["serialized"] is not None
    (received,) = java.receive(queue(unique_name))["messages"]
    assert received["type"] == "object"
    assert received["body"] is None
    # Qpid JMS reads a non-Java content type with its AMQP-typed delegate, which cannot
    # decode a Data section: getObject() throws MessageFormatException.
    assert received["bodyError"]["class"] == "jakarta.jms.MessageFormatException"
    expected = expected_description({**spec, "body": None}, sent, queue(unique_name))
    assert {k: v for k, v in comparable(received).items() if k != "bodyError"} == expected


TYPED_MAP_JAVA: JsonObject = {
    "class": "java.util.HashMap",
    "value": {
        "int": {"type": "int", "value": 7},
        "long": {"type": "long", "value": 2**40},
        "double": {"type": "double", "value": 2.5},
        "bool": {"type": "boolean", "value": True},
        "text": {"type": "string", "value": "v ✓"},
    },
}


def test_typed_encoding_object_java_to_python(
    java: JavaClient, factory: Any, unique_name: str
) -> None:
    """JMS_AMQP_TYPED_ENCODING sends the HashMap as an AMQP map, which jmspy can read."""
    spec = {"type": "object", "typedEncoding": True, "body": TYPED_MAP_JAVA}
    java.send(queue(unique_name), [spec])
    with factory.createConnection() as connection:
        session = connection.createSession()
        consumer = session.createConsumer(session.createQueue(unique_name))
        connection.start()
        message = consumer.receive(10_000)
        assert isinstance(message, jmspy.ObjectMessage)
        assert message.getObject() == {
            "int": 7,
            "long": 2**40,
            "double": 2.5,
            "bool": True,
            "text": "v ✓",
        }
        assert message.getSerializedBytes() is None
        # Qpid JMS reports the property on a typed body it received; so does jmspy.
        assert message.getBooleanProperty("JMS_AMQP_TYPED_ENCODING") is True
        assert "JMS_AMQP_TYPED_ENCODING" in message.getPropertyNames()


def test_typed_encoding_property_reported_as_qpid_jms_does(
    java: JavaClient, factory: Any, unique_name: str
) -> None:
    """The same typed ObjectMessage received by Qpid JMS and by jmspy: both list
    JMS_AMQP_TYPED_ENCODING among the properties, with the value true."""
    spec = {"type": "object", "typedEncoding": True, "body": TYPED_MAP_JAVA}
    java.send(queue(unique_name + ".java"), [spec])
    (seen_by_java,) = java.receive(queue(unique_name + ".java"))["messages"]
    qpid = seen_by_java["properties"].get("JMS_AMQP_TYPED_ENCODING")
    java.send(queue(unique_name), [spec])
    with factory.createConnection() as connection:
        session = connection.createSession()
        consumer = session.createConsumer(session.createQueue(unique_name))
        connection.start()
        message = consumer.receive(10_000)
        assert isinstance(message, jmspy.ObjectMessage)
        assert qpid == {"type": "Boolean", "value": True}, seen_by_java["properties"]
        assert message.getObjectProperty("JMS_AMQP_TYPED_ENCODING") is True
        assert "JMS_AMQP_TYPED_ENCODING" in message.getPropertyNames()


def test_typed_encoding_object_python_to_java(
    java: JavaClient, connection: Any, unique_name: str
) -> None:
    """jmspy's JMS_AMQP_TYPED_ENCODING dict arrives in Java as a Map (Python int -> Long)."""
    body = {"int": 7, "big": 2**40, "double": 2.5, "bool": True, "text": "v ✓", "list": [1, "x"]}
    spec = {"type": "object", "typedEncoding": True, "body": {"value": body}}
    send_with_jmspy(connection.createSession(), queue(unique_name), [spec])
    (received,) = java.receive(queue(unique_name))["messages"]
    assert received["type"] == "object"
    assert "bodyError" not in received
    assert received["body"]["class"] in ("java.util.HashMap", "java.util.LinkedHashMap")
    assert received["body"]["value"] == {
        "int": {"type": "Long", "value": 7},
        "big": {"type": "Long", "value": 2**40},
        "double": {"type": "Double", "value": 2.5},
        "bool": {"type": "Boolean", "value": True},
        "text": {"type": "String", "value": "v ✓"},
        "list": {
            "type": "ArrayList",
            "value": [{"type": "Long", "value": 1}, {"type": "String", "value": "x"}],
        },
    }
