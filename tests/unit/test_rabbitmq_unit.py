"""RabbitMQ provisioning pieces that need no node: definitions, config, discovery, CLI."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from jmspy.adapters import PROFILES
from jmspy.conformance.brokers import BrokerProvisioningError, QueueSpec, RabbitMQBroker
from jmspy.conformance.brokers import rabbitmq as rmq
from jmspy.conformance.brokers.cli import _env_lines, _parse_queue

import jmspy
from jmspy.redelivery import RedeliveryPolicy


def test_password_hash_is_rabbit_sha256() -> None:
    encoded = rmq.password_hash("s3cret", salt=b"\x01\x02\x03\x04")
    raw = base64.b64decode(encoded)
    assert raw[:4] == b"\x01\x02\x03\x04"
    assert raw[4:] == hashlib.sha256(b"\x01\x02\x03\x04s3cret").digest()
    # A fresh salt every time.
    assert rmq.password_hash("s3cret") != rmq.password_hash("s3cret")


def test_boot_definitions_seed_user_dead_lettering_and_queues() -> None:
    defs = rmq.boot_definitions("u", "p", [QueueSpec("jmspy.prio.q", {"x-max-priority": 10})])
    assert [u["name"] for u in defs["users"]] == ["u"]
    assert defs["vhosts"] == [{"name": "/"}]
    assert defs["permissions"][0]["configure"] == ".*"
    assert defs["exchanges"][0]["name"] == rmq.DEAD_LETTER_EXCHANGE
    assert defs["exchanges"][0]["type"] == "fanout"
    queues = {q["name"]: q for q in defs["queues"]}
    assert queues[rmq.DEAD_LETTER_QUEUE]["arguments"] == {}
    assert queues["jmspy.prio.q"]["arguments"] == {"x-max-priority": 10}
    binding = defs["bindings"][0]
    assert (binding["source"], binding["destination"]) == ("jmspy.dlx", "jmspy.dlq")
    policy = defs["policies"][0]
    assert policy["pattern"] == r"^jmspy\.dl\."
    assert policy["definition"] == {"dead-letter-exchange": "jmspy.dlx"}
    json.dumps(defs)  # what the node reads


def test_node_config_escapes_the_definitions_path() -> None:
    text = rmq.node_config(Path('/tmp/a "b"\\c/defs.json'))
    assert '{load_definitions, "/tmp/a \\"b\\"\\\\c/defs.json"}' in text
    assert "{loopback_users, []}" in text
    assert "{default_user, none}" in text
    assert text.rstrip().endswith("].")


def test_explicit_home_must_be_a_release(tmp_path: Path) -> None:
    with pytest.raises(BrokerProvisioningError, match="no sbin/rabbitmq-server"):
        rmq.find_installation({"JMSPY_RABBITMQ_HOME": str(tmp_path)})
    home = tmp_path / "rabbitmq_server-9.8.7"
    (home / "sbin").mkdir(parents=True)
    (home / "sbin" / "rabbitmq-server").write_text("#!/bin/sh\n")
    found = rmq.find_installation({"JMSPY_RABBITMQ_HOME": str(home)})
    assert (found.version, found.home) == ("9.8.7", home)
    assert found.ctl_script == home / "sbin" / "rabbitmqctl"


def test_install_refuses_without_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rmq.os, "geteuid", lambda: 1000)
    with pytest.raises(BrokerProvisioningError, match="not root"):
        rmq.install_with_apt()


def test_broker_before_start() -> None:
    broker = RabbitMQBroker(port=5999, username="u", password="p")
    assert broker.url == "amqp://127.0.0.1:5999"
    assert broker.node_name == "jmspy-5999@localhost"
    assert not broker.running and broker.pid is None
    with pytest.raises(BrokerProvisioningError):
        _ = broker.base_dir
    with pytest.raises(BrokerProvisioningError, match="running node"):
        broker.rabbitmqctl("status")
    broker.stop()
    broker.stop()


def test_cli_exports_rabbitmq_variables_and_parses_queues() -> None:
    lines = _env_lines("amqp://127.0.0.1:1", "u", "p w", "rabbitmq", plain=False)
    assert lines == [
        "export JMSPY_RABBITMQ_URL=amqp://127.0.0.1:1",
        "export JMSPY_RABBITMQ_USER=u",
        "export JMSPY_RABBITMQ_PASSWORD='p w'",
    ]
    assert _parse_queue("q") == QueueSpec("q", {})
    assert _parse_queue('q={"x-max-priority": 10}') == QueueSpec("q", {"x-max-priority": 10})
    for bad in ("=x", "q=[1]", "q={"):
        with pytest.raises(BrokerProvisioningError):
            _parse_queue(bad)


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({}, (7, 1000)),  # nothing set: the rabbitmq adapter's bounded default
        ({"redelivery_delay": 100}, (7, 100)),  # the application's delay stays
        ({"max_delivery_attempts": 3}, (3, 0)),  # the application's limit: untouched
        ({"max_delivery_attempts": -1}, (-1, 0)),  # explicitly unlimited: untouched
    ],
)
def test_rabbitmq_default_policy_is_bounded(
    settings: dict[str, int], expected: tuple[int, int]
) -> None:
    rabbit = PROFILES["rabbitmq"]
    policy = rabbit.bounded_policy(RedeliveryPolicy.create(**settings))
    assert (policy.max_delivery_attempts, policy.redelivery_delay) == expected
    # RabbitMQ drops a rejected message without a dead-letter exchange: jmspy forwards it.
    assert rabbit.forward_dead_letters and rabbit.dead_letter_queue == "DLQ"
    assert not PROFILES["activemq"].forward_dead_letters


def test_dead_letter_url_options() -> None:
    factory = jmspy.ConnectionFactory(
        "amqp://localhost:5672?jmspy.redeliveryPolicy.deadLetterQueue=/queue/poison"
        "&jmspy.redeliveryPolicy.afterLastAttempt=reject"
    )
    policy = factory.options.redelivery_policy()
    assert policy.dead_letter_queue == "/queue/poison"
    assert policy.after_last_attempt == "reject"
    with pytest.raises(jmspy.IllegalArgumentException) as info:
        jmspy.ConnectionFactory(
            "amqp://localhost:5672?jmspy.redeliveryPolicy.afterLastAttempt=drop"
        ).options.redelivery_policy()
    assert "after_last_attempt" in str(info.value) and "drop" in str(info.value)
    with pytest.raises(jmspy.IllegalArgumentException) as info:
        jmspy.ConnectionFactory(
            "amqp://localhost:5672", **{"jmspy.redeliveryPolicy.deadLetterQueue": ""}
        ).options.redelivery_policy()
    assert "dead_letter_queue" in str(info.value)
