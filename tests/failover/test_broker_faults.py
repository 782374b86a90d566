"""The fault fixtures themselves, against real brokers: kill -9 and restart, and the proxy.

These prove the tools the failover tests rely on: a killed broker is really gone (no
process, port refused), a restart brings the same broker back on the same port with its
persistent messages, nothing is left behind afterwards, and the FaultProxy carries a real
AMQP connection and breaks it on demand.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from jmspy.conformance.brokers import RabbitMQBroker
from jmspy.conformance.brokers._process import process_group_alive
from jmspy.conformance.brokers.base import port_accepts, port_below_ephemeral_range
from jmspy.conformance.faultproxy import FaultProxy

import jmspy
from jmspy import DeliveryMode

from .conftest import RESTART_TIMEOUT

pytestmark = pytest.mark.timeout(300)

N = 50


def _factory(url: str, info: Any) -> Any:
    return jmspy.ConnectionFactory(url, info.username, info.password, connect_timeout=10000)


def _send(info: Any, queue_name: str, bodies: list[str], mode: int) -> None:
    conn = _factory(info.url, info).createConnection()
    try:
        session = conn.createSession()
        producer = session.createProducer(session.createQueue(queue_name))
        producer.setDeliveryMode(mode)
        for body in bodies:
            producer.send(session.createTextMessage(body))
    finally:
        conn.close()


def _receive_all(
    info: Any, queue_name: str, quiet_ms: int = 1000, url: str | None = None
) -> list[str]:
    conn = _factory(url or info.url, info).createConnection()
    try:
        session = conn.createSession()
        consumer = session.createConsumer(session.createQueue(queue_name))
        conn.start()
        got: list[str] = []
        while (message := consumer.receive(quiet_ms if got else 10000)) is not None:
            got.append(message.getText())
        return got
    finally:
        conn.close()


def _processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes that mention ``text`` (an instance directory)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if text in cmdline and state not in ("Z", "X"):
            found.append(f"{entry.name}: {cmdline[:200]}")
    return found


def test_persistent_messages_survive_kill_and_restart(
    failover_artemis: Any, unique_name: str
) -> None:
    broker = failover_artemis.broker
    durable = [f"persistent-{i}" for i in range(N)]
    _send(failover_artemis, unique_name, durable, DeliveryMode.PERSISTENT)
    _send(failover_artemis, unique_name + ".np", ["gone"] * 5, DeliveryMode.NON_PERSISTENT)
    old_pid, port, instance = broker.pid, broker.port, broker.instance_dir

    broker.kill()
    assert not broker.running and broker.pid is None
    assert not process_group_alive(old_pid)
    assert not port_accepts(broker.host, port)
    assert not _processes_mentioning(str(instance))
    assert instance.is_dir()

    broker.restart(timeout=RESTART_TIMEOUT)
    assert broker.running and broker.pid != old_pid
    assert broker.port == port and failover_artemis.url == broker.url
    assert _receive_all(failover_artemis, unique_name) == durable
    # A crash loses what was never written: proof that this was not a clean shutdown.
    assert _receive_all(failover_artemis, unique_name + ".np", quiet_ms=500) == []
    print(f"artemis timings: {broker.timings}")


def test_a_killed_broker_is_restarted_before_the_next_test(failover_artemis: Any) -> None:
    # Leaves the broker down on purpose; _brokers_running brings it back for the next test.
    failover_artemis.broker.kill()
    assert not port_accepts(failover_artemis.host, failover_artemis.port)


def test_the_next_test_finds_it_running(failover_artemis: Any, unique_name: str) -> None:
    assert failover_artemis.broker.running
    _send(failover_artemis, unique_name, ["x"], DeliveryMode.PERSISTENT)
    assert _receive_all(failover_artemis, unique_name) == ["x"]


def test_restart_of_a_running_broker_stops_it_cleanly_first(
    second_artemis: Any, unique_name: str
) -> None:
    broker = second_artemis.broker
    _send(second_artemis, unique_name, ["kept"], DeliveryMode.PERSISTENT)
    old_pid = broker.pid
    broker.restart(timeout=RESTART_TIMEOUT)
    assert broker.pid != old_pid and broker.running
    assert _receive_all(second_artemis, unique_name) == ["kept"]


def test_two_brokers_are_independent(failover_artemis: Any, second_artemis: Any) -> None:
    assert failover_artemis.port != second_artemis.port
    # Below the source ports of outgoing connections (see port_below_ephemeral_range).
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    assert max(failover_artemis.port, second_artemis.port) < low
    second_artemis.broker.kill()
    assert port_accepts(failover_artemis.host, failover_artemis.port)
    assert not port_accepts(second_artemis.host, second_artemis.port)


def test_fault_proxy_carries_and_cuts_a_jmspy_connection(
    fault_proxy: FaultProxy, failover_artemis: Any, unique_name: str
) -> None:
    conn = _factory(fault_proxy.url, failover_artemis).createConnection()
    try:
        session = conn.createSession()
        queue = session.createQueue(unique_name)
        session.createProducer(queue).send(session.createTextMessage("via proxy"))
        consumer = session.createConsumer(queue)
        conn.start()
        assert consumer.receive(10000).getText() == "via proxy"
        assert fault_proxy.connections == 1 and fault_proxy.bytes_forwarded > 0
        assert fault_proxy.cut() == 1
        assert fault_proxy.connections == 0
    finally:
        conn.close()
    # The broker is untouched and the proxy serves the next connection. (Whether the
    # message comes back depends on whether its acknowledgement beat the cut.)
    _send(failover_artemis, unique_name, ["after the cut"], DeliveryMode.PERSISTENT)
    got = _receive_all(failover_artemis, unique_name, quiet_ms=300, url=fault_proxy.url)
    assert got[-1:] == ["after the cut"] and set(got) <= {"via proxy", "after the cut"}
    assert fault_proxy.accepted == 2


_ATEXIT_SCRIPT = textwrap.dedent(
    """
    import sys
    from jmspy.conformance.brokers import ArtemisBroker
    broker = ArtemisBroker().start(timeout=float(sys.argv[1]))
    broker.kill()
    broker.restart(timeout=float(sys.argv[1]))
    print(broker.instance_dir, broker.port, broker.pid, flush=True)
    # No stop(): the interpreter's exit hook must stop it and remove its directory.
    """
)


def test_exit_hook_stops_a_restarted_broker_and_removes_its_directory() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _ATEXIT_SCRIPT, str(RESTART_TIMEOUT)],
        capture_output=True,
        text=True,
        timeout=3 * RESTART_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    instance, port, pid = done.stdout.split()
    assert not process_group_alive(int(pid))
    assert not _processes_mentioning(instance)
    assert not port_accepts("127.0.0.1", int(port))
    assert not Path(instance).exists()


def test_rabbitmq_durable_queue_survives_kill_and_restart(unique_name: str) -> None:
    from proton import Message
    from proton import Timeout as ProtonTimeout
    from proton.utils import BlockingConnection

    queue = unique_name.replace("-", ".")
    # Restarted on the same port: one below the source ports of outgoing connections, which
    # could otherwise take it while the node is down (see port_below_ephemeral_range).
    with RabbitMQBroker(port=port_below_ephemeral_range()) as rabbit:
        rabbit.declare_queue(queue, durable=True)
        address = f"/amq/queue/{queue}"

        def connect() -> Any:
            return BlockingConnection(
                rabbit.url, user=rabbit.username, password=rabbit.password, timeout=20
            )

        conn = connect()
        try:
            sender = conn.create_sender(address)
            for i in range(N):
                sender.send(Message(body=f"durable-{i}", durable=True))
        finally:
            conn.close()
        old_pid, port, base = rabbit.pid, rabbit.port, rabbit.base_dir
        rabbit.kill()
        assert not process_group_alive(old_pid) and not port_accepts(rabbit.host, port)
        assert not _processes_mentioning(str(base))
        rabbit.restart(timeout=RESTART_TIMEOUT)
        assert rabbit.port == port and rabbit.pid != old_pid
        # The node lists the queue as running once it has recovered it. One it lost, or whose
        # process did not come back, is refused (amqp:not-found, ending the session, so the
        # attach below would only time out): say which, on the first line of the failure.
        deadline = time.monotonic() + RESTART_TIMEOUT
        while (state := rabbit.queue_state(queue)) != "running":
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the durable queue is {state or 'not listed'} {RESTART_TIMEOUT:.0f} s after "
                    f"the restart; the node's log: {rabbit.recovery_trouble()}\n"
                    f"node log:\n{rabbit.log_tail(80)}"
                )
            time.sleep(0.5)  # polled against the deadline: the node gives no event for it
        # An attach may still go unanswered for a moment after that: poll (a deadline, not a
        # sleep): the test is about what the queue holds once it is back.
        while True:
            conn = connect()
            try:
                receiver = conn.create_receiver(address, credit=N)
                break
            except ProtonTimeout as exc:
                conn.close()
                if time.monotonic() > deadline:
                    queues = rabbit.rabbitmqctl(
                        "list_queues", "name", "state", "pid", "messages", check=False
                    )
                    raise AssertionError(
                        f"the durable queue was not attachable {RESTART_TIMEOUT:.0f} s after the "
                        f"restart: {exc}\nqueues: {queues.stdout}{queues.stderr}\n"
                        f"node log:\n{rabbit.log_tail(80)}"
                    ) from exc
        try:
            got = []
            for _ in range(N):
                message = receiver.receive(timeout=20)
                got.append(message.body)
                receiver.accept()
        finally:
            conn.close()
        assert got == [f"durable-{i}" for i in range(N)]
        print(f"rabbitmq timings: {rabbit.timings}")
    assert not _processes_mentioning(str(base)) and not base.exists()


def _proton(url: str, info: Any) -> Any:
    from proton.utils import BlockingConnection

    return BlockingConnection(url, user=info.username, password=info.password, timeout=20)


def test_frozen_proxy_is_silence_until_thawed(
    fault_proxy: FaultProxy, failover_artemis: Any, unique_name: str
) -> None:
    from proton import Message, Timeout

    proxied = _proton(fault_proxy.url, failover_artemis)
    direct = _proton(failover_artemis.url, failover_artemis)
    try:
        receiver = proxied.create_receiver(unique_name, credit=10)
        fault_proxy.freeze()
        direct.create_sender(unique_name).send(Message(body="held back"))
        # The broker has sent it to the proxied receiver; the proxy holds it back.
        with pytest.raises(Timeout):
            receiver.receive(timeout=1)
        assert fault_proxy.connections == 1
        fault_proxy.thaw()
        assert receiver.receive(timeout=20).body == "held back"
        receiver.accept()
    finally:
        direct.close()
        proxied.close()


def test_broker_killed_behind_the_proxy_ends_the_connection_and_restart_serves_again(
    fault_proxy: FaultProxy, failover_artemis: Any, unique_name: str
) -> None:
    from proton import ConnectionException

    _send(failover_artemis, unique_name, ["before"], DeliveryMode.PERSISTENT)
    proxied = _proton(fault_proxy.url, failover_artemis)
    try:
        failover_artemis.broker.kill()
        with pytest.raises(ConnectionException):
            proxied.wait(lambda: False, timeout=20)
    finally:
        proxied.close()
    _wait_for(lambda: fault_proxy.connections == 0, "the proxied connection to close")
    failover_artemis.broker.restart(timeout=RESTART_TIMEOUT)
    assert _receive_all(failover_artemis, unique_name, url=fault_proxy.url) == ["before"]
    assert fault_proxy.accepted == 2


def _wait_for(predicate: Any, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out after {timeout}s waiting for {what}"
        time.sleep(0.05)
