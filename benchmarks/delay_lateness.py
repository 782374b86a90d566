"""How late scheduled messages arrive: N messages with delivery delays spread uniformly over
0..--max-delay ms, consumed by a jmspy MessageListener and, in the same run, by a Qpid JMS
MessageListener on the same kind of messages (same delays, same broker, one after the other).

    python benchmarks/delay_lateness.py [-n 10000] [--max-delay 10000] [--no-java]

Lateness of a message is the consumer's wall clock when its listener is called minus the
message's delivery time (its property "due": the producer's clock plus the delay, taken just
before the send, the time the broker is asked to deliver it at); negative means early. For
jmspy the lateness is split in two at the moment the transfer's bytes came off the socket in
the engine:

* broker (and network) share: socket read - delivery time;
* client share: listener call - socket read, itself split at the moment the transfer was
  decoded on the engine thread: engine (proton, decode) and dispatch (prefetch buffer, hand-off
  to the session's dispatch thread, up to the listener call).

Qpid JMS gives the end-to-end column only; its lateness is bounded below by the broker share,
which is the same broker on the same schedule. Both producers run in a separate process (a
jmspy producer, asynchronous non-persistent sends with a per-message delivery delay), so each
consumer's process does nothing but consume. Each consumer first gets --warmup undelayed
messages (not counted), then a pause of a few seconds, so that the JVM has compiled its
receive path before the scheduled messages come (and jmspy gets the same treatment). Before
both, --broker-warmup scheduled messages go through the broker's scheduler unmeasured, so that
a freshly started broker does not charge its own warm-up to whichever consumer runs first.

The Qpid JMS consumer is tests/interop/java/.../DelayLatenessConsumer.java, built (once per
source change, cached) with Maven by tests/interop/interop_support.py. Without Java or Maven
(or with --no-java) the Qpid JMS column is skipped with the reason. Without JMSPY_BROKER_URL a
local Apache Artemis is started for the run. Nothing is asserted about speed; a lost or
duplicated message fails the run.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

try:
    from _common import BenchmarkError, BrokerInfo, broker, format_table, fresh_queue, versions_line

    import jmspy
    from jmspy import DeliveryMode
    from jmspy._amqp import engine as engine_module
    from jmspy._amqp import receiver as receiver_module
except ImportError as exc:  # pragma: no cover - a broken environment, said plainly
    print(f"delay lateness benchmark cannot start: {exc}", file=sys.stderr)
    raise SystemExit(2) from exc

REPO = Path(__file__).resolve().parent.parent
INTEROP = REPO / "tests" / "interop"
JAVA_MAIN = "jmspy.interop.DelayLatenessConsumer"
# After the warm-up messages: time for a JVM to compile what they exercised.
WARMUP_PAUSE_S = 3.0


# ------------------------------------------------------------------------------ the producer


def produce(url: str, user: str, password: str, queue: str, delays: list[int], warmup: int) -> None:
    """Send ``warmup`` messages without delay, pause, then one message per delay (separate
    process: see the module docstring)."""
    factory = jmspy.ConnectionFactory(url, user, password)
    with factory.createConnection() as connection:
        session = connection.createSession()
        producer = session.createProducer(session.createQueue(queue))
        producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)
        for _ in range(warmup):
            message = session.createTextMessage("x" * 100)
            message.setBooleanProperty("warmup", True)
            producer.send(message)
        if warmup:
            time.sleep(WARMUP_PAUSE_S)
        for seq, delay in enumerate(delays):
            message = session.createTextMessage("x" * 100)
            message.setIntProperty("seq", seq)
            message.setLongProperty("due", int(time.time() * 1000) + delay)
            producer.setDeliveryDelay(delay)
            producer.send(message)
        producer.close()  # waits until the broker has every message


def start_producer(info: BrokerInfo, queue: str, delays: list[int], warmup: int) -> Any:
    # spawn: the parent has engine threads, which a fork would copy half-alive.
    context = multiprocessing.get_context("spawn")
    process = context.Process(
        target=produce, args=(info.url, info.username, info.password, queue, delays, warmup)
    )
    process.start()
    return process


def join_producer(process: Any) -> None:
    process.join(300)
    if process.exitcode != 0:
        raise BenchmarkError(f"the producer process failed (exit code {process.exitcode})")


# ------------------------------------------------------------------------- the jmspy consumer


class _Stamps:
    """The engine's last socket read, stamped on every transfer decoded after it."""

    last_read = (0.0, 0.0)  # (time.monotonic(), time.time())


def _instrument() -> None:
    """Stamp each received transfer with the moment its bytes came off the socket: the last
    engine read before the transfer is decoded (decoding happens in the same engine turn)."""
    original_read = engine_module.Engine._read

    def read(self: Any, sock: Any, capacity: int) -> None:
        _Stamps.last_read = (time.monotonic(), time.time())
        original_read(self, sock, capacity)

    base = receiver_module.InboundDelivery

    class Stamped(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            self.read_at = _Stamps.last_read

    engine_module.Engine._read = read  # type: ignore[method-assign]
    receiver_module.InboundDelivery = Stamped  # type: ignore[misc]


class Recorder:
    def __init__(self, session: Any, count: int) -> None:
        self.session = session
        self.count = count
        self.total_ms: list[float] = []
        self.broker_ms: list[float] = []
        self.client_ms: list[float] = []
        self.decode_ms: list[float] = []
        self.handoff_ms: list[float] = []
        self.seen: set[int] = set()
        self.duplicates = 0
        self.done = threading.Event()

    def onMessage(self, message: Any) -> None:
        now_mono, now_wall = time.monotonic(), time.time()
        if message.propertyExists("warmup"):
            return
        due_ms = message.getLongProperty("due")
        inbound = self.session._current_listener_delivery
        read_mono, read_wall = inbound.read_at
        seq = message.getIntProperty("seq")
        if seq in self.seen:
            self.duplicates += 1
            return
        self.seen.add(seq)
        self.total_ms.append(now_wall * 1000 - due_ms)
        self.broker_ms.append(read_wall * 1000 - due_ms)
        self.client_ms.append((now_mono - read_mono) * 1000)
        self.decode_ms.append((inbound.arrived - read_mono) * 1000)
        self.handoff_ms.append((now_mono - inbound.arrived) * 1000)
        if len(self.seen) >= self.count:
            self.done.set()


def run_jmspy(info: BrokerInfo, delays: list[int], warmup: int, limit_s: float) -> Recorder:
    _instrument()
    queue = fresh_queue("delay-jmspy")
    factory = jmspy.ConnectionFactory(info.url, info.username, info.password)
    with factory.createConnection() as connection:
        session = connection.createSession()
        recorder = Recorder(session, len(delays))
        session.createConsumer(session.createQueue(queue)).setMessageListener(recorder)
        connection.start()
        producer = start_producer(info, queue, delays, warmup)
        arrived = recorder.done.wait(limit_s)
        join_producer(producer)
        if not arrived:
            raise BenchmarkError(f"jmspy: {len(recorder.seen)} of {len(delays)} messages arrived")
    if recorder.duplicates:
        raise BenchmarkError(f"jmspy: {recorder.duplicates} messages were delivered twice")
    return recorder


def warm_broker(info: BrokerInfo, count: int, max_delay_ms: int, limit_s: float) -> None:
    """Put ``count`` scheduled messages through the broker's delay scheduler before either
    consumer is measured, and take them (not measured).

    On a freshly started broker the scheduler's code is not compiled yet: the first consumer
    measured would pay for the broker's warm-up in its broker share and its tail, the second
    would not."""
    rng = random.Random(count)
    delays = [rng.randint(0, max_delay_ms) for _ in range(count)]
    queue = fresh_queue("delay-warmup")
    factory = jmspy.ConnectionFactory(info.url, info.username, info.password)
    with factory.createConnection() as connection:
        session = connection.createSession()
        consumer = session.createConsumer(session.createQueue(queue))
        connection.start()
        producer = start_producer(info, queue, delays, 0)
        deadline = time.monotonic() + limit_s
        received = 0
        while received < count:
            remaining_ms = int((deadline - time.monotonic()) * 1000)
            if remaining_ms <= 0:
                raise BenchmarkError(f"broker warm-up: {received} of {count} messages arrived")
            if consumer.receive(min(remaining_ms, 5000)) is not None:
                received += 1
        join_producer(producer)


# ---------------------------------------------------------------------- the Qpid JMS consumer


def java_jar() -> tuple[str, Path]:
    """(java, jar) of the interop client, built with Maven on first use."""
    sys.path.insert(0, str(INTEROP))
    try:
        import interop_support
    finally:
        sys.path.remove(str(INTEROP))
    build = interop_support.build_java_client()
    return build.java, build.jar


def run_qpid_jms(
    info: BrokerInfo, delays: list[int], warmup: int, limit_s: float, java: str, jar: Path
) -> list[float]:
    queue = fresh_queue("delay-qpid")
    args = [
        java,
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        "-Dorg.slf4j.simpleLogger.logFile=System.err",
        "-cp",
        str(jar),
        JAVA_MAIN,
        info.url,
        info.username,
        info.password,
        queue,
        str(len(delays)),
        str(int(limit_s * 1000)),
    ]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        ready = process.stdout.readline().strip()
        if ready != "READY":
            _, err = process.communicate(timeout=30)
            raise BenchmarkError(f"the Qpid JMS consumer did not start: {ready!r} {err[-500:]}")
        producer = start_producer(info, queue, delays, warmup)
        out, err = process.communicate(timeout=limit_s + 60)
        join_producer(producer)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    if process.returncode != 0:
        raise BenchmarkError(f"the Qpid JMS consumer failed: {err.strip()[-500:]}")
    line = next((x for x in out.splitlines() if x.startswith("LATENESS_US")), None)
    if line is None:
        raise BenchmarkError(f"the Qpid JMS consumer printed no result: {out[-300:]!r}")
    values = [int(v) / 1000.0 for v in line.split()[1:]]
    if len(values) != len(delays):
        raise BenchmarkError(f"Qpid JMS: {len(values)} of {len(delays)} messages arrived")
    return values


# ---------------------------------------------------------------------------------- output


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def row(name: str, values: list[float]) -> list[str]:
    return [
        name,
        f"{percentile(values, 50):.2f}",
        f"{percentile(values, 99):.2f}",
        f"{max(values):.2f}",
        str(sum(1 for v in values if v < 0)),
        str(len(values)),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=10000, help="scheduled messages per consumer")
    parser.add_argument("--max-delay", type=int, default=10000, help="largest delay in ms")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument(
        "--warmup", type=int, default=2000, help="undelayed messages first, not counted"
    )
    parser.add_argument(
        "--broker-warmup",
        type=int,
        default=5000,
        help="scheduled messages put through the broker first, not measured (0: none)",
    )
    parser.add_argument("--no-java", action="store_true", help="skip the Qpid JMS consumer")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    delays = [rng.randint(0, args.max_delay) for _ in range(args.n)]
    limit_s = args.max_delay / 1000 + 120 + args.n / 100
    print(versions_line())
    print(f"load average at start: {os.getloadavg()}")
    java: tuple[str, Path] | None = None
    skipped = ""
    if not args.no_java:
        try:
            java = java_jar()
        except Exception as exc:  # noqa: BLE001 - reported, the jmspy column still runs
            skipped = f"Qpid JMS column skipped: {exc}"
    rows: list[list[str]] = []
    with broker() as info:
        if args.broker_warmup > 0:
            warm_broker(info, args.broker_warmup, min(args.max_delay, 3000), limit_s)
            print(f"broker warmed up with {args.broker_warmup} scheduled messages")
        recorder = run_jmspy(info, delays, args.warmup, limit_s)
        rows.append(row("jmspy: listener call - delivery time", recorder.total_ms))
        rows.append(row("  broker share: socket read - delivery time", recorder.broker_ms))
        rows.append(row("  client share: listener call - socket read", recorder.client_ms))
        rows.append(row("    engine: socket read - transfer decoded", recorder.decode_ms))
        rows.append(row("    dispatch: transfer decoded - listener call", recorder.handoff_ms))
        if java is not None:
            qpid = run_qpid_jms(info, delays, args.warmup, limit_s, *java)
            rows.append(row("Qpid JMS: listener call - delivery time", qpid))
    print(f"load average at end: {os.getloadavg()}")
    print(f"{args.n} messages, delays uniform over 0..{args.max_delay} ms, lateness in ms")
    print(format_table(["", "p50", "p99", "max", "early", "messages"], rows))
    if skipped:
        print(skipped)
    return 0


if __name__ == "__main__":
    sys.exit(main())
