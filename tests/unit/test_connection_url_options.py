"""The connection URL and its options read as Qpid JMS reads the same URL: boolean text, the
order of jms.prefetchPolicy.all and the specific prefetches, ports, IPv6 literals, and the
bounds of the failover options (no broker)."""

from __future__ import annotations

from typing import Any

import pytest

import jmspy
from jmspy.errors import IllegalArgumentException
from jmspy.failover_options import parse_connection_url, reconnect_delay_ms
from jmspy.options import build_options, parse_url

# ---- booleans: Java's Boolean.valueOf reads "true" in any case as true, anything else false


@pytest.mark.parametrize("text", ["1", "yes", "on", "t", "y"])
@pytest.mark.parametrize(
    "option", ["transport.tcpNoDelay", "jms.forceAsyncSend", "jms.presettlePolicy.presettleAll"]
)
def test_boolean_text_qpid_jms_reads_as_false_is_refused(option: str, text: str) -> None:
    # Qpid JMS reads these as false; jmspy used to read them as true.
    with pytest.raises(IllegalArgumentException) as caught:
        jmspy.ConnectionFactory(f"amqp://h?{option}={text}")
    assert f"{option}={text!r}" in str(caught.value)
    assert "true or false" in str(caught.value)


@pytest.mark.parametrize(("text", "value"), [("TRUE", True), ("True", True), ("FaLsE", False)])
def test_boolean_text_in_any_case(text: str, value: bool) -> None:
    options = build_options({"transport.tcpKeepAlive": text, "transport.tcpNoDelay": text}, {})
    assert options.tcp_keep_alive is value and options.tcp_no_delay is value


def test_boolean_keyword_arguments_are_python_values() -> None:
    factory = jmspy.ConnectionFactory("amqp://h", tcp_no_delay=False, trust_all=True)
    assert factory.options.tcp_no_delay is False and factory.options.trust_all is True


@pytest.mark.parametrize("option", ["failover.randomize", "failover.useReconnectBackOff"])
def test_failover_boolean_text_is_read_as_qpid_jms_reads_it(option: str) -> None:
    with pytest.raises(IllegalArgumentException, match=f"{option}='1'"):
        parse_connection_url(f"failover:(amqp://h1)?{option}=1")
    parsed = parse_connection_url(f"failover:(amqp://h1)?{option}=FALSE")
    assert parsed.failover is not None
    assert parsed.failover.model_dump(by_alias=True)[option] is False


# ---- prefetch: setAll sets the four, in the order the options come --------------------------


def _prefetches(url: str, **keywords: Any) -> dict[str, int]:
    options = jmspy.ConnectionFactory(url, **keywords).options
    return {kind: options.prefetch_for(kind) for kind in ("queue", "topic", "durable", "browser")}


def test_specific_prefetch_after_all_wins() -> None:
    # JmsDefaultPrefetchPolicy: setAll(10), then setQueuePrefetch(5).
    url = "amqp://h?jms.prefetchPolicy.all=10&jms.prefetchPolicy.queuePrefetch=5"
    assert _prefetches(url) == {"queue": 5, "topic": 10, "durable": 10, "browser": 10}


def test_all_after_a_specific_prefetch_overrides_it() -> None:
    url = "amqp://h?jms.prefetchPolicy.topicPrefetch=5&jms.prefetchPolicy.all=10"
    assert _prefetches(url) == {"queue": 10, "topic": 10, "durable": 10, "browser": 10}


def test_keyword_prefetch_overrides_the_url_all() -> None:
    # Keywords override the URL: the specific keyword wins over the URL's all=0.
    got = _prefetches("amqp://h?jms.prefetchPolicy.all=0", queue_prefetch=100)
    assert got == {"queue": 100, "topic": 0, "durable": 0, "browser": 0}
    got = _prefetches("amqp://h?jms.prefetchPolicy.queuePrefetch=5", prefetch_all=7)
    assert got == {"queue": 7, "topic": 7, "durable": 7, "browser": 7}


def test_a_bad_specific_prefetch_before_all_is_still_refused() -> None:
    with pytest.raises(IllegalArgumentException, match="jms.prefetchPolicy.queuePrefetch='x'"):
        jmspy.ConnectionFactory(
            "amqp://h?jms.prefetchPolicy.queuePrefetch=x&jms.prefetchPolicy.all=10"
        )


# ---- hosts and ports ---------------------------------------------------------------------------


def test_port_zero_is_refused_not_replaced_by_the_default() -> None:
    with pytest.raises(IllegalArgumentException, match="invalid port"):
        parse_url("amqp://h:0")
    with pytest.raises(IllegalArgumentException, match="invalid port"):
        parse_connection_url("failover:(amqp://h1:5672,amqps://h2:0)")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("amqp://[::1]", "amqp://[::1]:5672"),
        ("amqps://[fe80::1]:5999", "amqps://[fe80::1]:5999"),
        ("amqps://broker", "amqps://broker:5671"),
    ],
)
def test_ipv6_literals_and_default_ports(url: str, shown: str) -> None:
    endpoint, _ = parse_url(url)
    assert endpoint.host == shown.split("//")[1].rsplit(":", 1)[0].strip("[]")
    assert endpoint.display() == shown
    assert repr(jmspy.ConnectionFactory(url)) == f"ConnectionFactory({shown!r})"


# ---- failover option bounds --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("failover.initialReconnectDelay", "10000000000000"),
        ("failover.reconnectDelay", "10000000000000"),
        ("failover.maxReconnectDelay", "10000000000000"),
        ("failover.reconnectBackOffMultiplier", "inf"),
        ("failover.maxReconnectAttempts", "2147483648"),
        ("failover.warnAfterReconnectAttempts", "2147483648"),
    ],
)
def test_failover_numbers_are_bounded_at_the_factory(option: str, value: str) -> None:
    # These used to be accepted and fail later in the reconnect thread (OverflowError from
    # the wait or from truncating an infinite delay).
    with pytest.raises(IllegalArgumentException, match=f"{option}='{value}'"):
        parse_connection_url(f"failover:(amqp://h1)?{option}={value}")


def test_largest_failover_delay_is_waitable() -> None:
    parsed = parse_connection_url(
        "failover:(amqp://h1)?failover.reconnectDelay=3153600000000"
        "&failover.maxReconnectDelay=3153600000000&failover.reconnectBackOffMultiplier=1e300"
    )
    assert parsed.failover is not None
    assert reconnect_delay_ms(parsed.failover, 30, first_connect=False) == 3153600000000
