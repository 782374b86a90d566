"""``jmspy-conformance``: run the conformance catalogue against brokers and write the reports.

    jmspy-conformance                                  # the local Artemis, every check
    jmspy-conformance --broker artemis --broker rabbitmq --only DD,WM
    jmspy-conformance --url amqp://host:5672 --user u --password p --adapter artemis
    jmspy-conformance --broker container:apache/artemis:latest-alpine --format html

Several brokers make one matrix (checks down, brokers across). The exit status is 0 when no
applicable check failed on any broker and every broker could be reached; deviations and
not-applicable checks do not fail the run.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .catalogue import FAMILIES, CatalogueError, catalogue, select
from .context import Target, probe_capabilities
from .model import BrokerRun, Report
from .report import FORMATS, write_reports
from .runner import LineProgress, new_report, run_target

__all__ = ["main"]

DEFAULT_REPORT_DIR = Path("reports") / "conformance"


def _split(values: Sequence[str] | None) -> list[str]:
    out: list[str] = []
    for value in values or ():
        out += [v.strip() for v in value.split(",") if v.strip()]
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jmspy-conformance",
        description="Verify every jmspy rule and wire mapping against one or more brokers and "
        "write a readable report. Without arguments: provision the local Artemis and run "
        "every check.",
    )
    target = parser.add_argument_group("brokers")
    target.add_argument(
        "--broker",
        action="append",
        metavar="KIND",
        help="provision and run against: artemis, rabbitmq, activemq, qpid-broker-j, "
        "container[:IMAGE] "
        "(Artemis in Docker via testcontainers); repeat or comma-separate for a matrix",
    )
    target.add_argument("--url", help="an already running broker, e.g. amqp://host:5672")
    target.add_argument("--user", help="user for --url (default $JMSPY_BROKER_USER or admin)")
    target.add_argument(
        "--password", help="password for --url (default $JMSPY_BROKER_PASSWORD or admin)"
    )
    target.add_argument("--adapter", help="jmspy.adapter for every connection (default: detected)")
    target.add_argument("--label", help="column name for --url (default: the detected broker)")
    choice = parser.add_argument_group("checks")
    choice.add_argument(
        "--only", action="append", metavar="IDS", help="ids or families, comma-separated"
    )
    choice.add_argument(
        "--skip", action="append", metavar="IDS", help="ids or families to leave out"
    )
    choice.add_argument("--list", action="store_true", help="list the catalogue and exit")
    out = parser.add_argument_group("reports")
    out.add_argument(
        "--report",
        type=Path,
        default=DEFAULT_REPORT_DIR,
        metavar="DIR",
        help=f"directory for the reports (default {DEFAULT_REPORT_DIR})",
    )
    out.add_argument(
        "--format",
        default=",".join(FORMATS),
        help=f"comma list of {', '.join(FORMATS)} (default all)",
    )
    out.add_argument("--verbose", action="store_true", help="show jmspy's own log output")
    return parser


@contextlib.contextmanager
def _provisioned(spec: str, args: argparse.Namespace) -> Iterator[Target | str]:
    """Yield a Target for ``spec``, or a one-line reason why it is unavailable; stop it after."""
    from jmspy.conformance.brokers import BrokerProvisioningError
    from jmspy.conformance.brokers.started import started_broker

    kind = spec.strip()
    lowered = kind.lower()
    in_container = lowered.startswith("container")
    # A local broker on a port below the ephemeral range, so the FO checks can crash and
    # restart it without a reconnecting client taking its port (port_below_ephemeral_range).
    options: dict[str, Any] = {} if in_container else {"port": _killable_port()}
    with contextlib.ExitStack() as stack:
        try:
            broker: Any = stack.enter_context(started_broker(kind, say=_say, **options))
        except BrokerProvisioningError as exc:
            yield f"{kind}: {str(exc).splitlines()[0]}"
            return
        yield Target(
            label=f"container {broker.image}" if in_container else f"{lowered} {broker.version}",
            kind=broker.kind,
            url=broker.url,
            username=broker.username,
            password=broker.password,
            adapter=args.adapter,
            version=broker.version,
            source="container" if in_container else "provisioned",
            # started_broker gives a local Artemis the suite's address settings.
            address_settings=lowered == "artemis",
            broker=broker,
        )


def _killable_port() -> int:
    """A free port below the ephemeral range (see port_below_ephemeral_range)."""
    from jmspy.conformance.brokers.base import port_below_ephemeral_range

    return port_below_ephemeral_range()


def _say(message: str) -> None:
    print(message, flush=True)


def _unique(label: str, taken: set[str]) -> str:
    candidate, n = label, 2
    while candidate in taken:
        candidate = f"{label} #{n}"
        n += 1
    taken.add(candidate)
    return candidate


def _list(entries: Sequence[Any]) -> None:
    for family, title in FAMILIES.items():
        chosen = [e for e in entries if e.family == family]
        if not chosen:
            continue
        print(f"{family}: {title} ({len(chosen)})")
        for entry in chosen:
            needs = f"  [needs {', '.join(entry.capabilities)}]" if entry.capabilities else ""
            print(f"  {entry.id:7} {entry.level:6} {entry.title}{needs}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    formats = _split([args.format])
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        parser.error(f"--format takes a comma list of {', '.join(FORMATS)}; got {args.format!r}")
    logger = logging.getLogger("jmspy")
    saved_level = logger.level
    if not args.verbose:
        # Checks make listeners raise on purpose; jmspy logs each of those with a traceback.
        logger.setLevel(logging.CRITICAL + 1)
    try:
        return _main(parser, args, formats)
    finally:
        logger.setLevel(saved_level)


def _main(parser: argparse.ArgumentParser, args: argparse.Namespace, formats: list[str]) -> int:
    only, skip = _split(args.only), _split(args.skip)
    try:
        entries = select(catalogue(), only, skip)
    except CatalogueError as exc:
        parser.error(str(exc))
    if args.list:
        _list(entries)
        return 0
    if not entries:
        parser.error("--only/--skip leave no check to run")
    specs = _split(args.broker)
    if not specs and not args.url:
        specs = ["artemis"]
    selection = [f"only {','.join(only)}"] if only else []
    selection += [f"skip {','.join(skip)}"] if skip else []
    report: Report = new_report(selection)
    progress = LineProgress()
    started = time.monotonic()
    labels: set[str] = set()
    unavailable: list[str] = []
    if args.url:
        target = Target(
            label=args.label or "external",
            kind="external",
            url=args.url,
            username=args.user or os.environ.get("JMSPY_BROKER_USER", "admin"),
            password=args.password or os.environ.get("JMSPY_BROKER_PASSWORD", "admin"),
            adapter=args.adapter,
            source="external",
        )
        if not args.label:
            target.label = _describe(target)
        target.label = _unique(target.label, labels)
        run = run_target(target, entries, progress, watchdog=True)
        if run.error is not None:
            print(f"{target.label}: {run.error}", file=sys.stderr)
            unavailable.append(run.error)
        report.runs.append(run)
    for spec in specs:
        with _provisioned(spec, args) as provided:
            if isinstance(provided, str):
                print(provided, file=sys.stderr, flush=True)
                unavailable.append(provided)
                report.runs.append(
                    BrokerRun(label=_unique(spec, labels), kind=spec, url="", error=provided)
                )
                continue
            provided.label = _unique(provided.label, labels)
            run = run_target(provided, entries, progress, watchdog=True)
            if run.error is not None:
                print(f"{provided.label}: {run.error}", file=sys.stderr)
                unavailable.append(run.error)
            report.runs.append(run)
    report.duration_s = round(time.monotonic() - started, 3)
    written = write_reports(report, args.report, formats)
    print()
    for line in report.summary_lines():
        print(line)
    failed = [
        f"{run.label} {r.check_id}"
        for run in report.runs
        for r in run.results
        if r.outcome.value == "failed"
    ]
    if failed:
        print(f"failed: {', '.join(failed)}")
    print("reports: " + ", ".join(str(p) for p in written))
    return 0 if report.ok and not unavailable else 1


def _describe(target: Target) -> str:
    """Name an external broker's column after what its open frame says it is."""
    try:
        _, facts = probe_capabilities(target)
    except Exception:
        return target.label  # unreachable: run_target reports why
    product = str(facts.get("product") or "external")
    name = {
        "apache-activemq-artemis": "artemis",
        "Apache Qpid Broker-J Core": "qpid-broker-j",
    }.get(product, product.lower())
    return f"{name} {facts.get('version') or ''}".strip()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
