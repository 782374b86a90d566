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
import sys
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import IllegalArgumentException

# Larger than any maximum delay, and still finite after the collision-avoidance factor.
_HUGE = sys.float_info.max / 4

__all__ = [
    "AfterLastAttempt",
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

    @classmethod
    def create(cls, **settings: Any) -> RedeliveryPolicy:
        """Build a policy, raising IllegalArgumentException naming the bad setting."""
        try:
            return cls(**settings)
        except ValidationError as exc:
            problems = "; ".join(
                f"{err['loc'][0] if err['loc'] else '?'}={err.get('input')!r}: {err['msg']}"
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
