"""What the local brokers share: a broker run as a process group of its own.

:class:`~.artemis.ArtemisBroker` and :class:`~.rabbitmq.RabbitMQBroker` both run their
server in a new session with its output appended to a log, wait with a deadline until it
is ready (retrying on another free port when the one they picked was taken meanwhile),
stop it with SIGTERM and then SIGKILL, and stop whatever they still own when the
interpreter exits. For fault-injection tests a broker can also be crashed (``kill()``:
SIGKILL, directory kept) and brought back on the same directory and port (``restart()``).
:class:`LocalBroker` is that lifecycle; the subclasses say what to run, what "ready" means
and which log lines explain a failure.
"""

from __future__ import annotations

import atexit
import contextlib
import enum
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Generic, Protocol, Self, TypedDict, TypeVar

from .base import BrokerProvisioningError, Endpoint, free_port, port_accepts

__all__ = [
    "PORT_TAKEN",
    "LocalBroker",
    "LocalBrokerOptions",
    "Release",
    "LogWindow",
    "Wait",
    "failure_report",
    "process_group_alive",
    "stop_process_group",
    "tail",
]

#: What a launch attempt returns when the chosen port was taken; start() retries on another.
PORT_TAKEN = "port-taken"

# What the owner writes to a launch's watchdog when it took care of the broker itself.
_WATCHDOG_DONE = b"done"


# --------------------------------------------------------------------------- process groups


def process_group_alive(pgid: int) -> bool:
    """True while a process of group ``pgid`` is still running.

    Zombies do not count: a broker we did not start (``jmspy-broker stop`` from another
    shell) stays a zombie until init reaps it, and in containers without a reaping init
    that never happens.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ..."; comm may itself contain spaces and parentheses.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) >= 3 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


def stop_process_group(
    pgid: int,
    timeout: float = 30.0,
    reap: Callable[[], object] | None = None,
) -> bool:
    """SIGTERM a process group, wait up to ``timeout``, then SIGKILL what is left.

    Returns True when the group ended on SIGTERM. ``reap`` is called while waiting so a
    parent can collect its child (a zombie still counts as a group member).
    """
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if reap is not None:
            reap()
        if not process_group_alive(pgid):
            return True
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    kill_deadline = time.monotonic() + 10.0
    while time.monotonic() < kill_deadline:
        if reap is not None:
            reap()
        if not process_group_alive(pgid):
            break
        time.sleep(0.05)
    return False


# --------------------------------------------------------------------------- logs


def tail(text: str, lines: int = 40) -> str:
    """The last ``lines`` lines of ``text``."""
    return "\n".join(text.splitlines()[-lines:])


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _read(path: Path, offset: int = 0) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            return handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


class LogWindow:
    """What has been appended to some log files since the window was made.

    A retry appends to the same files, so only what one launch attempt wrote counts.
    """

    def __init__(self, *paths: Path) -> None:
        self._offsets = {path: _size(path) for path in paths}

    def text(self) -> str:
        return "".join(_read(path, offset) for path, offset in self._offsets.items())


def failure_report(
    headline: str, log_text: str, *, is_key: Callable[[str], object], label: str, where: str
) -> str:
    """A start failure for a person: what happened, where, the key log lines, the last ones.

    The first eight lines ``is_key`` picks come first, under ``label``: the line that says
    what went wrong is easily pushed out of a short tail (by a stack trace, say).
    """
    key_lines = [line.strip() for line in log_text.splitlines() if is_key(line)][:8]
    errors = (f"\n{label}:\n  " + "\n  ".join(key_lines)) if key_lines else ""
    return f"{headline} ({where}){errors}\nlast lines:\n{tail(log_text, 15) or '(empty log)'}"


# --------------------------------------------------------------------------- the lifecycle


class Wait(enum.Enum):
    """What a readiness check may conclude besides a failure (a message)."""

    READY = enum.auto()
    PENDING = enum.auto()


# Brokers this process started and still owns; stopped at interpreter exit so a crashed
# test session does not leave servers behind. Detached brokers are removed from it.
_OWNED: set[LocalBroker] = set()


@atexit.register
def _stop_owned() -> None:
    for broker in list(_OWNED):
        with contextlib.suppress(Exception):
            broker.stop(timeout=10.0)


class Release(Protocol):
    """What a local broker runs from: a release unpacked or installed on this machine."""

    @property
    def version(self) -> str: ...

    @property
    def home(self) -> Path: ...


R = TypeVar("R", bound=Release)


class LocalBrokerOptions(TypedDict, total=False):
    """The constructor arguments every local broker takes (defaults in :class:`LocalBroker`)."""

    port: int | None
    host: str
    username: str
    password: str
    log: Callable[[str], None] | None


class LocalBroker(Endpoint, Generic[R]):
    """A broker run as a local process group on ``host:port`` with a directory of its own.

    ``port=None`` picks a free port, and start() retries with another one when a launch
    attempt reports :data:`PORT_TAKEN`. A directory the broker made itself (``directory``
    None) is deleted by stop() unless ``keep_dir``. ``release`` is what it runs from, found
    by :meth:`fetch` when not given. Subclasses implement :meth:`_find_release`,
    :meth:`_prepare` and :meth:`_launch_and_wait` (with :meth:`_spawn` and
    :meth:`_await_ready`).
    """

    def __init__(
        self,
        *,
        directory: str | os.PathLike[str] | None,
        keep_dir: bool,
        release: R | None = None,
        port: int | None = None,
        host: str = "127.0.0.1",
        username: str = "admin",
        password: str = "admin",
        log: Callable[[str], None] | None = None,
    ) -> None:
        self._release: R | None = release
        self._host = host
        self._fixed_port = port is not None
        self._port = port if port is not None else free_port(host)
        self._username = username
        self._password = password
        self._owns_dir = directory is None
        self._dir: Path | None = Path(directory).resolve() if directory else None
        self._keep_dir = keep_dir
        self._log = log
        self._proc: subprocess.Popen[bytes] | None = None
        self._pgid: int | None = None
        self._launched = False  # start() succeeded once: restart() has a port and data
        self.timings: dict[str, float] = {}
        # The watchdog of the current launch and the pipe end that tells it (see _watchdog).
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._watchdog_pipe: int | None = None

    @property
    def version(self) -> str:
        """The release's version; empty until the release is found (fetch/start)."""
        return self._release.version if self._release is not None else ""

    @property
    def pid(self) -> int | None:
        """The process group id (the pid of its leader) while the broker runs."""
        return self._pgid

    @property
    def running(self) -> bool:
        if self._proc is not None:
            return self._proc.poll() is None
        return self._pgid is not None and process_group_alive(self._pgid)

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<{type(self).__name__} {self.version or '?'} {self.url} {state}>"

    # ------------------------------------------------------------------ lifecycle

    def fetch(self) -> R:
        """Find the release to run (see :meth:`_find_release`), once; start() calls it."""
        if self._release is None:
            with self._timed("fetch"):
                self._release = self._find_release()
        return self._release

    def start(self, timeout: float = 60.0) -> Self:
        """Run the broker and return once it is ready for clients (a no-op when running)."""
        if self.running:
            return self
        self._prepare()
        attempts = 1 if self._fixed_port else 3
        started = time.monotonic()
        for attempt in range(1, attempts + 1):
            outcome = self._launch_and_wait(timeout)
            if outcome is None:
                self.timings["start"] = time.monotonic() - started
                self._launched = True
                _OWNED.add(self)
                return self
            if outcome == PORT_TAKEN and attempt < attempts:
                # Someone grabbed the port after we picked it; take another one.
                self._port = free_port(self._host)
                self._port_changed()
                continue
            raise BrokerProvisioningError(outcome)
        raise AssertionError("unreachable")

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the broker; a no-op when it is not running. Safe to call repeatedly.

        The process group gets SIGTERM, which shuts the server down cleanly; whatever is
        left of it after ``timeout`` is killed.
        """
        _OWNED.discard(self)
        self._halt(timeout)
        if self._owns_dir and not self._keep_dir and self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir_removed()

    def kill(self, timeout: float = 30.0) -> None:
        """Crash the broker: SIGKILL its whole process group, like ``kill -9`` or a power cut.

        Returns once no process of the group is left and nothing accepts on the AMQP port
        any more; BrokerProvisioningError if that does not happen within ``timeout``. The
        broker gets no chance to close connections or flush anything, and its directory
        (journal, queues) stays for :meth:`restart`; stop() or interpreter exit still
        deletes a directory the broker made itself. A no-op when it is not running.
        """
        pgid, proc = self._pgid, self._proc
        if pgid is None:
            return
        began = time.monotonic()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        deadline = began + timeout
        while True:
            if proc is not None:
                proc.poll()  # reap the leader: a zombie still counts as a group member
            alive = process_group_alive(pgid)
            # The listening socket closes when its process is gone; a port that still
            # accepts then belongs to someone else, and a restart could not bind it.
            accepts = not alive and port_accepts(self._host, self._port, timeout=0.2)
            if not alive and not accepts:
                break
            if time.monotonic() >= deadline:
                why = (
                    f"process group {pgid} is still alive"
                    if alive
                    else f"something else still accepts on {self._host}:{self._port}"
                )
                raise BrokerProvisioningError(
                    f"kill of {self!r} not done after {timeout:.0f}s: {why}"
                )
            time.sleep(0.05)
        self._unwatch()
        self._pgid = None
        self._proc = None
        self.timings["kill"] = time.monotonic() - began

    def restart(self, timeout: float = 60.0) -> Self:
        """Start the broker again on the same directory and the same port.

        After :meth:`kill` this is recovery from a crash: what the broker had persisted
        (durable queues, persistent messages) is there again. A running broker is first
        stopped cleanly (SIGTERM, its clients see a close), keeping its directory. Only one
        launch attempt is made: clients reconnect to the port they knew, so moving to
        another port when this one is taken would defeat the purpose.
        """
        if not self._launched or self._dir is None or not self._dir.exists():
            raise BrokerProvisioningError(
                f"restart() needs the directory of an earlier start of {self!r}; "
                "call start() (a stopped broker's own directory is deleted)"
            )
        self._halt(timeout)
        began = time.monotonic()
        fixed, self._fixed_port = self._fixed_port, True
        try:
            outcome = self._launch_and_wait(timeout)
        finally:
            self._fixed_port = fixed
        if outcome is not None:
            raise BrokerProvisioningError(outcome)
        self.timings["restart"] = time.monotonic() - began
        _OWNED.add(self)
        return self

    def detach(self) -> int:
        """Let the broker outlive this Python process (used by ``jmspy-broker start``).

        Returns the pid, which is also the process group to signal to stop it.
        """
        if self._pgid is None:
            raise BrokerProvisioningError("broker is not running")
        _OWNED.discard(self)
        self._owns_dir = False
        self._unwatch()
        # Forget the Popen handle so nothing in this process waits on or kills the child.
        self._proc = None
        return self._pgid

    # ------------------------------------------------------------------ for subclasses

    def _find_release(self) -> R:
        """Find (and if needed fetch) the release this broker runs from."""
        raise NotImplementedError

    def _directory(self, what: str, after: str) -> Path:
        """The broker's own directory; a clear error while it does not exist yet."""
        if self._dir is None:
            raise BrokerProvisioningError(f"the {what} directory exists only after {after}")
        return self._dir

    def _child_env(self) -> dict[str, str]:
        """The environment of the broker's processes and tools."""
        return dict(os.environ)

    def _run_tool(
        self,
        args: Sequence[str],
        *,
        what: str,
        timeout: float,
        cwd: Path | None = None,
        check: bool = True,
        tail_lines: int = 15,
    ) -> subprocess.CompletedProcess[str]:
        """Run one of the release's command-line tools to completion in the broker's
        environment; a tool that hangs, or fails when ``check``, raises an error naming
        ``what`` with the end of its output."""
        try:
            done = subprocess.run(
                list(args),
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                env=self._child_env(),
                stdin=subprocess.DEVNULL,
                cwd=cwd,
            )
        except subprocess.TimeoutExpired:
            # Not chained: TimeoutExpired quotes the command line, which may hold a password
            # (artemis create --password ...).
            raise BrokerProvisioningError(f"{what} did not finish within {timeout:.0f}s") from None
        if check and done.returncode != 0:
            raise BrokerProvisioningError(
                f"{what} failed (exit {done.returncode}):\n"
                + tail(done.stdout + done.stderr, tail_lines)
            )
        return done

    def _halt(self, timeout: float) -> None:
        """Stop the process group, if any, and forget it; the directory stays."""
        pgid, proc = self._pgid, self._proc
        try:
            if pgid is not None:
                began = time.monotonic()
                self._terminate(pgid, proc, timeout)
                self.timings["stop"] = time.monotonic() - began
        finally:
            self._unwatch()
        self._pgid = None
        self._proc = None

    def _prepare(self) -> None:
        """Everything start() needs before the first launch attempt."""

    def _launch_and_wait(self, timeout: float) -> str | None:
        """One launch attempt: None when ready, else why not (:data:`PORT_TAKEN` retries)."""
        raise NotImplementedError

    def _port_changed(self) -> None:
        """start() picked another port for the next attempt."""

    def _dir_removed(self) -> None:
        """stop() deleted the broker's own directory."""

    def _terminate(self, pgid: int, proc: subprocess.Popen[bytes] | None, timeout: float) -> None:
        """Stop a running broker's process group (stop(); a failed start uses _abort())."""
        self._end_group(pgid, proc, timeout)

    @contextlib.contextmanager
    def _timed(self, step: str) -> Iterator[None]:
        """Record in :attr:`timings` how long ``step`` took when it succeeds."""
        started = time.monotonic()
        yield
        self.timings[step] = time.monotonic() - started

    def _spawn(
        self,
        args: Sequence[str],
        *,
        log_path: Path,
        cwd: Path,
        env: Mapping[str, str],
        program: object,
    ) -> subprocess.Popen[bytes] | str:
        """Start ``args`` with stdout and stderr appended to ``log_path``.

        Returns the process, or why ``program`` could not be run.
        """
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("ab") as out:
            try:
                proc = subprocess.Popen(
                    list(args),
                    cwd=cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=dict(env),
                    # Own session and process group: the whole tree can be signalled at once,
                    # a Ctrl-C in the terminal does not reach it, and it can outlive us.
                    start_new_session=True,
                )
            except OSError as exc:
                return f"could not run {program}: {exc}"
        self._proc, self._pgid = proc, proc.pid
        self._watch(proc.pid)
        return proc

    def _watch(self, pgid: int) -> None:
        """Start the watchdog that ends process group ``pgid`` (and deletes the directory
        the broker made itself) if this process dies without stopping it."""
        self._unwatch()
        read_end, write_end = os.pipe()  # not inherited by the brokers started later
        remove = str(self._dir) if self._owns_dir and not self._keep_dir and self._dir else None
        try:
            self._watchdog = subprocess.Popen(
                [sys.executable, "-m", "jmspy.conformance.brokers._watchdog", str(pgid)]
                + ([remove] if remove else []),
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                # Its own session: a signal meant for this process group does not reach it.
                start_new_session=True,
            )
        except OSError:
            os.close(write_end)
            raise
        finally:
            os.close(read_end)
        self._watchdog_pipe = write_end

    def _unwatch(self) -> None:
        """The broker is taken care of (stopped, killed on purpose, detached): the watchdog
        ends without touching it."""
        pipe, watchdog = self._watchdog_pipe, self._watchdog
        self._watchdog_pipe = self._watchdog = None
        if pipe is not None:
            with contextlib.suppress(OSError):
                os.write(pipe, _WATCHDOG_DONE)
            os.close(pipe)
        if watchdog is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                watchdog.wait(timeout=5)

    def _await_ready(
        self,
        timeout: float,
        log: LogWindow,
        assess: Callable[[str], Wait | str],
        timed_out: Callable[[str], str],
    ) -> str | None:
        """Poll ``assess`` with the log text until it decides or ``timeout`` passes.

        ``assess`` returns :attr:`Wait.READY`, :attr:`Wait.PENDING` or why the start failed;
        a failure, and the deadline, abort the attempt. ``timed_out`` is called after the
        abort with the last log text seen and returns the message.
        """
        deadline = time.monotonic() + timeout
        while True:
            text = log.text()
            verdict = assess(text)
            if verdict is Wait.READY:
                return None
            if verdict is not Wait.PENDING:
                self._abort()
                return verdict
            if time.monotonic() >= deadline:
                self._abort()
                return timed_out(text)
            time.sleep(0.1)

    def _abort(self) -> None:
        """Kill the process group of a failed start attempt."""
        try:
            if self._pgid is not None:
                self._end_group(self._pgid, self._proc, 10.0)
        finally:
            self._unwatch()
        self._proc = None
        self._pgid = None

    @staticmethod
    def _end_group(pgid: int, proc: subprocess.Popen[bytes] | None, timeout: float) -> None:
        stop_process_group(pgid, timeout, reap=proc.poll if proc is not None else None)
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
