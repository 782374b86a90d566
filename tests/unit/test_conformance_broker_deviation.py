"""A durable queue the broker lost in a crash ends a failover check as a deviation (the
broker's loss, with its own queue listing as evidence), not as jmspy's failure: the CI's
RabbitMQ column failed FO-1 and FO-2 with NOT_FOUND for queues declared durable before a
kill -9 on a busy machine. A queue the broker lists but whose process did not come back
(RabbitMQ's ``crashed``) is refused the same way."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from jmspy.conformance.checks import failover
from jmspy.conformance.model import BrokerDeviation, Outcome, Verdict
from jmspy.conformance.runner import _call


class _Context:
    """What the failover helpers and the runner read from a check's context."""

    check_id = "FO-X"

    def __init__(self, queues: dict[str, str]) -> None:
        self.target = SimpleNamespace(broker=SimpleNamespace(queue_state=queues.get))
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_a_queue_lost_in_the_crash_is_a_broker_deviation() -> None:
    ctx: Any = _Context({"kept": "running"})
    failover._DECLARED[ctx] = ["kept", "lost"]
    with pytest.raises(BrokerDeviation) as raised:
        failover._check_queues_survived(ctx)
    verdict = raised.value.verdict
    assert verdict.outcome == Outcome.DEVIATION
    assert verdict.observed == "missing after the restart: ['lost']"


def test_queues_that_survived_let_the_check_go_on() -> None:
    ctx: Any = _Context({"kept": "running"})
    failover._DECLARED[ctx] = ["kept"]
    failover._check_queues_survived(ctx)  # no exception


def test_a_queue_whose_process_did_not_come_back_is_a_broker_deviation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(failover, "RECOVERY_S", 0.0)
    ctx: Any = _Context({"kept": "running", "broken": "crashed"})
    failover._DECLARED[ctx] = ["kept", "broken"]
    with pytest.raises(BrokerDeviation) as raised:
        failover._check_queues_survived(ctx)
    assert raised.value.verdict.observed == (
        "listed but not running 0 s after the restart: {'broken': 'crashed'}"
    )


def test_a_queue_still_recovering_is_waited_for() -> None:
    states = iter(["down", "down", "running"])
    ctx: Any = _Context({})
    ctx.target.broker.queue_state = lambda name: next(states)
    failover._DECLARED[ctx] = ["slow"]
    failover._check_queues_survived(ctx)  # no exception: it came back in time


def test_the_runner_records_a_raised_deviation_as_the_checks_verdict() -> None:
    ctx: Any = _Context({})
    verdict = Verdict(outcome=Outcome.DEVIATION, summary="lost", observed="o", expected="e")

    def check(_: Any) -> Verdict:
        raise BrokerDeviation(verdict)

    assert _call(check, ctx, limit=10.0) == ("ok", verdict)
    assert ctx.closed


def test_the_node_log_is_evidence_for_a_queue_not_listed() -> None:
    # RabbitMQ leaves a queue that crashed out of its listing; its log says so.
    ctx: Any = _Context({})
    ctx.target.broker.recovery_trouble = lambda: ["[error] Restarting crashed queue 'gone'"]
    failover._DECLARED[ctx] = ["gone"]
    with pytest.raises(BrokerDeviation) as raised:
        failover._check_queues_survived(ctx)
    assert raised.value.verdict.observed == (
        "missing after the restart: ['gone']; node log since the restart: "
        "[\"[error] Restarting crashed queue 'gone'\"]"
    )


def test_a_rabbitmq_queue_under_flow_control_counts_as_running() -> None:
    # 'flow' is a running queue whose publishers are held back, not one that failed to recover.
    from jmspy.conformance.brokers import RabbitMQBroker

    broker: Any = RabbitMQBroker()
    broker.queue_states = lambda: {"busy": ("flow", 7), "idle": ("running", 0), "x": ("down", None)}
    assert [broker.queue_state(n) for n in ("busy", "idle", "x", "gone")] == [
        "running",
        "running",
        "down",
        None,
    ]
