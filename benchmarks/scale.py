"""Many connections in one process: 1, 10 and 100 connections, each with a MessageListener on
one queue (competing consumers), move N non-persistent messages sent from the same process.

    python benchmarks/scale.py [-n 20000] [--size 1024] [--connections 1,10,100]
                               [--shared-threads 1] [--rounds 3] [--no-qpid-jms]
                               [--session-mode auto|no-ack]

Every connection count runs in two modes, in interleaved rounds: with an engine thread per
connection and a dispatch thread per session (the default), and with
``transport.sharedEventLoopThreads=N`` (one group of N loop threads and N dispatch threads for
every connection). Printed per configuration, as the median [min-max] over the rounds:
messages per second from the first send to the last message delivered, the ratios to the
single-connection run of the same mode and of the default mode in the same round (same load),
and the CPU per message over that time of this process (sender and consumers) and of the
broker (when the script started it: both share the machine's cores); then the process's
thread count while the messages flow (its peak) and its RSS. A short untimed run of every
configuration comes first (warm-up).

Qpid JMS (the Java reference, ``benchmarks/java``, one JVM for the whole run) runs the same
configurations in the same rounds: its own connections, listeners and sender in its JVM, with
``transport.sharedEventLoopThreads`` for the shared mode. Its rows show what the same broker on
the same cores gives a client with no GIL, and its ratio of many connections to one is the
yardstick for jmspy's. ``--no-qpid-jms`` leaves it out (no Java or Maven needed then).

Uses JMSPY_BROKER_URL (and JMSPY_BROKER_USER / JMSPY_BROKER_PASSWORD) when set, otherwise a
local Apache Artemis for the run. Nothing is asserted about speed; a lost or duplicated
message fails the run.

``--session-mode no-ack`` gives the consumers' sessions mode 257 (NO_ACKNOWLEDGE, Qpid JMS's
no-acknowledgement mode, both clients): presettled consumers, so no acknowledgement is written
back. At most once, so not the default; it shows what the acknowledgements cost.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

try:
    import qpid_jms
    from _common import (
        BenchmarkError,
        BrokerInfo,
        broker,
        broker_cpu_s,
        drain_queue,
        format_table,
        fresh_queue,
        median_spread,
        process_cpu_s,
        versions_line,
    )

    import jmspy
    from jmspy import DeliveryMode
except ImportError as exc:  # pragma: no cover - a broken environment, said plainly
    print(f"scale benchmark cannot start: {exc}", file=sys.stderr)
    raise SystemExit(2) from exc


def rss_mib() -> float:
    """Resident set size of this process now (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


class Counter:
    """Counts deliveries across every listener; flags the end and any duplicate."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.seen = 0
        self.duplicates = 0
        self._ids: set[int] = set()
        self._lock = threading.Lock()
        self.done = threading.Event()
        self.peak_threads = 0

    def onMessage(self, message: Any) -> None:
        seq = message.getIntProperty("seq")
        with self._lock:
            if seq in self._ids:
                self.duplicates += 1
                return
            self._ids.add(seq)
            self.seen += 1
            if self.seen % 500 == 0:
                self.peak_threads = max(self.peak_threads, threading.active_count())
            if self.seen >= self.total:
                self.done.set()


@dataclass(frozen=True)
class Result:
    rate: float  # msg/s
    threads: int  # peak
    rss_mib: float | None  # None: not measured (the Java program's JVM)
    client_cpu_us: float  # this process, per message, over the timed part
    broker_cpu_us: float | None  # the broker's processes likewise (a broker we started)


SESSION_MODES = {"auto": jmspy.AUTO_ACKNOWLEDGE, "no-ack": jmspy.NO_ACKNOWLEDGE}


def run(
    info: BrokerInfo, connections: int, count: int, size: int, shared: int, session_mode: int
) -> Result:
    """One run."""
    options: dict[str, Any] = {}
    if shared > 0:
        options["transport.sharedEventLoopThreads"] = shared
    factory = jmspy.ConnectionFactory(info.url, info.username, info.password, **options)
    queue_name = fresh_queue("scale")
    counter = Counter(count)
    opened: list[Any] = []
    try:
        for _ in range(connections):
            connection = factory.createConnection()
            opened.append(connection)
            session = connection.createSession(session_mode)
            consumer = session.createConsumer(session.createQueue(queue_name))
            consumer.setMessageListener(counter)
            connection.start()
        sender = factory.createConnection()
        opened.append(sender)
        session = sender.createSession()
        producer = session.createProducer(session.createQueue(queue_name))
        producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)
        payload = os.urandom(size)
        started = time.perf_counter()
        client_cpu_before, broker_cpu_before = process_cpu_s(), broker_cpu_s(info)
        for seq in range(count):
            message = session.createBytesMessage()
            message.writeBytes(payload)
            message.setIntProperty("seq", seq)
            producer.send(message)
        counter.peak_threads = max(counter.peak_threads, threading.active_count())
        # Generous: a loaded machine is slow, but a stalled run must end.
        if not counter.done.wait(60 + count / 50):
            raise BenchmarkError(
                f"{connections} connections: {counter.seen} of {count} messages arrived"
            )
        elapsed = time.perf_counter() - started
        client_cpu = process_cpu_s() - client_cpu_before
        broker_cpu_after = broker_cpu_s(info)
        broker_cpu = None
        if broker_cpu_before is not None and broker_cpu_after is not None:
            broker_cpu = broker_cpu_after - broker_cpu_before
        rss = rss_mib()
    finally:
        for connection in opened:
            connection.close()
    if counter.duplicates:
        raise BenchmarkError(f"{counter.duplicates} messages were delivered twice")
    left = drain_queue(info, queue_name)
    if left:
        raise BenchmarkError(f"{left} messages were left on the queue")
    return Result(
        count / elapsed,
        counter.peak_threads,
        rss,
        client_cpu * 1e6 / count,
        None if broker_cpu is None else broker_cpu * 1e6 / count,
    )


def java_run(
    java: qpid_jms.QpidJmsProgram,
    connections: int,
    count: int,
    size: int,
    shared: int,
    session_mode: int,
) -> Result:
    """The same run in the Qpid JMS program's JVM (see QpidJmsBench.scale)."""
    info = java.info
    queue_name = fresh_queue("scale-java")
    broker_cpu_before = broker_cpu_s(info)
    answer = java.request(
        "scale",
        timeout_s=120 + count / 50,
        queue=queue_name,
        count=count,
        size=size,
        connections=connections,
        sharedThreads=max(0, shared),
        sessionMode=session_mode,
    )
    broker_cpu_after = broker_cpu_s(info)
    if answer["count"] != count or answer["duplicates"]:
        raise BenchmarkError(f"Qpid JMS scale run: {answer}")
    left = drain_queue(info, queue_name)
    if left:
        raise BenchmarkError(f"{left} messages were left on the queue by Qpid JMS")
    broker_cpu = None
    if broker_cpu_before is not None and broker_cpu_after is not None:
        # Over the whole request (connecting included): a little more than the timed part.
        broker_cpu = (broker_cpu_after - broker_cpu_before) * 1e6 / count
    return Result(
        count / (answer["wallNs"] / 1e9),
        int(answer["threads"]),
        None,
        answer["cpuNs"] / 1e3 / count,
        broker_cpu,
    )


CLIENTS = ("jmspy", "Qpid JMS")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=20000, help="messages per run")
    parser.add_argument("--size", type=int, default=1024, help="body bytes")
    parser.add_argument("--connections", default="1,10,100", help="connection counts")
    parser.add_argument(
        "--shared-threads", type=int, default=1, help="transport.sharedEventLoopThreads"
    )
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (3)")
    parser.add_argument(
        "--no-qpid-jms", action="store_true", help="leave out the Java reference (Qpid JMS)"
    )
    parser.add_argument(
        "--session-mode",
        choices=sorted(SESSION_MODES),
        default="auto",
        help="the consumers' session mode: auto (AUTO_ACKNOWLEDGE) or no-ack (NO_ACKNOWLEDGE)",
    )
    args = parser.parse_args()
    session_mode = SESSION_MODES[args.session_mode]
    counts = [int(c) for c in args.connections.split(",")]
    modes = (-1, args.shared_threads)
    print(versions_line())
    print(f"load average at start: {os.getloadavg()}")
    clients = CLIENTS[:1] if args.no_qpid_jms else CLIENTS
    jar = None if args.no_qpid_jms else qpid_jms.build()
    # (client, connections, mode) -> one result per round
    runs: dict[tuple[str, int, int], list[Result]] = {}
    with broker() as info:
        java = None if jar is None else qpid_jms.QpidJmsProgram(jar, info)
        try:

            def one(client: str, connections: int, count: int, shared: int) -> Result:
                if client == "jmspy":
                    return run(info, connections, count, args.size, shared, session_mode)
                assert java is not None
                return java_run(java, connections, count, args.size, shared, session_mode)

            # Not timed: one short run of every configuration first. The first runs pay
            # imports, address creation and the broker's JIT warm-up for that many consumers
            # (the first round measured up to four times the broker CPU per message of the
            # later ones); the JVM's JIT warms up too.
            for client in clients:
                for connections in counts:
                    for shared in modes:
                        one(client, connections, min(args.n, 2000), shared)
            for round_no in range(args.rounds):
                for connections in counts:
                    for shared in modes:
                        for client in clients:
                            result = one(client, connections, args.n, shared)
                            runs.setdefault((client, connections, shared), []).append(result)
                            mode = "per connection" if shared <= 0 else f"shared ({shared})"
                            print(
                                f"  round {round_no + 1}/{args.rounds}: {client}, "
                                f"{connections} connections, {mode}: {result.rate:,.0f} msg/s",
                                flush=True,
                            )
        finally:
            if java is not None:
                java.close()
    base = counts[0]
    rows: list[list[str]] = []
    for client in clients:
        for connections in counts:
            for shared in modes:
                results = runs[(client, connections, shared)]
                rates = [r.rate for r in results]
                same_mode = [
                    r / b.rate for r, b in zip(rates, runs[(client, base, shared)], strict=True)
                ]
                default = [r / b.rate for r, b in zip(rates, runs[(client, base, -1)], strict=True)]
                brokers = [r.broker_cpu_us for r in results if r.broker_cpu_us is not None]
                rss = [r.rss_mib for r in results if r.rss_mib is not None]
                rows.append(
                    [
                        client,
                        str(connections),
                        "per connection" if shared <= 0 else f"shared ({shared})",
                        median_spread(rates, ",.0f"),
                        median_spread(same_mode, ".2f"),
                        median_spread(default, ".2f"),
                        median_spread([r.client_cpu_us for r in results], ".0f"),
                        median_spread(brokers, ".0f"),
                        str(max(r.threads for r in results)),
                        f"{max(rss):.0f} MiB" if rss else "-",
                    ]
                )
    print(f"load average at end: {os.getloadavg()}")
    print(
        f"{args.n} non-persistent messages of {args.size} bytes per run, {args.rounds} rounds, "
        f"consumers in {args.session_mode} sessions; median [min-max]; ratios are per round, "
        "to the "
        f"{base}-connection run"
    )
    print(
        format_table(
            [
                "client",
                "connections",
                "engine/dispatch threads",
                "msg/s",
                f"vs {base} conn, same mode",
                f"vs {base} conn, per connection",
                "client CPU us/msg",
                "broker CPU us/msg",
                "threads",
                "RSS",
            ],
            rows,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
