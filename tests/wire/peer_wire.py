"""The scripted peer's own AMQP frame reader and writer, and the decoders of record fields.

The peer decodes what the client sent from the raw bytes rather than reading it back from
proton's engine, which drops fields a JMS client cares about (see peer.py).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from proton import (
    UNDESCRIBED,
    Array,
    Data,
    Described,
    Terminus,
    symbol,
)

from jmspy._amqp.codec import NOT_DESCRIBED, read_message_sections

from .peer_records import (
    _MAX_RESOLVED_RANGE,
    _OUTCOME_KINDS,
    _SYMBOLIC_DESCRIPTORS,
    AttachRecord,
    BeginRecord,
    CloseRecord,
    DetachRecord,
    DispositionRecord,
    EndRecord,
    ErrorRecord,
    FlowRecord,
    OpenRecord,
    OutcomeRecord,
    SourceRecord,
    TargetRecord,
    TransferRecord,
)

# --------------------------------------------------------------------------------------------
# Wire decoding helpers
# --------------------------------------------------------------------------------------------


def _abbrev(text: str, limit: int = 400) -> str:
    # Keeps timeout messages readable when a record carries a large payload.
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"


def _owned(value: Any) -> Any:
    """Deep-copy ``value`` so no part of it points into a proton Data buffer.

    proton returns binary values as memoryviews over the Data's own memory, which is reused
    once the Data is freed; records must outlive it.
    """
    if isinstance(value, memoryview):
        return value.tobytes()
    if isinstance(value, Described):
        return Described(_owned(value.descriptor), _owned(value.value))
    if isinstance(value, Array):
        return Array(value.descriptor, value.type, *(_owned(e) for e in value.elements))
    if isinstance(value, list):
        return [_owned(v) for v in value]
    if isinstance(value, dict):
        return type(value)((_owned(k), _owned(v)) for k, v in value.items())
    return value


def _decode_one(buf: bytes | memoryview) -> tuple[Any, int]:
    # Frame bodies (performatives); message sections go through decode_sections.
    data = Data()
    consumed = data.decode(bytes(buf))
    data.rewind()
    data.next()
    return _owned(data.get_object()), consumed


def _descriptor_code(descriptor: Any) -> int:
    if isinstance(descriptor, str):
        return _SYMBOLIC_DESCRIPTORS.get(str(descriptor), -1)
    return int(descriptor)


def decode_sections(payload: bytes) -> list[tuple[int, Any]]:
    """Split a message payload into (descriptor code, value) pairs in wire order.

    The client's own section reader does the reading (``read_message_sections``: the
    pure-Python reader, proton.Data where it declines), so the peer, the conformance suite and
    the client agree on every value; arrays come as plain lists. A payload neither reads, or a
    top-level value that is not described, ends the split with ``(-1, ...)`` (the whole payload,
    or that value) so a malformed message is visible in assertions rather than an exception on
    the peer thread.
    """
    out: list[tuple[int, Any]] = []
    try:
        for descriptor, value in read_message_sections(payload):
            if descriptor is NOT_DESCRIBED:
                out.append((-1, _owned(value)))
                break
            out.append((_descriptor_code(descriptor), _owned(value)))
    except Exception:  # noqa: BLE001 - any undecodable payload is recorded, not raised
        return [(-1, bytes(payload))]
    return out


def _field(fields: Sequence[Any], index: int, default: Any = None) -> Any:
    # Encoders trim trailing nulls, so a short list means "default" for the missing fields.
    if index < len(fields) and fields[index] is not None:
        return fields[index]
    return default


def _symbols(value: Any) -> list[str]:
    # Capability fields are "multiple symbol": a single symbol, an array, or (loosely) a list.
    if value is None:
        return []
    if isinstance(value, Array):
        return [str(v) for v in value.elements]
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    return [str(value)]


def _str_keys(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items()}


def _error(value: Any) -> ErrorRecord | None:
    if not isinstance(value, Described):
        return None
    f = value.value if isinstance(value.value, list) else []
    return ErrorRecord(
        condition=str(_field(f, 0, "")),
        description=_field(f, 1),
        info=_field(f, 2),
    )


def _outcome(value: Any) -> OutcomeRecord | None:
    if not isinstance(value, Described):
        return None
    code = _descriptor_code(value.descriptor)
    f = value.value if isinstance(value.value, list) else []
    kind = _OUTCOME_KINDS.get(code, hex(code))
    if kind == "modified":
        return OutcomeRecord(
            kind,
            delivery_failed=bool(_field(f, 0, False)),
            undeliverable_here=bool(_field(f, 1, False)),
            message_annotations=_field(f, 2),
            fields=list(f),
        )
    if kind == "rejected":
        return OutcomeRecord(kind, error=_error(_field(f, 0)), fields=list(f))
    return OutcomeRecord(kind, fields=list(f))


def _source(value: Any) -> SourceRecord | None:
    if not isinstance(value, Described):
        return None
    f = value.value if isinstance(value.value, list) else []
    dm = _field(f, 6)
    return SourceRecord(
        address=_field(f, 0),
        durable=int(_field(f, 1, 0)),
        expiry_policy=str(_field(f, 2, "session-end")),
        timeout=int(_field(f, 3, 0)),
        dynamic=bool(_field(f, 4, False)),
        dynamic_node_properties=_field(f, 5),
        distribution_mode=str(dm) if dm is not None else None,
        filter=_str_keys(_field(f, 7)),
        default_outcome=_outcome(_field(f, 8)),
        outcomes=_symbols(_field(f, 9)),
        capabilities=_symbols(_field(f, 10)),
    )


def _target(value: Any) -> TargetRecord | None:
    if not isinstance(value, Described):
        return None
    f = value.value if isinstance(value.value, list) else []
    if _descriptor_code(value.descriptor) == 0x30:
        return TargetRecord(address=None, capabilities=_symbols(_field(f, 0)), coordinator=True)
    return TargetRecord(
        address=_field(f, 0),
        durable=int(_field(f, 1, 0)),
        expiry_policy=str(_field(f, 2, "session-end")),
        timeout=int(_field(f, 3, 0)),
        dynamic=bool(_field(f, 4, False)),
        dynamic_node_properties=_field(f, 5),
        capabilities=_symbols(_field(f, 6)),
    )


@dataclass
class _Frame:
    kind: Literal["header", "frame"]
    raw: bytes
    frame_type: int = 0
    channel: int = 0
    code: int = -1
    fields: list[Any] = field(default_factory=list)
    payload: bytes = b""


def _read_frame(buf: bytearray) -> tuple[_Frame | None, int]:
    """Parse one protocol header or frame at the start of ``buf``; (None, 0) if incomplete."""
    if buf[:4] == b"AMQP":
        # A real frame can't start with "AMQP": that size would be about 1 GiB.
        if len(buf) < 8:
            return None, 0
        return _Frame("header", bytes(buf[:8])), 8
    if len(buf) < 8:
        return None, 0
    size, doff, frame_type, channel = struct.unpack(">IBBH", bytes(buf[:8]))
    if size < 8 or doff < 2:
        raise ValueError(f"malformed frame header {bytes(buf[:8])!r}")
    if len(buf) < size:
        return None, 0
    body = bytes(buf[doff * 4 : size])
    frame = _Frame("frame", bytes(buf[:size]), frame_type=frame_type, channel=channel)
    if body:  # an empty body is a heartbeat
        obj, consumed = _decode_one(body)
        if isinstance(obj, Described):
            frame.code = _descriptor_code(obj.descriptor)
            frame.fields = list(obj.value) if isinstance(obj.value, list) else []
        frame.payload = body[consumed:]
    return frame, size


def _encode_frame(frame_type: int, code: int, fields: Iterable[Any]) -> bytes:
    data = Data()
    data.put_described()
    data.enter()
    data.put_ulong(code)
    data.put_list()
    data.enter()
    for f in fields:
        data.put_object(f)
    data.exit()
    data.exit()
    body = bytes(data.encode())
    return struct.pack(">IBBH", 8 + len(body), 2, frame_type, 0) + body


def _symbol_array(*values: str) -> Array:
    # proton's stub types the descriptor as a value, but UNDESCRIBED is what means "none".
    return Array(cast(Any, UNDESCRIBED), Data.SYMBOL, *map(symbol, values))


def _echo(local: Terminus, remote: Terminus, sent: bool, kind: int) -> None:
    # proton-c decodes a source/target without an address as "unspecified", which would make
    # the echo a null terminus (= refusal); restore the type when the client did send one.
    local.copy(remote)
    if sent and local.type == Terminus.UNSPECIFIED:
        local.type = kind
    elif not sent:
        local.type = Terminus.UNSPECIFIED


def record_incoming(self: Any, frame: _Frame) -> None:
    """Record one performative from the client (a method of the peer's connections)."""
    c, f, ch = frame.code, frame.fields, frame.channel
    rec = self.peer._record
    if c == 0x10:
        rec(
            OpenRecord(
                self.index,
                container_id=str(_field(f, 0, "")),
                hostname=_field(f, 1),
                max_frame_size=_field(f, 2),
                channel_max=_field(f, 3),
                idle_timeout=_field(f, 4),
                offered_capabilities=_symbols(_field(f, 7)),
                desired_capabilities=_symbols(_field(f, 8)),
                properties=_str_keys(_field(f, 9)),
            )
        )
    elif c == 0x11:
        rec(
            BeginRecord(
                self.index,
                ch,
                remote_channel=_field(f, 0),
                next_outgoing_id=int(_field(f, 1, 0)),
                incoming_window=int(_field(f, 2, 0)),
                outgoing_window=int(_field(f, 3, 0)),
                handle_max=_field(f, 4),
            )
        )
    elif c == 0x12:
        name, handle = str(_field(f, 0, "")), int(_field(f, 1, 0))
        self.in_handles[(ch, handle)] = name
        rec(
            AttachRecord(
                self.index,
                ch,
                name=name,
                handle=handle,
                role="receiver" if _field(f, 2, False) else "sender",
                snd_settle_mode=_field(f, 3),
                rcv_settle_mode=_field(f, 4),
                source=_source(_field(f, 5)),
                target=_target(_field(f, 6)),
                initial_delivery_count=_field(f, 9),
                max_message_size=_field(f, 10),
                offered_capabilities=_symbols(_field(f, 11)),
                desired_capabilities=_symbols(_field(f, 12)),
                properties=_str_keys(_field(f, 13)) if _field(f, 13) is not None else None,
            )
        )
    elif c == 0x13:
        handle = _field(f, 4)
        rec(
            FlowRecord(
                self.index,
                ch,
                link_name=self.in_handles.get((ch, handle)) if handle is not None else None,
                handle=handle,
                delivery_count=_field(f, 5),
                link_credit=_field(f, 6),
                drain=bool(_field(f, 8, False)),
                echo=bool(_field(f, 9, False)),
                available=_field(f, 7),
                next_incoming_id=_field(f, 0),
                incoming_window=int(_field(f, 1, 0)),
                next_outgoing_id=int(_field(f, 2, 0)),
                outgoing_window=int(_field(f, 3, 0)),
            )
        )
    elif c == 0x14:
        self._record_transfer_frame(frame)
    elif c == 0x15:
        role: Literal["sender", "receiver"] = "receiver" if _field(f, 0, False) else "sender"
        first = int(_field(f, 1, 0))
        last = int(_field(f, 2, first))
        tags_map = self.peer_sent_tags if role == "receiver" else self.client_sent_tags
        tags: list[bytes] = []
        if last - first <= _MAX_RESOLVED_RANGE:
            for i in range(first, last + 1):
                tag = tags_map.get((ch, i))
                if tag is not None:
                    tags.append(tag)
        rec(
            DispositionRecord(
                self.index,
                ch,
                role=role,
                first=first,
                last=last,
                settled=bool(_field(f, 3, False)),
                outcome=_outcome(_field(f, 4)),
                delivery_tags=tags,
            )
        )
    elif c == 0x16:
        handle = int(_field(f, 0, 0))
        detached = self.in_handles.pop((ch, handle), None)
        rec(
            DetachRecord(
                self.index,
                ch,
                link_name=detached,
                handle=handle,
                closed=bool(_field(f, 1, False)),
                error=_error(_field(f, 2)),
            )
        )
    elif c == 0x17:
        rec(EndRecord(self.index, ch, error=_error(_field(f, 0))))
    elif c == 0x18:
        rec(CloseRecord(self.index, error=_error(_field(f, 0))))


def record_transfer_frame(self: Any, frame: _Frame) -> None:
    """Record a transfer once all its frames are in (a method of the peer's connections)."""
    # Reassemble multi-frame deliveries per (channel, handle) before recording.
    f, ch = frame.fields, frame.channel
    handle = int(_field(f, 0, 0))
    key = (ch, handle)
    pending = self.pending_transfers.get(key)
    if pending is None:
        pending = {
            "delivery_id": _field(f, 1),
            "tag": bytes(_field(f, 2, b"")),
            "message_format": _field(f, 3),
            "settled": False,
            "state": None,
            "payload": bytearray(),
            "frames": 0,
        }
        self.pending_transfers[key] = pending
    pending["frames"] += 1
    pending["payload"] += frame.payload
    if _field(f, 4) is not None:
        pending["settled"] = bool(_field(f, 4))
    if _field(f, 7) is not None:
        pending["state"] = _outcome(_field(f, 7))
    aborted = bool(_field(f, 9, False))
    if bool(_field(f, 5, False)) and not aborted:
        return
    del self.pending_transfers[key]
    payload = bytes(pending["payload"])
    delivery_id = pending["delivery_id"]
    if delivery_id is not None:
        self.client_sent_tags[(ch, int(delivery_id))] = pending["tag"]
    self.peer._record(
        TransferRecord(
            self.index,
            ch,
            link_name=self.in_handles.get(key),
            handle=handle,
            delivery_id=delivery_id,
            delivery_tag=pending["tag"],
            settled=pending["settled"],
            message_format=pending["message_format"],
            payload=payload,
            sections=[] if aborted else decode_sections(payload),
            state=pending["state"],
            aborted=aborted,
            frames=pending["frames"],
        )
    )
