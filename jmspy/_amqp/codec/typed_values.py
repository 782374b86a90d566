"""Typed JMS values (properties, MapMessage entries, StreamMessage items) encoded in Python.

Application properties are on the send path of most JMS messages (selectors and routing read
them), and ``proton.Data`` costs a call into C per value, each of which lets go of the GIL: on
a busy process every property became a thread switch. The bytes are the ones ``proton.Data``
writes (the smallest encoding of each int and long, map32 for maps, list32 for lists and list0
for an empty one), which ``tests/unit/test_codec_typed_values.py`` checks against proton
itself. A value this module does not write (an ``Object`` value: a received AMQP value with no
Java type, re-sent as it came) makes the caller use ``proton.Data`` for the whole section.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ...message import JMS_AMQP_PREFIX, JavaType, TypedValue
from .common import AMQP_SEQUENCE, AMQP_VALUE, APPLICATION_PROPERTIES

# The properties section's writers: strings, binaries, and the kept encodings of strings that
# repeat from message to message (property names and map keys here).
from .properties import _binary, _string
from .properties import _repeated_string as _name

__all__ = [
    "application_properties_section",
    "encode_long",
    "typed_list_section",
    "typed_map_section",
]

_BYTE = struct.Struct(">Bb")
_SHORT = struct.Struct(">Bh")
_INT = struct.Struct(">Bi")
_LONG = struct.Struct(">Bq")
_FLOAT = struct.Struct(">Bf")
_DOUBLE = struct.Struct(">Bd")
_CHAR = struct.Struct(">BI")
_COMPOUND32 = struct.Struct(">BII")

_NULL = b"\x40"
_TRUE = b"\x41"
_FALSE = b"\x42"
_LIST0 = b"\x45"
_MAP32 = 0xD1
_LIST32 = 0xD0


class _NotHere(Exception):
    """A value for proton's general encoder."""


def _boolean(value: Any) -> bytes:
    return _TRUE if value else _FALSE


def _byte(value: Any) -> bytes:
    return _BYTE.pack(0x51, value)


def _short(value: Any) -> bytes:
    return _SHORT.pack(0x61, value)


def _int(value: Any) -> bytes:
    if -128 <= value <= 127:
        return bytes((0x54, value & 0xFF))  # smallint
    return _INT.pack(0x71, value)


def encode_long(value: Any) -> bytes:
    """An AMQP long as proton.Data writes it (smalllong from -128 to 127)."""
    if -128 <= value <= 127:
        return bytes((0x55, value & 0xFF))  # smalllong
    return _LONG.pack(0x81, value)


def _float(value: Any) -> bytes:
    return _FLOAT.pack(0x72, value)


def _double(value: Any) -> bytes:
    return _DOUBLE.pack(0x82, value)


def _char(value: Any) -> bytes:
    return _CHAR.pack(0x73, ord(value))


def _object(value: Any) -> bytes:
    raise _NotHere


_WRITERS: dict[JavaType, Callable[[Any], bytes]] = {
    JavaType.BOOLEAN: _boolean,
    JavaType.BYTE: _byte,
    JavaType.SHORT: _short,
    JavaType.INT: _int,
    JavaType.LONG: encode_long,
    JavaType.FLOAT: _float,
    JavaType.DOUBLE: _double,
    JavaType.STRING: _string,
    JavaType.CHAR: _char,
    JavaType.BYTES: _binary,
    JavaType.OBJECT: _object,
}


def _value(typed: TypedValue) -> bytes:
    java_type, value = typed
    if value is None:
        return _NULL
    return _WRITERS[java_type](value)


def _section(descriptor: int, constructor: int, count: int, items: list[bytes]) -> bytes:
    body = b"".join(items)
    return b"".join(
        (
            bytes((0x00, 0x53, descriptor)),
            _COMPOUND32.pack(constructor, len(body) + 4, count),
            body,
        )
    )


# What proton.Data makes of a value these refuse (its own error included) is the caller's
# answer: they return None for it.
_REFUSED = (
    _NotHere,
    struct.error,
    OverflowError,
    UnicodeEncodeError,
    TypeError,
    ValueError,
    AttributeError,
)


def application_properties_section(
    properties: Mapping[str, TypedValue] | None, duplicate_id: tuple[str, str] | None
) -> bytes | None:
    """The application-properties section of ``properties`` without the vendor ``JMS_AMQP_*``
    names (never sent), plus the broker's duplicate-detection property ``duplicate_id`` (name,
    value) unless a property of that name is set; empty bytes when there is nothing to send;
    None when a value needs proton's general encoder."""
    items: list[bytes] = []
    try:
        if properties:
            for name, typed in properties.items():
                if name.startswith(JMS_AMQP_PREFIX):
                    continue
                items.append(_name(name))
                items.append(_value(typed))
        if duplicate_id is not None and not (properties and duplicate_id[0] in properties):
            items.append(_name(duplicate_id[0]))
            items.append(_string(duplicate_id[1]))
    except _REFUSED:
        return None
    if not items:
        return b""
    return _section(APPLICATION_PROPERTIES, _MAP32, len(items), items)


def typed_map_section(entries: Mapping[str, TypedValue]) -> bytes | None:
    """A MapMessage body: amqp-value of a map with string keys; None when a value needs
    proton's general encoder."""
    items: list[bytes] = []
    try:
        for name, typed in entries.items():
            items.append(_name(name))
            items.append(_value(typed))
    except _REFUSED:
        return None
    return _section(AMQP_VALUE, _MAP32, len(items), items)


def typed_list_section(items: Iterable[TypedValue]) -> bytes | None:
    """A StreamMessage body: amqp-sequence of a list (list0 when empty); None when an item
    needs proton's general encoder."""
    try:
        encoded = [_value(typed) for typed in items]
    except _REFUSED:
        return None
    if not encoded:
        return bytes((0x00, 0x53, AMQP_SEQUENCE)) + _LIST0
    return _section(AMQP_SEQUENCE, _LIST32, len(encoded), encoded)
