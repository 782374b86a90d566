"""Session-wide test plumbing: which broker the broker tests use, and proof that they ran.

Broker selection, first match wins:

1. ``JMSPY_BROKER_URL`` (with ``JMSPY_BROKER_USER`` / ``JMSPY_BROKER_PASSWORD``, default
   admin/admin, and optionally ``JMSPY_BROKER_KIND``): an already running broker, e.g. one
   from ``eval "$(jmspy-broker start artemis)"``;
2. ``--broker=container``: Artemis in Docker via testcontainers (skipped without Docker);
3. ``--broker=local`` (default): Apache Artemis fetched from Maven Central into the user
   cache and run as a local Java process for the whole session.

A broker that cannot be provisioned is an ERROR, never a skip, so CI cannot go green
without having talked to a broker. ``JMSPY_REQUIRE_BROKER_TESTS=1`` (or
``--require-broker-tests``) additionally fails the session when no broker test ran or one
was skipped.

The ``rabbitmq`` fixture is a second, independent broker for RabbitMQ tests: the node at
``JMSPY_RABBITMQ_URL`` (``JMSPY_RABBITMQ_USER`` / ``JMSPY_RABBITMQ_PASSWORD``, default
admin/admin) when set, else a private RabbitMQ 3.x node of the installed ``rabbitmq-server``
package (see jmspy.conformance.brokers.rabbitmq), started on first use and shared by the
session. A missing package is an ERROR too. Tests using it under tests/broker count as
broker tests like any other.

The ``activemq`` fixture is the same for ActiveMQ Classic (``JMSPY_ACTIVEMQ_URL`` /
``_USER`` / ``_PASSWORD``, else a local ActiveMQ Classic fetched from Maven Central, see
jmspy.conformance.brokers.activemq). ``any_broker`` is parametrized over every broker in
:data:`BROKER_FIXTURES` (test ids ``[artemis]``, ``[rabbitmq]``, ``[activemq]``...): a test
that takes it runs once per broker, for behaviour every broker should share or differ in
documented ways (``any_broker.profile`` is the broker's adapter profile).

The jmspy packages are imported inside the hooks, not at module level, so a broken import
elsewhere in the package fails the tests that need it rather than every test.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: Tests under these directories are broker tests (marked ``broker``, counted, required).
BROKER_TESTS_DIRS = (Path(__file__).parent / "broker", Path(__file__).parent / "failover")

_TRUE = ("1", "true", "yes", "on")


@dataclasses.dataclass
class BrokerInfo:
    """What broker tests connect to. ``broker`` is the provisioner object when we own it."""

    url: str
    username: str
    password: str
    kind: str
    version: str
    source: str  # "local", "container" or "external"
    broker: Any = None

    @property
    def host(self) -> str:
        return self.url.split("://", 1)[-1].rsplit(":", 1)[0]

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[-1].split("/", 1)[0])

    @property
    def profile(self) -> Any:
        """The adapter profile jmspy detects for this broker (its documented differences)."""
        from jmspy.adapters import get_profile

        return get_profile(self.kind.replace("-", "_"))

    def factory(self, **options: Any) -> Any:
        """A ConnectionFactory for this broker."""
        import jmspy

        options.setdefault("connect_timeout", 10000)
        return jmspy.ConnectionFactory(self.url, self.username, self.password, **options)


@dataclasses.dataclass
class _Tally:
    """Per-test outcome bookkeeping for broker tests, filled from the run's reports."""

    ran: set[str] = dataclasses.field(default_factory=set)
    skipped: dict[str, str] = dataclasses.field(default_factory=dict)
    errored: set[str] = dataclasses.field(default_factory=set)
    info: BrokerInfo | None = None
    rabbitmq_info: BrokerInfo | None = None
    # Further session brokers by kind (activemq, ...), for the summary.
    other_infos: dict[str, BrokerInfo] = dataclasses.field(default_factory=dict)
    prefetch_error: BaseException | None = None
    require_failure: str = ""


_TALLY = pytest.StashKey[_Tally]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("jmspy", "jmspy broker selection")
    group.addoption(
        "--broker",
        choices=("local", "container"),
        default="local",
        help="where broker tests get Artemis: a local process fetched from Maven Central "
        "(default) or a Docker container; JMSPY_BROKER_URL overrides both",
    )
    group.addoption(
        "--require-broker-tests",
        action="store_true",
        default=False,
        help="fail the run if no broker test ran or any was skipped "
        "(same as JMSPY_REQUIRE_BROKER_TESTS=1)",
    )


def pytest_configure(config: pytest.Config) -> None:
    tally = config.stash[_TALLY] = _Tally()
    config.pluginmanager.register(_BrokerReportCounter(tally), "jmspy-broker-report-counter")
    # Also declared in pyproject.toml; repeated so --strict-markers works from any rootdir.
    config.addinivalue_line(
        "markers",
        "broker: needs a real broker (Artemis provisioned by the project, or JMSPY_BROKER_URL)",
    )


def _mode(config: pytest.Config) -> str:
    if os.environ.get("JMSPY_BROKER_URL", "").strip():
        return "external"
    mode: str = config.getoption("--broker")
    return mode


def _require(config: pytest.Config) -> bool:
    env = os.environ.get("JMSPY_REQUIRE_BROKER_TESTS", "").strip().lower()
    return env in _TRUE or bool(config.getoption("--require-broker-tests"))


def pytest_report_header(config: pytest.Config) -> str:
    mode = _mode(config)
    required = "; required to run" if _require(config) else ""
    if mode == "external":
        kind = os.environ.get("JMSPY_BROKER_KIND", "artemis")
        where = f"external {kind} at {os.environ['JMSPY_BROKER_URL']} (JMSPY_BROKER_URL)"
        return f"jmspy broker tests use: {where}{required}"
    try:
        from jmspy.conformance.brokers import cache_dir
        from jmspy.conformance.brokers.artemis import candidate_versions
        from jmspy.conformance.brokers.container import DEFAULT_IMAGE
    except Exception as exc:  # a header must not abort the run; the fixture reports it
        return f"jmspy broker tests use: {mode} broker, but jmspy does not import: {exc!r}"
    if mode == "container":
        image = os.environ.get("JMSPY_ARTEMIS_IMAGE", "").strip() or DEFAULT_IMAGE
        where = f"Artemis container {image} via testcontainers (--broker=container)"
    else:
        versions = ", ".join(candidate_versions())
        where = (
            f"local Apache Artemis process (first of {versions} on Maven Central; "
            f"cache {cache_dir()})"
        )
    return f"jmspy broker tests use: {where}{required}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if any(directory in item.path.parents for directory in BROKER_TESTS_DIRS):
            item.add_marker(pytest.mark.broker)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Download Artemis before the first test when broker tests are selected.

    A cold-cache download inside the session fixture would count against the first broker
    test's pytest-timeout and could fail it; here no timeout runs. A failure is kept and
    raised by the fixture, so it surfaces as a test ERROR instead of aborting the run.
    """
    config = session.config
    if _mode(config) != "local" or config.option.collectonly:
        return
    if not any(item.get_closest_marker("broker") for item in session.items):
        return
    try:
        from jmspy.conformance.brokers.artemis import ensure_distribution
    except Exception as exc:  # reported by the broker fixture, as an ERROR per broker test
        config.stash[_TALLY].prefetch_error = exc
        return

    reporter = config.pluginmanager.get_plugin("terminalreporter")

    def say(message: str) -> None:
        if reporter is not None:
            reporter.write_line(f"jmspy: {message}")
        else:
            print(f"jmspy: {message}", file=sys.stderr)

    try:
        ensure_distribution(log=say)
    except Exception as exc:  # re-raised by the broker fixture as an ERROR
        config.stash[_TALLY].prefetch_error = exc


@pytest.fixture(scope="session")
def broker(request: pytest.FixtureRequest) -> Iterator[BrokerInfo]:
    """The broker every broker test talks to (see the module docstring for the choice)."""
    config = request.config
    tally = config.stash[_TALLY]
    mode = _mode(config)
    if mode == "external":
        info = BrokerInfo(
            url=os.environ["JMSPY_BROKER_URL"].strip(),
            username=os.environ.get("JMSPY_BROKER_USER", "admin"),
            password=os.environ.get("JMSPY_BROKER_PASSWORD", "admin"),
            kind=os.environ.get("JMSPY_BROKER_KIND", "artemis"),
            version=os.environ.get("JMSPY_BROKER_VERSION", "unknown version"),
            source="external",
        )
        tally.info = info
        yield info
        return

    if mode == "container":
        from jmspy.conformance.brokers.started import DockerUnavailable

        try:
            with _started("container") as info:
                tally.info = info
                yield info
        except DockerUnavailable as exc:  # raised by the start, before anything was yielded
            pytest.skip(f"--broker=container needs Docker: {exc}")
        return

    with _local_artemis(config) as info:
        tally.info = info
        yield info


@pytest.fixture(scope="session")
def local_artemis(request: pytest.FixtureRequest) -> Any:
    """``with local_artemis(**options) as info``: a private local Artemis made like the
    session's (the suite's address settings; ``options`` are ArtemisBroker keyword arguments),
    stopped when the block ends; ``info.broker`` is the ArtemisBroker (kill, restart...)."""
    return functools.partial(_local_artemis, request.config)


@contextlib.contextmanager
def _local_artemis(config: pytest.Config, **options: Any) -> Iterator[BrokerInfo]:
    from jmspy.conformance.brokers import BrokerProvisioningError

    error = config.stash[_TALLY].prefetch_error
    if error is not None:
        text = str(error) if isinstance(error, BrokerProvisioningError) else repr(error)
        raise BrokerProvisioningError(text) from error
    with _started("artemis", **options) as info:
        yield info


@pytest.fixture(scope="session")
def rabbitmq(request: pytest.FixtureRequest) -> Iterator[BrokerInfo]:
    """A RabbitMQ 3.x broker with the AMQP 1.0 plugin (see the module docstring).

    The local node also has the dead-letter exchange ``jmspy.dlx`` bound to the queue
    ``jmspy.dlq`` and a policy dead-lettering queues named ``jmspy.dl.*`` to it;
    ``info.broker.declare_queue(name, {"x-max-priority": 10})`` declares queues with
    arguments, which AMQP 1.0 clients cannot do on 3.x.
    """
    tally = request.config.stash[_TALLY]
    url = os.environ.get("JMSPY_RABBITMQ_URL", "").strip()
    if url:
        info = BrokerInfo(
            url=url,
            username=os.environ.get("JMSPY_RABBITMQ_USER", "admin"),
            password=os.environ.get("JMSPY_RABBITMQ_PASSWORD", "admin"),
            kind="rabbitmq",
            version=os.environ.get("JMSPY_RABBITMQ_VERSION", "unknown version"),
            source="external",
        )
        tally.rabbitmq_info = info
        yield info
        return

    with _started("rabbitmq") as info:
        tally.rabbitmq_info = info
        yield info


@pytest.fixture(scope="session")
def activemq(request: pytest.FixtureRequest) -> Iterator[BrokerInfo]:
    """An ActiveMQ Classic broker with its AMQP transport (see the module docstring)."""
    tally = request.config.stash[_TALLY]
    url = os.environ.get("JMSPY_ACTIVEMQ_URL", "").strip()
    if url:
        info = BrokerInfo(
            url=url,
            username=os.environ.get("JMSPY_ACTIVEMQ_USER", "admin"),
            password=os.environ.get("JMSPY_ACTIVEMQ_PASSWORD", "admin"),
            kind="activemq",
            version=os.environ.get("JMSPY_ACTIVEMQ_VERSION", "unknown version"),
            source="external",
        )
        tally.other_infos["activemq"] = info
        yield info
        return
    with _started("activemq") as info:
        tally.other_infos["activemq"] = info
        yield info


#: Broker kind -> the session fixture providing it: the brokers ``any_broker`` runs a test on.
BROKER_FIXTURES: dict[str, str] = {
    "artemis": "broker",
    "rabbitmq": "rabbitmq",
    "activemq": "activemq",
    "qpid-broker-j": "qpid_broker_j",
}


@pytest.fixture(scope="session", params=list(BROKER_FIXTURES))
def any_broker(request: pytest.FixtureRequest) -> BrokerInfo:
    """Each broker of :data:`BROKER_FIXTURES` in turn (one test run per broker)."""
    info: BrokerInfo = request.getfixturevalue(BROKER_FIXTURES[request.param])
    return info


@pytest.fixture(scope="session")
def qpid_broker_j(request: pytest.FixtureRequest) -> Iterator[BrokerInfo]:
    """Apache Qpid Broker-J: the broker at ``JMSPY_QPID_BROKER_J_URL`` (``..._USER`` /
    ``..._PASSWORD``, default admin/admin) when set, else a local Broker-J 9.2.1 fetched from
    Maven Central and configured by jmspy.conformance.brokers.qpid_broker_j (PLAIN allowed over
    TCP, auto-created queues with maximumDeliveryAttempts and the dead-letter queue ``DLQ``),
    started on first use and shared by the session. A failed start is an ERROR."""
    url = os.environ.get("JMSPY_QPID_BROKER_J_URL", "").strip()
    tally = request.config.stash[_TALLY]
    if url:
        info = BrokerInfo(
            url=url,
            username=os.environ.get("JMSPY_QPID_BROKER_J_USER", "admin"),
            password=os.environ.get("JMSPY_QPID_BROKER_J_PASSWORD", "admin"),
            kind="qpid-broker-j",
            version=os.environ.get("JMSPY_QPID_BROKER_J_VERSION", "unknown version"),
            source="external",
        )
        tally.other_infos["qpid-broker-j"] = info
        yield info
        return
    with _started("qpid-broker-j") as info:
        tally.other_infos["qpid-broker-j"] = info
        yield info


@contextlib.contextmanager
def _started(spec: str, **options: Any) -> Iterator[BrokerInfo]:
    """Start a broker for the session the way the conformance suite starts it (see
    jmspy.conformance.brokers.started: artemis, rabbitmq or container) and stop it afterwards,
    whatever happens (a failed start is stopped too, so no process is left behind)."""
    from jmspy.conformance.brokers.started import started_broker

    with started_broker(spec, **options) as local:
        yield BrokerInfo(
            url=local.url,
            username=local.username,
            password=local.password,
            kind=local.kind,
            version=local.version,
            source="container" if spec == "container" else "local",
            broker=local,
        )


class _BrokerReportCounter:
    """Counts broker-test outcomes; a plugin object because the report hook gets no config."""

    def __init__(self, tally: _Tally) -> None:
        self.tally = tally

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if "broker" not in report.keywords:
            return
        tally = self.tally
        if report.when == "call":
            if report.skipped and not hasattr(report, "wasxfail"):
                tally.skipped[report.nodeid] = _skip_reason(report)
            else:
                # passed, failed, xfailed and xpassed all executed the test body
                tally.ran.add(report.nodeid)
        elif report.when == "setup":
            if report.skipped:
                tally.skipped[report.nodeid] = _skip_reason(report)
            elif report.failed:
                tally.errored.add(report.nodeid)


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Turn "no broker test ran" or "one was skipped" into a failing exit status when required.

    Runs before the terminal summary is written, so the summary can explain the failure.
    """
    config = session.config
    if not _require(config):
        return
    tally = config.stash[_TALLY]
    problems = []
    if not tally.ran:
        problems.append("no broker test ran")
    if tally.skipped:
        problems.append(f"{len(tally.skipped)} broker test(s) were skipped")
    if not problems:
        return
    tally.require_failure = "JMSPY_REQUIRE_BROKER_TESTS is set but " + " and ".join(problems)
    if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    tally = config.stash[_TALLY]
    info = tally.info
    if info is not None:
        target = f"{info.kind} {info.version} at {info.url}"
    elif tally.rabbitmq_info is not None:
        target = "RabbitMQ only (no Artemis broker was started)"
    else:
        target = "no broker (none was started)"
    line = f"jmspy broker tests: {len(tally.ran)} ran against {target}"
    extras = []
    if tally.skipped:
        extras.append(f"{len(tally.skipped)} skipped")
    if tally.errored:
        extras.append(f"{len(tally.errored)} errored in setup")
    if extras:
        line += f" ({', '.join(extras)})"
    terminalreporter.write_sep("-", "jmspy broker")
    terminalreporter.write_line(line)
    rabbit = tally.rabbitmq_info
    if rabbit is not None:
        node = rabbit.broker
        timings = getattr(node, "timings", {})
        started = f", started in {timings['start']:.1f}s" if "start" in timings else ""
        terminalreporter.write_line(
            f"jmspy RabbitMQ tests used: rabbitmq {rabbit.version} at {rabbit.url} "
            f"({rabbit.source}{started})"
        )
    for other in tally.other_infos.values():
        timings = getattr(other.broker, "timings", {})
        started = f", started in {timings['start']:.1f}s" if "start" in timings else ""
        terminalreporter.write_line(
            f"jmspy {other.kind} tests used: {other.kind} {other.version} at {other.url} "
            f"({other.source}{started})"
        )
    if tally.require_failure:
        terminalreporter.write_line(tally.require_failure, red=True, bold=True)
        for nodeid, reason in list(tally.skipped.items())[:10]:
            terminalreporter.write_line(f"  skipped: {nodeid}: {reason}", red=True)


# ---- fixtures shared by every directory of broker tests (broker/, interop/, conformance/) ----


@pytest.fixture
def unique_name(request: pytest.FixtureRequest) -> str:
    """A queue/topic name no other test (or earlier run on the same broker) uses: the tests
    share one broker, which keeps messages between runs."""
    import re
    import uuid

    base = re.sub(r"[^A-Za-z0-9]+", "-", request.node.name).strip("-")[:40]
    return f"jmspy-{base}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def factory(broker: BrokerInfo) -> Any:
    """A ConnectionFactory for the session's broker."""
    import jmspy

    return jmspy.ConnectionFactory(
        broker.url, broker.username, broker.password, connect_timeout=10000
    )


@pytest.fixture
def connection(factory: Any) -> Iterator[Any]:
    """A connection (created stopped), closed after the test whatever happens."""
    conn = factory.createConnection()
    try:
        yield conn
    finally:
        conn.close()
