"""FO-1 crashes the broker on a thread of its own while it sends: what that thread ends with
is raised by the check. A durable queue the broker did not recover is the broker's deviation,
with the queue states and the node log as its evidence; reported as a failed crash it lost
both (a RabbitMQ run said only "crashing the broker failed")."""

from __future__ import annotations

from jmspy.conformance.checks.failover import crash_failure
from jmspy.conformance.model import BrokerDeviation, CheckFailure, Outcome, deviation


def test_a_deviation_found_while_crashing_stays_a_deviation_with_its_evidence() -> None:
    found = BrokerDeviation(
        deviation(
            "the broker did not recover 1 durable queue(s)",
            observed="missing after the restart: ['q']; node log since the restart: [...]",
            expected="durable queues and their persistent messages survive a crash",
        )
    )
    raised = crash_failure(found)
    assert raised is found
    assert isinstance(raised, BrokerDeviation)
    assert raised.verdict.outcome is Outcome.DEVIATION
    assert "node log since the restart" in raised.verdict.observed


def test_a_crash_that_itself_failed_is_a_check_failure() -> None:
    raised = crash_failure(RuntimeError("kill: no such process"))
    assert isinstance(raised, CheckFailure)
    assert "crashing the broker failed: kill: no such process" in str(raised)
