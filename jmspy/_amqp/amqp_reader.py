"""A pure-Python reader of the AMQP 1.0 type system (part 1 of the spec), for the receive path.

Decoding a received message through :class:`proton.Data` costs one cffi call (plus wrapper
overhead) per node and per getter; this reader walks the encoded bytes directly with
precompiled :class:`struct.Struct` unpackers and bytes slicing.

It produces exactly the Python values that ``jmspy._amqp.codec`` builds from proton.Data, with
the same proton wrapper types (``ubyte``, ``ushort``, ``uint``, ``ulong``, ``byte``, ``short``,
``int32``, ``float32``, ``char``, ``symbol``, ``timestamp``, ``decimal32``/``64``/``128``,
:class:`proton.Described`, :class:`uuid.UUID`), with binary as ``bytes`` and arrays as plain
lists of their elements (an array's descriptor is dropped, as the codec does).

The reader is deliberately strict: anything it is not certain to read exactly as proton does
raises :class:`AmqpDecodeError` so the caller can fall back to proton.Data. That covers malformed
and truncated input, but also valid encodings proton reads in its own way or that are not worth
a fast path:

* a list, map or array whose size field does not match its content (proton ignores it);
* a map with an odd number of elements;
* a descriptor that is not a ulong or a symbol;
* a described value whose value is described too (proton.Data then loses the value after it);
* an array of zero-width elements (null, true, false, uint0, ulong0, list0), whose element count
  is not bounded by the encoded size;
* nesting deeper than :data:`MAX_DEPTH`.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from typing import Any, Final

from proton import (
    Described,
    byte,
    char,
    decimal32,
    decimal64,
    decimal128,
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

__all__ = ["MAX_DEPTH", "AmqpDecodeError", "read_all", "read_sections", "read_value"]

#: Containers (lists, maps, arrays, described values) nested deeper than this are left to proton.
MAX_DEPTH: Final = 32


class AmqpDecodeError(Exception):
    """Input this reader does not decode: malformed, truncated, or left to proton.Data."""


# A reader gets the buffer, the position just after the format code and the nesting depth of
# the value; it returns the value and the position after it.
_Reader = Callable[[bytes, int, int], tuple[Any, int]]

_U16: Final = struct.Struct(">H").unpack_from
_U32: Final = struct.Struct(">I").unpack_from
_U64: Final = struct.Struct(">Q").unpack_from
_U32X2: Final = struct.Struct(">II").unpack_from
_I16: Final = struct.Struct(">h").unpack_from
_I32: Final = struct.Struct(">i").unpack_from
_I64: Final = struct.Struct(">q").unpack_from
_F32: Final = struct.Struct(">f").unpack_from
_F64: Final = struct.Struct(">d").unpack_from

# The unsigned proton types check their sign in a Python-level __init__; int.__new__ builds them
# without it (the wire cannot carry a negative there) at a third of the cost.
_int_new = int.__new__
_UUID = uuid.UUID

# One-byte values are looked up, one shared (immutable) instance each, indexed by the raw byte.
_UBYTES: Final = tuple(_int_new(ubyte, i) for i in range(256))
_BYTES: Final = tuple(byte(i - 256 if i > 127 else i) for i in range(256))
_SMALL_UINT: Final = tuple(_int_new(uint, i) for i in range(256))
_SMALL_INT: Final = tuple(int32(i - 256 if i > 127 else i) for i in range(256))
_SMALL_LONG: Final = tuple(i - 256 if i > 127 else i for i in range(256))
# smallulong values, mostly section and performative descriptors.
_SMALL_ULONG: Final = tuple(_int_new(ulong, i) for i in range(256))
_UINT0: Final = _SMALL_UINT[0]
_ULONG0: Final = _SMALL_ULONG[0]

# Symbols repeat from message to message (annotation keys, content types): a short symbol's
# decoded value is kept per encoded form. The cache is cleared when full.
_SYMBOLS: dict[bytes, symbol] = {}
_SYMBOLS_MAX: Final = 512
_SYMBOL_CACHED_LENGTH: Final = 128


def _symbol(raw: bytes) -> symbol:
    sym = _SYMBOLS.get(raw)
    if sym is None:
        sym = symbol(raw.decode("ascii"))
        if len(raw) <= _SYMBOL_CACHED_LENGTH:
            if len(_SYMBOLS) >= _SYMBOLS_MAX:
                _SYMBOLS.clear()
            _SYMBOLS[raw] = sym
    return sym


def _error(what: str, pos: int) -> AmqpDecodeError:
    return AmqpDecodeError(f"{what} at byte {pos}")


# Bounds: fixed-width reads fail by themselves past the end (IndexError, struct.error), but a
# slice does not, so variable-width readers return a position that may lie beyond the buffer
# when the input is truncated. Positions only grow, so a truncation anywhere leaves the final
# position past the end: every entry point checks it, and so does every compound value against
# its encoded size, which must not exceed the buffer either.


# -- fixed width ---------------------------------------------------------------------------------


def _r_null(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return None, pos


def _r_true(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return True, pos


def _r_false(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return False, pos


def _r_bool(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    # proton reads any non-zero byte as true.
    return buf[pos] != 0, pos + 1


def _r_ubyte(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return _UBYTES[buf[pos]], pos + 1


def _r_ushort(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return _int_new(ushort, _U16(buf, pos)[0]), pos + 2


def _r_uint(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return _int_new(uint, _U32(buf, pos)[0]), pos + 4


def _r_smalluint(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return _SMALL_UINT[buf[pos]], pos + 1


def _r_uint0(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return _UINT0, pos


def _r_ulong(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return _int_new(ulong, _U64(buf, pos)[0]), pos + 8


def _r_smallulong(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return _SMALL_ULONG[buf[pos]], pos + 1


def _r_ulong0(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return _ULONG0, pos


def _r_byte(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return _BYTES[buf[pos]], pos + 1


def _r_short(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return short(_I16(buf, pos)[0]), pos + 2


def _r_int(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return int32(_I32(buf, pos)[0]), pos + 4


def _r_smallint(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return _SMALL_INT[buf[pos]], pos + 1


def _r_long(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return _I64(buf, pos)[0], pos + 8


def _r_smalllong(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return _SMALL_LONG[buf[pos]], pos + 1


def _r_float(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return float32(_F32(buf, pos)[0]), pos + 4


def _r_double(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return _F64(buf, pos)[0], pos + 8


def _r_decimal32(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return decimal32(_U32(buf, pos)[0]), pos + 4


def _r_decimal64(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return decimal64(_U64(buf, pos)[0]), pos + 8


def _r_decimal128(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    end = pos + 16
    return decimal128(buf[pos:end]), end


def _r_char(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    # UTF-32BE code point; chr() rejects values above U+10FFFF as proton's get_char does.
    return char(chr(_U32(buf, pos)[0])), pos + 4


def _r_timestamp(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return timestamp(_I64(buf, pos)[0]), pos + 8


def _r_uuid(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    end = pos + 16
    return _UUID(bytes=buf[pos:end]), end  # ValueError when truncated


# -- variable width ------------------------------------------------------------------------------


def _r_vbin8(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    start = pos + 1
    end = start + buf[pos]
    return buf[start:end], end


def _r_vbin32(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    start = pos + 4
    end = start + _U32(buf, pos)[0]
    return buf[start:end], end


def _r_str8(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    start = pos + 1
    end = start + buf[pos]
    return buf[start:end].decode(), end


def _r_str32(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    start = pos + 4
    end = start + _U32(buf, pos)[0]
    return buf[start:end].decode(), end


def _r_sym8(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    start = pos + 1
    end = start + buf[pos]
    return _symbol(buf[start:end]), end


def _r_sym32(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    start = pos + 4
    end = start + _U32(buf, pos)[0]
    return _symbol(buf[start:end]), end


# -- compound ------------------------------------------------------------------------------------


def _r_list0(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    return [], pos


def _items(buf: bytes, pos: int, end: int, count: int, depth: int) -> list[Any]:
    """``count`` values from ``pos``, which must end exactly at ``end``."""
    if depth >= MAX_DEPTH:
        raise _error("nesting too deep", pos)
    if end > len(buf):
        raise _error("compound value longer than the input", pos)
    depth += 1
    out: list[Any] = []
    append = out.append
    readers = _READERS
    # The most common codes in message sections are read inline, saving a call per value.
    for _ in range(count):
        code = buf[pos]
        if code == 0x40:  # null: most fields of a properties section
            append(None)
            pos += 1
        elif code == 0xA1:  # str8
            start = pos + 2
            pos = start + buf[pos + 1]
            append(buf[start:pos].decode())
        elif code == 0xA3:  # sym8
            start = pos + 2
            pos = start + buf[pos + 1]
            append(_symbol(buf[start:pos]))
        elif code == 0x83:  # timestamp
            append(timestamp(_I64(buf, pos + 1)[0]))
            pos += 9
        else:
            value, pos = readers[code](buf, pos + 1, depth)
            append(value)
    if pos != end:
        raise _error("list size does not match its elements", pos)
    return out


def _r_list8(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    size = buf[pos]
    end = pos + 1 + size
    if size < 1:
        raise _error("list8 too small for its count", pos)
    return _items(buf, pos + 2, end, buf[pos + 1], depth), end


def _r_list32(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    size, count = _U32X2(buf, pos)
    end = pos + 4 + size
    if size < 4:
        raise _error("list32 too small for its count", pos)
    return _items(buf, pos + 8, end, count, depth), end


def _map_items(buf: bytes, pos: int, end: int, count: int, depth: int) -> dict[Any, Any]:
    """A map of ``count`` elements (keys and values) from ``pos``, ending exactly at ``end``.

    Pairs are assigned in order, as proton's reading does: a repeated key keeps its first key
    object and its last value; an unhashable key raises TypeError.
    """
    if count & 1:
        raise _error("map with an odd number of elements", pos)
    if depth >= MAX_DEPTH:
        raise _error("nesting too deep", pos)
    if end > len(buf):
        raise _error("compound value longer than the input", pos)
    depth += 1
    out: dict[Any, Any] = {}
    readers = _READERS
    key: Any
    for _ in range(count >> 1):
        # Keys: symbols (annotations) and strings (application properties, map bodies).
        code = buf[pos]
        if code == 0xA3:  # sym8
            start = pos + 2
            pos = start + buf[pos + 1]
            key = _symbol(buf[start:pos])
        elif code == 0xA1:  # str8
            start = pos + 2
            pos = start + buf[pos + 1]
            key = buf[start:pos].decode()
        else:
            key, pos = readers[code](buf, pos + 1, depth)
        code = buf[pos]
        if code == 0xA1:  # str8
            start = pos + 2
            pos = start + buf[pos + 1]
            out[key] = buf[start:pos].decode()
        elif code == 0x40:  # null
            out[key] = None
            pos += 1
        else:
            out[key], pos = readers[code](buf, pos + 1, depth)
    if pos != end:
        raise _error("map size does not match its elements", pos)
    return out


def _r_map8(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    size = buf[pos]
    end = pos + 1 + size
    if size < 1:
        raise _error("map8 too small for its count", pos)
    return _map_items(buf, pos + 2, end, buf[pos + 1], depth), end


def _r_map32(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    size, count = _U32X2(buf, pos)
    end = pos + 4 + size
    if size < 4:
        raise _error("map32 too small for its count", pos)
    return _map_items(buf, pos + 8, end, count, depth), end


def _array_items(buf: bytes, pos: int, end: int, count: int, depth: int) -> list[Any]:
    if depth >= MAX_DEPTH:
        raise _error("nesting too deep", pos)
    if end > len(buf):
        raise _error("array longer than the input", pos)
    depth += 1
    code = buf[pos]
    pos += 1
    if code == 0x00:
        # Described elements: one descriptor for the whole array, which the codec drops.
        _descriptor, pos = _read_descriptor(buf, pos, depth)
        code = buf[pos]
        pos += 1
        if code == 0x00:
            raise _error("array element constructor described twice", pos)
    if code in _ZERO_WIDTH:
        raise _error("array of zero-width elements", pos)
    reader = _READERS[code]
    if reader is _r_unknown:  # checked even when there are no elements, as proton does
        raise _error(f"unsupported array element format code 0x{code:02x}", pos - 1)
    out: list[Any] = []
    append = out.append
    for _ in range(count):
        value, pos = reader(buf, pos, depth)
        append(value)
    if pos != end:
        raise _error("array size does not match its elements", pos)
    return out


def _r_array8(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    size = buf[pos]
    end = pos + 1 + size
    if size < 2:
        raise _error("array8 too small for its count and constructor", pos)
    return _array_items(buf, pos + 2, end, buf[pos + 1], depth), end


def _r_array32(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    size, count = _U32X2(buf, pos)
    end = pos + 4 + size
    if size < 5:
        raise _error("array32 too small for its count and constructor", pos)
    return _array_items(buf, pos + 8, end, count, depth), end


def _read_descriptor(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    code = buf[pos]
    if code not in _DESCRIPTOR_CODES:
        raise _error(f"descriptor of type 0x{code:02x} (not a ulong or symbol)", pos)
    return _READERS[code](buf, pos + 1, depth)


def _r_described(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    if depth >= MAX_DEPTH:
        raise _error("nesting too deep", pos)
    depth += 1
    descriptor, pos = _read_descriptor(buf, pos, depth)
    code = buf[pos]
    if code == 0x00:
        # proton.Data, as the codec walks it, loses the value that follows a described value
        # whose value is itself described (the next element, map entry or section).
        raise _error("described value that is itself described", pos)
    value, pos = _READERS[code](buf, pos + 1, depth)
    return Described(descriptor, value), pos


def _r_unknown(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
    raise _error(f"unsupported format code 0x{buf[pos - 1]:02x}", pos - 1)


_LISTS_AND_MAPS: Final = frozenset((0xC0, 0xC1, 0xD0, 0xD1))
_ZERO_WIDTH: Final = frozenset((0x40, 0x41, 0x42, 0x43, 0x44, 0x45))
_DESCRIPTOR_CODES: Final = frozenset((0x53, 0x80, 0x44, 0xA3, 0xB3))

_READERS: list[_Reader] = [_r_unknown] * 256
for _code, _reader in {
    0x00: _r_described,
    0x40: _r_null,
    0x41: _r_true,
    0x42: _r_false,
    0x56: _r_bool,
    0x50: _r_ubyte,
    0x60: _r_ushort,
    0x70: _r_uint,
    0x52: _r_smalluint,
    0x43: _r_uint0,
    0x80: _r_ulong,
    0x53: _r_smallulong,
    0x44: _r_ulong0,
    0x51: _r_byte,
    0x61: _r_short,
    0x71: _r_int,
    0x54: _r_smallint,
    0x81: _r_long,
    0x55: _r_smalllong,
    0x72: _r_float,
    0x82: _r_double,
    0x74: _r_decimal32,
    0x84: _r_decimal64,
    0x94: _r_decimal128,
    0x73: _r_char,
    0x83: _r_timestamp,
    0x98: _r_uuid,
    0xA0: _r_vbin8,
    0xB0: _r_vbin32,
    0xA1: _r_str8,
    0xB1: _r_str32,
    0xA3: _r_sym8,
    0xB3: _r_sym32,
    0x45: _r_list0,
    0xC0: _r_list8,
    0xD0: _r_list32,
    0xC1: _r_map8,
    0xD1: _r_map32,
    0xE0: _r_array8,
    0xF0: _r_array32,
}.items():
    _READERS[_code] = _reader
del _code, _reader

# What reading past the end or bad content raises inside the readers: out-of-range indexing
# (IndexError), short unpack (struct.error), invalid UTF-8/ASCII or code point (ValueError),
# an unhashable map key (TypeError).
_READ_ERRORS = (IndexError, struct.error, ValueError, TypeError, RecursionError, OverflowError)


def _truncated(end: int, total: int) -> AmqpDecodeError:
    return AmqpDecodeError(f"truncated input: the values need {end} bytes, there are {total}")


def _as_bytes(data: bytes | bytearray | memoryview) -> bytes:
    return data if type(data) is bytes else bytes(data)


def read_value(data: bytes | bytearray | memoryview, pos: int = 0) -> tuple[Any, int]:
    """The value encoded at ``pos`` and the position just after it.

    Raises :class:`AmqpDecodeError` for malformed or truncated input and for encodings this
    reader leaves to proton.Data (see the module documentation).
    """
    buf = _as_bytes(data)
    try:
        value, end = _READERS[buf[pos]](buf, pos + 1, 0)
    except _READ_ERRORS as exc:
        raise AmqpDecodeError(f"cannot read AMQP value: {type(exc).__name__}: {exc}") from exc
    if end > len(buf):
        raise _truncated(end, len(buf))
    return value, end


def read_all(data: bytes | bytearray | memoryview) -> list[Any]:
    """Every value in ``data``, which must hold whole values only."""
    buf = _as_bytes(data)
    out: list[Any] = []
    pos = 0
    total = len(buf)
    readers = _READERS
    try:
        while pos < total:
            value, pos = readers[buf[pos]](buf, pos + 1, 0)
            out.append(value)
    except _READ_ERRORS as exc:
        raise AmqpDecodeError(f"cannot read AMQP value: {type(exc).__name__}: {exc}") from exc
    if pos > total:
        raise _truncated(pos, total)
    return out


# Header and message-annotations sections tend to repeat byte for byte from message to message
# (same producer settings, same broker annotations). When such a section is a list or map of
# immutable scalars, a copy of its decoded container is kept per encoded form, so that reading
# it again costs a dict lookup and a shallow copy. The cache is cleared when full.
_CACHED_SECTIONS: Final = frozenset((0x70, 0x72))  # header, message-annotations
_SECTION_CACHE: dict[bytes, list[Any] | dict[Any, Any]] = {}
_SECTION_CACHE_SIZE: Final = 256
_CACHED_SECTION_MAX: Final = 512  # encoded bytes
_SCALARS = frozenset(
    (
        type(None),
        bool,
        int,
        float,
        str,
        bytes,
        byte,
        short,
        int32,
        ubyte,
        ushort,
        uint,
        ulong,
        float32,
        char,
        symbol,
        timestamp,
        decimal32,
        decimal64,
        decimal128,
        uuid.UUID,
    )
)


def _scalars_only(value: list[Any] | dict[Any, Any]) -> bool:
    scalars = _SCALARS
    if isinstance(value, dict):
        return all(type(k) in scalars and type(v) in scalars for k, v in value.items())
    return all(type(v) in scalars for v in value)


def read_sections(data: bytes | bytearray | memoryview) -> list[tuple[Any, Any]]:
    """The (descriptor, value) of each described value of a bare message, in order.

    A top-level value that is not described raises :class:`AmqpDecodeError`, like any input
    this reader does not decode, so the caller's proton.Data path reports it.
    """
    buf = _as_bytes(data)
    out: list[tuple[Any, Any]] = []
    pos = 0
    total = len(buf)
    readers = _READERS
    small_ulong = _SMALL_ULONG
    cache = _SECTION_CACHE
    value: Any
    try:
        while pos < total:
            if buf[pos] != 0x00:
                raise _error("top-level value that is not described", pos)
            if buf[pos + 1] == 0x53:
                descriptor = small_ulong[buf[pos + 2]]
                pos += 3
            else:
                descriptor, pos = _read_descriptor(buf, pos + 1, 1)
            # Lists and maps (header, annotations, properties, application properties) and
            # vbin32 (data) are read here rather than through their readers, saving a call.
            code = buf[pos]
            if code == 0x00:
                raise _error("section whose value is described", pos)
            if code in _LISTS_AND_MAPS:
                if code & 0x10:  # list32, map32
                    size, count = _U32X2(buf, pos + 1)
                    start = pos + 9
                    end = pos + 5 + size
                    if size < 4:
                        raise _error("list32/map32 too small for its count", pos)
                else:  # list8, map8
                    size = buf[pos + 1]
                    count = buf[pos + 2]
                    start = pos + 3
                    end = pos + 2 + size
                    if size < 1:
                        raise _error("list8/map8 too small for its count", pos)
                key = None
                if (
                    descriptor in _CACHED_SECTIONS
                    and end - pos <= _CACHED_SECTION_MAX
                    and end <= total
                ):
                    key = buf[pos:end]
                    cached = cache.get(key)
                    if cached is not None:
                        out.append((descriptor, cached.copy()))
                        pos = end
                        continue
                if code & 0x01:
                    value = _map_items(buf, start, end, count, 1)
                else:
                    value = _items(buf, start, end, count, 1)
                if key is not None and _scalars_only(value):
                    if len(cache) >= _SECTION_CACHE_SIZE:
                        cache.clear()
                    cache[key] = value.copy()
                pos = end
            elif code == 0xB0:
                start = pos + 5
                pos = start + _U32(buf, pos + 1)[0]
                value = buf[start:pos]
            else:
                value, pos = readers[code](buf, pos + 1, 1)
            out.append((descriptor, value))
    except _READ_ERRORS as exc:
        raise AmqpDecodeError(f"cannot read AMQP section: {type(exc).__name__}: {exc}") from exc
    if pos > total:
        raise _truncated(pos, total)
    return out
