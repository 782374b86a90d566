"""The jmspy side of the interop message specs: building, sending and describing jmspy
messages in the shape JmsInterop uses (see :mod:`message_specs`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from java_client import JsonObject, b64, unb64
from message_specs import JAVA_CLASS, SETTER


def _destination(session: Any, spec: JsonObject) -> Any:
    if spec["kind"] == "queue":
        return session.createQueue(spec["name"])
    if spec["kind"] == "topic":
        return session.createTopic(spec["name"])
    raise ValueError(f"destination kind {spec['kind']!r}")


def _spec_value(type_name: str, value: Any) -> Any:
    return unb64(value) if type_name == "bytes" and value is not None else value


def build_message(session: Any, spec: JsonObject) -> Any:
    """A jmspy message from a spec (an ObjectMessage body is the spec's Python ``value``)."""
    kind = spec.get("type", "text")
    body = spec.get("body")
    if kind == "message":
        message = session.createMessage()
    elif kind == "text":
        message = session.createTextMessage(body)
    elif kind == "bytes":
        message = session.createBytesMessage()
        if body:
            message.writeBytes(unb64(body))
    elif kind == "map":
        message = session.createMapMessage()
        for name, entry in (body or {}).items():
            setter = getattr(message, "set" + SETTER[entry["type"]])
            setter(name, _spec_value(entry["type"], entry["value"]))
    elif kind == "stream":
        message = session.createStreamMessage()
        for entry in body or []:
            writer = getattr(message, "write" + SETTER[entry["type"]])
            writer(_spec_value(entry["type"], entry["value"]))
    elif kind == "object":
        message = session.createObjectMessage()
        if spec.get("typedEncoding"):
            message.setBooleanProperty("JMS_AMQP_TYPED_ENCODING", True)
        if body is not None:
            message.setObject(body["value"])
    else:
        raise ValueError(f"message type {kind!r}")
    if spec.get("correlationId") is not None:
        message.setJMSCorrelationID(spec["correlationId"])
    if spec.get("correlationIdBytes") is not None:
        message.setJMSCorrelationIDAsBytes(unb64(spec["correlationIdBytes"]))
    if spec.get("jmsType") is not None:
        message.setJMSType(spec["jmsType"])
    if spec.get("replyTo") is not None:
        message.setJMSReplyTo(_destination(session, spec["replyTo"]))
    if spec.get("groupId") is not None:
        message.setStringProperty("JMSXGroupID", spec["groupId"])
    if spec.get("groupSeq") is not None:
        message.setIntProperty("JMSXGroupSeq", spec["groupSeq"])
    for prop in spec.get("properties", []):
        setter = getattr(message, f"set{SETTER[prop['type']]}Property")
        setter(prop["name"], prop["value"])
    return message


def send_with_jmspy(session: Any, destination: JsonObject, specs: list[JsonObject]) -> list[Any]:
    """Sends specs with a jmspy producer; returns what the producer saw, as JmsInterop does."""
    import jmspy

    producer = session.createProducer(_destination(session, destination))
    sent = []
    for spec in specs:
        message = build_message(session, spec)
        persistent = spec.get("deliveryMode", "PERSISTENT") == "PERSISTENT"
        producer.setDeliveryDelay(spec.get("deliveryDelay", 0))
        producer.send(
            message,
            jmspy.DeliveryMode.PERSISTENT if persistent else jmspy.DeliveryMode.NON_PERSISTENT,
            spec.get("priority", 4),
            spec.get("timeToLive", 0),
        )
        entry = {
            "messageId": message.getJMSMessageID(),
            "timestamp": message.getJMSTimestamp(),
            "expiration": message.getJMSExpiration(),
            "deliveryTime": message.getJMSDeliveryTime(),
            "deliveryMode": message.getJMSDeliveryMode(),
            "priority": message.getJMSPriority(),
        }
        if spec.get("type") == "object":
            entry["serialized"] = _b64_or_none(message.getSerializedBytes())
        sent.append(entry)
    producer.close()
    return sent


def _b64_or_none(data: bytes | None) -> str | None:
    return None if data is None else b64(data)


def _works(call: Callable[[], Any]) -> bool:
    import jmspy

    try:
        call()
    except jmspy.MessageFormatException:
        return False
    return True


def _java_class(value: Any, getter: Callable[[str], Callable[[], Any]]) -> str | None:
    """The Java type behind a jmspy value, inferred with the JMS conversion rules only.

    ``getter("byte")`` returns a callable reading the same item as a byte, and so on. Among
    the integer types only a byte is readable as a byte, only a byte or short as a short, and
    so on; only a float is readable as a float; only a char is readable as a char.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return "Boolean"
    if isinstance(value, bytes | bytearray):
        return "byte[]"
    if isinstance(value, int):
        for name in ("byte", "short", "int"):
            if _works(getter(name)):
                return JAVA_CLASS[name]
        return "Long"
    if isinstance(value, float):
        return "Float" if _works(getter("float")) else "Double"
    if isinstance(value, str):
        return "Character" if _works(getter("char")) else "String"
    return type(value).__name__


def _plain(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return b64(bytes(value))
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value


def _describe_destination(destination: Any) -> JsonObject | None:
    import jmspy

    if destination is None:
        return None
    if isinstance(destination, jmspy.TemporaryQueue):
        return {"kind": "temp-queue", "name": destination.getQueueName()}
    if isinstance(destination, jmspy.TemporaryTopic):
        return {"kind": "temp-topic", "name": destination.getTopicName()}
    if isinstance(destination, jmspy.Queue):
        return {"kind": "queue", "name": destination.getQueueName()}
    if isinstance(destination, jmspy.Topic):
        return {"kind": "topic", "name": destination.getTopicName()}
    return {"kind": type(destination).__name__, "name": str(destination)}


def _property_getter(message: Any, name: str) -> Callable[[str], Callable[[], Any]]:
    def getter(type_name: str) -> Callable[[], Any]:
        method = getattr(message, f"get{SETTER[type_name]}Property", None)
        if method is None:  # no char properties in JMS
            return _raise_format_error
        return lambda: method(name)

    return getter


def _raise_format_error() -> Any:
    import jmspy

    raise jmspy.MessageFormatException("no such getter")


def _stream_item(message: Any, index: int, reader: str) -> Any:
    message.reset()
    for _ in range(index):
        message.readObject()
    return getattr(message, reader)()


def describe_message(message: Any) -> JsonObject:
    """A received jmspy message in the shape of JmsInterop's ``receive`` output."""
    import jmspy

    try:
        correlation_bytes = _b64_or_none(message.getJMSCorrelationIDAsBytes())
    except jmspy.JMSException:
        correlation_bytes = None
    properties = {}
    for name in message.getPropertyNames():
        value = message.getObjectProperty(name)
        java_class = _java_class(value, _property_getter(message, name))
        properties[name] = {"type": java_class, "value": _plain(value)}
    description: JsonObject = {
        "type": "message",
        "messageId": message.getJMSMessageID(),
        "correlationId": message.getJMSCorrelationID(),
        "correlationIdBytes": correlation_bytes,
        "jmsType": message.getJMSType(),
        "replyTo": _describe_destination(message.getJMSReplyTo()),
        "destination": _describe_destination(message.getJMSDestination()),
        "deliveryMode": message.getJMSDeliveryMode(),
        "priority": message.getJMSPriority(),
        "timestamp": message.getJMSTimestamp(),
        "expiration": message.getJMSExpiration(),
        "deliveryTime": message.getJMSDeliveryTime(),
        "redelivered": message.getJMSRedelivered(),
        "deliveryCount": message.getIntProperty("JMSXDeliveryCount"),
        "groupId": message.getStringProperty("JMSXGroupID"),
        "groupSeq": (
            message.getIntProperty("JMSXGroupSeq")
            if message.propertyExists("JMSXGroupSeq")
            else None
        ),
        "properties": properties,
        "body": None,
    }
    if isinstance(message, jmspy.TextMessage):
        description.update(type="text", body=message.getText())
    elif isinstance(message, jmspy.BytesMessage):
        data = bytearray(message.getBodyLength())
        message.readBytes(data)
        description.update(type="bytes", body=b64(bytes(data)))
    elif isinstance(message, jmspy.MapMessage):
        entries = {}
        for name in message.getMapNames():

            def getter(type_name: str, name: str = name) -> Callable[[], Any]:
                method = getattr(message, "get" + SETTER[type_name])
                return lambda: method(name)

            value = message.getObject(name)
            entries[name] = {"type": _java_class(value, getter), "value": _plain(value)}
        description.update(type="map", body=entries)
    elif isinstance(message, jmspy.StreamMessage):
        items = []
        index = 0
        while True:
            try:
                value = _stream_item(message, index, "readObject")
            except jmspy.MessageEOFException:
                break

            def reader(type_name: str, index: int = index) -> Callable[[], Any]:
                return lambda: _stream_item(message, index, "read" + SETTER[type_name])

            items.append({"type": _java_class(value, reader), "value": _plain(value)})
            index += 1
        description.update(type="stream", body=items)
    elif isinstance(message, jmspy.ObjectMessage):
        description["type"] = "object"
        description["serialized"] = _b64_or_none(message.getSerializedBytes())
        try:
            obj = message.getObject()
        except jmspy.MessageFormatException as exc:
            description["bodyError"] = {"class": type(exc).__name__, "message": str(exc)}
        else:
            description["body"] = (
                None
                if obj is None
                else {
                    "class": type(obj).__name__,
                    "value": obj,
                }
            )
    return description
