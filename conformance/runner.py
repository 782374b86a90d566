"""Run catalogue checks against brokers and collect the results.

:func:`run_target` probes one broker's capabilities and runs the chosen checks in catalogue
order, each in a worker thread with a hard time limit so a hanging check cannot stop the run.
A check needing a capability the broker lacks is not run: its fallback expectation (the
check's own, or the capability's) is verified instead and the result is *not applicable* with
the reason, or *failed* when the fallback does not hold.
"""

from __future__ import annotations

import datetime
import faulthandler
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from typing import IO, Protocol

from jmspy.adapters import PROFILES

import jmspy

from .catalogue import FAMILIES, catalogue
from .context import CheckContext, Target, probe_capabilities
from .model import (
    BrokerDeviation,
    BrokerRun,
    CapabilityReport,
    CatalogueEntry,
    CheckFailure,
    Outcome,
    Report,
    Result,
    Verdict,
)
from .registry import CAPABILITY_FALLBACKS, REGISTRY, CheckFunction

__all__ = ["CHECK_TIME_LIMIT_S", "Progress", "new_report", "run_entry", "run_target"]

#: A check still running after this long is recorded as failed and abandoned.
CHECK_TIME_LIMIT_S = 30.0

#: With the watchdog armed (the command line arms it), how long past a check's limit the
#: process may go without the runner taking control back before it is ended.
WATCHDOG_GRACE_S = 60.0


class Progress(Protocol):
    def begin(self, label: str, total: int) -> None: ...

    def step(self, label: str, index: int, total: int, entry: CatalogueEntry) -> None: ...

    def result(self, label: str, index: int, total: int, result: Result) -> None: ...

    def end(self, run: BrokerRun) -> None: ...


class NoProgress:
    def begin(self, label: str, total: int) -> None:
        pass

    def step(self, label: str, index: int, total: int, entry: CatalogueEntry) -> None:
        pass

    def result(self, label: str, index: int, total: int, result: Result) -> None:
        pass

    def end(self, run: BrokerRun) -> None:
        pass


_MARK = {
    Outcome.PASSED: "ok",
    Outcome.FAILED: "FAIL",
    Outcome.DEVIATION: "deviation",
    Outcome.NOT_APPLICABLE: "n/a",
}


class LineProgress:
    """One line per check (for logs and CI), or one updating line on a terminal."""

    def __init__(self, stream: IO[str] | None = None, live: bool | None = None) -> None:
        self.stream = stream or sys.stdout
        self.live = self.stream.isatty() if live is None else live
        self._counts: dict[Outcome, int] = {}

    def begin(self, label: str, total: int) -> None:
        self._counts = {}
        if not self.live:
            self.stream.write(f"{label}: running {total} checks\n")
            self.stream.flush()

    def step(self, label: str, index: int, total: int, entry: CatalogueEntry) -> None:
        if self.live:
            counts = " ".join(f"{_MARK[o]} {n}" for o, n in self._counts.items())
            line = f"[{label}] {index}/{total} {entry.id} {entry.title}"
            if counts:
                line += f"  ({counts})"
            self.stream.write("\r\x1b[2K" + line[:150])
            self.stream.flush()

    def result(self, label: str, index: int, total: int, result: Result) -> None:
        self._counts[result.outcome] = self._counts.get(result.outcome, 0) + 1
        if self.live:
            if result.outcome is Outcome.FAILED:
                self.stream.write(f"\r\x1b[2K{label} {result.check_id} FAILED: {result.summary}\n")
                self.stream.flush()
            return
        self.stream.write(
            f"{label} {index}/{total} {result.check_id} {_MARK[result.outcome]} "
            f"({result.duration_s:.2f}s) {result.summary}\n"
        )
        self.stream.flush()

    def end(self, run: BrokerRun) -> None:
        if self.live:
            self.stream.write("\r\x1b[2K")
        counts = run.counts()
        text = ", ".join(f"{n} {o}" for o, n in counts.items())
        self.stream.write(f"{run.label}: {text} in {run.duration_s:.1f}s\n")
        self.stream.flush()


def _call(
    function: CheckFunction, ctx: CheckContext, limit: float, watchdog: bool = False
) -> tuple[str, object]:
    """Run ``function(ctx)`` in a worker thread: ("ok", verdict) | ("fail", CheckFailure) |
    ("error", (exc, tb)) | ("timeout", None).

    ``watchdog``: the join below cannot time out when the interpreter itself is frozen (a C
    call that never returns while holding the GIL, a deadlock inside CPython); faulthandler's
    own thread, which needs no GIL, then prints every thread's stack and ends the process
    (exit status 1) ``WATCHDOG_GRACE_S`` after the limit, so a run never hangs.
    """
    box: list[tuple[str, object]] = []

    def work() -> None:
        try:
            box.append(("ok", function(ctx)))
        except CheckFailure as failure:
            box.append(("fail", failure))
        except BrokerDeviation as departed:
            box.append(("ok", departed.verdict))
        except BaseException as exc:  # a check must never take the run down
            box.append(("error", (exc, traceback.format_exc(limit=6))))
        finally:
            ctx.close()

    worker = threading.Thread(target=work, name=f"check-{ctx.check_id}", daemon=True)
    if watchdog:
        faulthandler.dump_traceback_later(limit + WATCHDOG_GRACE_S, exit=True)
    try:
        worker.start()
        worker.join(limit)
    finally:
        if watchdog:
            faulthandler.cancel_dump_traceback_later()
    if worker.is_alive():
        return ("timeout", None)
    return box[0]


def _result(
    entry: CatalogueEntry, status: str, value: object, ctx: CheckContext, limit: float
) -> Result:
    evidence = list(ctx.evidence)
    if status == "ok":
        if not isinstance(value, Verdict):
            return Result(
                check_id=entry.id,
                outcome=Outcome.FAILED,
                summary=f"the check returned {type(value).__name__}, not a Verdict",
                evidence=evidence,
            )
        return Result(
            check_id=entry.id,
            outcome=value.outcome,
            summary=value.summary,
            observed=value.observed,
            expected=value.expected,
            evidence=evidence + list(value.evidence),
            missing=list(value.missing),
            fallback=value.fallback,
        )
    if status == "fail":
        assert isinstance(value, CheckFailure)
        return Result(
            check_id=entry.id,
            outcome=Outcome.FAILED,
            summary=f"observed {value.observed}; expected {value.expected}",
            observed=value.observed,
            expected=value.expected,
            evidence=evidence + value.evidence,
        )
    if status == "error":
        assert isinstance(value, tuple)
        exc, tb = value
        return Result(
            check_id=entry.id,
            outcome=Outcome.FAILED,
            summary=f"the check raised {type(exc).__name__}: {exc}",
            observed=f"{type(exc).__name__}: {exc}",
            expected="the scenario to complete",
            evidence=[*evidence, tb.strip()],
        )
    return Result(
        check_id=entry.id,
        outcome=Outcome.FAILED,
        summary=f"the check did not finish within {limit:.0f} s",
        observed=f"still running after {limit:.0f} s",
        expected="a finished check",
        evidence=evidence,
    )


def run_entry(
    entry: CatalogueEntry,
    target: Target,
    capabilities: CapabilityReport,
    adapter: str | None = None,
    limit: float = CHECK_TIME_LIMIT_S,
    watchdog: bool = False,
) -> Result:
    """Run one catalogue entry against a target whose capabilities are known (``watchdog``:
    see :func:`_call`)."""
    spec = REGISTRY[entry.id]
    if spec.time_limit is not None:
        # A check that crashes and restarts the broker needs more than the usual limit.
        limit = max(limit, spec.time_limit)
    profile = PROFILES.get(adapter or target.adapter or "", PROFILES["generic"])
    started = time.monotonic()
    missing = [c for c in entry.capabilities if not capabilities.has(c)]
    ctx = CheckContext(target, capabilities, entry.id, profile)
    if not missing:
        status, value = _call(spec.run, ctx, limit, watchdog)
        result = _result(entry, status, value, ctx, limit)
    else:
        reasons = "; ".join(f"{c} ({capabilities.missing.get(c, 'not probed')})" for c in missing)
        fallback: CheckFunction | None = spec.fallback
        fallback_text = spec.fallback_text
        if fallback is None:
            for capability in missing:
                found = CAPABILITY_FALLBACKS.get(capability)
                if found is not None:
                    fallback, fallback_text = found.run, found.text
                    break
        if fallback is None:
            result = Result(
                check_id=entry.id,
                outcome=Outcome.NOT_APPLICABLE,
                summary=f"broker lacks {reasons}",
                missing=missing,
            )
        else:
            status, value = _call(fallback, ctx, limit, watchdog)
            result = _result(entry, status, value, ctx, limit)
            if result.outcome is Outcome.PASSED or result.outcome is Outcome.NOT_APPLICABLE:
                result = result.model_copy(
                    update={
                        "outcome": Outcome.NOT_APPLICABLE,
                        "summary": f"broker lacks {reasons}: {fallback_text} instead, which passed",
                        "missing": missing,
                        "fallback": fallback_text,
                    }
                )
            elif result.outcome is Outcome.FAILED:
                result = result.model_copy(
                    update={
                        "summary": f"broker lacks {reasons}; the fallback expectation "
                        f"({fallback_text}) failed: {result.summary}",
                        "missing": missing,
                        "fallback": fallback_text,
                    }
                )
    return result.model_copy(update={"duration_s": round(time.monotonic() - started, 3)})


def run_target(
    target: Target,
    entries: Sequence[CatalogueEntry],
    progress: Progress | None = None,
    limit: float = CHECK_TIME_LIMIT_S,
    watchdog: bool = False,
) -> BrokerRun:
    """Probe one broker and run ``entries`` against it, in order (``watchdog``: end the process
    when the interpreter freezes, see :func:`_call`; for a command line, not inside a test run
    that has its own)."""
    progress = progress or NoProgress()
    started = time.monotonic()
    run = BrokerRun(
        label=target.label,
        kind=target.kind,
        url=target.public_url(),
        version=target.version,
        source=target.source,
        started_at=_now(),
    )
    progress.begin(target.label, len(entries))
    try:
        capabilities, facts = probe_capabilities(target)
    except (jmspy.JMSException, OSError, ValueError) as exc:
        # ValueError: jmspy's IllegalArgumentException for a URL it refuses (its message
        # shows the URL without user information or query).
        run.error = f"cannot reach the broker at {target.public_url()}: {exc}"
        run.duration_s = round(time.monotonic() - started, 3)
        progress.end(run)
        return run
    run.capabilities = capabilities
    run.product = str(facts.get("product", ""))
    run.adapter = str(facts.get("adapter", ""))
    run.offered_capabilities = list(facts.get("offered", []))
    if not run.version:
        run.version = str(facts.get("version", ""))
    for index, entry in enumerate(entries, 1):
        progress.step(target.label, index, len(entries), entry)
        result = run_entry(entry, target, capabilities, run.adapter, limit, watchdog)
        run.results.append(result)
        progress.result(target.label, index, len(entries), result)
    run.duration_s = round(time.monotonic() - started, 3)
    progress.end(run)
    return run


def new_report(selection: Sequence[str] = ()) -> Report:
    return Report(
        jmspy_version=jmspy.__version__,
        generated_at=_now(),
        selection=list(selection),
        families=dict(FAMILIES),
        catalogue=catalogue(),
    )


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
