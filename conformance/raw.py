"""A bare python-qpid-proton client for looking at what jmspy put on the wire.

Wire checks send with jmspy and read the message back through the broker with this client, which
knows nothing of jmspy's API: the transfer payload is split into its AMQP sections here by
the AMQP section reader (``jmspy._amqp.codec.read_message_sections``, checked value by value
against proton.Data in tests/unit/test_amqp_reader.py, with proton.Data as its fallback) and the
AMQP 1.0 section descriptors, so a check sees exactly which header fields, annotations,
properties and body sections arrived (absent and default are told apart, and every value keeps
its AMQP type). It also sends hand-made messages for the receive-side
mapping checks.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from proton import Data, DataException, Delivery, Described, Handler, Message, symbol
from proton.reactor import LinkOption
from proton.utils import BlockingConnection

from jmspy._amqp.codec import NOT_DESCRIBED, CodecError, read_message_sections

__all__ = ["RawClient", "RawMessage", "parse_sections", "payload_from_trace"]

HEADER_FIELDS = ("durable", "priority", "ttl", "first-acquirer", "delivery-count")
PROPERTY_FIELDS = (
    "message-id",
    "user-id",
    "to",
    "subject",
    "reply-to",
    "correlation-id",
    "content-type",
    "content-encoding",
    "absolute-expiry-time",
    "creation-time",
    "group-id",
    "group-sequence",
    "reply-to-group-id",
)
SECTION_NAMES = {
    0x70: "header",
    0x71: "delivery-annotations",
    0x72: "message-annotations",
    0x73: "properties",
    0x74: "application-properties",
    0x75: "data",
    0x76: "amqp-sequence",
    0x77: "amqp-value",
    0x78: "footer",
}
_SYMBOLIC = {f"amqp:{name}:list": code for code, name in SECTION_NAMES.items()}
_SYMBOLIC.update({f"amqp:{name}:map": code for code, name in SECTION_NAMES.items()})
_SYMBOLIC.update({f"amqp:{name}:binary": code for code, name in SECTION_NAMES.items()})
_SYMBOLIC.update({f"amqp:{name}:*": code for code, name in SECTION_NAMES.items()})


@dataclasses.dataclass
class RawMessage:
    """The sections of one received transfer. Fields absent on the wire are absent here."""

    payload: bytes
    header: dict[str, Any] | None = None
    annotations: dict[str, Any] = dataclasses.field(default_factory=dict)
    properties: dict[str, Any] = dataclasses.field(default_factory=dict)
    application_properties: dict[str, Any] | None = None
    body: list[tuple[str, Any]] = dataclasses.field(default_factory=list)
    sections: list[str] = dataclasses.field(default_factory=list)

    @property
    def body_kinds(self) -> list[str]:
        return [kind for kind, _ in self.body]

    def describe(self) -> str:
        """One line per section, for evidence in reports."""
        lines = [f"sections: {', '.join(self.sections) or 'none'}"]
        if self.header is not None:
            lines.append(f"header: {_typed(self.header)}")
        if self.annotations:
            lines.append(f"message-annotations: {_typed(self.annotations)}")
        if self.properties:
            lines.append(f"properties: {_typed(self.properties)}")
        if self.application_properties:
            lines.append(f"application-properties: {_typed(self.application_properties)}")
        for kind, value in self.body:
            text = repr(value)
            lines.append(f"{kind}: {text if len(text) < 120 else text[:117] + '...'}")
        return "; ".join(lines)


def _typed(values: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {type(v).__name__} {v!r}" for k, v in values.items()) + "}"


def amqp_type(value: Any) -> str:
    """The AMQP type name of a decoded value (proton keeps the distinction in its classes)."""
    names = {
        "bool": "boolean",
        "byte": "byte",
        "short": "short",
        "int32": "int",
        "int": "long",
        "float32": "float",
        "float": "double",
        "str": "string",
        "symbol": "symbol",
        "bytes": "binary",
        "ubyte": "ubyte",
        "ushort": "ushort",
        "uint": "uint",
        "ulong": "ulong",
        "timestamp": "timestamp",
        "UUID": "uuid",
        "char": "char",
        "NoneType": "null",
        "list": "list",
        "dict": "map",
        "Described": "described",
    }
    return names.get(type(value).__name__, type(value).__name__)


def parse_sections(payload: bytes) -> RawMessage:
    """Split an AMQP 1.0 bare message into its sections."""
    raw = RawMessage(payload=bytes(payload))
    try:
        sections = list(read_message_sections(raw.payload))
    except (CodecError, DataException) as exc:
        raise ValueError(f"undecodable AMQP data: {exc}") from exc
    for descriptor, content in sections:
        if descriptor is NOT_DESCRIBED:
            raise ValueError(f"a top-level {type(content).__name__} is not an AMQP section")
        code = _SYMBOLIC.get(str(descriptor)) if isinstance(descriptor, str) else int(descriptor)
        name = SECTION_NAMES.get(code or -1, f"unknown({descriptor!r})")
        raw.sections.append(name)
        value: Any = _plain(content)
        if name == "header":
            raw.header = _fields(HEADER_FIELDS, value)
        elif name == "message-annotations":
            raw.annotations = {str(k): v for k, v in dict(value or {}).items()}
        elif name == "properties":
            raw.properties = _fields(PROPERTY_FIELDS, value)
        elif name == "application-properties":
            raw.application_properties = dict(value or {})
        elif name in ("data", "amqp-sequence", "amqp-value"):
            raw.body.append((name, value))
    return raw


def _plain(value: Any) -> Any:
    """proton hands binary values out as memoryview; make them bytes, recursively."""
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, Described):
        return Described(value.descriptor, _plain(value.value))
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


_TRACED_TRANSFER = re.compile(
    # Non-greedy up to "] (size) ": a transactional transfer's fields nest brackets
    # (state=@transactional-state(52) [txn-id=...]).
    r"-> @transfer\(20\) \[(?P<fields>.*?)\] \((?P<size>\d+)\) (?P<payload>.*)$"
)
_ESCAPE = re.compile(rb"\\x([0-9a-fA-F]{2})")


def payload_from_trace(line: str) -> bytes | None:
    """The payload of an outgoing single-frame transfer in a proton frame-trace line (what
    ``amqp.traceFrames`` logs), or None for other frames and for truncated or split payloads.

    proton prints printable ASCII as is and every other byte (backslash and quote included) as
    ``\\xHH``, so the text decodes back to the exact bytes.
    """
    match = _TRACED_TRANSFER.search(line)
    if match is None or "more=true" in match.group("fields") or line.endswith("(truncated)"):
        return None
    try:
        encoded = match.group("payload").encode("latin-1")
    except UnicodeEncodeError:
        return None
    payload = _ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), encoded)
    return payload if len(payload) == int(match.group("size")) else None


def _fields(names: tuple[str, ...], values: Any) -> dict[str, Any]:
    """The non-null fields of a composite (list) section, by name."""
    out: dict[str, Any] = {}
    for index, value in enumerate(list(values or [])):
        if value is not None and index < len(names):
            out[names[index]] = value
    return out


class TerminusCapabilities(LinkOption):
    """Put capabilities (``queue``, ``topic``) on the link's source or target, as JMS clients
    do; brokers such as Artemis choose the routing type from them."""

    def __init__(self, *capabilities: str) -> None:
        self.capabilities = capabilities

    def apply(self, link: Any) -> None:
        terminus = link.source if link.is_receiver else link.target
        caps = terminus.capabilities
        caps.put_array(False, Data.SYMBOL)
        caps.enter()
        for capability in self.capabilities:
            caps.put_symbol(symbol(capability))
        caps.exit()


class _Collector(Handler):
    """Keeps every complete incoming transfer, unsettled, as (delivery, payload)."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[tuple[Delivery, bytes]] = []

    def on_delivery(self, event: Any) -> None:
        delivery = event.delivery
        link = event.link
        if not link.is_receiver or not delivery.readable or delivery.partial:
            return
        payload = link.recv(delivery.pending)
        link.advance()
        self.items.append((delivery, bytes(payload or b"")))


SETTLEMENTS = ("accept", "release", "modified-failed", "reject")


class RawClient:
    """One plain AMQP connection (SASL PLAIN with the broker's credentials).

    Not thread-safe; used by one check at a time. ``close()`` releases it.
    """

    def __init__(self, url: str, user: str | None, password: str | None, timeout: float = 10.0):
        options: dict[str, Any] = {}
        if user is not None:
            options.update(user=user, password=password or "", allowed_mechs="PLAIN")
        self._connection = BlockingConnection(url, timeout=timeout, **options)
        self._receivers: dict[tuple[str, str], tuple[Any, _Collector]] = {}
        self._senders: dict[tuple[str, str], Any] = {}

    def _receiver(self, address: str, kind: str) -> tuple[Any, _Collector]:
        key = (address, kind)
        found = self._receivers.get(key)
        if found is None:
            collector = _Collector()
            options: list[LinkOption] = [TerminusCapabilities(kind)] if kind else []
            receiver = self._connection.create_receiver(
                address, credit=0, handler=collector, options=options
            )
            found = (receiver, collector)
            self._receivers[key] = found
        return found

    def listen(self, address: str, kind: str = "topic") -> None:
        """Attach a receiver now (a topic subscription must exist before the send)."""
        self._receiver(address, kind)

    def receive(
        self,
        address: str,
        timeout: float = 5.0,
        *,
        kind: str = "queue",
        settle: str = "accept",
    ) -> RawMessage | None:
        """The next message on ``address`` (None after ``timeout`` s), settled as asked."""
        if settle not in SETTLEMENTS:
            raise ValueError(f"settle must be one of {SETTLEMENTS}")
        receiver, collector = self._receiver(address, kind)
        link = receiver.link
        if not collector.items and link.credit == 0:
            link.flow(1)
        try:
            self._connection.wait(lambda: bool(collector.items), timeout=timeout)
        except Exception:
            if not collector.items:
                return None
        delivery, payload = collector.items.pop(0)
        if settle == "accept":
            delivery.update(Delivery.ACCEPTED)
        elif settle == "release":
            delivery.update(Delivery.RELEASED)
        elif settle == "reject":
            delivery.update(Delivery.REJECTED)
        else:
            delivery.local.failed = True
            delivery.update(Delivery.MODIFIED)
        delivery.settle()
        self._pump()
        return parse_sections(payload)

    def send(self, address: str, message: Message, *, kind: str = "queue") -> None:
        """Send ``message`` and wait for the broker to accept it (links are kept open: some
        brokers answer a sender's detach slowly)."""
        key = (address, kind)
        sender = self._senders.get(key)
        if sender is None:
            links: list[LinkOption] = [TerminusCapabilities(kind)] if kind else []
            sender = self._connection.create_sender(address, options=links)
            self._senders[key] = sender
        sender.send(message)

    def target_capabilities(self, address: str, *, kind: str = "queue") -> tuple[str, ...]:
        """The capabilities the broker offers on the target of a sending link to ``address``
        (Broker-J offers DELAYED_DELIVERY there, not on the connection)."""
        key = (address, kind)
        sender = self._senders.get(key)
        if sender is None:
            links: list[LinkOption] = [TerminusCapabilities(kind)] if kind else []
            sender = self._senders[key] = self._connection.create_sender(address, options=links)
        target = sender.link.remote_target
        data = target.capabilities if target is not None else None
        if data is None:
            return ()
        data.rewind()
        value = data.get_object() if data.next() else None
        value = getattr(value, "elements", value)  # an AMQP array of symbols
        items = value if isinstance(value, (list, tuple)) else [] if value is None else [value]
        return tuple(str(item) for item in items)

    def _pump(self) -> None:
        """Let the connection write the dispositions just made."""
        try:
            self._connection.wait(lambda: False, timeout=0.05)
        except Exception:
            pass

    def close(self) -> None:
        # Closing the connection ends every link; waiting for each detach is not needed.
        connection = self._connection
        try:
            connection.close()
        except Exception:
            pass
