"""The Broker-J initial configuration jmspy writes, and the adapter's detection (no broker)."""

from __future__ import annotations

import json
import re
from typing import Any

from jmspy.adapters import detect_profile
from jmspy.conformance.brokers.qpid_broker_j import DLQ, MAX_DELIVERY_ATTEMPTS, initial_config


def _config(**options: Any) -> dict[str, Any]:
    return initial_config(amqp_port=5672, http_port=8080, username="u", password="p", **options)


def _virtual_host(config: dict[str, Any]) -> dict[str, Any]:
    node = config["virtualhostnodes"][0]
    return json.loads(node["virtualHostInitialConfiguration"])


def _attempts_for(config: dict[str, Any], name: str) -> int | None:
    """The maximumDeliveryAttempts a queue auto-created as ``name`` gets (first match wins,
    as in Broker-J), or None when no policy creates it."""
    for policy in _virtual_host(config)["nodeAutoCreationPolicies"]:
        if re.fullmatch(policy["pattern"], name):
            attempts: int = policy["attributes"]["maximumDeliveryAttempts"]
            return attempts
    return None


def test_amqp_1_0_only_on_loopback_and_plain_allowed_over_tcp() -> None:
    config = _config()
    amqp = next(p for p in config["ports"] if p["name"] == "AMQP")
    assert amqp["protocols"] == ["AMQP_1_0"]
    assert amqp["bindingAddress"] == "127.0.0.1"
    assert amqp["port"] == 5672
    provider = config["authenticationproviders"][0]
    assert provider["secureOnlyMechanisms"] == []
    assert {u["name"] for u in provider["users"]} == {"u", "scram"}
    http = next(p for p in config["ports"] if p["name"] == "HTTP")
    assert http["bindingAddress"] == "127.0.0.1"


def test_plain_over_tcp_can_be_left_to_broker_j_default() -> None:
    provider = _config(plain_over_tcp=False)["authenticationproviders"][0]
    assert "secureOnlyMechanisms" not in provider


def test_auto_created_queues_dead_letter_to_dlq_at_their_limit() -> None:
    config = _config()
    host = _virtual_host(config)
    assert host["type"] == "DERBY"
    assert {"name": DLQ, "durable": True} in host["queues"]
    for policy in host["nodeAutoCreationPolicies"]:
        attributes = policy["attributes"]
        assert attributes["alternateBinding"] == {"destination": DLQ}
        assert attributes["holdOnPublishEnabled"] is True
    assert _attempts_for(config, "orders") == MAX_DELIVERY_ATTEMPTS
    assert _attempts_for(config, "jmspy.rd.limit2.rd9.q1.abc") == 2
    assert _attempts_for(config, "jmspy.rd.limit3.rd10.q1.abc") == 3
    # Never auto-created: refused sends (DD-9) and exchange/key addresses.
    assert _attempts_for(config, "jmspy.noauto.probe.1") is None
    assert _attempts_for(config, "amq.topic/news") is None


def test_product_broker_j_9_sends_selects_the_adapter() -> None:
    profile = detect_profile({"product": "Apache Qpid Broker-J Core"}, ["ANONYMOUS-RELAY"])
    assert profile.name == "qpid_broker_j"
    assert profile.default_max_delivery_attempts == MAX_DELIVERY_ATTEMPTS
    assert profile.topic_prefix == "amq.topic/"
