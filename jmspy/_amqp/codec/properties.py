"""The properties section, written in Python.

Every message has one, so the send path writes it here rather than through ``proton.Data``:
each ``Data`` call is a call into C that lets go of the GIL, and on a busy connection the
engine thread takes it at every one of them, so a dozen small calls per message cost a dozen
thread switches. The bytes are the ones ``proton.Data`` writes (the smallest encoding of each
value, and list32 for the list, as proton-c writes lists), which
``tests/unit/test_codec_properties.py`` checks against proton itself.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from proton import ulong

from ...errors import MessageFormatException
from .common import PROPERTIES, _framed

__all__ = ["properties_section"]

_NULL = b"\x40"
_TIMESTAMP = struct.Struct(">Bq")
_UINT = struct.Struct(">BI")
_ULONG = struct.Struct(">BQ")
_LIST32 = struct.Struct(">BII")
_DESCRIPTOR = bytes((0x00, 0x53, PROPERTIES))


def _string(value: Any) -> bytes:
    if type(value) is not str:
        value = str(value)
    return _framed(b"", 0xA1, 0xB1, value.encode("utf-8"))


# Addresses, subjects and content types repeat from message to message: their encodings are
# kept (the message id, different every time, is not). Cleared when full.
_REPEATED: dict[tuple[int, str], bytes] = {}
_REPEATED_SIZE = 256


def _repeated(code: int, value: Any, encode: Callable[[Any], bytes]) -> bytes:
    key = (code, value)
    encoded = _REPEATED.get(key)
    if encoded is None:
        encoded = encode(value)
        if len(_REPEATED) >= _REPEATED_SIZE:
            _REPEATED.clear()
        _REPEATED[key] = encoded
    return encoded


def _repeated_string(value: Any) -> bytes:
    return _repeated(0xA1, value, _string)


def _symbol(value: Any) -> bytes:
    return _repeated(0xA3, value, _encode_symbol)


def _encode_symbol(value: Any) -> bytes:
    return _framed(b"", 0xA3, 0xB3, str(value).encode("ascii"))


def _binary(value: Any) -> bytes:
    return _framed(b"", 0xA0, 0xB0, bytes(value))


def _timestamp(value: Any) -> bytes:
    return _TIMESTAMP.pack(0x83, int(value))


def _uint(value: Any) -> bytes:
    n = int(value)
    if n == 0:
        return b"\x43"
    if n < 256:
        return bytes((0x52, n))
    return _UINT.pack(0x70, n)


def _ulong(value: Any) -> bytes:
    n = int(value)
    if n == 0:
        return b"\x44"
    if n < 256:
        return bytes((0x53, n))
    return _ULONG.pack(0x80, n)


def _message_id(value: Any) -> bytes:
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, ulong):
        return _ulong(value)
    if isinstance(value, uuid.UUID):
        return b"\x98" + value.bytes
    if isinstance(value, bytes):
        return _binary(value)
    raise MessageFormatException(f"Unsupported id value type {type(value).__name__}")


_WRITERS = (
    _message_id,  # message-id
    _binary,  # user-id
    _repeated_string,  # to
    _repeated_string,  # subject
    _repeated_string,  # reply-to
    _message_id,  # correlation-id
    _symbol,  # content-type
    _symbol,  # content-encoding
    _timestamp,  # absolute-expiry-time
    _timestamp,  # creation-time
    _string,  # group-id
    _uint,  # group-sequence
    _repeated_string,  # reply-to-group-id
)


def properties_section(fields: Sequence[Any]) -> bytes:
    """The encoded properties section for the 13 ``fields`` (None: absent), trailing absent
    fields left out; empty bytes when every field is absent."""
    last = len(fields) - 1
    while last >= 0 and fields[last] is None:
        last -= 1
    if last < 0:
        return b""
    items = b"".join(
        [
            _NULL if value is None else write(value)
            for value, write in zip(fields[: last + 1], _WRITERS, strict=False)
        ]
    )
    # list32 whatever the size, as proton-c writes every non-empty list.
    return _DESCRIPTOR + _LIST32.pack(0xD0, len(items) + 4, last + 1) + items
