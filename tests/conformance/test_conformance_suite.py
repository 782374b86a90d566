"""The conformance suite is honest: it passes on a correct client and fails on a broken one.

Against the session's broker every applicable check passes (or records a broker deviation with
its evidence). Then jmspy is broken on purpose, one rule switched off and one mapping changed,
and exactly the checks that verify that rule or mapping fail while the others still pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from jmspy.conformance import cli
from jmspy.conformance.catalogue import catalogue, select
from jmspy.conformance.context import Target
from jmspy.conformance.model import Outcome, Report, Result
from jmspy.conformance.runner import run_target
from proton import Described

import jmspy
import jmspy.producer
import jmspy.rules
from jmspy._amqp.amqp_reader import read_value
from jmspy._amqp.codec import encode as codec
from jmspy._amqp.codec.common import HEADER

pytestmark = pytest.mark.broker


def _run(target: Target, only: Iterable[str] = ()) -> dict[str, Result]:
    run = run_target(target, select(catalogue(), list(only)))
    assert run.error is None, run.error
    return {result.check_id: result for result in run.results}


def _explain(results: Iterable[Result]) -> str:
    lines = []
    for r in results:
        lines.append(f"{r.check_id} {r.outcome.value}: {r.summary}")
        lines += [f"    {e}" for e in r.evidence[-4:]]
    return "\n".join(lines)


def _failed(results: dict[str, Result]) -> set[str]:
    return {check_id for check_id, r in results.items() if r.outcome is Outcome.FAILED}


def test_every_applicable_check_passes_on_the_session_broker(
    conformance_target: Target, conformance_capabilities: Any, broker: Any
) -> None:
    results = _run(conformance_target)
    assert len(results) == len(catalogue())
    failed = [r for r in results.values() if r.outcome is Outcome.FAILED]
    assert not failed, "checks failed against a correct jmspy:\n" + _explain(failed)
    for result in results.values():
        if result.outcome is Outcome.DEVIATION:
            assert result.observed and result.expected, result
        if result.outcome is Outcome.NOT_APPLICABLE:
            assert result.summary and (result.missing or "no destination" in result.summary)
    not_applicable = {r.check_id for r in results.values() if r.outcome is Outcome.NOT_APPLICABLE}
    if broker.kind == "artemis" and broker.source == "local":
        # The project's Artemis offers every capability; only the checks needing the suite's
        # address settings may be not applicable, when the session broker lacks them.
        capabilities, _ = conformance_capabilities
        allowed = set()
        if not conformance_target.address_settings:
            allowed |= {
                e.id for e in catalogue() if "redelivery-address-settings" in e.capabilities
            }
        if not capabilities.has("refused-destination"):
            allowed.add("DD-9")
        if not conformance_target.url.startswith("amqps://"):
            allowed.add("SEC-1")  # TLS verification needs a TLS acceptor
        # The session broker is shared and never crashed: the FO checks need a broker the
        # suite holds (tests/failover/test_failover_conformance.py runs them).
        allowed |= {e.id for e in catalogue() if "broker-restart" in e.capabilities}
        assert not_applicable <= allowed, _explain(
            r for r in results.values() if r.check_id in not_applicable - allowed
        )


def test_a_rule_switched_off_fails_exactly_its_checks(
    conformance_target: Target,
    conformance_capabilities: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """DD-2 (and DD-12, which raises DD-2's error) no longer enforced by the producer."""
    monkeypatch.setattr(jmspy.rules, "check_ttl_and_delay", lambda *args, **kwargs: None)
    results = _run(conformance_target, ["DD"])
    capabilities, _ = conformance_capabilities
    expected = {"DD-2"} | ({"DD-12"} if capabilities.has("DELAYED_DELIVERY") else set())
    assert _failed(results) == expected, _explain(results.values())
    for check_id in expected:
        assert "MQRC_EXPIRY_ERROR" in (results[check_id].expected or ""), results[check_id]


def test_a_dropped_delivery_time_annotation_fails_exactly_its_checks(
    conformance_target: Target,
    conformance_capabilities: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The codec stops writing x-opt-delivery-time: every check that observes a delay on the
    broker (DD-7, DD-8, DD-10) or on the wire (WM-8) fails; the refusal rules do not."""
    capabilities, _ = conformance_capabilities
    if not capabilities.has("DELAYED_DELIVERY"):
        pytest.skip("the session broker has no delayed delivery to observe")
    original = jmspy.producer.encode_message

    def without_delivery_time(message: Any, **options: Any) -> bytes:
        options["delivery_time_transmitted"] = False
        return original(message, **options)

    monkeypatch.setattr(jmspy.producer, "encode_message", without_delivery_time)
    results = _run(conformance_target, ["DD", "WM-1", "WM-4", "WM-8"])
    assert _failed(results) == {"DD-7", "DD-8", "DD-10", "WM-8"}, _explain(results.values())
    assert "x-opt-delivery-time" in (results["WM-8"].observed or ""), results["WM-8"]


def test_a_wrong_priority_mapping_fails_exactly_its_checks(
    conformance_target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    """header.priority written one too high (wrapping 9 to 0)."""
    original = jmspy.producer.encode_message

    # The mutation rewrites the encoded header, at the producer's call of the codec: the codec's
    # own functions may be built with mypyc (jmspy._native), which calls them directly.
    def with_priority_one_too_high(message: Any, **options: Any) -> bytes:
        payload = original(message, **options)
        header, end = read_value(payload)
        if not (isinstance(header, Described) and header.descriptor == HEADER):
            return payload  # no header section: priority 4 on the wire, as the codec wrote it
        durable, priority, ttl = [*header.value, None, None][:3]
        priority = 4 if priority is None else int(priority)
        ttl = 0 if ttl is None else int(ttl)
        return codec._header_section(bool(durable), (priority + 1) % 10, ttl) + payload[end:]

    monkeypatch.setattr(jmspy.producer, "encode_message", with_priority_one_too_high)
    results = _run(
        conformance_target, ["WM-2", "WM-3", "WM-4", "DD-13", "DD-14", "DD-16", "JMS-33"]
    )
    assert _failed(results) == {"WM-3", "DD-14", "DD-16", "JMS-33"}, _explain(results.values())
    assert "jmspy sent" in (results["WM-3"].observed or ""), results["WM-3"]


def test_the_command_line_writes_every_report(conformance_target: Target, tmp_path: Path) -> None:
    target = conformance_target
    status = cli.main(
        [
            "--url",
            target.url,
            "--user",
            target.username or "",
            "--password",
            target.password or "",
            "--only",
            "DD-1,WM-1",
            "--only",
            "JMS-3",
            "--report",
            str(tmp_path),
        ]
    )
    assert status == 0
    report = Report.model_validate_json((tmp_path / "report.json").read_text())
    assert [r.check_id for r in report.runs[0].results] == ["DD-1", "JMS-3", "WM-1"]
    assert {p.name for p in tmp_path.iterdir()} == {
        "report.md",
        "report.json",
        "junit.xml",
        "report.html",
    }
    assert jmspy.__version__ == report.jmspy_version
