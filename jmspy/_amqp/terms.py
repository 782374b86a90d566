"""The AMQP vocabulary the provider speaks: capabilities, filters, transaction codes and
outcomes, the error-condition mapping Qpid JMS uses, and the two records the JMS layer exchanges
with the provider (:class:`LinkSpec`, what a link is asked for; :class:`InboundDelivery`, a
received transfer)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from proton import (
    Array,
    Condition,
    Data,
    symbol,
)

from ..adapters.base import DELAYED_DELIVERY
from ..errors import (
    InvalidClientIDException,
    InvalidDestinationException,
    JMSException,
    JMSSecurityException,
    ResourceAllocationException,
    TransactionRolledBackException,
)
from .dispatch_probe import PROBE_MS_KEY
from .redact import peer_text

if TYPE_CHECKING:
    from .proton_internals import DeliveryHandle
    from .receiver import AmqpReceiver

# Connection capabilities (Qpid JMS asks for the same four).
SOLE_CONNECTION = "sole-connection-for-container"
# DELAYED_DELIVERY is imported: defined once, with the broker profiles that also look for it.
ANONYMOUS_RELAY = "ANONYMOUS-RELAY"
SHARED_SUBS = "SHARED-SUBS"
DESIRED_CAPABILITIES = (SOLE_CONNECTION, DELAYED_DELIVERY, ANONYMOUS_RELAY, SHARED_SUBS)

# Source filters in the form Qpid JMS sends them (Artemis also accepts the symbolic descriptors).
JMS_SELECTOR_KEY = "jms-selector"
JMS_SELECTOR_CODE = 0x0000468C00000004
NO_LOCAL_KEY = "no-local"
NO_LOCAL_CODE = 0x0000468C00000003

# Transactions (AMQP 1.0 part 4): descriptor codes of the control messages and states.
TRANSACTIONAL_STATE = 0x34
DECLARED_CODE = 0x33
ACCEPTED_CODE = 0x24
REJECTED_CODE = 0x25
DECLARE = symbol("amqp:declare:list")
DISCHARGE = symbol("amqp:discharge:list")
LOCAL_TRANSACTIONS = "amqp:local-transactions"


def _transactional_outcome(data: Any) -> int | None:
    """The outcome code inside a remote transactional-state [txn-id, outcome]."""
    try:
        outcome = data[1]
        return int(outcome.descriptor)
    except (TypeError, IndexError, AttributeError, ValueError):
        return None


OUTCOMES = ("amqp:accepted:list", "amqp:rejected:list", "amqp:released:list", "amqp:modified:list")

CONNECTION_ESTABLISHMENT_FAILED = "amqp:connection-establishment-failed"
INVALID_FIELD = "invalid-field"


def error_for_condition(
    condition: Condition | None, default: type[JMSException], context: str
) -> JMSException:
    """Map an AMQP error condition to the JMS exception Qpid JMS raises for it."""
    if condition is None:
        return default(f"{context}: closed by the remote peer without an error")
    name = str(condition.name)
    # The peer's text, escaped: the exception's message ends up in log lines.
    description = peer_text(condition.description or "")
    text = f"{context}: {peer_text(name)}" + (f" ({description})" if description else "")
    exc_type: type[JMSException] = default
    if name == "amqp:unauthorized-access":
        exc_type = JMSSecurityException
    elif name == "amqp:resource-limit-exceeded":
        exc_type = ResourceAllocationException
    elif name == "amqp:not-found":
        exc_type = InvalidDestinationException
    elif name == "amqp:transaction:rollback":
        exc_type = TransactionRolledBackException
    elif name == "amqp:invalid-field":
        info: Any = condition.info or {}
        if str(info.get(symbol(INVALID_FIELD), info.get(INVALID_FIELD, ""))) == "container-id":
            exc_type = InvalidClientIDException
    return exc_type(text, name)


def _symbol_array(values: list[str] | tuple[str, ...]) -> Array:
    return Array(Data.NULL, Data.SYMBOL, *[symbol(v) for v in values])


def _put_symbols(data: Data, values: list[str] | tuple[str, ...]) -> None:
    data.put_array(False, Data.SYMBOL)
    data.enter()
    for value in values:
        data.put_symbol(symbol(value))
    data.exit()


def _symbols_of(value: Any) -> set[str]:
    if not value:
        return set()
    if isinstance(value, str):
        return {str(value)}
    return {str(v) for v in value}


@dataclass(slots=True, eq=False)
class InboundDelivery:
    """A transfer received on a consumer link, handed to the JMS layer with its decoded message.

    ``delivery`` holds the proton delivery (``delivery.wrap()`` gives proton's wrapper): only
    the engine thread may touch it.
    """

    delivery: DeliveryHandle
    message: Any
    receiver: AmqpReceiver
    settled: bool = False
    # time.monotonic() when the transfer arrived (batch listeners time their batches from it).
    arrived: float = 0.0
    # The connection epoch it arrived in: after a reconnect it can no longer be settled.
    epoch: int = 0


@dataclass
class LinkSpec:
    """What the JMS layer asks for when it opens a link."""

    name: str
    address: str | None
    capabilities: tuple[str, ...] = ()
    selector: str | None = None
    no_local: bool = False
    durable: bool = False
    distribution_copy: bool = False
    dynamic: bool = False
    # Attach with a null source: look up an existing durable subscription by link name (used
    # to unsubscribe), as Qpid JMS does.
    lookup: bool = False
    # Presettled deliveries (queue browsers: nothing to acknowledge).
    presettled: bool = False
    # A non-durable link that must survive a detach (durable subscriptions are detached on
    # close, never closed, so the broker keeps them).
    extra: dict[str, Any] = field(default_factory=dict)


def link_profile(profile: Any) -> dict[str, Any]:
    """The broker-profile facts a consumer link needs (LinkSpec.extra)."""
    return {
        "modified_outcome": profile.modified_outcome,
        "drain": profile.drain,
        PROBE_MS_KEY: profile.stalled_dispatch_probe_ms,
    }
