"""What the scripted peer records and how a test scripts it: records, outcomes, link scripts.

Records are immutable snapshots of the frames a client put on the wire (see peer.py); the
constants name AMQP descriptor codes as they appear in them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

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
    """How the peer settles a transfer from a client sender. ``none``: settled with no
    outcome; ``received``: only the non-terminal received state, left unsettled (peers that
    misbehave, or answer in two steps)."""

    kind: Literal["accepted", "rejected", "released", "modified", "none", "received"]
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
    def settled_without_outcome(cls) -> Outcome:
        return cls("none")

    @classmethod
    def received_only(cls) -> Outcome:
        return cls("received")

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
    ``end_session``: (condition, description). Do not answer the attach; end its session
    with that error instead (RabbitMQ 3.x's AMQP 1.0 plugin does so for a missing queue).
    ``hang``: never answer the attach. ``answer_drain``: when False a drain request is ignored.
    ``dynamic_address``: address assigned to a dynamic terminus (generated when None).
    """

    credit: int = 1000
    outcome: OutcomeChoice = _ACCEPTED
    capabilities: Sequence[str] | None = None
    extra_capabilities: Sequence[str] = ()
    refuse: tuple[str, str | None] | None = None
    close_with: tuple[str, str | None] | None = None
    end_session: tuple[str, str | None] | None = None
    hang: bool = False
    answer_drain: bool = True
    dynamic_address: str | None = None


LinkScripts = Mapping[str | None, LinkScript] | Callable[[AttachRecord], LinkScript | None]


@dataclass
class _Queued:
    payload: bytes
    tag: bytes | None
    settled: bool | None
