"""``jmspy-broker``: fetch, start, stop and list local test brokers from a shell.

    eval "$(jmspy-broker start artemis)"    # exports JMSPY_BROKER_URL/_USER/_PASSWORD
    python -m pytest                        # broker tests use that broker
    jmspy-broker stop

    jmspy-broker fetch rabbitmq             # check (as root: apt-get install) rabbitmq-server
    eval "$(jmspy-broker start rabbitmq)"   # exports JMSPY_RABBITMQ_URL/_USER/_PASSWORD
    eval "$(jmspy-broker start activemq)"   # exports JMSPY_ACTIVEMQ_URL/_USER/_PASSWORD
    eval "$(jmspy-broker start qpid-broker-j)"  # exports JMSPY_QPID_BROKER_J_URL/_USER/_PASSWORD

Started brokers are recorded in ``<cache>/brokers.json`` so ``stop`` and ``status`` can find
them from another process. Human-readable progress goes to stderr; stdout carries only
the variables, so it can be ``eval``-ed or appended to ``$GITHUB_ENV`` (``--plain``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import shutil
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from . import SUPPORTED_KINDS
from ._process import process_group_alive, stop_process_group
from .activemq import ActiveMQBroker, ensure_activemq
from .artemis import ArtemisBroker, ensure_distribution
from .base import BrokerProvisioningError, cache_dir, file_lock
from .qpid_broker_j import QpidBrokerJ
from .qpid_broker_j import ensure_distribution as ensure_qpid_broker_j
from .rabbitmq import QueueSpec, RabbitMQBroker, ensure_installation

__all__ = ["main"]


def _err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- state file


def state_path() -> Path:
    return cache_dir() / "brokers.json"


@contextlib.contextmanager
def _state() -> Iterator[list[dict[str, Any]]]:
    """Read-modify-write the list of recorded brokers under a lock."""
    path = state_path()
    with file_lock(path.with_suffix(".lock"), timeout=30.0, what="the broker state file"):
        try:
            records = json.loads(path.read_text())
            if not isinstance(records, list):
                records = []
        except (OSError, ValueError):
            records = []
        yield records
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(records, indent=2) + "\n")
        tmp.replace(path)


def _is_alive(record: dict[str, Any]) -> bool:
    """True when the recorded pid still is that broker (not a recycled pid)."""
    pid = record.get("pid")
    if not isinstance(pid, int) or not process_group_alive(pid):
        return False
    if Path("/proc/self/cmdline").exists():
        # A RabbitMQ node's leader is a shell script; its environment names the node's
        # directory. Artemis names its instance on the JVM command line.
        rabbit = record.get("kind") == "rabbitmq"
        try:
            data = Path(f"/proc/{pid}/{'environ' if rabbit else 'cmdline'}").read_bytes()
        except OSError:
            return False
        if rabbit:
            marker = f"RABBITMQ_MNESIA_BASE={record.get('instance_dir')}/mnesia".encode()
        elif record.get("kind") == "activemq":
            marker = f"-Dactivemq.base={record.get('instance_dir')}".encode()
        elif record.get("kind") == "qpid-broker-j":
            marker = f"-DQPID_WORK={record.get('instance_dir')}".encode()
        else:
            marker = f"-Dartemis.instance={record.get('instance_dir')}".encode()
        return marker in data.split(b"\0")
    return True


# --------------------------------------------------------------------------- commands


def _env_lines(url: str, user: str, password: str, kind: str, plain: bool) -> list[str]:
    if kind == "rabbitmq":
        # What the tests' ``rabbitmq`` fixture reads; the Artemis variables stay untouched.
        values = {
            "JMSPY_RABBITMQ_URL": url,
            "JMSPY_RABBITMQ_USER": user,
            "JMSPY_RABBITMQ_PASSWORD": password,
        }
    elif kind == "activemq":
        # What the tests' ``activemq`` fixture reads.
        values = {
            "JMSPY_ACTIVEMQ_URL": url,
            "JMSPY_ACTIVEMQ_USER": user,
            "JMSPY_ACTIVEMQ_PASSWORD": password,
        }
    elif kind == "qpid-broker-j":
        # What the tests' ``qpid_broker_j`` fixture reads.
        values = {
            "JMSPY_QPID_BROKER_J_URL": url,
            "JMSPY_QPID_BROKER_J_USER": user,
            "JMSPY_QPID_BROKER_J_PASSWORD": password,
        }
    else:
        values = {
            "JMSPY_BROKER_URL": url,
            "JMSPY_BROKER_USER": user,
            "JMSPY_BROKER_PASSWORD": password,
            "JMSPY_BROKER_KIND": kind,
        }
    if plain:
        return [f"{k}={v}" for k, v in values.items()]
    return [f"export {k}={shlex.quote(v)}" for k, v in values.items()]


def _check_kind(kind: str) -> str:
    normalized = kind.strip().lower()
    if normalized not in SUPPORTED_KINDS:
        raise BrokerProvisioningError(
            f"unknown broker kind {kind!r}; supported: {', '.join(SUPPORTED_KINDS)}"
        )
    return normalized


def cmd_fetch(args: argparse.Namespace) -> int:
    kind = _check_kind(args.kind)
    started = time.monotonic()
    if kind == "rabbitmq":
        found = ensure_installation(install=not args.no_install, log=_err)
        _err(f"RabbitMQ {found.version} ready in {time.monotonic() - started:.1f}s ({found.home})")
        print(found.home)
        return 0
    if kind == "activemq":
        amq = ensure_activemq(args.version, log=_err)
        _err(f"ActiveMQ Classic {amq.version} ready in {time.monotonic() - started:.1f}s")
        print(amq.home)
        return 0
    if kind == "qpid-broker-j":
        qpid = ensure_qpid_broker_j(args.version, log=_err)
        _err(f"Apache Qpid Broker-J {qpid.version} ready in {time.monotonic() - started:.1f}s")
        print(qpid.home)
        return 0
    versions = [args.version] if args.version else None
    dist = ensure_distribution(versions, log=_err)
    _err(f"Apache Artemis {dist.version} ready in {time.monotonic() - started:.1f}s")
    print(dist.home)
    return 0


def _parse_queue(text: str) -> QueueSpec:
    name, sep, arguments = text.partition("=")
    if not name:
        raise BrokerProvisioningError(f"--queue needs a name: {text!r}")
    try:
        parsed = json.loads(arguments) if sep else {}
    except ValueError as exc:
        raise BrokerProvisioningError(f"--queue {text!r}: arguments are not JSON: {exc}") from exc
    if not isinstance(parsed, dict):
        raise BrokerProvisioningError(f"--queue {text!r}: arguments must be a JSON object")
    return QueueSpec(name, parsed)


def _make_broker(
    args: argparse.Namespace, kind: str
) -> ArtemisBroker | RabbitMQBroker | ActiveMQBroker | QpidBrokerJ:
    if kind == "rabbitmq":
        artemis_only = [
            flag
            for flag, value in (
                ("--property", args.property),
                ("--version", args.version),
                ("--java-memory", args.java_memory != "512M"),
            )
            if value
        ]
        if artemis_only:
            raise BrokerProvisioningError(f"{', '.join(artemis_only)}: Artemis options only")
        return RabbitMQBroker(
            port=args.port,
            username=args.user,
            password=args.password,
            base_dir=args.instance_dir,
            queues=[_parse_queue(q) for q in args.queue or ()],
            log=_err,
        )
    if args.queue:
        raise BrokerProvisioningError("--queue: RabbitMQ option only")
    if kind == "activemq":
        if args.property:
            raise BrokerProvisioningError("--property: Artemis option only")
        return ActiveMQBroker(
            port=args.port,
            username=args.user,
            password=args.password,
            instance_dir=args.instance_dir,
            java_memory=args.java_memory,
            version=args.version,
            log=_err,
        )
    if kind == "qpid-broker-j":
        if args.property:
            raise BrokerProvisioningError("--property: Artemis option only")
        return QpidBrokerJ(
            port=args.port,
            username=args.user,
            password=args.password,
            work_dir=args.instance_dir,
            java_memory=args.java_memory.lower(),
            version=args.version,
            log=_err,
        )
    return ArtemisBroker(
        port=args.port,
        username=args.user,
        password=args.password,
        instance_dir=args.instance_dir,
        broker_properties=args.property or (),
        java_memory=args.java_memory,
        versions=[args.version] if args.version else None,
        log=_err,
    )


def cmd_start(args: argparse.Namespace) -> int:
    kind = _check_kind(args.kind)
    broker = _make_broker(args, kind)
    try:
        broker.start(timeout=args.timeout)
    except BaseException:
        broker.stop()
        raise
    directory = broker.base_dir if isinstance(broker, RabbitMQBroker) else broker.instance_dir
    product = {
        "rabbitmq": "RabbitMQ",
        "activemq": "ActiveMQ Classic",
        "qpid-broker-j": "Apache Qpid Broker-J",
    }.get(kind, "Apache Artemis")
    record = {
        "kind": broker.kind,
        "version": broker.version,
        "pid": broker.pid,
        "url": broker.url,
        "port": broker.port,
        "username": broker.username,
        "password": broker.password,
        "instance_dir": str(directory),
        "log_path": str(broker.log_path),
        # Only directories we made are deleted on stop; a --instance-dir is the user's.
        "owns_dir": args.instance_dir is None,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "foreground": not args.detach,
    }
    with _state() as records:
        records[:] = [r for r in records if _is_alive(r) and r.get("port") != broker.port]
        records.append(record)
    _err(
        f"{product} {broker.version} running at {broker.url} (pid {broker.pid}, "
        f"instance {directory}); "
        + ("stop it with: jmspy-broker stop" if args.detach else "Ctrl-C stops it")
    )
    for line in _env_lines(broker.url, broker.username, broker.password, broker.kind, args.plain):
        print(line)
    sys.stdout.flush()
    if args.detach:
        broker.detach()
        return 0
    return _run_foreground(broker)


def _run_foreground(broker: ArtemisBroker | RabbitMQBroker | ActiveMQBroker | QpidBrokerJ) -> int:
    def on_term(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    status = 0
    try:
        while broker.running:
            time.sleep(0.5)
        _err(f"the broker exited on its own; last log lines:\n{broker.log_tail(20)}")
        status = 1
    except KeyboardInterrupt:
        _err("stopping the broker ...")
    finally:
        port = broker.port
        broker.stop()
        with _state() as records:
            records[:] = [r for r in records if r.get("port") != port and _is_alive(r)]
    return status


def _stop_record(record: dict[str, Any], timeout: float) -> None:
    pid = record.get("pid")
    if isinstance(pid, int) and _is_alive(record):
        graceful = stop_process_group(pid, timeout)
        how = "stopped" if graceful else "killed (did not stop in time)"
        _err(f"{record.get('kind', 'broker')} at {record.get('url')} (pid {pid}) {how}")
    else:
        _err(f"{record.get('kind', 'broker')} at {record.get('url')} was not running")
    instance = record.get("instance_dir")
    if record.get("owns_dir") and isinstance(instance, str) and instance:
        shutil.rmtree(instance, ignore_errors=True)


def cmd_stop(args: argparse.Namespace) -> int:
    with _state() as records:
        chosen = [r for r in records if args.port is None or r.get("port") == args.port]
        if not chosen:
            _err(
                "no recorded broker"
                + ("" if args.port is None else f" on port {args.port}")
                + f" (state file {state_path()})"
            )
            return 0 if args.port is None else 1
        for record in chosen:
            _stop_record(record, args.timeout)
        records[:] = [r for r in records if r not in chosen]
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    with _state() as records:
        alive = [r for r in records if _is_alive(r)]
        # Forget brokers that died or were stopped by other means.
        records[:] = alive
    if args.json:
        print(json.dumps(alive, indent=2))
    elif not alive:
        print("no broker running")
    for r in [] if args.json else alive:
        print(
            f"{r.get('kind')} {r.get('version')} {r.get('url')} pid={r.get('pid')} "
            f"user={r.get('username')} instance={r.get('instance_dir')} log={r.get('log_path')}"
        )
    return 0 if alive else 1


# --------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jmspy-broker",
        description="Fetch, start and stop the local brokers jmspy's tests run against.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    fetch = sub.add_parser(
        "fetch",
        help="artemis, qpid-broker-j: download and unpack (warms the cache); rabbitmq: check "
        "the installed rabbitmq-server package, installing it with apt-get when root",
    )
    fetch.add_argument("kind", help="broker kind: artemis, rabbitmq, activemq or qpid-broker-j")
    fetch.add_argument("--version", help="exact release instead of the newest candidate")
    fetch.add_argument(
        "--no-install",
        action="store_true",
        help="rabbitmq: only check, never run apt-get (fails when the package is missing)",
    )
    fetch.set_defaults(func=cmd_fetch)

    start = sub.add_parser("start", help="start a broker and print its connection variables")
    start.add_argument("kind", help="broker kind: artemis, rabbitmq, activemq or qpid-broker-j")
    start.add_argument("--port", type=int, help="AMQP port (default: a free one)")
    mode = start.add_mutually_exclusive_group()
    mode.add_argument(
        "--detach",
        dest="detach",
        action="store_true",
        default=True,
        help="leave the broker running in the background (default)",
    )
    mode.add_argument(
        "--foreground",
        dest="detach",
        action="store_false",
        help="keep running until Ctrl-C or SIGTERM, then stop the broker",
    )
    start.add_argument("--user", default="admin")
    start.add_argument("--password", default="admin")
    start.add_argument(
        "--property",
        action="append",
        metavar="LINE",
        help="a broker.properties line, e.g. 'addressSettings.\"q.#\".redeliveryDelay=100'",
    )
    start.add_argument(
        "--queue",
        action="append",
        metavar="NAME[=JSON]",
        help="rabbitmq: declare a queue at boot, e.g. 'jmspy.prio.q={\"x-max-priority\": 10}'",
    )
    start.add_argument("--instance-dir", help="create the instance here (default: a temp dir)")
    start.add_argument("--java-memory", default="512M", help="JVM heap (-Xmx)")
    start.add_argument("--version", help="exact release instead of the newest candidate")
    start.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for start")
    start.add_argument(
        "--plain", action="store_true", help="print NAME=value lines (for $GITHUB_ENV)"
    )
    start.set_defaults(func=cmd_start)

    stop = sub.add_parser("stop", help="stop brokers started with 'start'")
    stop.add_argument("--port", type=int, help="only the broker on this port")
    stop.add_argument("--timeout", type=float, default=30.0)
    stop.set_defaults(func=cmd_stop)

    status = sub.add_parser("status", help="list running brokers (exit 1 if none)")
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=cmd_status)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        result: int = args.func(args)
        return result
    except BrokerProvisioningError as exc:
        _err(f"jmspy-broker: {exc}")
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
