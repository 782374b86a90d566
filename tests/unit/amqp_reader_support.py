"""Shared by the AMQP reader tests (test_amqp_reader_*.py): helpers that compare the reader with
proton.Data, hand encodings of the forms proton's encoder never picks, and the value tables.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable
from typing import Any

from proton import UNDESCRIBED as _UNDESCRIBED
from proton import (
    Array,
    Data,
    Described,
    byte,
    char,
    decimal32,
    decimal64,
    decimal128,
    float32,
    short,
    symbol,
    timestamp,
    ubyte,
    uint,
    ulong,
    ushort,
)

from jmspy._amqp import codec
from jmspy._amqp.amqp_reader import (
    read_all,
)

U = uuid.UUID("0e8a4a1c-8d2c-4a0e-9b51-3b0f2a6f9e11")
UNDESCRIBED: Any = _UNDESCRIBED  # typed as a Constant, taken as an Array descriptor

# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def proton_read(buf: bytes) -> list[Any]:
    return codec._proton_values(buf)


def same(a: Any, b: Any) -> bool:
    """Equal values with identical Python types, recursively (NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a):
            return math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return len(a) == len(b) and all(
            same(ka, kb) and same(va, vb)
            for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True)
        )
    if isinstance(a, Described):
        return same(a.descriptor, b.descriptor) and same(a.value, b.value)
    return bool(a == b)


def encode(*values: Any) -> bytes:
    """Values encoded one after the other by proton.Data.put_object."""
    d = Data()
    for v in values:
        d.put_object(v)
    return bytes(d.encode())


def put(method: Callable[..., None], value: Any) -> bytes:
    d = Data()
    method(d, value)
    return bytes(d.encode())


def assert_reads_like_proton(buf: bytes) -> list[Any]:
    expected = proton_read(buf)
    got = read_all(buf)
    assert same(got, expected), f"{buf.hex()[:200]}: {got!r:.300} != {expected!r:.300}"
    return got


# Hand encodings of the forms proton's encoder never picks (8-bit compounds, wide forms of small
# values), to check that the reader takes them the way proton's decoder does.


def c8(code: int, count: int, body: bytes) -> bytes:
    return bytes((code, len(body) + 1, count)) + body


def c32(code: int, count: int, body: bytes) -> bytes:
    return bytes((code,)) + (len(body) + 4).to_bytes(4, "big") + count.to_bytes(4, "big") + body


def a8(count: int, constructor: bytes, body: bytes) -> bytes:
    return bytes((0xE0, len(constructor) + len(body) + 1, count)) + constructor + body


def a32(count: int, constructor: bytes, body: bytes) -> bytes:
    size = 4 + len(constructor) + len(body)
    return b"\xf0" + size.to_bytes(4, "big") + count.to_bytes(4, "big") + constructor + body


def sym8(s: str) -> bytes:
    return bytes((0xA3, len(s))) + s.encode("ascii")


def str8(s: str) -> bytes:
    raw = s.encode("utf-8")
    return bytes((0xA1, len(raw))) + raw


SCALARS: list[tuple[Callable[..., None], list[Any]]] = [
    (Data.put_bool, [True, False]),
    (Data.put_ubyte, [0, 1, 127, 128, 255]),
    (Data.put_ushort, [0, 1, 255, 256, 65535]),
    (Data.put_uint, [0, 1, 255, 256, 2**31, 2**32 - 1]),
    (Data.put_ulong, [0, 1, 255, 256, 2**63, 2**64 - 1]),
    (Data.put_byte, [-128, -1, 0, 1, 127]),
    (Data.put_short, [-(2**15), -129, -1, 0, 255, 2**15 - 1]),
    (Data.put_int, [-(2**31), -129, -128, -1, 0, 127, 128, 2**31 - 1]),
    (Data.put_long, [-(2**63), -(2**31), -129, -128, -1, 0, 127, 128, 2**40, 2**63 - 1]),
    (Data.put_float, [0.0, -0.0, 1.5, -2.25, 1e-45, 3.4e38, math.inf, -math.inf, math.nan]),
    (Data.put_double, [0.0, -0.0, 0.1, -1e308, 5e-324, math.inf, -math.inf, math.nan]),
    (Data.put_decimal32, [decimal32(0), decimal32(0x01020304), decimal32(2**32 - 1)]),
    (Data.put_decimal64, [decimal64(0), decimal64(2**64 - 1), decimal64(0x0102030405060708)]),
    (Data.put_decimal128, [decimal128(bytes(16)), decimal128(bytes(range(16)))]),
    (Data.put_char, ["a", "\x00", "\u00e9", "\u20ac", "\U0001f600", "\U0010ffff"]),
    (Data.put_timestamp, [0, -1, 1_700_000_000_000, 2**63 - 1, -(2**63)]),
    (Data.put_uuid, [U, uuid.UUID(int=0), uuid.UUID(int=2**128 - 1)]),
    (Data.put_binary, [b"", b"\x00", b"x" * 255, b"y" * 256, bytes(range(256)) * 300]),
    (Data.put_string, ["", "a", "é€😀", "s" * 255, "t" * 256, "ü" * 200, "z" * 70000]),
    (Data.put_symbol, ["", "x-opt-jms-msg-type", "a" * 255, "b" * 256]),
    (Data.put_null, [None]),
]


COMPOUNDS: list[Any] = [
    [],
    [None],
    [1, "a", symbol("s"), b"b", True, None, 1.5, U],
    [[], [[]], [[[1]]]],
    list(range(300)),
    ["x" * 300, [symbol("y")] * 3],
    {},
    {symbol("x-opt-jms-msg-type"): byte(3), symbol("x-opt-jms-dest"): byte(0)},
    {"a": 1, "b": "two", "c": None, "d": [1, 2], "e": {"f": {}}},
    {1: "int key", None: "null key", b"k": "binary key", U: "uuid key", 2.5: "float key"},
    {f"k{i}": i for i in range(200)},
    [{"a": [1, {"b": None}]}, {}],
    Described(symbol("com.example:thing"), "value"),
    Described(ulong(0x77), [1, 2, 3]),
    [Described(symbol("d"), {"k": "v"}), Described(ulong(2**40), b"x")],
    {"described": Described(ulong(5), [None])},
    Array(UNDESCRIBED, Data.INT, 1, -1, 2**31 - 1),
    Array(UNDESCRIBED, Data.LONG, 0, -(2**63), 2**63 - 1),
    Array(UNDESCRIBED, Data.ULONG, ulong(0), ulong(1), ulong(2**64 - 1)),
    Array(UNDESCRIBED, Data.UINT, uint(0), uint(7)),
    Array(UNDESCRIBED, Data.UBYTE, ubyte(0), ubyte(255)),
    Array(UNDESCRIBED, Data.USHORT, ushort(65535)),
    Array(UNDESCRIBED, Data.BYTE, byte(-1), byte(1)),
    Array(UNDESCRIBED, Data.SHORT, short(-2)),
    Array(UNDESCRIBED, Data.BOOL, True, False, True),
    Array(UNDESCRIBED, Data.DOUBLE, 1.5, -0.0),
    Array(UNDESCRIBED, Data.FLOAT, float32(1.5)),
    Array(UNDESCRIBED, Data.CHAR, char("a"), char("\U0001f600")),
    Array(UNDESCRIBED, Data.TIMESTAMP, timestamp(1), timestamp(-1)),
    Array(UNDESCRIBED, Data.UUID, U, U),
    Array(UNDESCRIBED, Data.STRING, "a", "", "c" * 300),
    Array(UNDESCRIBED, Data.SYMBOL, symbol("a"), symbol("b" * 300)),
    Array(UNDESCRIBED, Data.BINARY, b"", b"x"),
    Array(UNDESCRIBED, Data.INT),
    Array(UNDESCRIBED, Data.LIST, [1, "a"], []),
    Array(UNDESCRIBED, Data.MAP, {"a": 1}, {}),
    Array(UNDESCRIBED, Data.ARRAY, Array(UNDESCRIBED, Data.INT, 1), Array(UNDESCRIBED, Data.INT)),
    Array(symbol("desc"), Data.INT, 1, 2),
    Array(ulong(7), Data.STRING, "a", "bc"),
    [Array(UNDESCRIBED, Data.SYMBOL, symbol("x")), {"arr": Array(UNDESCRIBED, Data.LONG, 5)}],
]


# ---------------------------------------------------------------------------------------------
# Hand-made encodings: every format code and both widths of each compound
# ---------------------------------------------------------------------------------------------

HAND: list[bytes] = [
    b"\x40",
    b"\x41",
    b"\x42",
    b"\x56\x00",
    b"\x56\x01",
    b"\x56\x02",  # proton reads any non-zero byte as true
    b"\x50\xff",
    b"\x60\x00\x05",
    b"\x70\x00\x00\x00\x05",  # uint in its wide form
    b"\x52\xff",
    b"\x43",
    b"\x80" + (5).to_bytes(8, "big"),  # ulong in its wide form
    b"\x53\x00",
    b"\x44",
    b"\x51\x80",
    b"\x61\xff\xfe",
    b"\x71\x00\x00\x00\x01",
    b"\x54\xff",
    b"\x81" + (1).to_bytes(8, "big"),
    b"\x55\x80",
    b"\x72\x7f\xc0\x00\x00",
    b"\x82\x7f\xf8\x00\x00\x00\x00\x00\x00",
    b"\x74\x01\x02\x03\x04",
    b"\x84" + bytes(range(8)),
    b"\x94" + bytes(range(16)),
    b"\x73\x00\x00\xd8\x00",  # a lone surrogate is still a code point for chr()
    b"\x83\xff\xff\xff\xff\xff\xff\xff\xff",
    b"\x98" + U.bytes,
    b"\xa0\x00",
    b"\xa0\x03abc",
    b"\xb0\x00\x00\x00\x03abc",
    b"\xa1\x02\xc3\xa9",
    b"\xb1\x00\x00\x00\x01a",
    b"\xa3\x03abc",
    b"\xb3\x00\x00\x00\x01s",
    b"\x45",
    c8(0xC0, 0, b""),
    c8(0xC0, 3, b"\x40\x45" + str8("x")),
    c32(0xD0, 0, b""),
    c32(0xD0, 2, b"\x41" + c8(0xC0, 1, b"\x42")),
    c8(0xC1, 0, b""),
    c8(0xC1, 4, sym8("a") + b"\x51\x01" + str8("b") + c8(0xC1, 2, b"\x40\x40")),
    c32(0xD1, 2, b"\x53\x01" + c32(0xD0, 1, b"\x40")),
    c8(0xC1, 4, sym8("k") + b"\x51\x01" + str8("k") + b"\x51\x02"),  # equal keys: last wins
    c8(0xC1, 4, str8("k") + b"\x51\x01" + sym8("k") + b"\x51\x02"),
    a8(0, b"\x71", b""),
    a8(2, b"\x54", b"\x01\xff"),
    a8(2, b"\x53", b"\x01\x02"),
    a8(2, b"\x52", b"\x01\x02"),
    a8(2, b"\x55", b"\x01\xff"),
    a8(2, b"\x56", b"\x00\x07"),
    a8(2, b"\xa1", b"\x01a\x00"),
    a8(1, b"\xb3", b"\x00\x00\x00\x01s"),
    a8(2, b"\xc0", b"\x01\x00" + b"\x02\x01\x40"),
    a8(2, b"\xc1", b"\x01\x00" + b"\x03\x02\x40\x40"),
    a8(2, b"\xe0", b"\x03\x01\x50\x07" + b"\x02\x00\x50"),
    a8(2, b"\x00\x53\x01\x50", b"\x05\x06"),
    a8(1, b"\x00\xa3\x01x\xc0", b"\x02\x01\x40"),
    a32(2, b"\x00\x80" + bytes(8) + b"\x98", U.bytes * 2),
    a32(1, b"\xd1", c32(0xD1, 2, b"\x40\x40")[1:]),
    b"\x00\x53\x01\x40",
    b"\x00\x80" + bytes(8) + b"\x40",
    b"\x00\xa3\x01d\x45",
    b"\x00\xb3\x00\x00\x00\x01d" + c8(0xC0, 1, b"\x40"),
    c8(0xC0, 1, b"\x00\x53\x01" + c8(0xC1, 2, str8("a") + b"\x00\x53\x02\x40")),
]
