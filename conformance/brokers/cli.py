"""``jmspy-broker``: fetch, start, stop and list local test brokers from a shell.

    eval "$(jmspy-broker start artemis)"    # exports JMSPY_BROKER_URL/_USER/_PASSWORD
    python -m pytest                        # broker tests use that broker
    jmspy-broker stop

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
from .artemis import ArtemisBroker, ensure_distribution, process_group_alive, stop_process_group
from .base import BrokerProvisioningError, cache_dir, file_lock

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
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return False
        marker = f"-Dartemis.instance={record.get('instance_dir')}".encode()
        return marker in args
    return True


# --------------------------------------------------------------------------- commands


def _env_lines(url: str, user: str, password: str, kind: str, plain: bool) -> list[str]:
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
    _check_kind(args.kind)
    started = time.monotonic()
    versions = [args.version] if args.version else None
    dist = ensure_distribution(versions, log=_err)
    _err(f"Apache Artemis {dist.version} ready in {time.monotonic() - started:.1f}s")
    print(dist.home)
    return 0


def cmd_start(args: argparse.Namespace) -> int:
    _check_kind(args.kind)
    broker = ArtemisBroker(
        port=args.port,
        username=args.user,
        password=args.password,
        instance_dir=args.instance_dir,
        broker_properties=args.property or (),
        java_memory=args.java_memory,
        versions=[args.version] if args.version else None,
        log=_err,
    )
    try:
        broker.start(timeout=args.timeout)
    except BaseException:
        broker.stop()
        raise
    record = {
        "kind": broker.kind,
        "version": broker.version,
        "pid": broker.pid,
        "url": broker.url,
        "port": broker.port,
        "username": broker.username,
        "password": broker.password,
        "instance_dir": str(broker.instance_dir),
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
        f"Apache Artemis {broker.version} running at {broker.url} (pid {broker.pid}, "
        f"instance {broker.instance_dir}); "
        + ("stop it with: jmspy-broker stop" if args.detach else "Ctrl-C stops it")
    )
    for line in _env_lines(broker.url, broker.username, broker.password, broker.kind, args.plain):
        print(line)
    sys.stdout.flush()
    if args.detach:
        broker.detach()
        return 0
    return _run_foreground(broker)


def _run_foreground(broker: ArtemisBroker) -> int:
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

    fetch = sub.add_parser("fetch", help="download and unpack a broker (warms the cache)")
    fetch.add_argument("kind", help="broker kind: artemis")
    fetch.add_argument("--version", help="exact release instead of the newest candidate")
    fetch.set_defaults(func=cmd_fetch)

    start = sub.add_parser("start", help="start a broker and print its connection variables")
    start.add_argument("kind", help="broker kind: artemis")
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
