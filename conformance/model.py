"""What a conformance run produces: verdicts, results per check and broker, and the report.

Every model is pydantic, so the JSON report is ``Report.model_dump_json()`` and reads back with
``Report.model_validate_json()`` unchanged.
"""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Outcome(enum.StrEnum):
    """The four results a check can have on one broker."""

    PASSED = "passed"
    FAILED = "failed"
    #: The broker lacks a capability the rule's scenario needs; the fallback expectation (if
    #: the check has one) was verified instead and is described in ``fallback``.
    NOT_APPLICABLE = "not-applicable"
    #: The broker behaves differently from the documented expectation (not jmspy's fault);
    #: recorded with the evidence, never hidden, and not a failure.
    DEVIATION = "deviation"


OUTCOME_ORDER = (Outcome.PASSED, Outcome.FAILED, Outcome.DEVIATION, Outcome.NOT_APPLICABLE)


class CheckFailure(Exception):
    """Raised inside a check when the observation contradicts the expectation."""

    def __init__(self, observed: str, expected: str, evidence: list[str] | None = None) -> None:
        super().__init__(f"observed {observed}; expected {expected}")
        self.observed = observed
        self.expected = expected
        self.evidence = list(evidence or [])


class BrokerDeviation(Exception):
    """Raised inside a check (from a helper deep in it) when the broker, not jmspy, made the
    scenario impossible to finish as written; the run records ``verdict``, a deviation."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.summary)
        self.verdict = verdict


class Verdict(BaseModel):
    """What a check function returns (a failure is raised as :class:`CheckFailure` instead)."""

    model_config = ConfigDict(frozen=True)

    outcome: Outcome
    summary: str
    observed: str | None = None
    expected: str | None = None
    evidence: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    fallback: str | None = None


def passed(summary: str, *evidence: str) -> Verdict:
    return Verdict(outcome=Outcome.PASSED, summary=summary, evidence=evidence)


def deviation(
    summary: str, *, observed: str, expected: str, evidence: tuple[str, ...] = ()
) -> Verdict:
    """The broker, not jmspy, departs from the documented expectation."""
    return Verdict(
        outcome=Outcome.DEVIATION,
        summary=summary,
        observed=observed,
        expected=expected,
        evidence=evidence,
    )


def not_applicable(
    summary: str, *, missing: tuple[str, ...] = (), fallback: str | None = None
) -> Verdict:
    return Verdict(
        outcome=Outcome.NOT_APPLICABLE, summary=summary, missing=missing, fallback=fallback
    )


class Result(BaseModel):
    """One check on one broker."""

    check_id: str
    outcome: Outcome
    summary: str
    observed: str | None = None
    expected: str | None = None
    evidence: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    fallback: str | None = None
    duration_s: float = 0.0


class CapabilityReport(BaseModel):
    """What the probe found about one broker: each capability with the reason."""

    present: dict[str, str] = Field(default_factory=dict)
    missing: dict[str, str] = Field(default_factory=dict)

    def has(self, name: str) -> bool:
        return name in self.present


class BrokerRun(BaseModel):
    """All results against one broker (one column of the matrix)."""

    label: str
    kind: str
    url: str
    version: str = ""
    product: str = ""
    adapter: str = ""
    source: str = ""  # provisioned | external | container
    offered_capabilities: list[str] = Field(default_factory=list)
    capabilities: CapabilityReport = Field(default_factory=CapabilityReport)
    error: str | None = None  # the broker could not be provisioned or reached
    started_at: str = ""
    duration_s: float = 0.0
    results: list[Result] = Field(default_factory=list)

    def counts(self) -> dict[str, int]:
        counts = {outcome.value: 0 for outcome in OUTCOME_ORDER}
        for result in self.results:
            counts[result.outcome.value] += 1
        return counts

    def result(self, check_id: str) -> Result | None:
        for result in self.results:
            if result.check_id == check_id:
                return result
        return None

    @property
    def ok(self) -> bool:
        """No applicable check failed and the broker was reachable."""
        return self.error is None and not any(r.outcome is Outcome.FAILED for r in self.results)


class CatalogueEntry(BaseModel):
    """One check of the catalogue: the rule's id and wording plus what running it needs."""

    model_config = ConfigDict(frozen=True)

    id: str
    family: str
    title: str
    text: str
    source: str
    level: str
    capabilities: tuple[str, ...] = ()
    reason: str | None = None
    fallback: str | None = None  # what is verified instead when a capability is missing


class Report(BaseModel):
    """A whole run: the catalogue, one BrokerRun per broker, and when it ran."""

    title: str = "jmspy conformance"
    jmspy_version: str = ""
    generated_at: str = ""
    duration_s: float = 0.0
    selection: list[str] = Field(default_factory=list)
    families: dict[str, str] = Field(default_factory=dict)
    catalogue: list[CatalogueEntry] = Field(default_factory=list)
    runs: list[BrokerRun] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(run.ok for run in self.runs)

    def entry(self, check_id: str) -> CatalogueEntry:
        for entry in self.catalogue:
            if entry.id == check_id:
                return entry
        raise KeyError(check_id)

    def summary_lines(self) -> list[str]:
        lines = []
        for run in self.runs:
            if run.error is not None:
                lines.append(f"{run.label}: not run: {run.error}")
                continue
            counts = run.counts()
            parts = ", ".join(f"{counts[o.value]} {o.value}" for o in OUTCOME_ORDER)
            lines.append(f"{run.label}: {len(run.results)} checks: {parts} ({run.duration_s:.1f}s)")
        return lines


def jsonable(value: Any) -> str:
    """A short, stable text form of an observed value for reports."""
    text = repr(value)
    return text if len(text) <= 400 else text[:397] + "..."
