"""The one AMQP section reader of jmspy, its conformance suite and its test peer, and its
proton.Data fallback.

:func:`read_message_sections` uses the pure-Python reader (:mod:`jmspy._amqp.amqp_reader`) and
hands whatever it declines (malformed input included) to proton.Data, so the result and any error
are proton's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast

from proton import Data, DataException, Described

from jmspy._amqp.amqp_reader import AmqpDecodeError, read_sections
from jmspy._amqp.codec.common import CodecError, _data
from jmspy._amqp.decode_report import undecodable_section

# Marks a top-level value that is not a described section in _proton_sections' output.
_NOT_DESCRIBED = object()
NOT_DESCRIBED = _NOT_DESCRIBED


def read_message_sections(
    payload: bytes | bytearray | memoryview,
) -> Iterable[tuple[Any, Any]]:
    """(descriptor, value) of each section of an AMQP bare message, in wire order: the one
    section reader of jmspy, its conformance suite and its test peer.

    The pure-Python reader (amqp_reader.read_sections) gives the same values as proton.Data,
    several times faster; what it does not read (malformed input included) goes through
    proton.Data, so the result and any error are proton's. Descriptors are ulong codes or
    symbols; arrays come as plain lists; a top-level value that is not described comes as
    ``(NOT_DESCRIBED, value)`` from the proton path. Raises :class:`CodecError` (or proton's
    DataException) for input neither reads.
    """
    try:
        return read_sections(payload)
    except AmqpDecodeError:
        return _proton_sections(payload)


def _decoded(payload: bytes | bytearray | memoryview) -> Data:
    """The thread's scratch Data holding every top-level value of ``payload``, rewound."""
    view = memoryview(payload)
    total = len(view)
    d = _data()
    pos = 0
    # Each decode() call appends one top-level value, so all sections land in one Data and are
    # then walked once.
    index = 0
    while pos < total:
        # Data.decode is typed for bytes but takes any buffer; a memoryview slice avoids
        # copying the rest of the payload for every section.
        try:
            consumed = d.decode(cast(bytes, view[pos:]))
        except DataException as exc:
            raise CodecError(undecodable_section(view, index, pos, exc)) from exc
        if consumed <= 0:
            raise CodecError(f"Cannot decode AMQP message: no progress at byte {pos}")
        pos += consumed
        index += 1
    d.rewind()
    return d


def _proton_values(payload: bytes | bytearray | memoryview) -> list[Any]:
    """The top-level values of ``payload`` read through proton.Data (the reference reader)."""
    d = _decoded(payload)
    out: list[Any] = []
    t = d.next()
    while t is not None:
        out.append(_GETTERS[t](d))
        t = d.next()
    return out


def _proton_sections(payload: bytes | bytearray | memoryview) -> Iterator[tuple[Any, Any]]:
    """(descriptor, value) of each section through proton.Data, the fallback of read_sections.

    The whole payload is decoded before this returns; the sections are then read one by one as
    the caller iterates, and a top-level value that is not described comes as
    ``(_NOT_DESCRIBED, value)``.
    """
    return _walk_sections(_decoded(payload))


def _walk_sections(d: Data) -> Iterator[tuple[Any, Any]]:
    t = d.next()
    while t is not None:
        section = _GETTERS[t](d)
        if isinstance(section, Described):
            yield section.descriptor, section.value
        else:
            yield _NOT_DESCRIBED, section
        t = d.next()


def _read_binary(d: Data) -> bytes:
    # get_binary returns a memoryview into the Data's own buffer, which the next clear() frees.
    return bytes(d.get_binary())


# Data.next() already returns the type of the node it moves to, so the readers below use it
# instead of asking type() again: decoding is dominated by these per-node calls.


def _read_list(d: Data) -> list[Any]:
    out: list[Any] = []
    if d.enter():
        nxt = d.next
        t = nxt()
        while t is not None:
            out.append(_GETTERS[t](d))
            t = nxt()
        d.exit()
    return out


def _read_map(d: Data) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    if d.enter():
        nxt = d.next
        t = nxt()
        while t is not None:
            key = _GETTERS[t](d)
            t = nxt()
            if t is None:
                out[key] = None
                break
            out[key] = _GETTERS[t](d)
            t = nxt()
        d.exit()
    return out


def _read_described(d: Data) -> Described:
    d.enter()
    descriptor = _read_next(d)
    value = _read_next(d)
    d.exit()
    return Described(descriptor, value)


def _read_array(d: Data) -> list[Any]:
    # Arrays have no JMS equivalent; a plain list keeps the elements reachable.
    _count, described, _type = d.get_array()
    out: list[Any] = []
    if d.enter():
        if described:
            d.next()
        t = d.next()
        while t is not None:
            out.append(_GETTERS[t](d))
            t = d.next()
        d.exit()
    return out


def _unsupported(d: Data) -> Any:
    raise CodecError(f"Cannot decode AMQP message: unsupported AMQP type code {d.type()}")


class _Getters(dict[int, Callable[[Data], Any]]):
    def __missing__(self, key: int) -> Callable[[Data], Any]:
        return _unsupported


_GETTERS = _Getters(Data.get_mappings)
_GETTERS[Data.BINARY] = _read_binary
_GETTERS[Data.LIST] = _read_list
_GETTERS[Data.MAP] = _read_map
_GETTERS[Data.DESCRIBED] = _read_described
_GETTERS[Data.ARRAY] = _read_array


def _read_next(d: Data) -> Any:
    """Move to the next node and read it as Python values (None when there is none)."""
    t = d.next()
    if t is None:
        return None
    return _GETTERS[t](d)
