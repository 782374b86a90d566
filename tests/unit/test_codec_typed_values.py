"""The typed values jmspy writes in Python (application properties, MapMessage and
StreamMessage bodies) are byte for byte what proton.Data writes, and a value only proton
writes sends the whole section through proton."""

from __future__ import annotations

import os
from typing import Any

import pytest
from proton import Data, symbol

from jmspy import BytesMessage, MapMessage, StreamMessage
from jmspy._amqp.codec.decode import decode_message
from jmspy._amqp.codec.encode import _put_typed, _put_typed_body, encode_message
from jmspy._amqp.codec.typed_values import (
    application_properties_section,
    typed_list_section,
    typed_map_section,
)
from jmspy.destination import Queue
from jmspy.message import JavaType, TypedValue

APPLICATION_PROPERTIES = 0x74
AMQP_VALUE = 0x77
AMQP_SEQUENCE = 0x76

VALUES: list[TypedValue] = [
    (JavaType.BOOLEAN, True),
    (JavaType.BOOLEAN, False),
    (JavaType.BYTE, -128),
    (JavaType.BYTE, 127),
    (JavaType.BYTE, 0),
    (JavaType.SHORT, -32768),
    (JavaType.SHORT, 32767),
    (JavaType.INT, -128),
    (JavaType.INT, 127),
    (JavaType.INT, -129),
    (JavaType.INT, 128),
    (JavaType.INT, 2**31 - 1),
    (JavaType.INT, -(2**31)),
    (JavaType.LONG, -128),
    (JavaType.LONG, 127),
    (JavaType.LONG, 128),
    (JavaType.LONG, 2**63 - 1),
    (JavaType.LONG, -(2**63)),
    (JavaType.FLOAT, 1.5),
    (JavaType.FLOAT, -0.0),
    (JavaType.FLOAT, float("inf")),
    (JavaType.DOUBLE, 3.141592653589793),
    (JavaType.DOUBLE, float("-inf")),
    (JavaType.STRING, ""),
    (JavaType.STRING, "région ✓"),
    (JavaType.STRING, "x" * 255),
    (JavaType.STRING, "é" * 200),  # 400 bytes: str32
    (JavaType.CHAR, "x"),
    (JavaType.CHAR, "✓"),
    (JavaType.BYTES, b""),
    (JavaType.BYTES, b"\x00\xff"),
    (JavaType.BYTES, bytes(300)),
    (JavaType.STRING, None),
    (JavaType.INT, None),
]


def _properties_by_proton(entries: list[tuple[str, TypedValue]]) -> bytes:
    d = Data(64)
    d.put_described()
    d.enter()
    d.put_ulong(APPLICATION_PROPERTIES)
    d.put_map()
    d.enter()
    for name, typed in entries:
        d.put_string(name)
        _put_typed(d, typed)
    d.exit()
    d.exit()
    return bytes(d.encode())


def _body_by_proton(descriptor: int, body: dict[str, TypedValue] | list[TypedValue]) -> bytes:
    d = Data(64)
    _put_typed_body(d, descriptor, body)
    return bytes(d.encode())


@pytest.mark.parametrize("typed", VALUES, ids=lambda t: f"{t[0].name}-{t[1]!r:.20}")
def test_each_value_as_proton_writes_it(typed: TypedValue) -> None:
    assert application_properties_section({"p": typed}, None) == _properties_by_proton(
        [("p", typed)]
    )
    assert typed_map_section({"k": typed}) == _body_by_proton(AMQP_VALUE, {"k": typed})
    assert typed_list_section([typed]) == _body_by_proton(AMQP_SEQUENCE, [typed])


def test_many_values_long_names_and_large_sections_as_proton_writes_them() -> None:
    entries = {f"name-{i}-" + "n" * (i * 7): typed for i, typed in enumerate(VALUES)}
    assert application_properties_section(entries, None) == _properties_by_proton(
        list(entries.items())
    )
    assert typed_map_section(entries) == _body_by_proton(AMQP_VALUE, entries)
    assert typed_list_section(VALUES) == _body_by_proton(AMQP_SEQUENCE, VALUES)


def test_empty_collections_as_proton_writes_them() -> None:
    assert typed_map_section({}) == _body_by_proton(AMQP_VALUE, {})
    assert typed_list_section([]) == _body_by_proton(AMQP_SEQUENCE, [])  # list0
    assert application_properties_section({}, None) == b""


def test_vendor_names_are_left_out_and_the_duplicate_id_added_unless_set() -> None:
    props: dict[str, TypedValue] = {
        "JMS_AMQP_REPLY_TO_GROUP_ID": (JavaType.STRING, "g"),
        "seq": (JavaType.INT, 7),
    }
    assert application_properties_section(props, ("_AMQ_DUPL_ID", "abc")) == (
        _properties_by_proton(
            [("seq", (JavaType.INT, 7)), ("_AMQ_DUPL_ID", (JavaType.STRING, "abc"))]
        )
    )
    own: dict[str, TypedValue] = {"_AMQ_DUPL_ID": (JavaType.STRING, "mine")}
    assert application_properties_section(own, ("_AMQ_DUPL_ID", "abc")) == (
        _properties_by_proton([("_AMQ_DUPL_ID", (JavaType.STRING, "mine"))])
    )
    vendor_only: dict[str, TypedValue] = {"JMS_AMQP_TTL": (JavaType.LONG, 5)}
    assert application_properties_section(vendor_only, None) == b""


@pytest.mark.parametrize(
    "typed",
    [
        (JavaType.OBJECT, symbol("an-amqp-symbol")),
        (JavaType.INT, 2**40),  # not an int: proton's own error, not a wrong encoding
        (JavaType.BYTE, 128),
        (JavaType.FLOAT, 1e300),
        (JavaType.STRING, "\ud800"),  # a lone surrogate is not UTF-8
    ],
    ids=["object", "int-out-of-range", "byte-out-of-range", "float-out-of-range", "lone-surrogate"],
)
def test_a_value_only_proton_writes_leaves_the_section_to_proton(typed: TypedValue) -> None:
    assert application_properties_section({"p": typed}, None) is None
    assert typed_map_section({"k": typed}) is None
    assert typed_list_section([typed]) is None


def _decoded(message: Any) -> Any:
    payload = encode_message(message, ttl=0, delivery_time_transmitted=False)
    return decode_message(
        payload,
        Queue("q"),
        deserialization_policy=None,
        queue_prefix=None,
        topic_prefix=None,
    )


def test_messages_round_trip_through_the_python_sections() -> None:
    message = BytesMessage()
    message.writeBytes(os.urandom(64))
    message.setIntProperty("seq", 123456)
    message.setStringProperty("region", "eu-west")
    message.setBooleanProperty("flag", True)
    message.setDoubleProperty("price", 12.5)
    # A received AMQP value with no Java type, re-sent as it came: through proton.
    message.get_property_store()["raw"] = (JavaType.OBJECT, symbol("kept"))
    received = _decoded(message)
    assert received.getIntProperty("seq") == 123456
    assert received.getStringProperty("region") == "eu-west"
    assert received.getBooleanProperty("flag") is True
    assert received.getDoubleProperty("price") == 12.5
    assert received.getObjectProperty("raw") == "kept"

    map_message = MapMessage()
    map_message.setInt("i", -5)
    map_message.setBytes("b", b"\x01\x02")
    map_message.setChar("c", "z")
    map_message.setStringProperty("p", "v")
    received_map = _decoded(map_message)
    assert received_map.getInt("i") == -5
    assert received_map.getBytes("b") == b"\x01\x02"
    assert received_map.getChar("c") == "z"
    assert received_map.getStringProperty("p") == "v"

    stream_message = StreamMessage()
    stream_message.writeLong(2**40)
    stream_message.writeString("s")
    stream_message.writeFloat(0.5)
    received_stream = _decoded(stream_message)
    received_stream.reset()
    assert received_stream.readLong() == 2**40
    assert received_stream.readString() == "s"
    assert received_stream.readFloat() == 0.5
