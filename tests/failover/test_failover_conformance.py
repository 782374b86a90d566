"""The FO conformance checks are honest: FO-3 passes against a correct client and fails when
the client stops flagging the messages it handed out before a drop (the session's broker is
never crashed, so the FO checks run here, against a killable Artemis)."""

from __future__ import annotations

from typing import Any

import pytest
from jmspy.conformance.catalogue import catalogue, select
from jmspy.conformance.context import Target
from jmspy.conformance.model import Outcome, Result
from jmspy.conformance.runner import run_target

import jmspy.consumer_redelivery

pytestmark = pytest.mark.timeout(600)


def _target(info: Any, broker: Any) -> Target:
    return Target(
        label="killable artemis",
        kind="artemis",
        url=info.url,
        username=info.username,
        password=info.password,
        source="provisioned",
        broker=broker,
    )


def _run(target: Target, only: list[str]) -> dict[str, Result]:
    run = run_target(target, select(catalogue(), only))
    assert run.error is None, run.error
    return {r.check_id: r for r in run.results}


def test_fo_checks_need_a_broker_the_suite_can_restart(failover_artemis: Any) -> None:
    results = _run(_target(failover_artemis, None), ["FO-1", "FO-6"])
    for result in results.values():
        assert result.outcome is Outcome.NOT_APPLICABLE, result
        assert result.missing == ["broker-restart"]
        assert "did not start this broker" in result.summary


def test_fo3_fails_when_the_client_stops_flagging_redeliveries(
    failover_artemis: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = _target(failover_artemis, failover_artemis.broker)
    correct = _run(target, ["FO-3"])["FO-3"]
    assert correct.outcome is Outcome.PASSED, correct
    # Artemis does not raise the delivery count of what a dropped connection held: without
    # the client's own bookkeeping the messages come back unflagged.
    monkeypatch.setattr(jmspy.consumer_redelivery, "_mark_redelivered", lambda message: None)
    broken = _run(target, ["FO-3"])["FO-3"]
    assert broken.outcome is Outcome.FAILED, broken
    assert "JMSRedelivered=false" in (broken.observed or ""), broken
    assert failover_artemis.broker.running
