"""The settings of a producer (JMS 2.0 sections 7.2 and 7.3), kept once.

A classic ``MessageProducer`` and a simplified-API ``JMSProducer`` have the same settings with
the same validation; each holds one :class:`ProducerSettings` and delegates to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import rules
from ._limits import check_milliseconds
from .errors import JMSException
from .message import DeliveryMode

if TYPE_CHECKING:
    from .destination import Destination

__all__ = [
    "DEFAULT_PRIORITY",
    "ProducerSettings",
    "validate_delivery_mode",
    "validate_priority",
    "validate_milliseconds",
]


DEFAULT_PRIORITY = 4
_VALID_MODES = (DeliveryMode.NON_PERSISTENT, DeliveryMode.PERSISTENT)


def validate_delivery_mode(mode: Any) -> int:
    if type(mode) is not int or mode not in _VALID_MODES:  # not a bool, a float, a str
        raise JMSException(
            f"Invalid DeliveryMode specified: {mode!r} (use DeliveryMode.PERSISTENT (2) or "
            "DeliveryMode.NON_PERSISTENT (1)) [rule JMS-34]"
        )
    return int(mode)


def validate_priority(priority: Any) -> int:
    return rules.check_priority(priority)


def validate_milliseconds(name: str, value: Any) -> int:
    # A JMS long: anything larger cannot be added to a timestamp for JMSExpiration or
    # JMSDeliveryTime (it used to fail at send with "int too big to convert").
    return check_milliseconds(name, value)


@dataclass
class ProducerSettings:
    """Delivery mode, priority, time to live, delivery delay and the two disable flags."""

    delivery_mode: int = DeliveryMode.PERSISTENT
    priority: int = DEFAULT_PRIORITY
    # DD-16: a destination's default priority replaces the producer's default only while the
    # application has not chosen one.
    priority_explicit: bool = False
    time_to_live: int = 0
    delivery_delay: int = 0
    disable_message_id: bool = False
    disable_timestamp: bool = False

    def set_delivery_mode(self, mode: Any) -> None:
        self.delivery_mode = validate_delivery_mode(mode)

    def set_priority(self, priority: Any) -> None:
        self.priority = validate_priority(priority)
        self.priority_explicit = True

    def set_time_to_live(self, time_to_live: Any) -> None:
        ttl = validate_milliseconds("timeToLive", time_to_live)
        rules.check_ttl_and_delay(ttl, self.delivery_delay, where="setTimeToLive")
        self.time_to_live = ttl

    def set_delivery_delay(self, delay: int) -> None:
        """``delay`` is validated by the caller, which checks it against the broker first."""
        rules.check_ttl_and_delay(self.time_to_live, delay, where="setDeliveryDelay")
        self.delivery_delay = delay

    def priority_for(self, destination: Destination) -> int:
        """The priority a send to ``destination`` uses (DD-16)."""
        default_priority = destination.options.default_priority
        if not self.priority_explicit and default_priority is not None:
            return default_priority
        return self.priority
