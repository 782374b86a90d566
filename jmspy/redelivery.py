"""Redelivery policy: delayed redelivery and a delivery-attempt limit, with the semantics of
Apache ActiveMQ Artemis (its documentation's "Message Redelivery and Undelivered
Messages").

The delay before the n-th redelivery is computed by one pure function,
:func:`redelivery_delay`, with an injectable random source so the worked examples of Artemis's
documentation can be reproduced exactly::

    delay = redelivery_delay * multiplier ** (n - 1)
    delay += delay * (±collision_avoidance_factor * random[0, 1))    # sign chosen at random
    delay = min(delay, max_redelivery_delay)
"""

from __future__ import annotations

import random as _random
import re
import sys
from typing import Annotated, Any, Literal, Protocol

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from .errors import IllegalArgumentException

# Larger than any maximum delay, and still finite after the collision-avoidance factor.
_HUGE = sys.float_info.max / 4

__all__ = [
    "AfterLastAttempt",
    "REDELIVERY_OUTCOMES",
    "RedeliveryOutcome",
    "parse_redelivery_outcome",
    "RandomSource",
    "DefaultRandom",
    "RedeliveryPolicy",
    "redelivery_delay",
]


# dead-letter: to where the broker keeps dead letters (its dead-letter outcome; where the
#   broker would drop the message instead, RabbitMQ 3.x, jmspy forwards it to a dead-letter
#   queue itself, see jmspy.dead_letter); reject: the broker's dead-letter outcome only, for a
#   queue whose own dead-letter routing is wanted (a RabbitMQ dead-letter exchange);
#   discard: accept it and drop it (explicit only).
AfterLastAttempt = Literal["dead-letter", "reject", "discard"]

# Qpid JMS's redelivery outcomes (JmsDefaultRedeliveryPolicy's OUTCOME; jms.redeliveryPolicy.
# outcome): the disposition a message over the limit is settled with, chosen by the application
# instead of the adapter's dead-letter outcome.
RedeliveryOutcome = Literal[
    "ACCEPTED", "REJECTED", "RELEASED", "MODIFIED_FAILED", "MODIFIED_FAILED_UNDELIVERABLE"
]

#: Each outcome's number, as Qpid JMS numbers them (JmsMessageSupport's ACCEPTED = 1 ...
#: MODIFIED_FAILED_UNDELIVERABLE = 5); a URL may give either.
REDELIVERY_OUTCOMES: dict[RedeliveryOutcome, int] = {
    "ACCEPTED": 1,
    "REJECTED": 2,
    "RELEASED": 3,
    "MODIFIED_FAILED": 4,
    "MODIFIED_FAILED_UNDELIVERABLE": 5,
}
_OUTCOME_BY_NUMBER = {number: name for name, number in REDELIVERY_OUTCOMES.items()}
# Integer.parseInt's form: a sign and digits, nothing else (Python's int() also takes spaces
# and "_", which Qpid JMS refuses). ASCII digits only: the other digits Java reads are refused
# here, an error rather than a different reading.
_JAVA_INT = re.compile(r"[+-]?[0-9]+")


def parse_redelivery_outcome(value: Any) -> Any:
    """A redelivery outcome as Qpid JMS's ``setOutcome`` reads it: a name in any case
    (``OUTCOME.valueOf(text.toUpperCase())``) or its number, as an int or as text
    (``Integer.parseInt``); anything else is a ValueError listing what is accepted. ``None``
    (not set) passes."""
    if value is None:
        return None
    if isinstance(value, str):
        # ASCII letters only: beyond them Java's toUpperCase depends on the JVM's locale, and
        # str.upper() would fold "ı" and "ſ" into "I" and "S" (no name is meant that way).
        name = value.upper() if value.isascii() else value
        if name in REDELIVERY_OUTCOMES:
            return name
        if _JAVA_INT.fullmatch(value):
            value = int(value)
    # bool is an int to Python; True is no outcome number.
    if isinstance(value, int) and not isinstance(value, bool) and value in _OUTCOME_BY_NUMBER:
        return _OUTCOME_BY_NUMBER[value]
    raise ValueError(
        "must be ACCEPTED, REJECTED, RELEASED, MODIFIED_FAILED or "
        "MODIFIED_FAILED_UNDELIVERABLE (in any case), or their numbers 1 to 5 in that order"
    )


class RandomSource(Protocol):
    """What the collision-avoidance variance needs (java.util.Random's two calls)."""

    def next_boolean(self) -> bool:
        """A uniformly random boolean (``java.util.Random.nextBoolean``)."""

    def next_double(self) -> float:
        """A uniformly random float in [0.0, 1.0) (``java.util.Random.nextDouble``)."""


class DefaultRandom:
    """The :class:`RandomSource` used unless one is given: Python's seedable ``random.Random``."""

    def __init__(self, seed: int | None = None) -> None:
        self._random = _random.Random(seed)

    def next_boolean(self) -> bool:
        """True or false with equal probability."""
        return self._random.random() < 0.5

    def next_double(self) -> float:
        """A uniformly random float in [0.0, 1.0)."""
        return self._random.random()


class RedeliveryPolicy(BaseModel):
    """How failed deliveries are retried and when they give up.

    ``max_delivery_attempts`` counts every delivery including the first (Artemis's
    ``max-delivery-attempts``; -1 = unlimited). ``None`` means "not set": the client then adds
    no limit of its own and the broker's settings decide (docs/redelivery.md, per broker),
    so a client-side limit never loses a message unless the application asks for one.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    redelivery_delay: int = Field(0, ge=0, alias="redeliveryDelay")
    redelivery_delay_multiplier: float = Field(1.0, gt=0, alias="redeliveryDelayMultiplier")
    max_redelivery_delay: int | None = Field(None, ge=0, alias="maxRedeliveryDelay")
    collision_avoidance_factor: float = Field(0.0, alias="collisionAvoidanceFactor")
    max_delivery_attempts: int | None = Field(None, alias="maxDeliveryAttempts")
    after_last_attempt: AfterLastAttempt = Field("dead-letter", alias="afterLastAttempt")
    # The queue jmspy forwards dead letters to where it does so itself (None: the adapter's).
    dead_letter_queue: str | None = Field(None, alias="deadLetterQueue", min_length=1)
    # Qpid JMS's jms.redeliveryPolicy.outcome: the disposition a message over the limit is
    # settled with. None (not set): what after_last_attempt and the adapter say, as before the
    # option existed (Qpid JMS's own default, MODIFIED_FAILED_UNDELIVERABLE, would change the
    # outcome every adapter documents).
    outcome: Annotated[RedeliveryOutcome, BeforeValidator(parse_redelivery_outcome)] | None = None

    @field_validator("collision_avoidance_factor")
    @classmethod
    def _factor_in_range(cls, value: float) -> float:
        if not 0.0 <= value <= 1.0:
            raise ValueError(
                f"collision avoidance factor {value} is outside 0.0..1.0 (as in Artemis, it must "
                "be between 0.0 and 1.0)"
            )
        return value

    @field_validator("max_delivery_attempts")
    @classmethod
    def _attempts_valid(cls, value: int | None) -> int | None:
        if value is not None and value != -1 and value < 1:
            raise ValueError(f"max delivery attempts {value} must be -1 (unlimited) or >= 1")
        return value

    @model_validator(mode="after")
    def _one_choice_after_the_last_attempt(self) -> RedeliveryPolicy:
        # Both say what becomes of a message over the limit, and most pairs contradict each
        # other (discard and REJECTED, or dead-letter, which on RabbitMQ 3.x is a forward,
        # and RELEASED): refused rather than one silently ignored.
        if self.outcome is not None and "after_last_attempt" in self.model_fields_set:
            raise ValueError(
                "afterLastAttempt and outcome both say what happens after the last attempt; "
                "set only one"
            )
        return self

    @classmethod
    def create(cls, **settings: Any) -> RedeliveryPolicy:
        """Build a policy, raising IllegalArgumentException naming the bad setting."""
        try:
            return cls(**settings)
        except ValidationError as exc:
            # An error of the whole policy (no setting to name) is its message alone: its
            # input is every setting.
            problems = "; ".join(
                f"{err['loc'][0]}={err.get('input')!r}: {err['msg']}"
                if err["loc"]
                else err["msg"].removeprefix("Value error, ")
                for err in exc.errors()
            )
            raise IllegalArgumentException(f"invalid redelivery policy: {problems}") from None

    @property
    def effective_max_redelivery_delay(self) -> int:
        """Artemis's default: redelivery delay x 10."""
        if self.max_redelivery_delay is not None:
            return self.max_redelivery_delay
        return self.redelivery_delay * 10

    @property
    def limited(self) -> bool:
        """Whether the policy sets an attempt limit.

        True unless ``max_delivery_attempts`` is None (not set) or -1 (unlimited).
        """
        return self.max_delivery_attempts is not None and self.max_delivery_attempts != -1

    def exceeded(self, delivery_count: int) -> bool:
        """True when a delivery with this JMSXDeliveryCount is over the attempt limit."""
        return self.limited and delivery_count > self.max_delivery_attempts  # type: ignore[operator]

    def merged(self, **overrides: Any) -> RedeliveryPolicy:
        """A copy of this policy with the given settings replaced (None values are ignored).

        Raises IllegalArgumentException naming a bad setting (rule RD-6).
        """
        values = self.model_dump(exclude_unset=True)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return RedeliveryPolicy.create(**values)


def redelivery_delay(
    policy: RedeliveryPolicy, redelivery: int, random: RandomSource | None = None
) -> int:
    """Milliseconds to wait before the ``redelivery``-th redelivery (1 = after the first failed
    attempt). Pure apart from the random source; Artemis's formula exactly."""
    if redelivery < 1:
        raise ValueError(f"redelivery number must be >= 1, got {redelivery}")
    base = policy.redelivery_delay
    if base <= 0:
        return 0
    try:
        growth = policy.redelivery_delay_multiplier ** (redelivery - 1)
    except OverflowError:  # a float power past 1.8e308 (multiplier 2 at about 1,026 redeliveries)
        growth = _HUGE
    # Kept finite: an infinite delay turns into NaN with a negative collision-avoidance draw.
    # The cap below takes it back to the maximum delay either way.
    delay = min(base * growth, _HUGE)
    factor = policy.collision_avoidance_factor
    if factor > 0:
        source = random or DefaultRandom()
        signed = factor if source.next_boolean() else -factor
        delay += delay * (signed * source.next_double())
    return int(min(delay, policy.effective_max_redelivery_delay))
