"""Every documented restriction on delivery delay, time to live, priority and delivery sequence,
each with a stable id, in one place.

The API objects call the small check functions below before anything is encoded or sent; the
tests and the conformance catalogue refer to the same ids and reuse the same wording
(:data:`RULES`). A violation is a :class:`~jmspy.errors.JMSException` carrying the rule id and
the IBM MQ reason code; the simplified API (``JMSProducer``/``JMSContext``) converts it to the
``JMSRuntimeException`` twin with :func:`jmspy.errors.to_runtime`, keeping both.

Sources: seed ``000_8fd7ab9f14639e21.txt`` (IBM MQ JMS 2.0 delivery delay, rules DD-1..DD-9),
seed ``004_ddaaa509fe240ec5.txt`` (delayed queues, DD-10..DD-13), seed
``003_518c6c1291a29a5f.txt`` (message delivery sequence) and JMS 2.0 section 3.4.10 (priority,
DD-14..DD-16).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from .errors import JMSException, ReasonCode

if TYPE_CHECKING:
    from .destination import Destination

Level = Literal["client", "wire", "broker"]

SEED_DELAY = "seed 000_8fd7ab9f14639e21.txt (IBM MQ: JMS 2.0 delivery delay)"
SEED_SEQUENCE = "seed 003_518c6c1291a29a5f.txt (IBM MQ: MsgDeliverySequence)"
SEED_DELAYED_QUEUES = "seed 004_ddaaa509fe240ec5.txt (delayed queues)"
JMS_PRIORITY = "JMS 2.0 section 3.4.10 (JMSPriority)"

# IBM MQ's property marking a retained publication, and the value that means "retain".
JMS_IBM_RETAIN = "JMS_IBM_Retain"
RETAIN_PUBLICATION = 1

# Clustered-destination bind options (IBM MQ DEFBIND) and topic delivery options ((N)PMSGDLV).
BIND_NOT_FIXED = "not_fixed"
BIND_ON_OPEN = "on_open"
BIND_ON_GROUP = "on_group"
DELIVER_ALL = "all"
DELIVER_ALL_DURABLE = "all_durable"
DELIVER_ALL_AVAILABLE = "all_available"


class Rule(BaseModel):
    """One documented restriction or mapping: the single source of its id and wording."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    text: str
    source: str
    level: Level
    reason: ReasonCode | None = None
    capabilities: tuple[str, ...] = ()


def _rules(*rules: Rule) -> dict[str, Rule]:
    return {rule.id: rule for rule in rules}


RULES: Mapping[str, Rule] = _rules(
    Rule(
        id="DD-1",
        title="Delivery delay needs a broker that supports delayed delivery",
        text="A non-zero delivery delay on a connection whose broker does not support delayed "
        "delivery raises MQRC_FUNCTION_NOT_SUPPORTED, at setDeliveryDelay when that is known "
        "and otherwise at send, before the transfer is written. A delay of 0 is always allowed.",
        source=SEED_DELAY,
        level="client",
        reason=ReasonCode.MQRC_FUNCTION_NOT_SUPPORTED,
    ),
    Rule(
        id="DD-2",
        title="Time to live must not be shorter than the delivery delay",
        text="Setting a time to live shorter than a non-zero delivery delay, or a delay longer "
        "than a non-zero time to live, raises MQRC_EXPIRY_ERROR at whichever of setTimeToLive, "
        "setDeliveryDelay or send completes the conflicting pair. Time to live 0 never "
        "conflicts.",
        source=SEED_DELAY,
        level="client",
        reason=ReasonCode.MQRC_EXPIRY_ERROR,
    ),
    Rule(
        id="DD-3",
        title="No delivery delay for retained publications",
        text="Sending with a non-zero delivery delay a message whose JMS_IBM_Retain property is "
        "RETAIN_PUBLICATION (1) raises MQRC_OPTIONS_ERROR.",
        source=SEED_DELAY,
        level="client",
        reason=ReasonCode.MQRC_OPTIONS_ERROR,
    ),
    Rule(
        id="DD-4",
        title="No delivery delay for grouped messages",
        text="Sending with a non-zero delivery delay a message that carries JMSXGroupID or "
        "JMSXGroupSeq raises MQRC_OPTIONS_ERROR.",
        source=SEED_DELAY,
        level="client",
        reason=ReasonCode.MQRC_OPTIONS_ERROR,
    ),
    Rule(
        id="DD-5",
        title="No delivery delay to clustered destinations bound on open or on group",
        text="Sending with a non-zero delivery delay to a destination declared clustered with a "
        "bind option other than not_fixed raises MQRC_OPTIONS_ERROR.",
        source=SEED_DELAY,
        level="client",
        reason=ReasonCode.MQRC_OPTIONS_ERROR,
    ),
    Rule(
        id="DD-6",
        title="Delayed publications need topics that deliver to all available subscribers",
        text="Publishing with a non-zero delivery delay is allowed only when the topic's "
        "delivery option for the message's persistence is all_available; otherwise "
        "MQRC_PUBLICATION_FAILURE. The adapter supplies the defaults (IBM MQ's for ibmmq, none "
        "elsewhere).",
        source=SEED_DELAY,
        level="client",
        reason=ReasonCode.MQRC_PUBLICATION_FAILURE,
    ),
    Rule(
        id="DD-7",
        title="Delivery delay preserves the expiry interval",
        text="JMSExpiration is the send time plus the time to live (not the delivery time plus "
        "it) and JMSDeliveryTime is the send time plus the delay; both are set on the message by "
        "send. A message whose expiry passes while it is delayed is never delivered.",
        source=SEED_DELAY,
        level="broker",
        capabilities=("DELAYED_DELIVERY",),
    ),
    Rule(
        id="DD-8",
        title="Delayed messages sent in a transaction wait for the commit",
        text="A delayed message sent in a transaction is not visible before the commit; its "
        "JMSDeliveryTime still counts from the send call.",
        source=SEED_DELAY,
        level="broker",
        capabilities=("DELAYED_DELIVERY", "amqp:local-transactions"),
    ),
    Rule(
        id="DD-9",
        title="A failed delayed send says which destination and why",
        text="A send with a delivery delay that the broker refuses (destination full, not "
        "authorized, not found) raises a JMSException subclass naming the destination and the "
        "reason; nothing is retried silently.",
        source=SEED_DELAY,
        level="wire",
    ),
    Rule(
        id="DD-10",
        title="A queue's default delivery delay applies to messages without their own",
        text="A message sent with no delay of its own (producer delay 0) to a destination with "
        "a default delivery delay gets that delay; a producer or per-send delay overrides it.",
        source=SEED_DELAYED_QUEUES,
        level="client",
    ),
    Rule(
        id="DD-11",
        title="Delivery delay must not exceed the configured maximum",
        text="A delivery delay larger than the maximum configured on the factory "
        "(jmspy.maxDeliveryDelay) or on the destination raises MQRC_OPTIONS_ERROR at the setter "
        "or send that introduces it. Default: no maximum (the seed's system uses 900 s).",
        source=SEED_DELAYED_QUEUES,
        level="client",
        reason=ReasonCode.MQRC_OPTIONS_ERROR,
    ),
    Rule(
        id="DD-12",
        title="No silent loss: time to live shorter than the effective delay is an error",
        text="A time to live shorter than the effective delay, including a destination's "
        "default delay, raises DD-2's MQRC_EXPIRY_ERROR at send, so a message can never expire "
        "unclaimed while it is delayed.",
        source=SEED_DELAYED_QUEUES,
        level="client",
        reason=ReasonCode.MQRC_EXPIRY_ERROR,
    ),
    Rule(
        id="DD-13",
        title="Delay 0 costs nothing",
        text="With a delivery delay of 0 the send path adds no annotation and no measurable work.",
        source=SEED_DELAYED_QUEUES,
        level="wire",
    ),
    Rule(
        id="DD-14",
        title="Priority is 0..9",
        text="Priority must be 0..9 (default 4); anything else raises JMSException at the setter "
        "and at send. JMSPriority maps to header.priority.",
        source=JMS_PRIORITY,
        level="client",
    ),
    Rule(
        id="DD-15",
        title="Delivery sequence: FIFO or priority",
        text="A destination or consumer may choose delivery sequence fifo or priority. With "
        "priority the consumer returns the highest-priority message it holds locally, FIFO "
        "within a priority; with fifo, arrival order.",
        source=SEED_SEQUENCE,
        level="client",
    ),
    Rule(
        id="DD-16",
        title="A destination may define the default priority",
        text="A destination may define a default priority used when the producer's priority is "
        "left at its default.",
        source=SEED_SEQUENCE,
        level="client",
    ),
)


def violation(rule_id: str, detail: str) -> JMSException:
    """The exception for a broken rule: the rule's reason code and id, and a message naming
    the values involved."""
    rule = RULES[rule_id]
    reason = rule.reason
    prefix = f"{reason.name} ({int(reason)})" if reason is not None else "JMSException"
    return JMSException(
        f"{prefix}: {detail} [rule {rule_id}: {rule.title}]",
        reason_code=reason,
        rule_id=rule_id,
    )


# ---- checks (pure functions; each raises the rule's exception or returns) ----------------


def check_delay_supported(delay: int, supported: bool | None, broker: str) -> None:
    """DD-1. ``supported`` is None while unknown (the connection is not open yet)."""
    if delay > 0 and supported is False:
        raise violation(
            "DD-1",
            f"delivery delay {delay} ms requested but the broker ({broker}) does not support "
            "delayed delivery (it offers no DELAYED_DELIVERY capability)",
        )


def check_ttl_and_delay(time_to_live: int, delay: int, *, where: str) -> None:
    """DD-2 (and DD-12 when ``delay`` includes a destination's default)."""
    if delay > 0 and time_to_live > 0 and time_to_live < delay:
        raise violation(
            "DD-2",
            f"time to live {time_to_live} ms is shorter than the delivery delay {delay} ms "
            f"(checked at {where}); the message would expire before it could be delivered",
        )


def check_max_delay(delay: int, maximum: int | None, *, what: str) -> None:
    """DD-11."""
    if maximum is not None and delay > maximum:
        raise violation(
            "DD-11",
            f"delivery delay {delay} ms exceeds the maximum of {maximum} ms set on {what}",
        )


def check_priority(priority: Any) -> int:
    """DD-14: 0..9 (the message names the value, as Qpid JMS's does)."""
    if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 9:
        raise violation("DD-14", f"Priority value given {priority!r} is out of range (0..9)")
    return priority


def check_message_for_delay(delay: int, message: Any) -> None:
    """DD-3 (retained publication) and DD-4 (grouping) on the message being sent."""
    if delay <= 0:
        return
    if message.propertyExists(JMS_IBM_RETAIN):
        try:
            retain = message.getIntProperty(JMS_IBM_RETAIN)
        except Exception:
            retain = None
        if retain == RETAIN_PUBLICATION:
            raise violation(
                "DD-3",
                f"message marked retained ({JMS_IBM_RETAIN}={RETAIN_PUBLICATION}) cannot be sent "
                f"with delivery delay {delay} ms",
            )
    group_id = message._group_id
    group_seq = message._group_seq
    if group_id is not None or group_seq is not None:
        raise violation(
            "DD-4",
            f"message in group JMSXGroupID={group_id!r} JMSXGroupSeq={group_seq!r} cannot be "
            f"sent with delivery delay {delay} ms",
        )


def check_destination_for_delay(
    delay: int,
    destination: Destination,
    persistent: bool,
    publication_defaults: Mapping[str, str | None],
) -> None:
    """DD-5 (clustered bind option) and DD-6 (topic delivery option)."""
    if delay <= 0:
        return
    options = destination.options
    bind = options.cluster_bind
    if bind is not None and bind != BIND_NOT_FIXED:
        raise violation(
            "DD-5",
            f"destination {destination} is clustered with bind option {bind!r}; delivery delay "
            f"{delay} ms needs {BIND_NOT_FIXED!r}",
        )
    if destination.is_topic:
        key = "persistent" if persistent else "non_persistent"
        option = (
            options.persistent_delivery if persistent else options.non_persistent_delivery
        ) or publication_defaults.get(key)
        if option is not None and option != DELIVER_ALL_AVAILABLE:
            kind = "persistent" if persistent else "non-persistent"
            raise violation(
                "DD-6",
                f"topic {destination} delivers {kind} publications with option {option!r}; a "
                f"publication with delivery delay {delay} ms needs {DELIVER_ALL_AVAILABLE!r}",
            )


def effective_delay(producer_delay: int, destination: Destination) -> int:
    """DD-10: the producer's (or per-send) delay, else the destination's default delay."""
    if producer_delay > 0:
        return producer_delay
    return destination.options.default_delivery_delay
