"""Helpers shared by the codec tests: section readers, a payload builder and round trips."""

from __future__ import annotations

import uuid
from typing import Any

from proton import (
    Data,
    Described,
    ulong,
)

from jmspy._amqp.codec import decode_message, encode_message
from jmspy.destination import Destination, Queue
from jmspy.message import (
    Message,
)

HEADER, DA, MA, PROPS, APP, DATA, SEQ, VALUE, FOOTER = range(0x70, 0x79)
U = uuid.UUID("0e8a4a1c-8d2c-4a0e-9b51-3b0f2a6f9e11")


def _owned(value: Any) -> Any:
    """Copy memoryviews out of a Data before it is dropped."""
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, list):
        return [_owned(v) for v in value]
    if isinstance(value, dict):
        return {_owned(k): _owned(v) for k, v in value.items()}
    if isinstance(value, Described):
        return Described(_owned(value.descriptor), _owned(value.value))
    return value


def sections(payload: bytes) -> list[tuple[int, Any]]:
    """(descriptor code, value) for each section, with proton's typed Python values."""
    out: list[tuple[int, Any]] = []
    view = memoryview(payload)
    while view:
        d = Data()
        n = d.decode(bytes(view))
        view = view[n:]
        d.rewind()
        d.next()
        described = d.get_object()
        assert isinstance(described, Described)
        descriptor = described.descriptor
        assert isinstance(descriptor, int)
        out.append((int(descriptor), _owned(described.value)))
    return out


def section(payload: bytes, code: int) -> Any:
    found = [v for c, v in sections(payload) if c == code]
    assert len(found) == 1, f"expected one section 0x{code:x}, got {sections(payload)}"
    return found[0]


def codes(payload: bytes) -> list[int]:
    return [c for c, _ in sections(payload)]


def encode(msg: Message, ttl: int = 0, delivery_time: bool = False, **kw: Any) -> bytes:
    return encode_message(msg, ttl=ttl, delivery_time_transmitted=delivery_time, **kw)


def build(*parts: tuple[int, Any]) -> bytes:
    """A raw AMQP message from (descriptor, python value) pairs, encoded with proton.Data."""
    out = b""
    for code, value in parts:
        d = Data()
        d.put_py_described(Described(ulong(code), value))
        out += bytes(d.encode())
    return out


def stamp(msg: Message, dest: Destination | None = None) -> Message:
    """What the producer does before encoding."""
    msg.setJMSDestination(dest if dest is not None else Queue("q"))
    msg.setJMSMessageID("ID:conn:1:1:1-1")
    msg.setJMSTimestamp(1_700_000_000_000)
    return msg


def round_trip(msg: Message, **kw: Any) -> Message:
    return decode_message(encode(msg, **kw), None)
