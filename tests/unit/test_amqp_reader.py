"""The pure-Python AMQP reader against proton.Data: same values, same Python types.

The reference is the codec's own proton.Data path (``codec._proton_values``), which is what the
codec used for every message before the reader and still uses for whatever the reader declines.
"""

from __future__ import annotations

import math
import random
import uuid
from collections.abc import Callable
from typing import Any

import pytest
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

from jmspy._amqp import amqp_reader, codec
from jmspy._amqp.amqp_reader import (
    MAX_DEPTH,
    AmqpDecodeError,
    read_all,
    read_sections,
    read_value,
)
from jmspy._amqp.codec import CodecError, decode_message, encode_message
from jmspy.destination import Queue, TemporaryQueue, Topic
from jmspy.message import (
    BytesMessage,
    DeliveryMode,
    JChar,
    JFloat,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
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


# ---------------------------------------------------------------------------------------------
# Values encoded by proton
# ---------------------------------------------------------------------------------------------

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


@pytest.mark.parametrize(
    ("method", "value"),
    [(m, v) for m, values in SCALARS for v in values],
    ids=lambda x: getattr(x, "__name__", None) or repr(x)[:24],
)
def test_scalar_matches_proton(method: Callable[..., None], value: Any) -> None:
    if method is Data.put_null:
        buf = encode(None)
    else:
        buf = put(method, value)
    [got] = assert_reads_like_proton(buf)
    assert read_value(buf) == (got, len(buf)) or (isinstance(got, float) and math.isnan(got))


def test_scalar_types_are_the_proton_wrappers() -> None:
    puts: list[tuple[Callable[..., None], Any]] = [
        (Data.put_ubyte, 1),
        (Data.put_ushort, 1),
        (Data.put_uint, 1),
        (Data.put_ulong, 1),
        (Data.put_byte, 1),
        (Data.put_short, 1),
        (Data.put_int, 1),
        (Data.put_long, 1),
        (Data.put_float, 1.0),
        (Data.put_double, 1.0),
        (Data.put_char, "c"),
        (Data.put_timestamp, 1),
        (Data.put_symbol, "s"),
        (Data.put_string, "s"),
        (Data.put_binary, b"b"),
        (Data.put_uuid, U),
    ]
    types = [type(v) for v in read_all(b"".join(put(m, v) for m, v in puts))]
    assert types == [
        ubyte,
        ushort,
        uint,
        ulong,
        byte,
        short,
        int32,
        int,
        float32,
        float,
        char,
        timestamp,
        symbol,
        str,
        bytes,
        uuid.UUID,
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


@pytest.mark.parametrize("value", COMPOUNDS, ids=lambda v: repr(v)[:40])
def test_compound_matches_proton(value: Any) -> None:
    assert_reads_like_proton(encode(value))


def test_many_values_in_one_buffer() -> None:
    buf = b"".join(encode(v) for v in COMPOUNDS) + b"".join(
        put(m, v) for m, values in SCALARS if m is not Data.put_null for v in values
    )
    assert len(assert_reads_like_proton(buf)) == len(COMPOUNDS) + sum(
        len(values) for m, values in SCALARS if m is not Data.put_null
    )


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    scalars: list[Callable[[], Any]] = [
        lambda: None,
        lambda: rng.random() < 0.5,
        lambda: ubyte(rng.randrange(256)),
        lambda: ushort(rng.randrange(2**16)),
        lambda: uint(rng.choice((0, rng.randrange(256), rng.randrange(2**32)))),
        lambda: ulong(rng.choice((0, rng.randrange(256), rng.randrange(2**64)))),
        lambda: byte(rng.randrange(-128, 128)),
        lambda: short(rng.randrange(-(2**15), 2**15)),
        lambda: int32(rng.choice((rng.randrange(-128, 128), rng.randrange(-(2**31), 2**31)))),
        lambda: rng.choice((rng.randrange(-128, 128), rng.randrange(-(2**63), 2**63))),
        lambda: float32(rng.uniform(-1e6, 1e6)),
        lambda: rng.uniform(-1e300, 1e300),
        lambda: char(chr(rng.choice((rng.randrange(0xD800), rng.randrange(0xE000, 0x110000))))),
        lambda: timestamp(rng.randrange(-(2**63), 2**63)),
        lambda: uuid.UUID(int=rng.getrandbits(128)),
        lambda: rng.randbytes(rng.choice((0, 5, 255, 256, 1000))),
        lambda: "".join(chr(rng.randrange(32, 0x800)) for _ in range(rng.choice((0, 3, 90, 300)))),
        lambda: symbol("".join(chr(rng.randrange(128)) for _ in range(rng.choice((0, 4, 300))))),
    ]
    if depth >= 4 or rng.random() < 0.6:
        return rng.choice(scalars)()
    kind = rng.randrange(4)
    n = rng.choice((0, 1, 3, 20))
    if kind == 0:
        return [_random_value(rng, depth + 1) for _ in range(n)]
    if kind == 1:
        return {rng.choice(scalars)(): _random_value(rng, depth + 1) for _ in range(n)}
    if kind == 2:
        descriptor = rng.choice((ulong(rng.randrange(2**64)), symbol("d:" + str(n))))
        value = _random_value(rng, depth + 1)
        while isinstance(value, Described):
            value = _random_value(rng, depth + 1)
        return Described(descriptor, value)
    element = rng.randrange(2, len(scalars))  # no null or bool arrays (zero width)
    items = [scalars[element]() for _ in range(n)]
    array_type = {
        2: Data.UBYTE,
        3: Data.USHORT,
        4: Data.UINT,
        5: Data.ULONG,
        6: Data.BYTE,
        7: Data.SHORT,
        8: Data.INT,
        9: Data.LONG,
        10: Data.FLOAT,
        11: Data.DOUBLE,
        12: Data.CHAR,
        13: Data.TIMESTAMP,
        14: Data.UUID,
        15: Data.BINARY,
        16: Data.STRING,
        17: Data.SYMBOL,
    }[element]
    descriptor = UNDESCRIBED if rng.random() < 0.7 else symbol("array-descriptor")
    return Array(descriptor, array_type, *items)


def test_random_nested_values_match_proton() -> None:
    rng = random.Random(1234)
    for _ in range(400):
        value = _random_value(rng)
        try:
            buf = encode(value)
        except (KeyError, TypeError):  # e.g. an unhashable key drawn for a map
            continue
        assert_reads_like_proton(buf)


def test_arrays_read_as_plain_lists_without_descriptor() -> None:
    [got] = read_all(encode(Array(symbol("desc"), Data.INT, 1, 2)))
    assert got == [1, 2] and type(got) is list and all(type(v) is int32 for v in got)


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


@pytest.mark.parametrize("buf", HAND, ids=lambda b: b[:12].hex())
def test_hand_encoding_matches_proton(buf: bytes) -> None:
    assert_reads_like_proton(buf)


def test_every_format_code_of_the_type_system_is_read() -> None:
    codes = {buf[0] for buf in HAND} | {buf[3] for buf in HAND if buf[0] == 0xE0}
    assert codes >= {
        0x00, 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56,
        0x60, 0x61, 0x70, 0x71, 0x72, 0x73, 0x74, 0x80, 0x81, 0x82, 0x83, 0x84, 0x94, 0x98,
        0xA0, 0xA1, 0xA3, 0xB0, 0xB1, 0xB3, 0xC0, 0xC1, 0xD0, 0xD1, 0xE0, 0xF0,
    }  # fmt: skip


@pytest.mark.parametrize(
    "buf",
    [
        b"\x40" * 3 + b"\x53\x05",
        b"",
    ],
)
def test_read_all_of_a_sequence(buf: bytes) -> None:
    assert_reads_like_proton(buf)


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_any_buffer_type(kind: Callable[[bytes], Any]) -> None:
    buf = encode({"a": [1, b"x"]})
    assert same(read_all(kind(buf)), proton_read(buf))
    value, end = read_value(kind(b"\x40" + buf), 1)
    assert end == len(buf) + 1 and same(value, proton_read(buf)[0])


# ---------------------------------------------------------------------------------------------
# Declined: valid encodings that the reader leaves to proton, which reads them its own way
# ---------------------------------------------------------------------------------------------

DECLINED: list[bytes] = [
    c8(0xC0, 2, b"\x40\x40\x40"),  # size larger than the elements (proton ignores the size)
    b"\xc0\x02\x02\x40\x40",  # size smaller than the elements
    c8(0xC1, 1, b"\x40"),  # odd map
    c8(0xC1, 3, b"\x40\x40\x40"),
    a8(3, b"\x40", b""),  # array of zero-width elements
    a8(2, b"\x41", b""),
    a8(2, b"\x45", b""),
    b"\x00\x40\x40",  # descriptor that is neither a ulong nor a symbol
    b"\x00\xa1\x01a\x50\x01",
    # A described value that is itself described: proton.Data, as the codec walks it, then
    # loses the value that follows (here the true).
    b"\x00\x53\x01\x00\x53\x02\x40\x41",
    c8(0xC0, 2, b"\x00\x53\x01\x00\x53\x02\x40\x41"),
    encode(Described(ulong(0), Described(ulong(1), None))),
]


@pytest.mark.parametrize("buf", DECLINED, ids=lambda b: b.hex())
def test_unusual_encodings_are_left_to_proton(buf: bytes) -> None:
    proton_read(buf)  # valid for proton
    with pytest.raises(AmqpDecodeError):
        read_all(buf)


def test_nesting_deeper_than_the_limit_is_left_to_proton() -> None:
    def nested(depth: int) -> bytes:
        buf = b"\x45"
        for _ in range(depth):
            buf = c32(0xD0, 1, buf)
        return buf

    assert_reads_like_proton(nested(MAX_DEPTH))
    with pytest.raises(AmqpDecodeError, match="nesting too deep"):
        read_all(nested(MAX_DEPTH + 1))
    with pytest.raises(AmqpDecodeError):
        read_all(nested(5000))
    # The codec still decodes what the reader declines, through proton.Data.
    inner: Any = [1]
    for _ in range(MAX_DEPTH + 8):
        inner = [inner]
    body = Described(ulong(0x77), inner)
    d = Data()
    d.put_py_described(body)
    msg = decode_message(bytes(d.encode()), None)
    assert isinstance(msg, ObjectMessage)
    assert msg.getObject() == inner


# ---------------------------------------------------------------------------------------------
# Malformed and truncated input
# ---------------------------------------------------------------------------------------------

MALFORMED: list[bytes] = [
    b"\x90",  # reserved format codes
    b"\x01",
    b"\xff",
    b"\xa1\x01\xff",  # invalid UTF-8
    b"\xa3\x01\xff",  # non-ASCII symbol
    b"\x73\x00\x11\x00\x00",  # char beyond U+10FFFF
    b"\xc0\x00",  # list8 too small for its count
    b"\xd0\x00\x00\x00\x00",
    b"\xe0\x01\x00",  # array8 without a constructor
    b"\xf0\x00\x00\x00\x04\x00\x00\x00\x00",
    a8(1, b"\x00\x00\x53\x01\x53\x02\x50", b"\x05"),  # described descriptor
    a8(1, b"\x00\x53\x01\x00", b""),
    b"\x00\x00\x53\x01\x53\x02\x40",
    c8(0xC0, 5, b"\x40"),  # count beyond the elements
    c8(0xC1, 2, c8(0xC0, 0, b"") + b"\x40"),  # unhashable key
    c8(0xC1, 2, b"\x00\x53\x01\x40\x40"),  # Described keys are unhashable too
    b"\xb0\xff\xff\xff\xff",  # 4 GiB announced
    b"\xd0\xff\xff\xff\xff\xff\xff\xff\xff\x40",
    b"\xe0\x03\xff\x71\x00",
]


@pytest.mark.parametrize("buf", MALFORMED, ids=lambda b: b.hex())
def test_malformed_input_raises_the_reader_error(buf: bytes) -> None:
    with pytest.raises(AmqpDecodeError):
        read_all(buf)
    with pytest.raises(Exception):  # noqa: B017 - proton fails too, each its own way
        proton_read(buf)


def _all_valid() -> list[bytes]:
    out = [encode(v) for v in COMPOUNDS]
    out += [put(m, v) for m, values in SCALARS if m is not Data.put_null for v in values[:2]]
    return out + HAND


def test_every_truncation_raises() -> None:
    for buf in _all_valid():
        for cut in range(1, min(len(buf), 64)):
            with pytest.raises(AmqpDecodeError):
                read_all(buf[:cut])
        # past 64 bytes, a few cuts near the end
        for cut in {len(buf) - 1, len(buf) // 2}:
            if cut > 0:
                with pytest.raises(AmqpDecodeError):
                    read_all(buf[:cut])


def test_truncated_value_is_an_error_for_read_value() -> None:
    with pytest.raises(AmqpDecodeError, match="truncated"):
        read_value(b"\xa0\x05abc")
    with pytest.raises(AmqpDecodeError):
        read_value(b"\x98" + bytes(15))
    with pytest.raises(AmqpDecodeError):
        read_value(b"")


def test_fuzzed_input_never_reads_differently_from_proton() -> None:
    """Mutated encodings: the reader either declines (AmqpDecodeError, and nothing else) or
    gives exactly proton's values, never values proton would refuse."""
    rng = random.Random(20240611)
    seeds = _all_valid()
    accepted = declined = 0
    for _ in range(6000):
        buf = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 3)):
            op = rng.random()
            if op < 0.6 and buf:
                buf[rng.randrange(len(buf))] = rng.randrange(256)
            elif op < 0.8 and buf:
                del buf[rng.randrange(len(buf)) :]
            else:
                buf.insert(rng.randrange(len(buf) + 1), rng.randrange(256))
        data = bytes(buf)
        try:
            got = read_all(data)
        except AmqpDecodeError:
            declined += 1
            continue
        accepted += 1
        expected = proton_read(data)
        assert same(got, expected), f"{data.hex()[:200]}: {got!r:.300} != {expected!r:.300}"
    assert accepted > 500 and declined > 500


# ---------------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------------


def _proton_pairs(payload: bytes) -> list[tuple[Any, Any]]:
    return list(codec._proton_sections(payload))


def _messages() -> list[bytes]:
    out: list[bytes] = []

    def stamped(m: Message) -> Message:
        m.setJMSDestination(Queue("q"))
        m.setJMSMessageID("ID:conn:1:1:1-1")
        m.setJMSTimestamp(1_700_000_000_000)
        return m

    b = BytesMessage()
    b.writeBytes(bytes(range(256)) * 4)
    out.append(encode_message(stamped(b), ttl=0, delivery_time_transmitted=False))
    t = TextMessage()
    t.setText("hello")
    t.setStringProperty("customer", "acme")
    t.setIntProperty("count", 42)
    t.setBooleanProperty("urgent", True)
    t.setJMSReplyTo(TemporaryQueue("reply"))
    t.setJMSCorrelationID("corr")
    t.setJMSDeliveryMode(DeliveryMode.NON_PERSISTENT)
    t.setJMSPriority(7)
    out.append(encode_message(stamped(t), ttl=5000, delivery_time_transmitted=True))
    m = MapMessage()
    for i in range(10):
        m.setString(f"s{i}", "v" * i)
        m.setDouble(f"d{i}", i / 3)
    m.setBytes("b", b"\x00\x01")
    m.setChar("c", JChar("x"))
    m.setFloat("f", JFloat(1.5))
    out.append(encode_message(stamped(m), ttl=0, delivery_time_transmitted=False))
    s = StreamMessage()
    for v in (1, "two", 3.0, b"four", None, True):
        s.writeObject(v)
    out.append(encode_message(stamped(s), ttl=0, delivery_time_transmitted=False))
    o = ObjectMessage()
    o.setObject({"a": [1, 2, {"b": None}]})
    out.append(encode_message(stamped(o), ttl=0, delivery_time_transmitted=False))
    out.append(encode_message(stamped(TextMessage()), ttl=0, delivery_time_transmitted=False))
    out.append(encode_message(Message(), ttl=0, delivery_time_transmitted=False))
    out.append(
        ProtonMessage(
            id=U,
            correlation_id=ulong(7),
            body={"k": [1, 2]},
            properties={"p": "v"},
            annotations={symbol("x-opt-foo"): "bar"},
            durable=True,
            ttl=1000,
            delivery_count=3,
        ).encode()
    )
    out.append(ProtonMessage(body=b"raw", content_type="text/plain").encode())
    out.append(ProtonMessage(body=["a", 1]).encode())
    return out


@pytest.mark.parametrize("payload", _messages(), ids=lambda p: p[:16].hex())
def test_sections_match_proton(payload: bytes) -> None:
    got = read_sections(payload)
    expected = _proton_pairs(payload)
    assert same([list(p) for p in got], [list(p) for p in expected])
    # and again, from the section cache for the repeating ones
    assert same([list(p) for p in read_sections(payload)], [list(p) for p in expected])


def test_cached_sections_are_fresh_containers() -> None:
    payload = _messages()[1]
    first = dict(read_sections(payload))
    first[ulong(0x70)].append("mutated")
    first[ulong(0x72)][symbol("mutated")] = 1
    second = dict(read_sections(payload))
    assert same(second[ulong(0x70)], dict(_proton_pairs(payload))[ulong(0x70)])
    assert same(second[ulong(0x72)], dict(_proton_pairs(payload))[ulong(0x72)])


def test_section_cache_is_bounded() -> None:
    for i in range(amqp_reader._SECTION_CACHE_SIZE * 2):
        d = Data()
        d.put_py_described(Described(ulong(0x72), {symbol("x-opt-n"): i}))
        read_sections(bytes(d.encode()))
    assert 0 < len(amqp_reader._SECTION_CACHE) <= amqp_reader._SECTION_CACHE_SIZE


def test_sections_with_symbolic_and_8bit_forms() -> None:
    payload = (
        b"\x00\xa3\x10amqp:header:list" + c8(0xC0, 1, b"\x41")
        + b"\x00\x53\x72" + c8(0xC1, 2, sym8("x-opt-jms-msg-type") + b"\x51\x03")
        + b"\x00\x53\x75\xa0\x03abc"
        + b"\x00\x53\x75" + b"\xb0\x00\x00\x00\x01d"
    )  # fmt: skip
    expected = [list(p) for p in _proton_pairs(payload)]
    assert same([list(p) for p in read_sections(payload)], expected)


def test_top_level_value_that_is_not_described_is_left_to_proton() -> None:
    with pytest.raises(AmqpDecodeError, match="not described"):
        read_sections(b"\x00\x53\x75\xa0\x00\x40")


# ---------------------------------------------------------------------------------------------
# decode_message: the same result through the reader and through proton.Data alone
# ---------------------------------------------------------------------------------------------


def _decode_both(payload: bytes, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> tuple[Any, Any]:
    def outcome() -> Any:
        try:
            msg = decode_message(payload, Topic("t"), now_ms=1, **kw)
        except CodecError as exc:
            return ("CodecError", str(exc))
        return (type(msg), vars(msg))

    fast = outcome()
    with monkeypatch.context() as m:

        def declined(data: Any) -> Any:
            raise AmqpDecodeError("forced")

        m.setattr(codec.proton_fallback, "read_sections", declined)
        reference = outcome()
    return fast, reference


@pytest.mark.parametrize("payload", _messages(), ids=lambda p: p[:16].hex())
def test_decode_message_same_with_and_without_reader(
    payload: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, reference = _decode_both(payload, monkeypatch)
    assert fast[0] != "CodecError", fast  # these are valid messages
    assert same(fast[0], reference[0]) and fast[1].keys() == reference[1].keys()
    for key in fast[1]:
        assert same(fast[1][key], reference[1][key]) or fast[1][key] == reference[1][key], key


def test_decode_message_errors_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Malformed and mutated payloads: same CodecError text, or the same message."""
    rng = random.Random(7)
    seeds = _messages()
    for _ in range(1500):
        buf = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 2)):
            if not buf:
                break
            if rng.random() < 0.7:
                buf[rng.randrange(len(buf))] = rng.randrange(256)
            else:
                del buf[rng.randrange(len(buf)) :]
        if not buf:
            continue
        fast, reference = _decode_both(bytes(buf), monkeypatch)
        if fast[0] == "CodecError":
            assert fast == reference, bytes(buf).hex()
        else:
            assert fast[0] is reference[0] and fast[1].keys() == reference[1].keys()
            for key in fast[1]:
                a, b = fast[1][key], reference[1][key]
                assert same(a, b) or a == b, (bytes(buf).hex(), key)


@pytest.mark.parametrize(
    "payload",
    [
        b"\x00\x53\x75\xb0\x00\x00\x04\x00abc",  # truncated data section
        b"\x00\x53\x73\xd0\x00\x00\x00\x10\x00\x00\x00\x02\xa1\x01",
        b"\x00\x53",
        b"\x00",
        b"\x40",
        b"\x00\x53\x77\xa1\x01\xff",
        b"\x00\x53\x70" + c8(0xC0, 5, b"\x40"),
        b"\x00\x53\x72" + c8(0xC1, 2, c8(0xC0, 0, b"") + b"\x40"),
    ],
    ids=lambda p: p.hex(),
)
def test_malformed_payload_raises_codec_error(payload: bytes) -> None:
    with pytest.raises(CodecError):
        decode_message(payload, None)


def test_jms_and_proton_messages_take_the_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    def unexpected(payload: Any) -> Any:
        raise AssertionError("fell back to proton.Data")

    monkeypatch.setattr(codec.proton_fallback, "_proton_sections", unexpected)
    for payload in _messages():
        for kind in (bytes, bytearray, memoryview):
            decode_message(kind(payload), Queue("q"))


@pytest.mark.parametrize(
    "payload",
    [
        # amqp-value holding a described value, then a footer: declined, read by proton.Data
        # (which loses the footer) exactly as before
        b"\x00\x53\x77\x00\xa3\x01x\xa1\x01y" + b"\x00\x53\x78" + c8(0xC1, 0, b""),
        ProtonMessage(body=Described(symbol("x"), "y")).encode(),
        # list sizes that do not match the elements, which proton ignores
        b"\x00\x53\x77" + b"\xc0\x01\x02\x40\x40",
        b"\x00\x53\x77" + b"\xc0\x05\x01\x40\x40\x40\x40",
        b"\x00\x53\x77" + c8(0xC1, 1, b"\x40"),
    ],
    ids=lambda p: p.hex(),
)
def test_declined_payloads_decode_as_before(
    payload: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(AmqpDecodeError):
        read_sections(payload)
    fast, reference = _decode_both(payload, monkeypatch)
    if fast[0] == "CodecError":
        assert fast == reference
        return
    assert fast[0] is reference[0] and fast[1].keys() == reference[1].keys()
    for key in fast[1]:
        assert same(fast[1][key], reference[1][key]) or fast[1][key] == reference[1][key], key
