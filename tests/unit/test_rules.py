"""The delivery-delay, time-to-live and priority rules as pure functions (no broker)."""

from __future__ import annotations

import pytest

import jmspy
from jmspy import rules
from jmspy.errors import JMSException, JMSRuntimeException, ReasonCode, to_runtime


def test_catalogue_has_every_rule_once_with_its_reason() -> None:
    assert [r for r in rules.RULES if r.startswith("DD-")] == [f"DD-{n}" for n in range(1, 17)]
    assert rules.RULES["DD-1"].reason is ReasonCode.MQRC_FUNCTION_NOT_SUPPORTED
    assert rules.RULES["DD-2"].reason is ReasonCode.MQRC_EXPIRY_ERROR
    assert rules.RULES["DD-3"].reason is ReasonCode.MQRC_OPTIONS_ERROR
    assert rules.RULES["DD-4"].reason is ReasonCode.MQRC_OPTIONS_ERROR
    assert rules.RULES["DD-5"].reason is ReasonCode.MQRC_OPTIONS_ERROR
    assert rules.RULES["DD-6"].reason is ReasonCode.MQRC_PUBLICATION_FAILURE
    assert rules.RULES["DD-12"].reason is ReasonCode.MQRC_EXPIRY_ERROR


def test_reason_code_numbers_are_ibm_mq_values() -> None:
    assert ReasonCode.MQRC_FUNCTION_NOT_SUPPORTED == 2298
    assert ReasonCode.MQRC_OPTIONS_ERROR == 2046
    assert ReasonCode.MQRC_EXPIRY_ERROR == 2013
    assert ReasonCode.MQRC_PUBLICATION_FAILURE == 2502


def test_dd1_delay_without_support() -> None:
    rules.check_delay_supported(0, False, "b")  # delay 0 is always allowed
    rules.check_delay_supported(500, True, "b")
    rules.check_delay_supported(500, None, "b")  # unknown yet: decided at send
    with pytest.raises(JMSException) as info:
        rules.check_delay_supported(500, False, "RabbitMQ")
    exc = info.value
    assert exc.getErrorCode() == "MQRC_FUNCTION_NOT_SUPPORTED"
    assert exc.reason_number == 2298
    assert exc.rule_id == "DD-1"
    assert "500" in str(exc) and "RabbitMQ" in str(exc) and "DD-1" in str(exc)


@pytest.mark.parametrize(
    ("ttl", "delay", "fails"),
    [
        (0, 1000, False),
        (1000, 0, False),
        (1000, 1000, False),
        (2000, 1000, False),
        (999, 1000, True),
        (1, 2, True),
    ],
)
def test_dd2_ttl_shorter_than_delay(ttl: int, delay: int, fails: bool) -> None:
    if fails:
        with pytest.raises(JMSException) as info:
            rules.check_ttl_and_delay(ttl, delay, where="send")
        assert info.value.reason_code is ReasonCode.MQRC_EXPIRY_ERROR
        assert info.value.rule_id == "DD-2"
        assert f"{ttl} ms" in str(info.value) and f"{delay} ms" in str(info.value)
    else:
        rules.check_ttl_and_delay(ttl, delay, where="send")


def test_dd3_retained_publication_with_delay() -> None:
    message = jmspy.TextMessage("x")
    message.setIntProperty(jmspy.JMS_IBM_RETAIN, jmspy.RETAIN_PUBLICATION)
    rules.check_message_for_delay(0, message)
    with pytest.raises(JMSException) as info:
        rules.check_message_for_delay(10, message)
    assert info.value.rule_id == "DD-3"
    assert info.value.getErrorCode() == "MQRC_OPTIONS_ERROR"
    other = jmspy.TextMessage("x")
    other.setIntProperty(jmspy.JMS_IBM_RETAIN, 0)
    rules.check_message_for_delay(10, other)


@pytest.mark.parametrize(("name", "value"), [("JMSXGroupID", "g1"), ("JMSXGroupSeq", 2)])
def test_dd4_grouped_message_with_delay(name: str, value: object) -> None:
    message = jmspy.Message()
    message.setObjectProperty(name, value)
    rules.check_message_for_delay(0, message)
    with pytest.raises(JMSException) as info:
        rules.check_message_for_delay(10, message)
    assert info.value.rule_id == "DD-4"
    assert info.value.reason_code is ReasonCode.MQRC_OPTIONS_ERROR


@pytest.mark.parametrize(
    ("bind", "fails"), [(None, False), ("not_fixed", False), ("on_open", True), ("on_group", True)]
)
def test_dd5_clustered_destination_bind(bind: str | None, fails: bool) -> None:
    queue = jmspy.Queue("q", cluster_bind=bind) if bind else jmspy.Queue("q")
    if fails:
        with pytest.raises(JMSException) as info:
            rules.check_destination_for_delay(5, queue, True, {})
        assert info.value.rule_id == "DD-5"
        assert repr(bind) in str(info.value)
    else:
        rules.check_destination_for_delay(5, queue, True, {})
    rules.check_destination_for_delay(0, queue, True, {})


def test_dd6_topic_delivery_options() -> None:
    topic = jmspy.Topic(
        "t", persistent_delivery="all_durable", non_persistent_delivery="all_available"
    )
    rules.check_destination_for_delay(5, topic, False, {})
    with pytest.raises(JMSException) as info:
        rules.check_destination_for_delay(5, topic, True, {})
    assert info.value.reason_code is ReasonCode.MQRC_PUBLICATION_FAILURE
    assert info.value.rule_id == "DD-6"
    # A profile's defaults apply where the topic says nothing (IBM MQ: persistent all_durable).
    plain = jmspy.Topic("t2")
    ibm = {"persistent": "all_durable", "non_persistent": "all_available"}
    with pytest.raises(JMSException):
        rules.check_destination_for_delay(5, plain, True, ibm)
    rules.check_destination_for_delay(5, plain, False, ibm)
    rules.check_destination_for_delay(5, plain, True, {})
    # Queues have no publication option.
    rules.check_destination_for_delay(5, jmspy.Queue("q"), True, ibm)


def test_dd10_effective_delay() -> None:
    delayed = jmspy.Queue("q", default_delivery_delay=3000)
    assert rules.effective_delay(0, delayed) == 3000
    assert rules.effective_delay(500, delayed) == 500
    assert rules.effective_delay(0, jmspy.Queue("q")) == 0


def test_dd11_maximum_delay() -> None:
    rules.check_max_delay(900_000, None, what="factory")
    rules.check_max_delay(900_000, 900_000, what="factory")
    with pytest.raises(JMSException) as info:
        rules.check_max_delay(900_001, 900_000, what="the factory")
    assert info.value.rule_id == "DD-11"
    assert "900001" in str(info.value) and "900000" in str(info.value)


def test_dd12_ttl_against_a_destination_default_delay() -> None:
    delay = rules.effective_delay(0, jmspy.Queue("q", default_delivery_delay=5000))
    with pytest.raises(JMSException) as info:
        rules.check_ttl_and_delay(1000, delay, where="send")
    assert info.value.reason_code is ReasonCode.MQRC_EXPIRY_ERROR


@pytest.mark.parametrize("bad", [-1, 10, 99, True, 4.0, "4", None])
def test_dd14_priority_range(bad: object) -> None:
    with pytest.raises(JMSException) as info:
        rules.check_priority(bad)
    assert info.value.rule_id == "DD-14"
    assert repr(bad) in str(info.value)


@pytest.mark.parametrize("good", range(10))
def test_dd14_priority_valid(good: int) -> None:
    assert rules.check_priority(good) == good


def test_runtime_twin_keeps_reason_and_rule() -> None:
    exc = rules.violation("DD-2", "detail")
    twin = to_runtime(exc)
    assert isinstance(twin, JMSRuntimeException)
    assert twin.getErrorCode() == "MQRC_EXPIRY_ERROR"
    assert twin.reason_number == 2013
    assert twin.rule_id == "DD-2"


def test_destination_options_are_validated() -> None:
    with pytest.raises(jmspy.IllegalArgumentException) as info:
        jmspy.Queue("q", delivery_sequence="random")
    assert "delivery_sequence" in str(info.value) and "random" in str(info.value)
    with pytest.raises(jmspy.IllegalArgumentException):
        jmspy.Queue("q", default_delivery_delay=-5)
    with pytest.raises(jmspy.IllegalArgumentException):
        jmspy.Queue("q", no_such_option=1)
