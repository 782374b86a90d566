"""LocalBroker.kill() and restart() with a stand-in broker: a small Python TCP server.

The stand-in runs like a real broker (own process group, a child process of its own, a
directory, a port), so the lifecycle rules are checked in a second instead of the minute a
real broker takes; tests/failover checks the same with Artemis and RabbitMQ.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from jmspy.conformance.brokers import BrokerProvisioningError
from jmspy.conformance.brokers._process import (
    PORT_TAKEN,
    LocalBroker,
    LogWindow,
    Wait,
    process_group_alive,
)
from jmspy.conformance.brokers.base import port_accepts

pytestmark = pytest.mark.timeout(60)

# Records each start in <dir>/starts, runs a child that must die with it, then serves.
_SERVER = """
import socket, subprocess, sys, time
port, home = int(sys.argv[1]), sys.argv[2]
child = subprocess.Popen(["sleep", "300"])
open(home + "/child.pid", "w").write(str(child.pid))
open(home + "/starts", "a").write("start\\n")
sock = socket.socket()
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    sock.bind(("127.0.0.1", port))
except OSError as exc:
    print("bind failed:", exc, flush=True)
    sys.exit(3)
sock.listen(8)
print("listening", flush=True)
while True:
    conn, _ = sock.accept()
    conn.close()
"""


class StandIn(LocalBroker):
    kind = "stand-in"
    _dir: Path | None

    def __init__(self, port: int | None = None) -> None:
        super().__init__(
            port=port,
            host="127.0.0.1",
            username="u",
            password="p",
            directory=None,
            keep_dir=False,
            log=None,
        )

    @property
    def version(self) -> str:
        return "1"

    @property
    def home(self) -> Path:
        assert self._dir is not None
        return self._dir

    def _prepare(self) -> None:
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="jmspy-stand-in-"))

    def _dir_removed(self) -> None:
        self._dir = None

    def _launch_and_wait(self, timeout: float) -> str | None:
        log_path = self.home / "console.log"
        log = LogWindow(log_path)
        proc = self._spawn(
            [sys.executable, "-c", _SERVER, str(self._port), str(self.home)],
            log_path=log_path,
            cwd=self.home,
            env=os.environ,
            program="python",
        )
        if isinstance(proc, str):
            return proc

        def assess(text: str) -> Wait | str:
            if "listening" in text and port_accepts(self._host, self._port):
                return Wait.READY
            if proc.poll() is None:
                return Wait.PENDING
            if "bind failed" in text and not self._fixed_port:
                return PORT_TAKEN
            return f"stand-in exited with {proc.returncode}: {text.strip()}"

        return self._await_ready(timeout, log, assess, lambda text: f"not ready: {text}")


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    broker = StandIn()
    yield broker
    broker.stop(timeout=5)


def test_kill_ends_the_whole_group_and_keeps_the_directory(stand_in: StandIn) -> None:
    stand_in.start(timeout=20)
    pgid, port, home = stand_in.pid, stand_in.port, stand_in.home
    assert pgid is not None
    child = int((home / "child.pid").read_text())
    assert _alive(child)
    stand_in.kill()
    assert not stand_in.running and stand_in.pid is None
    assert not process_group_alive(pgid) and not _alive(child)
    assert not port_accepts("127.0.0.1", port)
    assert home.is_dir()
    assert stand_in.timings["kill"] < 30
    stand_in.kill()  # a no-op when it is not running


def test_restart_uses_the_same_directory_and_port(stand_in: StandIn) -> None:
    stand_in.start(timeout=20)
    first_pid, port, home = stand_in.pid, stand_in.port, stand_in.home
    stand_in.kill()
    assert stand_in.restart(timeout=20) is stand_in
    assert stand_in.running and stand_in.pid != first_pid
    assert (stand_in.port, stand_in.home) == (port, home)
    assert (home / "starts").read_text().splitlines() == ["start", "start"]
    assert port_accepts("127.0.0.1", port)


def test_restart_of_a_running_broker_stops_it_first(stand_in: StandIn) -> None:
    stand_in.start(timeout=20)
    first_pid = stand_in.pid
    assert first_pid is not None
    stand_in.restart(timeout=20)
    assert not process_group_alive(first_pid)
    assert stand_in.running and stand_in.pid != first_pid
    assert (stand_in.home / "starts").read_text().count("start") == 2


def test_restart_on_a_taken_port_fails_instead_of_moving(stand_in: StandIn) -> None:
    stand_in.start(timeout=20)
    port = stand_in.port
    stand_in.kill()
    with socket.create_server(("127.0.0.1", port)):
        with pytest.raises(BrokerProvisioningError, match="exited"):
            stand_in.restart(timeout=20)
        assert not stand_in.running and stand_in.port == port
    stand_in.restart(timeout=20)
    assert stand_in.port == port and stand_in.running


def test_stop_after_kill_and_restart_leaves_nothing(stand_in: StandIn) -> None:
    stand_in.start(timeout=20)
    stand_in.kill()
    stand_in.restart(timeout=20)
    pgid, home = stand_in.pid, stand_in.home
    child = int((home / "child.pid").read_text())
    assert pgid is not None
    stand_in.stop(timeout=5)
    assert not process_group_alive(pgid) and not _alive(child)
    assert not home.exists()
    with pytest.raises(BrokerProvisioningError, match=r"call start\(\)"):
        stand_in.restart(timeout=20)


def test_restart_needs_an_earlier_start() -> None:
    with pytest.raises(BrokerProvisioningError, match="restart\\(\\) needs the directory"):
        StandIn().restart(timeout=5)


# Starts a stand-in broker, reports its process group and directory, then waits to be killed.
_OWNER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from test_broker_kill_restart import StandIn
broker = StandIn().start(timeout=20)
print(broker.pid, broker.home, flush=True)
time.sleep(120)
"""


def _wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("signal_name", ["SIGKILL", "SIGTERM"])
def test_a_broker_whose_owner_dies_is_stopped_and_its_directory_deleted(
    signal_name: str,
) -> None:
    """The owner killed outright (kill -9, or the SIGTERM of timeout or pkill: neither runs
    atexit) left its broker running for good, holding its port and its directory."""
    owner = subprocess.Popen(
        [sys.executable, "-c", _OWNER, str(Path(__file__).parent)],
        stdout=subprocess.PIPE,
        text=True,
    )
    pgid = 0
    try:
        assert owner.stdout is not None
        pid_text, home_text = owner.stdout.readline().split()
        pgid, home = int(pid_text), Path(home_text)
        child = int((home / "child.pid").read_text())
        assert process_group_alive(pgid) and _alive(child)
        owner.send_signal(getattr(signal, signal_name))
        owner.wait(timeout=20)
        assert _wait_for(lambda: not process_group_alive(pgid), 30), "the broker outlived it"
        assert not _alive(child)
        assert _wait_for(lambda: not home.exists(), 10), f"{home} is left behind"
    finally:
        owner.kill()
        owner.wait(timeout=20)
        if pgid and process_group_alive(pgid):
            os.killpg(pgid, signal.SIGKILL)


def test_a_stopped_or_detached_broker_ends_its_watchdog_and_a_detached_one_lives_on(
    stand_in: StandIn,
) -> None:
    stand_in.start(timeout=20)
    watchdog = stand_in._watchdog
    assert watchdog is not None and watchdog.poll() is None
    stand_in.kill()
    assert watchdog.returncode == 0 and stand_in._watchdog is None
    stand_in.restart(timeout=20)
    watchdog = stand_in._watchdog
    assert watchdog is not None
    home = stand_in.home
    pgid = stand_in.detach()
    try:
        # The watchdog has ended (a watchdog that misread the detach stops the group first).
        assert watchdog.poll() == 0 and stand_in._watchdog is None
        assert process_group_alive(pgid), "the detached broker was stopped"
    finally:
        os.killpg(pgid, signal.SIGKILL)
        shutil.rmtree(home, ignore_errors=True)  # a detached broker's directory is not ours
