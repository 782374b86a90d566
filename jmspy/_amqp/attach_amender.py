"""Completes outgoing attach frames with fields proton-c cannot encode.

proton-c's attach encoder writes null for the source's ``default-outcome`` and for the link's
``offered-capabilities``/``desired-capabilities``. Qpid JMS sends both: consumers advertise
``default-outcome = modified(delivery-failed=true)`` and an unsubscribe lookup desires the
``shared``/``global`` capabilities so the broker finds a global shared subscription. The engine
hands every chunk of outgoing bytes through :meth:`AttachAmender.amend` while an amendment is
pending; the amender re-encodes just the attach frames of the registered links and leaves every
other byte untouched. Only plain connections can be amended: under TLS proton's output is
already encrypted (the amender is then off and the fields stay null, as before).
"""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass
from typing import Any, cast

from proton import Array, Data, Described, symbol, ulong

log = logging.getLogger("jmspy.engine")

_FRAME_HEADER = struct.Struct(">IBBH")
_ATTACH_PREFIX = b"\x00\x53\x12"  # described, smallulong 0x12: the attach performative
_PROTOCOL_HEADER = b"AMQP"
_SOURCE_DESCRIPTOR = 0x28
_MODIFIED = 0x27
# Attach fields (AMQP 1.0 part 2.7.3) and source fields (part 3.5.3) by index.
_NAME, _SOURCE, _DESIRED_CAPABILITIES = 0, 5, 12
_DEFAULT_OUTCOME = 8


@dataclass(frozen=True)
class Amendment:
    default_outcome_modified_failed: bool = False
    desired_capabilities: tuple[str, ...] = ()


class AttachAmender:
    """Rewrites the attach frames of registered links (engine thread only)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._pending: dict[str, Amendment] = {}

    @property
    def active(self) -> bool:
        return bool(self._pending)

    def register(self, link_name: str, amendment: Amendment) -> None:
        if self.enabled and (
            amendment.default_outcome_modified_failed or amendment.desired_capabilities
        ):
            self._pending[link_name] = amendment

    def amend(self, data: bytes) -> bytes:
        """``data`` starts at a frame boundary and holds whole frames (proton emits whole
        frames and the engine always takes all of its output)."""
        out: list[bytes] = []
        offset = 0
        size_total = len(data)
        changed = False
        while offset < size_total and self._pending:
            if data.startswith(_PROTOCOL_HEADER, offset):
                out.append(data[offset : offset + 8])
                offset += 8
                continue
            if offset + 8 > size_total:
                break
            size, doff, frame_type, channel = _FRAME_HEADER.unpack_from(data, offset)
            if size < 8 or offset + size > size_total:
                break  # not a whole frame: leave the rest untouched
            body_start = offset + doff * 4
            frame = data[offset : offset + size]
            if frame_type == 0 and data.startswith(_ATTACH_PREFIX, body_start):
                rewritten = self._amend_attach(frame, doff, frame_type, channel)
                if rewritten is not None:
                    frame = rewritten
                    changed = True
            out.append(frame)
            offset += size
        if not changed:
            return data
        out.append(data[offset:])
        return b"".join(out)

    def _amend_attach(self, frame: bytes, doff: int, frame_type: int, channel: int) -> bytes | None:
        try:
            decoder = Data()
            decoder.decode(frame[doff * 4 :])
            decoder.rewind()
            decoder.next()
            performative: Any = decoder.get_object()
            fields = [_plain(value) for value in performative.value]
            name = fields[_NAME]
            amendment = self._pending.pop(str(name), None)
            if amendment is None:
                return None
            if amendment.default_outcome_modified_failed:
                source = fields[_SOURCE] if len(fields) > _SOURCE else None
                if isinstance(source, Described):
                    source_fields = list(cast(list[Any], source.value))
                    source_fields += [None] * (_DEFAULT_OUTCOME + 1 - len(source_fields))
                    source_fields[_DEFAULT_OUTCOME] = Described(ulong(_MODIFIED), [True])
                    fields[_SOURCE] = Described(source.descriptor, source_fields)
            if amendment.desired_capabilities:
                fields += [None] * (_DESIRED_CAPABILITIES + 1 - len(fields))
                fields[_DESIRED_CAPABILITIES] = Array(
                    _undescribed(),
                    Data.SYMBOL,
                    *[symbol(c) for c in amendment.desired_capabilities],
                )
            encoder = Data()
            encoder.put_object(Described(performative.descriptor, fields))
            body = bytes(encoder.encode())
            extended = frame[8 : doff * 4]
            header = _FRAME_HEADER.pack(8 + len(extended) + len(body), doff, frame_type, channel)
            return header + extended + body
        except Exception:  # never break the connection over an optional field
            log.exception("could not complete an attach frame; sending it as proton wrote it")
            return None


def _plain(value: Any) -> Any:
    """Copy proton's zero-copy binary views out before the decoder's buffer goes away."""
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, Described):
        return Described(value.descriptor, _plain(value.value))
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    return value


def _undescribed() -> Any:
    from proton import UNDESCRIBED

    return UNDESCRIBED
