"""A scripted AMQP 1.0 peer for wire-level tests (the Python cousin of Qpid JMS's TestAmqpPeer).

The peer is a small AMQP server on ``127.0.0.1`` (free port) that runs on its own thread. It
records every frame a client puts on the wire and can be scripted to behave like brokers that lack
capabilities or misbehave. Typical use::

    with ScriptedPeer(offered_capabilities=["ANONYMOUS-RELAY"]) as peer:
        client = connect(peer.url)
        ...
        attach = peer.wait_for_attach("queue-a", role="sender")
        assert attach.target.capabilities == ["queue"]

Design notes (why it is built this way):

* The proton *engine* (``Transport`` in server mode + ``Connection`` + ``Collector``) is driven
  from a plain ``selectors`` loop rather than the ``Container`` reactor, so the peer can withhold
  answers, close abruptly and time every byte it writes.
* Records are decoded by the peer's own frame reader from the raw bytes, not read back from the
  engine. proton-c drops fields a JMS client cares about (the source's ``default-outcome``, link
  attach capabilities, range dispositions), and tests must see exactly what was on the wire.
* SASL is answered by this module, not by proton: with Cyrus linked, a proton server would need a
  Cyrus config and a password database to accept PLAIN. Doing it by hand lets the peer accept any
  user/password (and record them), or reject them on demand.
* Every wait is a condition-variable wait with a deadline, never a fixed sleep.

Out of scope for now: transactions (a coordinator attach is recorded but declare/discharge are not
answered meaningfully), TLS and WebSockets.
"""

from __future__ import annotations

import functools
import itertools
import selectors
import socket
import struct
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from proton import (
    UNDESCRIBED,
    Array,
    Collector,
    Condition,
    Connection,
    Data,
    Delivery,
    Described,
    Event,
    Link,
    Message,
    Sender,
    Session,
    Terminus,
    Transport,
    symbol,
    ubyte,
)

from jmspy._amqp.codec import NOT_DESCRIBED, read_message_sections

from .peer_strict import unexpected_frames

if TYPE_CHECKING:
    from .peer_connections import ConnectionView

__all__ = [
    "AMQP_SEQUENCE",
    "AMQP_VALUE",
    "APPLICATION_PROPERTIES",
    "DATA",
    "DEFAULT_OFFERED_CAPABILITIES",
    "DELIVERY_ANNOTATIONS",
    "FOOTER",
    "HEADER",
    "MESSAGE_ANNOTATIONS",
    "PROPERTIES",
    "AttachRecord",
    "BeginRecord",
    "CloseRecord",
    "ConnectRecord",
    "DetachRecord",
    "DisconnectRecord",
    "DispositionRecord",
    "EndRecord",
    "ErrorRecord",
    "FlowRecord",
    "LinkScript",
    "OpenRecord",
    "Outcome",
    "OutcomeRecord",
    "PeerError",
    "PeerTimeout",
    "Record",
    "SaslRecord",
    "ScriptedPeer",
    "SourceRecord",
    "TargetRecord",
    "TransferRecord",
    "decode_sections",
]

DEFAULT_OFFERED_CAPABILITIES: tuple[str, ...] = (
    "sole-connection-for-container",
    "DELAYED_DELIVERY",
    "SHARED-SUBS",
    "ANONYMOUS-RELAY",
)

# Message section descriptor codes (AMQP 1.0 part 3.2), as found in TransferRecord.sections.
HEADER = 0x70
DELIVERY_ANNOTATIONS = 0x71
MESSAGE_ANNOTATIONS = 0x72
PROPERTIES = 0x73
APPLICATION_PROPERTIES = 0x74
DATA = 0x75
AMQP_SEQUENCE = 0x76
AMQP_VALUE = 0x77
FOOTER = 0x78

# Symbolic descriptors are legal on the wire; map them to codes so records have one shape.
_SYMBOLIC_DESCRIPTORS = {
    "amqp:header:list": HEADER,
    "amqp:delivery-annotations:map": DELIVERY_ANNOTATIONS,
    "amqp:message-annotations:map": MESSAGE_ANNOTATIONS,
    "amqp:properties:list": PROPERTIES,
    "amqp:application-properties:map": APPLICATION_PROPERTIES,
    "amqp:data:binary": DATA,
    "amqp:amqp-sequence:list": AMQP_SEQUENCE,
    "amqp:amqp-value:*": AMQP_VALUE,
    "amqp:footer:map": FOOTER,
    "amqp:received:list": 0x23,
    "amqp:accepted:list": 0x24,
    "amqp:rejected:list": 0x25,
    "amqp:released:list": 0x26,
    "amqp:modified:list": 0x27,
    "amqp:source:list": 0x28,
    "amqp:target:list": 0x29,
    "amqp:error:list": 0x1D,
    "amqp:coordinator:list": 0x30,
}

_OUTCOME_KINDS = {
    0x23: "received",
    0x24: "accepted",
    0x25: "rejected",
    0x26: "released",
    0x27: "modified",
    0x33: "declared",
    0x34: "transactional-state",
}

_PERFORMATIVES = {
    0x10: "open",
    0x11: "begin",
    0x12: "attach",
    0x13: "flow",
    0x14: "transfer",
    0x15: "disposition",
    0x16: "detach",
    0x17: "end",
    0x18: "close",
}

_SASL_HEADER = b"AMQP\x03\x01\x00\x00"
_AMQP_HEADER = b"AMQP\x00\x01\x00\x00"
_SASL_MECHANISMS = 0x40
_SASL_INIT = 0x41
_SASL_OUTCOME = 0x44
_SASL_OK = 0
_SASL_AUTH = 1

# A range disposition could name millions of ids; tags are only resolved for small ranges.
_MAX_RESOLVED_RANGE = 10_000


class PeerError(AssertionError):
    """Something failed on the peer thread; raised in the test thread by ``close()``."""


class PeerTimeout(AssertionError):
    """A ``wait_for*`` deadline passed. An AssertionError so pytest reports it as a failure."""


# --------------------------------------------------------------------------------------------
# Records: immutable snapshots of what the client put on the wire.
# Every record carries ``conn``: the 0-based index of the TCP connection it arrived on, so
# reconnect tests can tell connections apart.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorRecord:
    condition: str
    description: str | None = None
    info: dict[Any, Any] | None = None


@dataclass(frozen=True)
class OutcomeRecord:
    """A delivery state: ``kind`` is accepted/rejected/released/modified/received/declared/..."""

    kind: str
    delivery_failed: bool = False
    undeliverable_here: bool = False
    message_annotations: dict[Any, Any] | None = None
    error: ErrorRecord | None = None
    fields: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class SourceRecord:
    address: str | None
    durable: int = 0  # 0 none, 1 configuration, 2 unsettled-state
    expiry_policy: str = "session-end"
    timeout: int = 0
    dynamic: bool = False
    dynamic_node_properties: dict[Any, Any] | None = None
    distribution_mode: str | None = None
    filter: dict[str, Any] = field(default_factory=dict)  # values stay proton.Described
    default_outcome: OutcomeRecord | None = None
    outcomes: list[str] = field(default_factory=list)
    capabilities: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class TargetRecord:
    address: str | None
    durable: int = 0
    expiry_policy: str = "session-end"
    timeout: int = 0
    dynamic: bool = False
    dynamic_node_properties: dict[Any, Any] | None = None
    capabilities: list[str] = field(default_factory=list)
    coordinator: bool = False  # a transaction coordinator target (0x30) rather than a node


@dataclass(frozen=True)
class ConnectRecord:
    conn: int


@dataclass(frozen=True)
class DisconnectRecord:
    conn: int


@dataclass(frozen=True)
class SaslRecord:
    conn: int
    mechanism: str
    hostname: str | None
    username: str | None  # PLAIN authcid
    password: str | None
    initial_response: bytes | None


@dataclass(frozen=True)
class OpenRecord:
    conn: int
    container_id: str
    hostname: str | None
    max_frame_size: int | None
    channel_max: int | None
    idle_timeout: int | None  # milliseconds, as on the wire
    offered_capabilities: list[str]
    desired_capabilities: list[str]
    properties: dict[str, Any]


@dataclass(frozen=True)
class BeginRecord:
    conn: int
    channel: int
    remote_channel: int | None
    next_outgoing_id: int
    incoming_window: int
    outgoing_window: int
    handle_max: int | None


@dataclass(frozen=True)
class AttachRecord:
    conn: int
    channel: int
    name: str
    handle: int
    role: Literal["sender", "receiver"]  # the CLIENT's role on this link
    snd_settle_mode: int | None  # 0 unsettled, 1 settled, 2 mixed; None = not sent (mixed)
    rcv_settle_mode: int | None  # 0 first, 1 second; None = not sent (first)
    source: SourceRecord | None
    target: TargetRecord | None
    initial_delivery_count: int | None
    max_message_size: int | None
    offered_capabilities: list[str]
    desired_capabilities: list[str]
    properties: dict[str, Any] | None

    @property
    def address(self) -> str | None:
        """The node the client addresses: target for a sender, source for a receiver."""
        terminus = self.target if self.role == "sender" else self.source
        return terminus.address if terminus is not None else None


@dataclass(frozen=True)
class FlowRecord:
    conn: int
    channel: int
    link_name: str | None  # None for a session-only flow
    handle: int | None
    delivery_count: int | None
    link_credit: int | None
    drain: bool
    echo: bool
    available: int | None
    next_incoming_id: int | None
    incoming_window: int
    next_outgoing_id: int
    outgoing_window: int


@dataclass(frozen=True)
class TransferRecord:
    conn: int
    channel: int
    link_name: str | None
    handle: int
    delivery_id: int | None
    delivery_tag: bytes
    settled: bool
    message_format: int | None
    payload: bytes
    sections: list[tuple[int, Any]]  # (descriptor code, decoded value), wire order
    state: OutcomeRecord | None
    aborted: bool
    frames: int  # how many transfer frames carried this delivery

    def section(self, code: int) -> Any:
        """The value of the first section with ``code`` (e.g. ``HEADER``); KeyError if absent."""
        for c, value in self.sections:
            if c == code:
                return value
        raise KeyError(hex(code))

    @property
    def section_codes(self) -> list[int]:
        return [c for c, _ in self.sections]


@dataclass(frozen=True)
class DispositionRecord:
    conn: int
    channel: int
    role: Literal["sender", "receiver"]  # the CLIENT's role: "receiver" = settling peer's sends
    first: int
    last: int
    settled: bool
    outcome: OutcomeRecord | None
    delivery_tags: list[bytes]  # tags of the deliveries in first..last that the peer knows

    @property
    def kind(self) -> str | None:
        return self.outcome.kind if self.outcome is not None else None

    @property
    def delivery_tag(self) -> bytes | None:
        return self.delivery_tags[0] if self.delivery_tags else None


@dataclass(frozen=True)
class DetachRecord:
    conn: int
    channel: int
    link_name: str | None
    handle: int
    closed: bool
    error: ErrorRecord | None


@dataclass(frozen=True)
class EndRecord:
    conn: int
    channel: int
    error: ErrorRecord | None


@dataclass(frozen=True)
class CloseRecord:
    conn: int
    error: ErrorRecord | None


Record = (
    ConnectRecord
    | DisconnectRecord
    | SaslRecord
    | OpenRecord
    | BeginRecord
    | AttachRecord
    | FlowRecord
    | TransferRecord
    | DispositionRecord
    | DetachRecord
    | EndRecord
    | CloseRecord
)

R = TypeVar("R")
T = TypeVar("T")


# --------------------------------------------------------------------------------------------
# Scripting
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """How the peer settles a transfer from a client sender."""

    kind: Literal["accepted", "rejected", "released", "modified"]
    condition: str | None = None
    description: str | None = None
    delivery_failed: bool = False
    undeliverable_here: bool = False

    @classmethod
    def accepted(cls) -> Outcome:
        return cls("accepted")

    @classmethod
    def rejected(
        cls, condition: str = "amqp:internal-error", description: str | None = None
    ) -> Outcome:
        return cls("rejected", condition=condition, description=description)

    @classmethod
    def released(cls) -> Outcome:
        return cls("released")

    @classmethod
    def modified(cls, delivery_failed: bool = True, undeliverable_here: bool = False) -> Outcome:
        return cls(
            "modified", delivery_failed=delivery_failed, undeliverable_here=undeliverable_here
        )


_ACCEPTED = Outcome.accepted()

OutcomeChoice = Outcome | None | Callable[[TransferRecord], Outcome | None]


@dataclass(frozen=True)
class LinkScript:
    """How the peer answers one link attach. Defaults behave like a well-mannered broker.

    ``outcome`` (client senders): the outcome for every transfer, ``None`` to never settle, or a
    callable receiving the TransferRecord (e.g. to reject only some messages).
    ``credit`` (client senders): credit granted on attach and topped up as transfers arrive;
    0 grants nothing, so the client's sends block.
    ``capabilities``: replace the echoed terminus capabilities; ``extra_capabilities`` are
    appended to the echo (how a broker confirms ``shared``/``global`` or a queue type).
    ``refuse``: (condition, description). Answer with a null target (client sender) or null
    source (client receiver), then detach closed with that error, as brokers do for a missing
    node. ``close_with``: echo the attach normally, then detach closed with that error.
    ``hang``: never answer the attach. ``answer_drain``: when False a drain request is ignored.
    ``dynamic_address``: address assigned to a dynamic terminus (generated when None).
    """

    credit: int = 1000
    outcome: OutcomeChoice = _ACCEPTED
    capabilities: Sequence[str] | None = None
    extra_capabilities: Sequence[str] = ()
    refuse: tuple[str, str | None] | None = None
    close_with: tuple[str, str | None] | None = None
    hang: bool = False
    answer_drain: bool = True
    dynamic_address: str | None = None


LinkScripts = Mapping[str | None, LinkScript] | Callable[[AttachRecord], LinkScript | None]


@dataclass
class _Queued:
    payload: bytes
    tag: bytes | None
    settled: bool | None


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


# --------------------------------------------------------------------------------------------
# One accepted TCP connection, owned by the peer thread.
# --------------------------------------------------------------------------------------------


@dataclass
class _LinkState:
    link: Link
    attach: AttachRecord | None
    script: LinkScript
    address: str | None
    hung: bool = False


class _PeerConnection:
    def __init__(self, peer: ScriptedPeer, sock: socket.socket, index: int) -> None:
        self.peer = peer
        self.sock = sock
        self.index = index
        self.phase: Literal["header", "sasl", "amqp"] = "header"
        self.sasl_buf = bytearray()
        self.in_buf = bytearray()
        self.out_parse_buf = bytearray()
        self.outbuf = bytearray()
        self.close_after_flush = False
        self.eof = False
        self.closed = False
        self.deadline = 0.0
        self.transport: Transport | None = None
        self.connection: Connection | None = None
        self.collector: Collector | None = None
        # Client handle -> link name, per client channel; used to name flows/transfers/detaches.
        self.in_handles: dict[tuple[int, int], str] = {}
        self.pending_transfers: dict[tuple[int, int], dict[str, Any]] = {}
        # Delivery-id -> tag, keyed by the CLIENT's channel, for resolving disposition ranges.
        self.client_sent_tags: dict[tuple[int, int], bytes] = {}
        self.peer_sent_tags: dict[tuple[int, int], bytes] = {}
        self.peer_channel_to_client: dict[int, int] = {}
        self.peer_last_delivery: dict[tuple[int, int], int] = {}
        self.links: dict[tuple[bool, str], _LinkState] = {}

    # ---- input ------------------------------------------------------------------------------

    def on_readable(self) -> None:
        try:
            data = self.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self.eof = True
            if self.transport is not None:
                self.transport.close_tail()
            else:
                self.close_after_flush = True
            return
        if self.phase == "amqp":
            self._amqp_input(data)
        else:
            self.sasl_buf += data
            self._pre_amqp_input()

    def _pre_amqp_input(self) -> None:
        # Handles the protocol header and the SASL exchange by hand (see module docstring).
        opts = self.peer.options
        while self.phase != "amqp" and not self.close_after_flush:
            if opts.hang_on_connect:
                self.sasl_buf.clear()
                return
            frame, used = _read_frame(self.sasl_buf)
            if frame is None:
                return
            if self.phase == "header":
                if frame.kind != "header":
                    raise ValueError(f"expected a protocol header, got {frame.raw[:8]!r}")
                if frame.raw == _SASL_HEADER:
                    del self.sasl_buf[:used]
                    self.peer._trace(self.index, "<- SASL header")
                    mechs = _symbol_array(*map(symbol, opts.sasl_mechanisms))
                    self._write(_SASL_HEADER + _encode_frame(1, _SASL_MECHANISMS, [mechs]))
                    self.peer._trace(self.index, f"-> SASL mechanisms {list(opts.sasl_mechanisms)}")
                    self.phase = "sasl"
                    continue
                if frame.raw == _AMQP_HEADER:
                    if opts.require_sasl:
                        self._write(_SASL_HEADER)
                        self.close_after_flush = True
                        return
                    self._start_amqp()
                    return
                # TLS or an unknown protocol: answer with what we speak and hang up, per spec.
                self._write(_AMQP_HEADER)
                self.close_after_flush = True
                return
            # phase == "sasl"
            del self.sasl_buf[:used]
            if frame.kind != "frame" or frame.code != _SASL_INIT:
                raise ValueError(f"unexpected SASL frame {frame.code:#x}")
            self._sasl_init(frame)

    def _sasl_init(self, frame: _Frame) -> None:
        opts = self.peer.options
        mechanism = str(_field(frame.fields, 0, ""))
        response = _field(frame.fields, 1)
        hostname = _field(frame.fields, 2)
        username = password = None
        if mechanism == "PLAIN" and isinstance(response, bytes):
            parts = response.split(b"\0")
            if len(parts) == 3:
                username = parts[1].decode("utf-8", "replace")
                password = parts[2].decode("utf-8", "replace")
        self.peer._record(
            SaslRecord(
                self.index,
                mechanism,
                hostname,
                username,
                password,
                bytes(response) if response is not None else None,
            )
        )
        self.peer._trace(self.index, f"<- SASL init mechanism={mechanism} user={username!r}")
        ok = mechanism in opts.sasl_mechanisms and not opts.reject_credentials
        code = _SASL_OK if ok else _SASL_AUTH
        self._write(_encode_frame(1, _SASL_OUTCOME, [ubyte(code)]))
        self.peer._trace(self.index, f"-> SASL outcome code={code}")
        if not ok:
            self.close_after_flush = True
            return
        self._start_amqp()

    def _start_amqp(self) -> None:
        opts = self.peer.options
        self.phase = "amqp"
        transport = Transport(Transport.SERVER)
        if opts.trace:
            transport.trace(Transport.TRACE_FRM)
            index = self.index
            transport.tracer = lambda _t, msg: self.peer._trace(index, msg)
        if opts.idle_timeout is not None:
            transport.idle_timeout = opts.idle_timeout
        if opts.max_frame_size is not None:
            transport.max_frame_size = opts.max_frame_size
        connection = Connection()
        connection.container = opts.container_id
        connection.offered_capabilities = [symbol(c) for c in opts.offered_capabilities]
        if opts.desired_capabilities:
            connection.desired_capabilities = [symbol(c) for c in opts.desired_capabilities]
        connection.properties = {symbol(k): v for k, v in opts.properties.items()}
        collector = Collector()
        connection.collect(collector)
        transport.bind(connection)
        self.transport, self.connection, self.collector = transport, connection, collector
        rest = bytes(self.sasl_buf)
        self.sasl_buf.clear()
        if rest:
            self._amqp_input(rest)

    def _amqp_input(self, data: bytes) -> None:
        # Record first, so the engine events that follow can find their records.
        self.in_buf += data
        while True:
            frame, used = _read_frame(self.in_buf)
            if frame is None:
                break
            del self.in_buf[:used]
            if frame.kind == "frame" and frame.frame_type == 0 and frame.code >= 0:
                self._record_incoming(frame)
        assert self.transport is not None
        view = memoryview(data)
        while view:
            capacity = self.transport.capacity()
            if capacity < 0:  # the engine closed its input (e.g. after close); drop the rest
                return
            if capacity == 0:
                self.process()
                if self.transport.capacity() == 0:
                    raise RuntimeError("transport input stalled")
                continue
            chunk = bytes(view[:capacity])
            self.transport.push(chunk)
            view = view[len(chunk) :]

    def _record_incoming(self, frame: _Frame) -> None:
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

    def _record_transfer_frame(self, frame: _Frame) -> None:
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

    def _note_outgoing(self, data: bytes) -> None:
        # Only the bits of the peer's own frames needed to name deliveries in dispositions.
        self.out_parse_buf += data
        while True:
            frame, used = _read_frame(self.out_parse_buf)
            if frame is None:
                return
            del self.out_parse_buf[:used]
            if frame.kind != "frame" or frame.frame_type != 0:
                continue
            if frame.code == 0x11 and _field(frame.fields, 0) is not None:
                self.peer_channel_to_client[frame.channel] = int(frame.fields[0])
            elif frame.code == 0x14:
                client_ch = self.peer_channel_to_client.get(frame.channel, frame.channel)
                key = (frame.channel, int(_field(frame.fields, 0, 0)))
                delivery_id = _field(frame.fields, 1)
                tag = _field(frame.fields, 2)
                if delivery_id is not None and tag is not None:
                    self.peer_last_delivery[key] = int(delivery_id)
                    self.peer_sent_tags[(client_ch, int(delivery_id))] = bytes(tag)

    # ---- output -----------------------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        self.outbuf += data

    def _pull_output(self) -> bool:
        if self.transport is None:
            return False
        pulled = False
        while True:
            pending = self.transport.pending()
            if pending < 0:
                # The engine has written everything it ever will (close sent or error).
                self.close_after_flush = True
                return pulled
            if pending == 0:
                return pulled
            data = self.transport.peek(pending) or b""
            self.transport.pop(len(data))
            self._note_outgoing(data)
            self.outbuf += data
            pulled = True

    def flush(self) -> None:
        while self.outbuf:
            try:
                sent = self.sock.send(self.outbuf)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                # The client went away; nothing more can be delivered.
                self.outbuf.clear()
                self.close_after_flush = True
                return
            del self.outbuf[:sent]

    @property
    def finished(self) -> bool:
        if self.closed:
            return True
        if self.close_after_flush and not self.outbuf:
            return True
        # The client hung up: nothing we still hold can reach it.
        return self.eof and not self.outbuf

    # ---- engine events ----------------------------------------------------------------------

    def process(self) -> None:
        """Run engine events and move engine output into the socket buffer until quiet."""
        if self.transport is None or self.collector is None:
            return
        while True:
            handled = False
            while True:
                event = self.collector.peek()
                if event is None:
                    break
                handled = True
                try:
                    self._dispatch(event)
                finally:
                    self.collector.pop()
            pulled = self._pull_output()
            if not handled and not pulled:
                break
        if self.peer.options.heartbeats and not self.close_after_flush:
            self.deadline = self.transport.tick(time.monotonic())
            self._pull_output()

    def _dispatch(self, event: Event) -> None:
        t = event.type
        opts = self.peer.options
        conn, session, link = event.connection, event.session, event.link
        if t == Event.CONNECTION_REMOTE_OPEN and conn is not None:
            if opts.hang_on_open:
                return
            conn.open()
            if opts.close_on_open_with is not None:
                cond, desc = opts.close_on_open_with
                conn.condition = Condition(cond, desc)
                conn.close()
        elif t == Event.SESSION_REMOTE_OPEN and session is not None:
            if session.state & Session.LOCAL_UNINIT:
                session.open()
        elif t == Event.LINK_REMOTE_OPEN and link is not None:
            self._on_attach(link)
        elif t == Event.LINK_FLOW and link is not None:
            if link.is_sender:
                self.pump(link)
        elif t == Event.DELIVERY and event.delivery is not None:
            self._on_delivery(event.delivery)
        elif t in (Event.LINK_REMOTE_CLOSE, Event.LINK_REMOTE_DETACH) and link is not None:
            state = self.links.get((link.is_sender, link.name))
            if state is not None and state.hung:
                return  # a hung link stays silent to the end
            if link.state & Link.LOCAL_ACTIVE:
                if t == Event.LINK_REMOTE_CLOSE:
                    link.close()
                else:
                    link.detach()
            self.links.pop((link.is_sender, link.name), None)
        elif t == Event.SESSION_REMOTE_CLOSE and session is not None:
            if not session.state & Session.LOCAL_CLOSED:
                session.close()
        elif t == Event.TRANSPORT_ERROR and event.transport is not None:
            self.peer._trace(self.index, f"transport error: {event.transport.condition}")
        elif t == Event.CONNECTION_REMOTE_CLOSE and conn is not None:
            if not conn.state & Connection.LOCAL_CLOSED:
                conn.close()

    def _find_attach(self, link: Link) -> AttachRecord | None:
        # The client's attach role is the opposite of our link's role.
        role = "receiver" if link.is_sender else "sender"
        for r in reversed(self.peer.records()):
            if (
                isinstance(r, AttachRecord)
                and r.conn == self.index
                and r.name == link.name
                and r.role == role
            ):
                return r
        return None

    def _on_attach(self, link: Link) -> None:
        attach = self._find_attach(link)
        script = self.peer._script_for(attach) if attach is not None else LinkScript()
        address = attach.address if attach is not None else None
        state = _LinkState(link, attach, script, address)
        self.links[(link.is_sender, link.name)] = state
        if script.hang:
            state.hung = True
            return
        # Our terminus that names the node: source when we send, target when we receive.
        source_sent = attach is not None and attach.source is not None
        target_sent = attach is not None and attach.target is not None
        if link.is_sender:
            ours, theirs, ours_sent, ours_type = (
                link.source,
                link.remote_source,
                source_sent,
                Terminus.SOURCE,
            )
            other, other_remote, other_sent, other_type = (
                link.target,
                link.remote_target,
                target_sent,
                Terminus.TARGET,
            )
        else:
            ours, theirs, ours_sent, ours_type = (
                link.target,
                link.remote_target,
                target_sent,
                Terminus.TARGET,
            )
            other, other_remote, other_sent, other_type = (
                link.source,
                link.remote_source,
                source_sent,
                Terminus.SOURCE,
            )
        _echo(other, other_remote, other_sent, other_type)
        if script.refuse is not None:
            # A null terminus in the reply is how a broker says "no such node".
            ours.type = Terminus.UNSPECIFIED
        else:
            _echo(ours, theirs, ours_sent, ours_type)
            if theirs.dynamic:
                state.address = script.dynamic_address or f"dynamic.{uuid.uuid4()}"
                ours.address = state.address
            if script.capabilities is not None or script.extra_capabilities:
                recorded = None
                if attach is not None:
                    recorded = attach.source if link.is_sender else attach.target
                caps = (
                    list(script.capabilities)
                    if script.capabilities is not None
                    else list(recorded.capabilities if recorded is not None else [])
                )
                caps += list(script.extra_capabilities)
                data = ours.capabilities
                data.clear()
                data.put_object(_symbol_array(*map(symbol, caps)))
        # Adopt the client's settle modes, as brokers do, so settlement tests see what they asked.
        link.snd_settle_mode = link.remote_snd_settle_mode
        link.rcv_settle_mode = link.remote_rcv_settle_mode
        link.open()
        error = script.refuse or script.close_with
        if error is not None:
            link.condition = Condition(error[0], error[1])
            link.close()
            return
        if link.is_receiver:
            if script.credit > 0:
                link.flow(script.credit)
        else:
            self.pump(link)

    def _on_delivery(self, delivery: Delivery) -> None:
        link = delivery.link
        if link.is_sender:
            # The client settled or updated something we sent; settle our side to free it.
            if delivery.settled:
                delivery.settle()
            return
        if delivery.partial and not delivery.aborted:
            return
        if delivery.aborted:
            delivery.settle()
            return
        if not delivery.readable:
            return
        link.recv(delivery.pending)
        link.advance()
        state = self.links.get((False, link.name))
        script = state.script if state is not None else LinkScript()
        if script.credit > 0 and link.credit <= script.credit // 2:
            link.flow(script.credit - link.credit)
        if delivery.settled:  # proton's "settled" means settled by the remote (presettled)
            delivery.settle()
            return
        choice = script.outcome
        if callable(choice):
            tag = delivery.tag
            record = self._find_transfer(link.name, tag.encode() if isinstance(tag, str) else tag)
            outcome = choice(record) if record is not None else _ACCEPTED
        else:
            outcome = choice
        if outcome is None:
            return  # scripted to never settle
        local = delivery.local
        if outcome.kind == "accepted":
            delivery.update(Delivery.ACCEPTED)
        elif outcome.kind == "rejected":
            local.condition = Condition(
                outcome.condition or "amqp:internal-error", outcome.description
            )
            delivery.update(Delivery.REJECTED)
        elif outcome.kind == "released":
            delivery.update(Delivery.RELEASED)
        else:
            local.failed = outcome.delivery_failed
            local.undeliverable = outcome.undeliverable_here
            delivery.update(Delivery.MODIFIED)
        delivery.settle()

    def _find_transfer(self, link_name: str, tag: bytes) -> TransferRecord | None:
        for r in reversed(self.peer.records()):
            if (
                isinstance(r, TransferRecord)
                and r.conn == self.index
                and r.link_name == link_name
                and r.delivery_tag == tag
            ):
                return r
        return None

    def pump(self, link: Link) -> None:
        """Send queued messages for this link's address while it has credit; answer drains."""
        state = self.links.get((True, link.name))
        if state is None or state.hung or not link.state & Link.LOCAL_ACTIVE:
            return
        if not link.state & Link.REMOTE_ACTIVE:
            return
        queue = self.peer._queues.get(state.address or "")
        while queue and link.credit > 0:
            item = queue.popleft()
            tag = item.tag or f"peer-{next(self.peer._tag_counter)}".encode()
            # proton's stub says str, but the C call takes the raw bytes we want on the wire.
            delivery = link.delivery(cast(str, tag))
            cast(Sender, link).send(item.payload)
            link.advance()
            presettle = item.settled
            if presettle is None:
                presettle = link.remote_snd_settle_mode == Link.SND_SETTLED
            if presettle:
                delivery.settle()
        if link.drain_mode and link.credit > 0 and state.script.answer_drain:
            link.drained()

    # ---- scripted actions -------------------------------------------------------------------

    def close_connection(self, condition: str | None, description: str | None) -> None:
        if self.connection is None:
            # Still in SASL: the only way to refuse is to hang up.
            self.close_after_flush = True
            return
        if self.connection.state & Connection.LOCAL_UNINIT:
            # proton would send a bare open for us; send ours so the client sees our caps.
            self.connection.open()
        if condition is not None:
            self.connection.condition = Condition(condition, description)
        self.connection.close()

    def shutdown(self) -> None:
        if self.closed:
            return
        self.closed = True
        # Unregister before closing: a selector can't look up a closed socket's descriptor.
        try:
            self.peer._selector.unregister(self.sock)
        except (KeyError, ValueError, OSError):
            pass
        try:
            self.sock.close()
        except OSError:
            pass


# --------------------------------------------------------------------------------------------
# The peer
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Options:
    offered_capabilities: tuple[str, ...]
    desired_capabilities: tuple[str, ...]
    properties: dict[str, Any]
    container_id: str
    sasl_mechanisms: tuple[str, ...]
    require_sasl: bool
    reject_credentials: bool
    close_on_open_with: tuple[str, str | None] | None
    hang_on_connect: bool
    hang_on_open: bool
    idle_timeout: float | None
    heartbeats: bool
    max_frame_size: int | None
    trace: bool


class ScriptedPeer:
    """A scripted AMQP 1.0 server on 127.0.0.1 for wire tests. See the module docstring.

    Connection options:
      offered_capabilities: open's offered capabilities (default: Artemis's set).
      desired_capabilities: open's desired capabilities (default none).
      properties: open's properties (default ``{"product": "scripted-peer"}``).
      container_id: the peer's container-id.
      sasl_mechanisms: offered SASL mechanisms (default PLAIN and ANONYMOUS; any user/password
        is accepted). ``require_sasl``: refuse clients that skip SASL.
      reject_credentials: fail SASL with the ``auth`` outcome.
      close_on_open_with: (condition, description): answer open, then close with that error
        (Artemis does this for a bad password).
      hang_on_connect: accept TCP, never answer anything. hang_on_open: finish SASL and the
        protocol header but never answer the open.
      idle_timeout: idle timeout (seconds) advertised in the peer's open.
      heartbeats: when False the peer never ticks its transport, so it neither sends heartbeats
        nor enforces its own idle timeout (to test the client's idle-timeout detection).
      max_frame_size: the peer's max frame size.
      links: scripts per link address (``None`` key: anonymous or dynamic links), or a callable
        ``AttachRecord -> LinkScript | None``; unmatched links get ``LinkScript()``.
      trace: record proton's frame trace in ``trace``.
      strict: ``check()`` and ``close()`` also fail on frames nobody expected (see
        peer_strict.py); ``allow`` (a predicate over records) exempts frames a test provokes.
    """

    def __init__(
        self,
        *,
        offered_capabilities: Iterable[str] = DEFAULT_OFFERED_CAPABILITIES,
        desired_capabilities: Iterable[str] = (),
        properties: Mapping[str, Any] | None = None,
        container_id: str = "scripted-peer",
        sasl_mechanisms: Iterable[str] = ("PLAIN", "ANONYMOUS"),
        require_sasl: bool = False,
        reject_credentials: bool = False,
        close_on_open_with: tuple[str, str | None] | None = None,
        hang_on_connect: bool = False,
        hang_on_open: bool = False,
        idle_timeout: float | None = None,
        heartbeats: bool = True,
        max_frame_size: int | None = None,
        links: LinkScripts | None = None,
        trace: bool = True,
        strict: bool = False,
        allow: Callable[[Record], bool] | None = None,
    ) -> None:
        self.strict = strict
        self._allow = allow
        self.options = _Options(
            offered_capabilities=tuple(offered_capabilities),
            desired_capabilities=tuple(desired_capabilities),
            properties=dict(properties) if properties is not None else {"product": "scripted-peer"},
            container_id=container_id,
            sasl_mechanisms=tuple(sasl_mechanisms),
            require_sasl=require_sasl,
            reject_credentials=reject_credentials,
            close_on_open_with=close_on_open_with,
            hang_on_connect=hang_on_connect,
            hang_on_open=hang_on_open,
            idle_timeout=idle_timeout,
            heartbeats=heartbeats,
            max_frame_size=max_frame_size,
            trace=trace,
        )
        self._scripts: dict[str | None, LinkScript] = {}
        self._script_fn: Callable[[AttachRecord], LinkScript | None] | None = None
        if callable(links):
            self._script_fn = links
        elif links is not None:
            self._scripts.update(links)
        self._cond = threading.Condition(threading.RLock())
        self._events: list[Record] = []
        self._trace_lines: list[str] = []
        self._errors: list[BaseException] = []
        self._queues: dict[str, deque[_Queued]] = {}
        self._tag_counter = itertools.count(1)
        self._commands: deque[tuple[Callable[[], Any], Future[Any]]] = deque()
        self._conns: list[_PeerConnection] = []
        self._every_conn: dict[int, _PeerConnection] = {}
        self._conn_counter = itertools.count()
        self._stopping = False
        self._closed = False

        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self._listener.setblocking(False)
        self.host, self.port = self._listener.getsockname()[:2]
        # A socketpair wakes the selector when the test thread queues work.
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ, "listener")
        self._selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._thread = threading.Thread(
            target=self._run, name=f"scripted-peer-{self.port}", daemon=True
        )
        self._thread.start()

    # ---- lifecycle --------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"amqp://{self.host}:{self.port}"

    @property
    def address(self) -> str:
        """``host:port`` (no scheme), for clients that take the two separately."""
        return f"{self.host}:{self.port}"

    def __enter__(self) -> ScriptedPeer:
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None:
            self.close()
            return
        # Don't hide the test's own failure, but don't lose the peer's either.
        try:
            self.close()
        except PeerError as peer_error:
            exc.add_note(f"scripted peer also failed: {peer_error}")

    def close(self) -> None:
        """Stop the thread, close every socket, and re-raise any failure from the peer thread."""
        if not self._closed:
            self._closed = True
            self._stopping = True
            self._wake()
            self._thread.join(timeout=10)
            if self._thread.is_alive():
                self._errors.append(RuntimeError("peer thread did not stop within 10 s"))
            for conn in self._conns:
                conn.shutdown()
            for s in (self._listener, self._wake_r, self._wake_w):
                s.close()
            self._selector.close()
        self.check()

    def check(self) -> None:
        """Raise PeerError now if the peer thread has failed (``close()`` does this too)."""
        with self._cond:
            errors = list(self._errors)
        if errors:
            detail = "; ".join(f"{type(e).__name__}: {e}" for e in errors)
            raise PeerError(f"scripted peer failed: {detail}") from errors[0]
        if self.strict:
            problems = self.unexpected_frames()
            if problems:
                listed = "\n  ".join(problems)
                raise PeerError(f"the client sent frames nobody expected:\n  {listed}")

    def unexpected_frames(self) -> list[str]:
        """What strict mode reports (see peer_strict.py), whether or not the peer is strict."""
        conns = dict(self._every_conn)

        def credit_of(conn: int, link_name: str) -> int | None:
            state = conns[conn].links.get((False, link_name)) if conn in conns else None
            return state.script.credit if state is not None else None

        def peer_sent(conn: int, channel: int, delivery_id: int) -> bool:
            c = conns.get(conn)
            return c is not None and (channel, delivery_id) in c.peer_sent_tags

        return unexpected_frames(self.records(), credit_of, peer_sent, self._allow)

    # ---- scripting ------------------------------------------------------------------------

    def script(self, address: str | None, script: LinkScript | None = None, **kw: Any) -> None:
        """Set the script for links on ``address`` (applies to attaches that arrive later).

        Either pass a LinkScript or its fields as keywords: ``peer.script("q", credit=0)``.
        """
        with self._cond:
            self._scripts[address] = script if script is not None else LinkScript(**kw)

    def _script_for(self, attach: AttachRecord) -> LinkScript:
        if self._script_fn is not None:
            chosen = self._script_fn(attach)
            if chosen is not None:
                return chosen
        with self._cond:
            return self._scripts.get(attach.address, LinkScript())

    def enqueue(
        self,
        address: str,
        message: bytes | Message,
        *,
        delivery_count: int | None = None,
        tag: bytes | None = None,
        settled: bool | None = None,
    ) -> None:
        """Queue a message for client receivers on ``address``; sent as credit allows.

        ``message``: raw payload bytes (sent as-is) or a proton Message (encoded here).
        ``delivery_count`` sets the Message header's delivery-count (redelivery tests).
        ``settled``: send presettled; default follows the client's snd-settle-mode.
        """
        if isinstance(message, Message):
            if delivery_count is not None:
                message.delivery_count = delivery_count
            payload = bytes(message.encode())
        else:
            if delivery_count is not None:
                raise ValueError("delivery_count needs a proton.Message, not raw bytes")
            payload = bytes(message)
        item = _Queued(payload, tag, settled)

        def run() -> None:
            self._queues.setdefault(address, deque()).append(item)
            self._pump_all()

        self._call(run)

    def close_connection(
        self,
        condition: str | None = "amqp:connection:forced",
        description: str | None = None,
        *,
        conn: int | None = None,
    ) -> None:
        """Close the client connection(s) with an error (``condition=None``: a clean close)."""

        def run() -> None:
            for c in self._live(conn):
                c.close_connection(condition, description)
                c.process()

        self._call(run)

    def drop(self, *, conn: int | None = None, reset: bool = False) -> None:
        """Close the TCP socket(s) abruptly, with no AMQP close.

        ``reset=True`` sends a RST instead of a FIN (SO_LINGER 0), as a crashed host would.
        The peer keeps listening: a client that reconnects gets a new, numbered connection.
        """

        def run() -> None:
            for c in self._live(conn):
                if reset:
                    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                c.shutdown()

        self._call(run)

    @property
    def connections(self) -> list[ConnectionView]:
        """One view per TCP connection accepted so far, in order: ``connections[1].attaches``
        are the attaches of the second connection (e.g. the re-attaches after a reconnect)."""
        from .peer_connections import ConnectionView  # kept apart: this module is long enough

        return [ConnectionView(self, r.conn) for r in self.connects]

    def close_link(
        self,
        name: str,
        condition: str | None = None,
        description: str | None = None,
        *,
        closed: bool = True,
    ) -> None:
        """Detach the live link called ``name`` from the peer side (e.g. a deleted queue)."""

        def run() -> None:
            for c in self._live(None):
                for (_is_sender, link_name), state in list(c.links.items()):
                    if link_name != name:
                        continue
                    if condition is not None:
                        state.link.condition = Condition(condition, description)
                    if closed:
                        state.link.close()
                    else:
                        state.link.detach()
                    c.process()
                    return
            raise KeyError(f"no live link named {name!r}")

        self._call(run)

    def _live(self, index: int | None) -> list[_PeerConnection]:
        return [c for c in self._conns if not c.closed and (index is None or c.index == index)]

    def _pump_all(self) -> None:
        for c in self._live(None):
            for (is_sender, _name), state in list(c.links.items()):
                if is_sender:
                    c.pump(state.link)

    def _call(self, fn: Callable[[], T], timeout: float = 5.0) -> T:
        """Run ``fn`` on the peer thread (engine objects are not thread-safe) and wait for it."""
        if self._closed or not self._thread.is_alive():
            self.check()
            raise RuntimeError("peer is closed")
        future: Future[T] = Future()
        with self._cond:
            self._commands.append((fn, future))
        self._wake()
        return future.result(timeout)

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"x")
        except (BlockingIOError, OSError):
            pass  # already a wake byte pending, or closing

    # ---- records ----------------------------------------------------------------------------

    def _record(self, record: Record) -> None:
        with self._cond:
            self._events.append(record)
            self._cond.notify_all()

    def _trace(self, conn: int, line: str) -> None:
        with self._cond:
            self._trace_lines.append(f"[{conn}] {line}")

    def records(self) -> list[Record]:
        """Everything recorded so far, in arrival order."""
        with self._cond:
            return list(self._events)

    def _of(self, kind: type[R]) -> list[R]:
        with self._cond:
            return [r for r in self._events if isinstance(r, kind)]

    @property
    def sasl(self) -> list[SaslRecord]:
        return self._of(SaslRecord)

    @property
    def opens(self) -> list[OpenRecord]:
        return self._of(OpenRecord)

    @property
    def begins(self) -> list[BeginRecord]:
        return self._of(BeginRecord)

    @property
    def attaches(self) -> list[AttachRecord]:
        return self._of(AttachRecord)

    @property
    def flows(self) -> list[FlowRecord]:
        return self._of(FlowRecord)

    @property
    def transfers(self) -> list[TransferRecord]:
        return self._of(TransferRecord)

    @property
    def dispositions(self) -> list[DispositionRecord]:
        return self._of(DispositionRecord)

    @property
    def detaches(self) -> list[DetachRecord]:
        return self._of(DetachRecord)

    @property
    def ends(self) -> list[EndRecord]:
        return self._of(EndRecord)

    @property
    def closes(self) -> list[CloseRecord]:
        return self._of(CloseRecord)

    @property
    def connects(self) -> list[ConnectRecord]:
        return self._of(ConnectRecord)

    @property
    def disconnects(self) -> list[DisconnectRecord]:
        return self._of(DisconnectRecord)

    @property
    def trace(self) -> list[str]:
        """proton's frame trace plus the peer's SASL lines, each prefixed ``[conn]``."""
        with self._cond:
            return list(self._trace_lines)

    # ---- waiting ----------------------------------------------------------------------------

    def wait_for(
        self, predicate: Callable[[], T], timeout: float = 5.0, what: str = "condition"
    ) -> T:
        """Wait until ``predicate()`` is truthy and return its value; PeerTimeout otherwise.

        Woken by every new record, so it returns as soon as the frame arrives.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                if self._errors:
                    self.check()
                result = predicate()
                if result:
                    return result
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    recent = "\n  ".join(_abbrev(repr(r)) for r in self._events[-15:])
                    raise PeerTimeout(
                        f"timed out after {timeout}s waiting for {what}; recent records:\n  "
                        f"{recent or '(none)'}"
                    )
                self._cond.wait(remaining)

    def wait_for_records(
        self,
        kind: type[R],
        match: Callable[[R], bool] | None = None,
        count: int = 1,
        timeout: float = 5.0,
    ) -> list[R]:
        """Wait for ``count`` records of ``kind`` matching ``match``; returns all matches."""

        def found() -> list[R]:
            hits = [r for r in self._of(kind) if match is None or match(r)]
            return hits if len(hits) >= count else []

        return self.wait_for(found, timeout, f"{count} x {kind.__name__}")

    def wait_for_open(self, timeout: float = 5.0) -> OpenRecord:
        return self.wait_for_records(OpenRecord, timeout=timeout)[-1]

    def wait_for_attach(
        self,
        address: str | None = None,
        *,
        name: str | None = None,
        role: Literal["sender", "receiver"] | None = None,
        timeout: float = 5.0,
    ) -> AttachRecord:
        """The first attach matching all given filters (address, link name, client role)."""

        def match(r: AttachRecord) -> bool:
            return (
                (address is None or r.address == address)
                and (name is None or r.name == name)
                and (role is None or r.role == role)
            )

        return self.wait_for_records(AttachRecord, match, timeout=timeout)[0]

    def wait_for_transfers(
        self, count: int = 1, *, link_name: str | None = None, timeout: float = 5.0
    ) -> list[TransferRecord]:
        return self.wait_for_records(
            TransferRecord,
            lambda r: link_name is None or r.link_name == link_name,
            count,
            timeout,
        )

    def wait_for_dispositions(
        self, count: int = 1, timeout: float = 5.0
    ) -> list[DispositionRecord]:
        return self.wait_for_records(DispositionRecord, None, count, timeout)

    def wait_for_flow(
        self, match: Callable[[FlowRecord], bool] | None = None, timeout: float = 5.0
    ) -> FlowRecord:
        return self.wait_for_records(FlowRecord, match, timeout=timeout)[0]

    def wait_for_detach(self, name: str | None = None, timeout: float = 5.0) -> DetachRecord:
        return self.wait_for_records(
            DetachRecord, lambda r: name is None or r.link_name == name, timeout=timeout
        )[0]

    def wait_for_close(self, timeout: float = 5.0) -> CloseRecord:
        return self.wait_for_records(CloseRecord, timeout=timeout)[0]

    def wait_for_disconnects(self, count: int = 1, timeout: float = 5.0) -> list[DisconnectRecord]:
        return self.wait_for_records(DisconnectRecord, None, count, timeout)

    # ---- the peer thread --------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._stopping:
                self._loop_once()
        except BaseException as e:  # noqa: BLE001 - surfaced in the test thread by close()
            with self._cond:
                self._errors.append(e)
                self._cond.notify_all()
        finally:
            self._fail_pending_commands()

    def _loop_once(self) -> None:
        now = time.monotonic()
        timeout = 0.5
        for c in self._conns:
            if c.deadline:
                timeout = min(timeout, max(0.0, c.deadline - now))
        for key, mask in self._selector.select(timeout):
            if key.data == "listener":
                self._accept()
            elif key.data == "wake":
                try:
                    while self._wake_r.recv(4096):
                        pass
                except (BlockingIOError, InterruptedError):
                    pass
            else:
                conn: _PeerConnection = key.data
                if conn.closed:
                    continue
                self._guarded(conn, functools.partial(self._io, conn, mask))
        self._run_commands()
        for conn in list(self._conns):
            self._guarded(conn, conn.process)
            self._guarded(conn, conn.flush)
            self._settle_conn(conn)

    def _io(self, conn: _PeerConnection, mask: int) -> None:
        if mask & selectors.EVENT_READ:
            conn.on_readable()
        if mask & selectors.EVENT_WRITE:
            conn.flush()

    def _guarded(self, conn: _PeerConnection, fn: Callable[[], Any]) -> None:
        # A failure on one connection is kept for close() and ends that connection only,
        # so the test sees a client-side error promptly instead of a hang.
        try:
            fn()
        except Exception as e:
            with self._cond:
                self._errors.append(e)
                self._cond.notify_all()
            conn.shutdown()

    def _settle_conn(self, conn: _PeerConnection) -> None:
        if conn.finished and not conn.closed:
            conn.shutdown()
        if conn.closed:
            self._conns.remove(conn)
            self._record(DisconnectRecord(conn.index))
            return
        events = selectors.EVENT_READ if not conn.eof else 0
        if conn.outbuf:
            events |= selectors.EVENT_WRITE
        try:
            if events:
                self._selector.modify(conn.sock, events, conn)
            else:
                self._selector.unregister(conn.sock)
        except KeyError:
            if events:
                self._selector.register(conn.sock, events, conn)

    def _accept(self) -> None:
        try:
            sock, _addr = self._listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = _PeerConnection(self, sock, next(self._conn_counter))
        self._conns.append(conn)
        self._every_conn[conn.index] = conn  # strict mode judges frames of closed ones too
        self._selector.register(sock, selectors.EVENT_READ, conn)
        self._record(ConnectRecord(conn.index))

    def _run_commands(self) -> None:
        while True:
            with self._cond:
                if not self._commands:
                    return
                fn, future = self._commands.popleft()
            try:
                future.set_result(fn())
            except Exception as e:
                future.set_exception(e)

    def _fail_pending_commands(self) -> None:
        with self._cond:
            commands, self._commands = list(self._commands), deque()
        for _fn, future in commands:
            future.set_exception(RuntimeError("scripted peer stopped"))
