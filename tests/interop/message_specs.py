"""Message specs: one JSON description of a message for both clients.

What JmsInterop's ``send`` takes, what its ``receive`` reports, and what a receiver should see of
a spec (see the comment below); :mod:`jmspy_side` does the same for jmspy.
"""

from __future__ import annotations

import struct
from typing import Any

from java_client import JsonObject, unb64

# A spec (what to send) is what JmsInterop's ``send`` takes: ``type`` (message, text, bytes,
# map, stream, object), ``body``, ``correlationId`` or ``correlationIdBytes`` (base64),
# ``jmsType``, ``replyTo``, ``deliveryMode``, ``priority``, ``timeToLive``, ``deliveryDelay``,
# ``groupId``, ``groupSeq`` and ``properties`` ([{"name", "type", "value"}]). A description
# (what was received) has the shape of JmsInterop's ``receive`` output; ``describe_message``
# produces the same shape for a jmspy message, and ``expected_description`` derives it from a
# spec and what the sender saw.

# Spec type names -> the Java class a receiver reports (Class.getSimpleName()).
JAVA_CLASS = {
    "boolean": "Boolean",
    "byte": "Byte",
    "short": "Short",
    "int": "Integer",
    "long": "Long",
    "float": "Float",
    "double": "Double",
    "string": "String",
    "char": "Character",
    "bytes": "byte[]",
}
SETTER = {
    "boolean": "Boolean",
    "byte": "Byte",
    "short": "Short",
    "int": "Int",
    "long": "Long",
    "float": "Float",
    "double": "Double",
    "string": "String",
    "char": "Char",
    "bytes": "Bytes",
}
_F32 = struct.Struct(">f")


def float32(value: float) -> float:
    """The double value of the nearest Java float, as Java reports a float property."""
    return float(_F32.unpack(_F32.pack(value))[0])


def normalized(type_name: str, value: Any) -> Any:
    """A spec value as a receiver's description shows it."""
    if value is None:
        return None
    if type_name == "float":
        return float32(float(value))
    if type_name == "double":
        return float(value)
    return value


def typed_entry(type_name: str, value: Any) -> JsonObject:
    return {"type": JAVA_CLASS[type_name], "value": normalized(type_name, value)}


def expected_description(spec: JsonObject, sent: JsonObject, destination: JsonObject) -> JsonObject:
    """What any receiver should see of a first delivery of ``spec``, sent as ``sent`` says."""
    kind = spec.get("type", "text")
    correlation_bytes = spec.get("correlationIdBytes")
    correlation = spec.get("correlationId")
    if correlation_bytes is not None:
        correlation = "ID:AMQP_BINARY:" + unb64(correlation_bytes).hex().upper()
    body: Any = spec.get("body")
    if kind == "map":
        body = {name: typed_entry(e["type"], e["value"]) for name, e in (body or {}).items()}
    elif kind == "stream":
        body = [typed_entry(e["type"], e["value"]) for e in body or []]
    elif kind == "bytes":
        body = body or ""
    mode = spec.get("deliveryMode", "PERSISTENT")
    return {
        "type": kind,
        "messageId": sent["messageId"],
        "correlationId": correlation,
        "correlationIdBytes": correlation_bytes,
        "jmsType": spec.get("jmsType"),
        "replyTo": spec.get("replyTo"),
        "destination": destination,
        "deliveryMode": 2 if mode == "PERSISTENT" else 1,
        "priority": spec.get("priority", 4),
        "timestamp": sent["timestamp"],
        "expiration": sent["expiration"],
        "deliveryTime": sent["deliveryTime"],
        "redelivered": False,
        "deliveryCount": 1,
        "groupId": spec.get("groupId"),
        "groupSeq": spec.get("groupSeq"),
        "properties": {
            p["name"]: typed_entry(p["type"], p["value"]) for p in spec.get("properties", [])
        },
        "body": body,
    }


def application_properties(description: JsonObject) -> JsonObject:
    """The properties of a description without the JMSX / JMS_ vendor names."""
    return {
        name: value
        for name, value in description["properties"].items()
        if not name.startswith(("JMSX", "JMS_"))
    }


def comparable(description: JsonObject) -> JsonObject:
    """A description with only application properties and no receive time, for comparison
    with an expectation."""
    out = {**description, "properties": application_properties(description)}
    out.pop("receivedAt", None)
    return out
