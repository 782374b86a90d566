"""The pure-Python AMQP reader against proton.Data: declined, malformed and truncated input.

The reference is the codec's own proton.Data path (``codec._proton_values``), which is what the
codec used for every message before the reader and still uses for whatever the reader declines.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from amqp_reader_support import (
    COMPOUNDS,
    HAND,
    SCALARS,
    a8,
    assert_reads_like_proton,
    c8,
    c32,
    encode,
    proton_read,
    put,
    same,
)
from proton import (
    Data,
    Described,
    ulong,
)

from jmspy._amqp.amqp_reader import (
    MAX_DEPTH,
    AmqpDecodeError,
    read_all,
    read_value,
)
from jmspy._amqp.codec import decode_message
from jmspy.message import (
    ObjectMessage,
)

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
