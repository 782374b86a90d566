"""The checks of the documented restrictions on delivery delay, time to live, priority and
delivery sequence: small pure functions, each named after the rule ids it enforces.

The API objects call them before anything is encoded or sent; the tests and the conformance
catalogue refer to the same ids and reuse the same wording (:data:`RULES`, the catalogue in
:mod:`jmspy._catalogue`, re-exported here with the rest of its names so ``jmspy.rules``
stays the one place to import them from). A violation is a :class:`~jmspy.errors.JMSException`
carrying the rule id and the IBM MQ reason code; the simplified API
(``JMSProducer``/``JMSContext``) converts it to the ``JMSRuntimeException`` twin with
:func:`jmspy.errors.to_runtime`, keeping both.

Sources: the IBM MQ documentation on JMS 2.0 delivery delay (DD-1..DD-9), the OpenStack Zaqar
specification of delayed queues (DD-10..DD-13), IBM MQ's MsgDeliverySequence queue attribute
(delivery sequence) and JMS 2.0 section 3.4.10 (priority, DD-14..DD-16).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._catalogue import (
    AMQP_MAPPING,
    ARTEMIS_REDELIVERY,
    IBM_MQ_DELIVERY_DELAY,
    IBM_MQ_DELIVERY_SEQUENCE,
    JMS_PRIORITY,
    JMS_SPEC_36,
    README_BATCH,
    README_REDELIVERY,
    RULES,
    SECURITY,
    ZAQAR_DELAYED_QUEUES,
    Level,
    Rule,
)
from .errors import JMSException

if TYPE_CHECKING:
    from .destination import Destination

__all__ = [
    "AMQP_MAPPING",
    "ARTEMIS_REDELIVERY",
    "BIND_NOT_FIXED",
    "BIND_ON_GROUP",
    "BIND_ON_OPEN",
    "DELIVER_ALL",
    "DELIVER_ALL_AVAILABLE",
    "DELIVER_ALL_DURABLE",
    "IBM_MQ_DELIVERY_DELAY",
    "IBM_MQ_DELIVERY_SEQUENCE",
    "JMS_IBM_RETAIN",
    "JMS_PRIORITY",
    "JMS_SPEC_36",
    "README_BATCH",
    "README_REDELIVERY",
    "RETAIN_PUBLICATION",
    "RULES",
    "SECURITY",
    "ZAQAR_DELAYED_QUEUES",
    "Level",
    "Rule",
    "check_delay_supported",
    "check_destination_for_delay",
    "check_max_delay",
    "check_message_for_delay",
    "check_priority",
    "check_ttl_and_delay",
    "effective_delay",
    "violation",
]

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
    group_id = message.get_group_id()
    group_seq = message.get_group_seq()
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
