"""Numeric bounds shared by option validation and the API setters.

Every bound here comes from where the value ends up: an AMQP field's type (uint is 32 bits), a
Java ``long`` (the JMS API type of times and durations, and the AMQP timestamp's 64 bits) or
what Python can wait for (``threading.TIMEOUT_MAX`` seconds). Values past a bound used to be
accepted and fail later with a raw ``OverflowError``; the validators here refuse them where
they are given, naming the setting.
"""

from __future__ import annotations

from typing import Any

from .errors import JMSException

UINT_MAX = 2**32 - 1
"""AMQP ``uint`` (idle-time-out, max-frame-size, header.ttl)."""

JAVA_LONG_MAX = 2**63 - 1
JAVA_LONG_MIN = -(2**63)
"""JMS ``long`` values: times (ms since the epoch) and durations (ms)."""

JAVA_INT_MAX = 2**31 - 1
"""Socket buffer sizes and counts (a C ``int`` in setsockopt)."""

MAX_TIMEOUT_MS = 100 * 365 * 24 * 3600 * 1000
"""Longest timeout in ms (about 100 years): below ``threading.TIMEOUT_MAX`` (about 292 years
on 64-bit platforms), so a wait or a deadline of now + timeout never overflows."""

MIN_IDLE_TIMEOUT_MS = 1000
"""amqp.idleTimeout is 0 (off) or at least this: proton sends heartbeats at half the peer's
idle timeout, and below a second a busy engine thread misses them and drops the connection."""


MIN_REMOTE_IDLE_TIMEOUT_MS = 100
"""The smallest idle-time-out a peer may ask for: proton sends an empty frame every half of
it, and a hostile peer asking for 1 ms would have the client burn most of a core on them."""


def check_milliseconds(name: str, value: Any, maximum: int = JAVA_LONG_MAX) -> int:
    """A non-negative integer number of ms no larger than ``maximum``, else JMSException."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise JMSException(f"{name} must be an integer number of milliseconds, got {value!r}")
    if value < 0:
        raise JMSException(f"{name} must not be negative, got {value}")
    if value > maximum:
        raise JMSException(f"{name} {value} is too large: at most {maximum} ms")
    return value


def check_receive_timeout(value: Any) -> float | None:
    """A receive timeout (ms; None or 0 waits without limit) as seconds for the wait."""
    if value is None:
        return None
    if type(value) is int and 0 < value <= MAX_TIMEOUT_MS:  # the usual call, checked first
        return value / 1000.0
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise JMSException(f"receive timeout must be a number of milliseconds, got {value!r}")
    if value < 0:
        raise JMSException(f"receive timeout must not be negative, got {value}")
    if value > MAX_TIMEOUT_MS:
        raise JMSException(f"receive timeout {value} is too large: at most {MAX_TIMEOUT_MS} ms")
    return None if not value else value / 1000.0


def check_java_long(name: str, value: Any) -> int:
    """A JMS ``long`` header value (JMSTimestamp, JMSExpiration, JMSDeliveryTime)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise JMSException(f"{name} must be an integer (a Java long), got {value!r}")
    if not JAVA_LONG_MIN <= value <= JAVA_LONG_MAX:
        raise JMSException(
            f"{name} value {value} is out of range for a Java long "
            f"({JAVA_LONG_MIN}..{JAVA_LONG_MAX})"
        )
    return value


def saturating_add(timestamp: int, duration: int) -> int:
    """``timestamp + duration`` capped at the largest Java long (an expiry or delivery time
    beyond it means never; an AMQP timestamp cannot hold more)."""
    return min(timestamp + duration, JAVA_LONG_MAX)
