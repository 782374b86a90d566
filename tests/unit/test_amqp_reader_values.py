"""The pure-Python AMQP reader against proton.Data: values (proton's encodings and hand-made ones).

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
from amqp_reader_support import (
    COMPOUNDS,
    HAND,
    SCALARS,
    UNDESCRIBED,
    U,
    assert_reads_like_proton,
    encode,
    proton_read,
    put,
    same,
)
from proton import (
    Array,
    Data,
    Described,
    byte,
    char,
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

from jmspy._amqp.amqp_reader import (
    read_all,
    read_value,
)

# ---------------------------------------------------------------------------------------------
# Values encoded by proton
# ---------------------------------------------------------------------------------------------


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
