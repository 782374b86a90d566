"""jms.redeliveryPolicy.outcome read as Qpid JMS reads it (JmsDefaultRedeliveryPolicy.setOutcome:
``OUTCOME.valueOf(text.toUpperCase())``, else ``Integer.parseInt`` mapped 1..5), carried into
the RedeliveryPolicy, and refused with the option and the value named otherwise (no broker)."""

from __future__ import annotations

from typing import Any

import pytest

import jmspy
from jmspy.options import build_options
from jmspy.redelivery import REDELIVERY_OUTCOMES, RedeliveryPolicy

OPTION = "jms.redeliveryPolicy.outcome"

# JmsMessageSupport's numbers, spelled out here rather than read from jmspy.
QPID_JMS_NUMBERS = {
    "ACCEPTED": 1,
    "REJECTED": 2,
    "RELEASED": 3,
    "MODIFIED_FAILED": 4,
    "MODIFIED_FAILED_UNDELIVERABLE": 5,
}


def _outcome(**query: str) -> str | None:
    return build_options(query, {}).redelivery_policy().outcome


def test_the_numbers_are_qpid_jms_numbers() -> None:
    assert REDELIVERY_OUTCOMES == QPID_JMS_NUMBERS


@pytest.mark.parametrize("name", list(QPID_JMS_NUMBERS))
@pytest.mark.parametrize(
    "spell", [str, str.lower, lambda n: n.capitalize(), lambda n: n.swapcase().title()]
)
def test_names_in_any_case(name: str, spell: Any) -> None:
    assert _outcome(**{OPTION: spell(name)}) == name


@pytest.mark.parametrize(("name", "number"), list(QPID_JMS_NUMBERS.items()))
def test_numbers_as_text(name: str, number: int) -> None:
    assert _outcome(**{OPTION: str(number)}) == name


@pytest.mark.parametrize(
    ("text", "name"), [("+2", "REJECTED"), ("05", "MODIFIED_FAILED_UNDELIVERABLE")]
)
def test_numbers_as_integer_parse_int_reads_them(text: str, name: str) -> None:
    assert _outcome(**{OPTION: text}) == name


def test_keyword_argument_takes_a_name_or_a_number() -> None:
    options = build_options({}, {"redelivery_outcome": 3})
    assert options.redelivery_policy().outcome == "RELEASED"
    factory = jmspy.ConnectionFactory("amqp://localhost:5672", redelivery_outcome="modified_failed")
    assert factory.options.redelivery_policy().outcome == "MODIFIED_FAILED"


def test_not_set_by_default_so_the_adapter_decides() -> None:
    options = build_options({}, {})
    assert options.redelivery_outcome is None
    assert options.redelivery_policy().outcome is None
    assert RedeliveryPolicy.create().outcome is None


def test_the_factory_url_carries_it_with_max_redeliveries() -> None:
    factory = jmspy.ConnectionFactory(
        "amqp://localhost:5672?jms.redeliveryPolicy.maxRedeliveries=1"
        "&jms.redeliveryPolicy.outcome=MODIFIED_FAILED_UNDELIVERABLE"
    )
    policy = factory.options.redelivery_policy()
    assert (policy.max_delivery_attempts, policy.outcome) == (2, "MODIFIED_FAILED_UNDELIVERABLE")


@pytest.mark.parametrize(
    "text",
    ["0", "6", "-1", "DISCARD", "MODIFIED", "dead-letter", "", " 1", "1 ", "1_0", "2.0", "\u0661"],
)
def test_anything_else_is_refused_naming_the_option_and_the_value(text: str) -> None:
    with pytest.raises(jmspy.IllegalArgumentException) as info:
        jmspy.ConnectionFactory("amqp://localhost:5672", **{OPTION: text})
    message = str(info.value)
    assert OPTION in message and repr(text) in message
    assert "MODIFIED_FAILED_UNDELIVERABLE" in message  # says what is accepted


def test_a_url_value_is_refused_too() -> None:
    with pytest.raises(jmspy.IllegalArgumentException) as info:
        jmspy.ConnectionFactory("amqp://localhost:5672?jms.redeliveryPolicy.outcome=7")
    assert f"{OPTION}='7'" in str(info.value)


@pytest.mark.parametrize("value", [True, 0, 6, 2.0])
def test_keyword_values_that_are_no_outcome_are_refused(value: object) -> None:
    with pytest.raises(jmspy.IllegalArgumentException) as info:
        build_options({}, {"redelivery_outcome": value})
    assert OPTION in str(info.value) and repr(value) in str(info.value)


def test_a_policy_takes_names_and_numbers_and_refuses_others() -> None:
    assert RedeliveryPolicy.create(outcome="released").outcome == "RELEASED"
    assert RedeliveryPolicy.create(outcome=4).outcome == "MODIFIED_FAILED"
    with pytest.raises(jmspy.IllegalArgumentException) as info:
        RedeliveryPolicy.create(outcome="explode")
    assert "outcome" in str(info.value) and "explode" in str(info.value)


def test_bounding_a_policy_keeps_its_outcome() -> None:
    from jmspy.adapters import PROFILES

    bounded = PROFILES["rabbitmq"].bounded_policy(RedeliveryPolicy.create(outcome="REJECTED"))
    assert (bounded.max_delivery_attempts, bounded.outcome) == (7, "REJECTED")


def test_after_last_attempt_and_outcome_together_are_refused() -> None:
    with pytest.raises(jmspy.IllegalArgumentException) as info:
        jmspy.ConnectionFactory(
            "amqp://localhost:5672?jms.redeliveryPolicy.outcome=ACCEPTED"
            "&jmspy.redeliveryPolicy.afterLastAttempt=discard"
        )
    assert OPTION in str(info.value)
    assert "jmspy.redeliveryPolicy.afterLastAttempt" in str(info.value)
    with pytest.raises(jmspy.IllegalArgumentException) as info:
        RedeliveryPolicy.create(after_last_attempt="reject", outcome="REJECTED")
    assert "afterLastAttempt and outcome" in str(info.value)
