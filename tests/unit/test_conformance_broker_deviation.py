"""A durable queue the broker lost in a crash ends a failover check as a deviation (the
broker's loss, with its own queue listing as evidence), not as jmspy's failure: the CI's
RabbitMQ column failed FO-1 and FO-2 with NOT_FOUND for queues declared durable before a
kill -9 on a busy machine."""

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

    def __init__(self, queues: dict[str, int]) -> None:
        self.target = SimpleNamespace(broker=SimpleNamespace(queue_depth=queues.get))
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_a_queue_lost_in_the_crash_is_a_broker_deviation() -> None:
    ctx: Any = _Context({"kept": 3})
    failover._DECLARED[ctx] = ["kept", "lost"]
    with pytest.raises(BrokerDeviation) as raised:
        failover._check_queues_survived(ctx)
    verdict = raised.value.verdict
    assert verdict.outcome == Outcome.DEVIATION
    assert verdict.observed == "missing after the restart: ['lost']"


def test_queues_that_survived_let_the_check_go_on() -> None:
    ctx: Any = _Context({"kept": 0})
    failover._DECLARED[ctx] = ["kept"]
    failover._check_queues_survived(ctx)  # no exception


def test_the_runner_records_a_raised_deviation_as_the_checks_verdict() -> None:
    ctx: Any = _Context({})
    verdict = Verdict(outcome=Outcome.DEVIATION, summary="lost", observed="o", expected="e")

    def check(_: Any) -> Verdict:
        raise BrokerDeviation(verdict)

    assert _call(check, ctx, limit=10.0) == ("ok", verdict)
    assert ctx.closed
