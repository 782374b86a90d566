"""RedeliveryPolicy and the delay formula of Artemis's redelivery documentation (no broker)."""

from __future__ import annotations

import pytest

import jmspy
from jmspy.redelivery import DefaultRandom, RedeliveryPolicy, redelivery_delay


class ScriptedRandom:
    """Plays back the java.util.Random draws of Artemis's example: (sign, fraction) pairs."""

    def __init__(self, draws: list[tuple[bool, float]]) -> None:
        self._draws = list(draws)
        self._pending_double: float | None = None

    def next_boolean(self) -> bool:
        positive, fraction = self._draws.pop(0)
        self._pending_double = fraction
        return positive

    def next_double(self) -> float:
        assert self._pending_double is not None
        value, self._pending_double = self._pending_double, None
        return value


def test_artemis_example_multiplier_and_maximum() -> None:
    policy = RedeliveryPolicy.create(
        redelivery_delay=5000, redelivery_delay_multiplier=2, max_redelivery_delay=15000
    )
    assert [redelivery_delay(policy, n) for n in (1, 2, 3)] == [5000, 10000, 15000]


def test_artemis_example_collision_avoidance() -> None:
    policy = RedeliveryPolicy.create(
        redelivery_delay=1000,
        redelivery_delay_multiplier=1,
        max_redelivery_delay=15000,
        collision_avoidance_factor=0.5,
    )
    draws = ScriptedRandom([(False, 0.25), (True, 0.75), (False, 0.05)])
    assert [redelivery_delay(policy, n, draws) for n in (1, 2, 3)] == [875, 1375, 975]


def test_defaults_are_artemis() -> None:
    policy = RedeliveryPolicy()
    assert policy.redelivery_delay == 0
    assert policy.redelivery_delay_multiplier == 1.0
    assert policy.collision_avoidance_factor == 0.0
    assert policy.max_delivery_attempts is None  # not set: the broker's limit applies
    assert policy.after_last_attempt == "dead-letter"
    assert redelivery_delay(policy, 1) == 0
    assert RedeliveryPolicy.create(redelivery_delay=700).effective_max_redelivery_delay == 7000


def test_maximum_caps_growth() -> None:
    policy = RedeliveryPolicy.create(redelivery_delay=100, redelivery_delay_multiplier=3)
    assert [redelivery_delay(policy, n) for n in range(1, 5)] == [100, 300, 900, 1000]


def test_random_variance_stays_within_the_factor() -> None:
    policy = RedeliveryPolicy.create(redelivery_delay=1000, collision_avoidance_factor=0.2)
    source = DefaultRandom(seed=7)
    delays = [redelivery_delay(policy, 1, source) for _ in range(500)]
    assert min(delays) >= 800 and max(delays) <= 1200
    assert len(set(delays)) > 50


@pytest.mark.parametrize(
    ("setting", "value", "named"),
    [
        ("collision_avoidance_factor", 1.5, "1.5"),
        ("collision_avoidance_factor", -0.1, "-0.1"),
        ("redelivery_delay", -1, "-1"),
        ("redelivery_delay_multiplier", 0, "0"),
        ("max_redelivery_delay", -5, "-5"),
        ("max_delivery_attempts", 0, "0"),
        ("max_delivery_attempts", -2, "-2"),
        ("after_last_attempt", "explode", "explode"),
    ],
)
def test_every_setting_is_validated(setting: str, value: object, named: str) -> None:
    with pytest.raises(jmspy.IllegalArgumentException) as info:
        RedeliveryPolicy.create(**{setting: value})
    assert setting in str(info.value) and named in str(info.value)


def test_limit_semantics() -> None:
    assert not RedeliveryPolicy().exceeded(1000)
    assert not RedeliveryPolicy.create(max_delivery_attempts=-1).exceeded(1000)
    three = RedeliveryPolicy.create(max_delivery_attempts=3)
    assert [three.exceeded(n) for n in (1, 2, 3, 4)] == [False, False, False, True]


def test_factory_url_options() -> None:
    factory = jmspy.ConnectionFactory(
        "amqp://localhost:5672?jms.redeliveryPolicy.maxRedeliveries=4"
        "&jmspy.redeliveryPolicy.redeliveryDelay=250"
        "&jmspy.redeliveryPolicy.redeliveryDelayMultiplier=2.0"
        "&jmspy.redeliveryPolicy.collisionAvoidanceFactor=0.1"
    )
    policy = factory.options.redelivery_policy()
    assert policy.max_delivery_attempts == 5  # 4 redeliveries + the first delivery
    assert policy.redelivery_delay == 250
    assert policy.redelivery_delay_multiplier == 2.0
    assert policy.collision_avoidance_factor == 0.1
    with pytest.raises(jmspy.IllegalArgumentException) as info:
        jmspy.ConnectionFactory("amqp://h:1", collision_avoidance_factor=2.0)
    assert "2.0" in str(info.value)


@pytest.mark.parametrize("redelivery", [1026, 5000, 10**6])
@pytest.mark.parametrize("draw", [(False, 0.9), (True, 0.9)])
def test_a_very_high_redelivery_count_gets_the_maximum_delay(
    redelivery: int, draw: tuple[bool, float]
) -> None:
    """2 ** 1025 is past a float's range: the power raised OverflowError out of the listener's
    failure handling, and the message was never settled."""
    policy = RedeliveryPolicy.create(
        redelivery_delay=1000,
        redelivery_delay_multiplier=2,
        max_redelivery_delay=60000,
        collision_avoidance_factor=0.5,
    )
    assert redelivery_delay(policy, redelivery, ScriptedRandom([draw])) == 60000
