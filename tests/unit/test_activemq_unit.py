"""ActiveMQ support without a broker: the generated configuration, the open-frame prefixes,
the default client redelivery policy, and the CLI's wiring."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from jmspy.adapters import PROFILES, choose_profile, with_announced_prefixes
from jmspy.conformance.brokers import SUPPORTED_KINDS
from jmspy.conformance.brokers.activemq import (
    DEAD_LETTER_QUEUE,
    ActiveMQBroker,
    activemq_xml,
    archive_url,
)
from jmspy.conformance.brokers.cli import _env_lines, build_parser

from jmspy.redelivery import RedeliveryPolicy

CORE = "{http://activemq.apache.org/schema/core}"


def test_configuration_has_what_the_tests_need() -> None:
    text = activemq_xml(host="127.0.0.1", port=45678, username="u&1", password='p"2')
    root = ET.fromstring(text)
    broker = root.find(f"{CORE}broker")
    assert broker is not None
    assert broker.get("schedulerSupport") == "true"
    connectors = broker.findall(f"{CORE}transportConnectors/{CORE}transportConnector")
    assert [c.get("name") for c in connectors] == ["amqp"]
    uri = connectors[0].get("uri") or ""
    assert uri.startswith("amqp://127.0.0.1:45678?") and "transport.transformer=jms" in uri
    user = broker.find(f".//{CORE}authenticationUser")
    assert user is not None and (user.get("username"), user.get("password")) == ("u&1", 'p"2')
    auth = broker.find(f".//{CORE}simpleAuthenticationPlugin")
    assert auth is not None and auth.get("anonymousAccessAllowed") == "false"
    queue_policy = broker.find(f".//{CORE}policyEntry[@queue='>']")
    assert queue_policy is not None and queue_policy.get("prioritizedMessages") == "true"
    shared = queue_policy.find(f".//{CORE}sharedDeadLetterStrategy")
    assert shared is not None and shared.get("processNonPersistent") == "true"
    assert "jetty.xml" not in text  # no web console
    assert "PropertyPlaceholderConfigurer" in text  # ${activemq.data} resolves
    assert DEAD_LETTER_QUEUE == "ActiveMQ.DLQ"


def test_archive_url_is_maven_central() -> None:
    assert archive_url("5.18.3") == (
        "https://repo1.maven.org/maven2/org/apache/activemq/apache-activemq/5.18.3/"
        "apache-activemq-5.18.3-bin.tar.gz"
    )


def test_cli_knows_activemq() -> None:
    assert "activemq" in SUPPORTED_KINDS
    args = build_parser().parse_args(["start", "activemq", "--port", "5999"])
    assert args.kind == "activemq"
    lines = _env_lines("amqp://127.0.0.1:5999", "admin", "admin", "activemq", plain=True)
    assert lines[0] == "JMSPY_ACTIVEMQ_URL=amqp://127.0.0.1:5999"
    assert ActiveMQBroker(port=5999).url == "amqp://127.0.0.1:5999"


def test_announced_prefixes_win_over_the_profile() -> None:
    generic = PROFILES["generic"]
    announced = {"queue-prefix": "queue://", "topic-prefix": "topic://"}
    applied = with_announced_prefixes(generic, announced)
    assert (applied.queue_prefix, applied.topic_prefix) == ("queue://", "topic://")
    assert applied.name == "generic" and generic.queue_prefix == ""
    # Nothing announced: the profile's own prefixes stay (RabbitMQ's /queue/, /topic/).
    rabbit = PROFILES["rabbitmq"]
    assert with_announced_prefixes(rabbit, {}) is rabbit
    chosen = choose_profile(None, {"product": "ActiveMQ", **announced}, ())
    assert (chosen.name, chosen.queue_prefix) == ("activemq", "queue://")


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({}, (7, 1000)),  # nothing set: the adapter's bounded default
        ({"redelivery_delay": 50}, (7, 50)),  # the application's delay stays
        ({"max_delivery_attempts": 3}, (3, 0)),  # the application's limit: untouched
        ({"max_delivery_attempts": -1}, (-1, 0)),  # explicitly unlimited: untouched
    ],
)
def test_default_policy_where_the_broker_limits_nothing(
    settings: dict[str, int], expected: tuple[int, int]
) -> None:
    policy = PROFILES["activemq"].bounded_policy(RedeliveryPolicy.create(**settings))
    assert (policy.max_delivery_attempts, policy.redelivery_delay) == expected


def test_no_default_policy_where_the_broker_limits() -> None:
    policy = RedeliveryPolicy.create()
    assert PROFILES["artemis"].bounded_policy(policy) is policy
    assert PROFILES["generic"].bounded_policy(policy) is policy
