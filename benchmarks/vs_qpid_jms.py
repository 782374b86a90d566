"""jmspy against Apache Qpid JMS (Java) and bare python-qpid-proton, side by side on one broker.

    python benchmarks/vs_qpid_jms.py [--rounds 3] [-n 10000] [--persistent-n 1000]
                                     [--workloads send-np,send-p,receive,listener,batch]

Workloads, each client on a fresh queue, 1 KiB BytesMessages, AUTO_ACKNOWLEDGE:

* ``send-np``  non-persistent sends, timed until the broker settled the last one.
* ``send-p``   persistent synchronous sends (one round trip each): rate and per-send latency
  p50/p99. Bare proton sends durable messages with one in flight.
* ``receive``  ``receive()`` loop from a pre-filled queue, prefetch 1000. Bare proton: a
  MessagingHandler with prefetch 1000 accepting each message.
* ``listener`` a MessageListener on a pre-filled queue, prefetch 1000. Bare proton has no
  listener of its own: its column repeats the round's ``receive`` figure.
* ``batch``    jmspy only: a BatchMessageListener with batches of 100 (its ratio is to jmspy's
  MessageListener of the same round).

A fourth client, ``proton-c``, runs the ``receive`` workload only: a consumer in C on Proton's
proactor (``benchmarks/native/receive.c``, built on first use), which decodes and accepts each
message like the others but has no Python and no JMS layer. Its rate is the receive ceiling of
this broker on this machine, and ``jmspy / proton-c`` shows how much of it each jmspy receive
path reaches. Without a C compiler and Proton's C library (``apt-get install
libqpid-proton11-dev``) its rows are left out and the output says why; ``--no-native`` leaves
them out too.

Rounds are interleaved (every workload for every client, the client order rotating per round),
so the ratios compare runs made under the same load; they are printed as medians over the rounds
with their spread. Every run moves ``--warmup`` untimed messages first. The Qpid JMS program
(``benchmarks/java``, built with Maven on first use and cached) runs in one JVM for the whole
run. CPU us/msg is the CPU time of the client's process over the timed part (all threads; the
JVM's JIT and GC included); the broker's is not counted. Every queue is drained after its run
and the counts checked: a lost or extra message fails the benchmark. Without JMSPY_BROKER_URL a
local Apache Artemis is started for the run.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

try:
    import native_receiver
    import qpid_jms
    from _common import (
        BenchmarkError,
        BrokerInfo,
        ProtonSender,
        Stopwatch,
        ThreadProfiles,
        Timing,
        broker,
        broker_identity,
        drain_queue,
        format_table,
        fresh_queue,
        median_spread,
        prefilled_queue,
        proton_receive,
        proton_send,
        versions_line,
    )

    import jmspy
except ImportError as exc:  # pragma: no cover - a broken environment, said plainly
    print(f"vs_qpid_jms benchmark cannot start: {exc}", file=sys.stderr)
    raise SystemExit(2) from exc

WORKLOADS = ("send-np", "send-p", "receive", "listener", "batch")
CLIENTS = ("qpid-jms", "jmspy", "proton", "proton-c")
PREFETCH = 1000
BATCH_SIZE = 100
BATCH_TIMEOUT_MS = 20
RECEIVE_TIMEOUT_MS = 30_000
CLIENT_TIMEOUT_S = 600.0


@dataclass
class Run:
    """One timed run of one client on one workload."""

    count: int
    timing: Timing
    latencies_s: list[float] = field(default_factory=list)  # per send (send-p)
    p50_s: float | None = None
    p99_s: float | None = None

    @property
    def rate(self) -> float:
        return self.count / self.timing.wall_s if self.timing.wall_s > 0 else 0.0

    @property
    def cpu_us(self) -> float:
        return self.timing.cpu_s / self.count * 1e6

    def percentiles(self) -> tuple[float | None, float | None]:
        if self.latencies_s:
            ordered = sorted(self.latencies_s)
            return _percentile(ordered, 0.50), _percentile(ordered, 0.99)
        return self.p50_s, self.p99_s


def _percentile(ordered: list[float], q: float) -> float:
    """The nearest-rank percentile (as the Java program computes it)."""
    index = math.ceil(q * len(ordered)) - 1
    return ordered[max(0, min(len(ordered) - 1, index))]


@dataclass
class Settings:
    info: BrokerInfo
    count: int
    persistent_count: int
    warmup: int
    size: int
    java: qpid_jms.QpidJmsProgram
    say: Callable[[str], None]
    native: native_receiver.NativeReceiver = field(
        default_factory=lambda: native_receiver.NativeReceiver(None, "not asked for")
    )

    @property
    def payload(self) -> bytes:
        return bytes(range(256)) * (self.size // 256) + bytes(self.size % 256)


# ---------------------------------------------------------------------------------- jmspy


def _jmspy_connection(s: Settings) -> Any:
    factory = jmspy.ConnectionFactory(s.info.url, s.info.username, s.info.password)
    return factory.createConnection()


def jmspy_send(s: Settings, address: str, count: int, persistent: bool) -> Run:
    mode = jmspy.DeliveryMode.PERSISTENT if persistent else jmspy.DeliveryMode.NON_PERSISTENT
    payload = s.payload
    latencies: list[float] = []
    with _jmspy_connection(s) as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        producer = session.createProducer(session.createQueue(address))
        producer.setDeliveryMode(mode)
        create, send, clock = session.createBytesMessage, producer.send, time.perf_counter
        for _ in range(s.warmup):
            message = create()
            message.writeBytes(payload)
            send(message)
        if not persistent:
            producer.close()  # the warm-up settled before the timed part
            producer = session.createProducer(session.createQueue(address))
            producer.setDeliveryMode(mode)
            send = producer.send
        watch = Stopwatch()
        watch.start()
        for _ in range(count):
            message = create()
            message.writeBytes(payload)
            if persistent:
                started = clock()
                send(message)
                latencies.append(clock() - started)
            else:
                send(message)
        producer.close()  # returns once the broker settled every send
        return Run(count, watch.stop(), latencies)


def jmspy_receive(s: Settings, address: str, count: int) -> Run:
    size = s.size

    def take(consumer: Any, n: int) -> None:
        receive = consumer.receive
        for index in range(n):
            message = receive(RECEIVE_TIMEOUT_MS)
            if message is None:
                raise BenchmarkError(
                    f"jmspy received nothing within {RECEIVE_TIMEOUT_MS} ms after {index} of {n}"
                )
            if message.getBodyLength() != size:
                raise BenchmarkError(f"jmspy received a body of {message.getBodyLength()} bytes")

    with _jmspy_connection(s) as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        consumer = session.createConsumer(session.createQueue(address))
        connection.start()
        take(consumer, s.warmup)
        watch = Stopwatch()
        watch.start()
        take(consumer, count)
        timing = watch.stop()
        consumer.close()
        return Run(count, timing)


class _Counter:
    """A MessageListener and BatchMessageListener that times the messages after the warm-up."""

    def __init__(self, warmup: int, count: int, size: int) -> None:
        self.warmup = warmup
        self.total = warmup + count
        self.size = size
        self.seen = 0
        self.watch = Stopwatch()
        self.timing: Timing | None = None
        self.error: str | None = None
        self.done = threading.Event()
        self.last = time.monotonic()
        if warmup == 0:
            self.watch.start()

    def _count(self, messages: list[Any]) -> None:
        for message in messages:
            if message.getBodyLength() != self.size:
                self.error = f"a body of {message.getBodyLength()} bytes, expected {self.size}"
                self.done.set()
        before, self.seen = self.seen, self.seen + len(messages)
        self.last = time.monotonic()
        if before < self.warmup <= self.seen:
            self.watch.start()
        if self.seen >= self.total:
            self.timing = self.watch.stop()
            if self.seen > self.total:
                self.error = f"{self.seen} messages arrived, {self.total} were sent"
            self.done.set()

    def onMessage(self, message: Any) -> None:
        self._count([message])

    def onMessages(self, messages: list[Any]) -> None:
        self._count(messages)

    def wait(self) -> Timing:
        # A stall (nothing for the receive timeout) fails; a slow but moving run does not.
        while not self.done.wait(1.0):
            if time.monotonic() - self.last > RECEIVE_TIMEOUT_MS / 1000:
                raise BenchmarkError(f"the listener got {self.seen} of {self.total}, then stalled")
        if self.error is not None or self.timing is None:
            raise BenchmarkError(f"jmspy listener: {self.error}")
        return self.timing


def jmspy_listen(s: Settings, address: str, count: int, batch: int) -> Run:
    counter = _Counter(s.warmup, count, s.size)
    with _jmspy_connection(s) as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        consumer = session.createConsumer(session.createQueue(address))
        if batch:
            consumer.setBatchMessageListener(counter, batch, BATCH_TIMEOUT_MS)
        else:
            consumer.setMessageListener(counter)
        connection.start()
        timing = counter.wait()
        consumer.close()
    return Run(count, timing)


# --------------------------------------------------------------------------------- proton


class _LatencySender(ProtonSender):
    """A bare proton sender with one message in flight that records each send's round trip."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.latencies_s: list[float] = []
        self._sent_at = 0.0

    def _pump(self) -> None:
        before = self.sent
        super()._pump()
        if self.sent != before:
            self._sent_at = time.perf_counter()

    def on_accepted(self, event: Any) -> None:
        if self.settled >= self.warmup:
            self.latencies_s.append(time.perf_counter() - self._sent_at)
        super().on_accepted(event)


def proton_send_run(s: Settings, address: str, count: int, persistent: bool) -> Run:
    if persistent:
        sender = _LatencySender(
            s.info,
            address,
            count,
            payload=s.payload,
            durable=True,
            window=1,
            warmup=s.warmup,
            timeout_s=CLIENT_TIMEOUT_S,
        )
        sender.run()
        return Run(count, sender.timing, sender.latencies_s)
    plain = proton_send(
        s.info,
        address,
        count,
        payload=s.payload,
        durable=False,
        window=sys.maxsize,
        warmup=s.warmup,
        timeout_s=CLIENT_TIMEOUT_S,
    )
    return Run(count, plain.timing)


def proton_receive_run(s: Settings, address: str, count: int) -> Run:
    receiver = proton_receive(
        s.info,
        address,
        count,
        prefetch=PREFETCH,
        body_size=s.size,
        warmup=s.warmup,
        timeout_s=CLIENT_TIMEOUT_S,
    )
    return Run(count, receiver.timing)


# ------------------------------------------------------------------------------ proton-c


def native_receive_run(s: Settings, address: str, count: int) -> Run:
    """The C consumer's receive of ``count`` messages after the warm-up (the ceiling)."""
    seconds, cpu_s = s.native.receive(
        s.info, address, s.warmup, count, PREFETCH, s.size, CLIENT_TIMEOUT_S
    )
    return Run(count, Timing(seconds, cpu_s))


# ------------------------------------------------------------------------------- Qpid JMS


def _java_run(result: dict[str, Any], count: int) -> Run:
    if result.get("count") != count:
        raise BenchmarkError(f"Qpid JMS reported {result.get('count')} messages, not {count}")
    run = Run(count, Timing(result["wallNs"] / 1e9, result["cpuNs"] / 1e9))
    if "p50Ns" in result:
        run.p50_s, run.p99_s = result["p50Ns"] / 1e9, result["p99Ns"] / 1e9
    return run


def java_send(s: Settings, address: str, count: int, persistent: bool) -> Run:
    result = s.java.request(
        "send",
        queue=address,
        count=count,
        warmup=s.warmup,
        size=s.size,
        persistent=persistent,
    )
    return _java_run(result, count)


def java_receive(s: Settings, address: str, count: int, listener: bool) -> Run:
    result = s.java.request(
        "receive",
        queue=address,
        count=count,
        warmup=s.warmup,
        size=s.size,
        prefetch=PREFETCH,
        listener=listener,
        timeoutMs=RECEIVE_TIMEOUT_MS,
    )
    return _java_run(result, count)


# --------------------------------------------------------------------------------- rounds


def _checked(s: Settings, who: str, address: str, expected_left: int, run: Run) -> Run:
    """Drain the queue and check the count: nothing may be lost or left unacknowledged."""
    left = drain_queue(s.info, address, expected_left)
    if left != expected_left:
        raise BenchmarkError(
            f"{who}: expected {expected_left} messages on {address} after the run, found {left}"
        )
    return run


def _prefilled(s: Settings, count: int) -> str:
    return prefilled_queue(
        s.info, "vs-receive", s.warmup + count, s.payload, PREFETCH, CLIENT_TIMEOUT_S
    )


def runs_workload(s: Settings, workload: str, client: str) -> bool:
    """Whether ``client`` has a run of its own for ``workload``."""
    if client == "proton-c":
        return workload == "receive" and s.native.path is not None  # the receive ceiling
    if workload == "batch":
        return client == "jmspy"
    return not (workload == "listener" and client == "proton")  # it repeats receive


def run_one(s: Settings, workload: str, client: str) -> Run | None:
    """One timed run; None where the client has no such workload."""
    if not runs_workload(s, workload, client):
        return None
    if workload in ("send-np", "send-p"):
        persistent = workload == "send-p"
        count = s.persistent_count if persistent else s.count
        address = fresh_queue(workload)
        send = {"qpid-jms": java_send, "jmspy": jmspy_send, "proton": proton_send_run}[client]
        run = send(s, address, count, persistent)
        return _checked(s, f"{client} {workload}", address, s.warmup + count, run)
    address = _prefilled(s, s.count)
    if client == "qpid-jms":
        run = java_receive(s, address, s.count, listener=workload == "listener")
    elif client == "proton":
        run = proton_receive_run(s, address, s.count)
    elif client == "proton-c":
        run = native_receive_run(s, address, s.count)
    elif workload == "receive":
        run = jmspy_receive(s, address, s.count)
    else:
        run = jmspy_listen(s, address, s.count, BATCH_SIZE if workload == "batch" else 0)
    return _checked(s, f"{client} {workload}", address, 0, run)


@dataclass
class Results:
    # (workload, client) -> one run per round
    runs: dict[tuple[str, str], list[Run]] = field(default_factory=dict)

    def add(self, workload: str, client: str, run: Run) -> None:
        self.runs.setdefault((workload, client), []).append(run)

    def get(self, workload: str, client: str) -> list[Run]:
        if workload == "listener" and client in ("proton", "proton-c"):
            return self.runs.get(("receive", client), [])
        return self.runs.get((workload, client), [])


class MachineLoad:
    """How busy the machine was: load averages and the share of all CPUs in use."""

    def __init__(self) -> None:
        self.start_load = os.getloadavg()
        self.start_stat = _cpu_stat()

    def summary(self) -> str:
        end_load = os.getloadavg()
        busy = ""
        end_stat = _cpu_stat()
        if self.start_stat and end_stat:
            total = end_stat[0] - self.start_stat[0]
            idle = end_stat[1] - self.start_stat[1]
            if total > 0:
                busy = f"; all {os.cpu_count()} CPUs {100 * (total - idle) / total:.0f} % busy"
        return (
            f"load average {self.start_load[0]:.2f} at the start, {end_load[0]:.2f} at the end "
            f"(15 min: {end_load[2]:.2f}){busy} over the run"
        )


def _cpu_stat() -> tuple[int, int] | None:
    """(total, idle) jiffies of all CPUs from /proc/stat (Linux), or None."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return sum(fields), fields[3] + (fields[4] if len(fields) > 4 else 0)


def run_rounds(s: Settings, workloads: list[str], rounds: int) -> Results:
    results = Results()
    for round_no in range(rounds):
        turn = round_no % len(CLIENTS)
        order = CLIENTS[turn:] + CLIENTS[:turn]
        for workload in workloads:
            for client in order:
                if not runs_workload(s, workload, client):
                    continue
                s.say(f"round {round_no + 1}/{rounds}: {workload} {client} ...")
                run = run_one(s, workload, client)
                if run is not None:
                    results.add(workload, client, run)
    return results


# --------------------------------------------------------------------------------- output


def _ratios(a: list[Run], b: list[Run]) -> list[float]:
    return [x.rate / y.rate for x, y in zip(a, b, strict=False) if y.rate > 0]


def table(results: Results, workloads: list[str]) -> str:
    headers = ["workload", "client", "msg/s", "CPU us/msg", "p50 ms", "p99 ms"]
    rows = []
    for workload in workloads:
        for client in CLIENTS:
            runs = results.get(workload, client)
            if not runs:
                continue
            label = client + (
                " (= receive)"
                if workload == "listener" and client in ("proton", "proton-c")
                else ""
            )
            cells = [
                workload,
                label,
                median_spread([r.rate for r in runs], ",.0f"),
                median_spread([r.cpu_us for r in runs], ".0f"),
            ]
            if workload == "send-p":
                p50s = [p for p, _ in (r.percentiles() for r in runs) if p is not None]
                p99s = [p for _, p in (r.percentiles() for r in runs) if p is not None]
                cells += [median_spread([p * 1e3 for p in p50s], ".1f")]
                cells += [median_spread([p * 1e3 for p in p99s], ".1f")]
            else:
                cells += ["", ""]
            rows.append(cells)
    return format_table(headers, rows)


def ratio_table(results: Results, workloads: list[str]) -> str:
    headers = ["workload", "jmspy / Qpid JMS", "jmspy / proton", "CPU: jmspy / Qpid JMS"]
    native = results.get("receive", "proton-c")
    if native:
        headers.append("jmspy / proton-c")
    rows = []
    for workload in workloads:
        jm = results.get(workload, "jmspy")
        if workload == "batch":
            base = results.get("listener", "jmspy")
            rows.append(
                [f"batch {BATCH_SIZE} / MessageListener", median_spread(_ratios(jm, base), ".2f")]
            )
            rows[-1] += ["", ""]
        else:
            java, proton = results.get(workload, "qpid-jms"), results.get(workload, "proton")
            cpu = [x.cpu_us / y.cpu_us for x, y in zip(jm, java, strict=False) if y.cpu_us > 0]
            rows.append(
                [
                    workload,
                    median_spread(_ratios(jm, java), ".2f"),
                    median_spread(_ratios(jm, proton), ".2f"),
                    median_spread(cpu, ".2f"),
                ]
            )
        if native:
            # Every receive path against the C consumer's receive of the same round.
            receives = workload in ("receive", "listener", "batch")
            rows[-1].append(median_spread(_ratios(jm, native), ".2f") if receives else "")
    return format_table(headers, rows)


# ------------------------------------------------------------------------------------ CLI


def _workloads(text: str) -> list[str]:
    chosen = [w.strip() for w in text.split(",") if w.strip()]
    unknown = [w for w in chosen if w not in WORKLOADS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"unknown workload(s) {', '.join(unknown) or '(none)'}; "
            f"choose from {','.join(WORKLOADS)}"
        )
    return chosen


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=_positive, default=3, help="interleaved rounds (3)")
    parser.add_argument("-n", type=_positive, default=10_000, help="messages per run (10000)")
    parser.add_argument(
        "--persistent-n", type=_positive, default=None, help="messages per send-p run (n / 10)"
    )
    parser.add_argument("--warmup", type=int, default=500, help="untimed messages per run (500)")
    parser.add_argument("--size", type=_positive, default=1024, help="body bytes (1024)")
    parser.add_argument(
        "--workloads", type=_workloads, default=list(WORKLOADS), help=",".join(WORKLOADS)
    )
    parser.add_argument(
        "--no-native",
        action="store_true",
        help="leave out the C consumer (proton-c) that measures the receive ceiling",
    )
    parser.add_argument(
        "--profile",
        choices=WORKLOADS,
        default=None,
        help="after the rounds, run jmspy once more on this workload under cProfile per thread",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    started = time.monotonic()
    try:
        jar = qpid_jms.build()
        say(f"Qpid JMS benchmark program {'cached' if jar.cached else 'built'}: {jar.jar}")
        native = native_receiver.NativeReceiver(None, "--no-native")
        if not args.no_native and "receive" in args.workloads:
            native = native_receiver.build()
            if native.path is None:
                say(f"no proton-c receive (the receive ceiling): {native.missing}")
            else:
                say(f"C receiver {'cached' if native.cached else 'built'}: {native.path}")
        with broker(say) as info, qpid_jms.QpidJmsProgram(jar, info) as java:
            settings = Settings(
                info=info,
                count=args.n,
                persistent_count=args.persistent_n or max(1, args.n // 10),
                warmup=args.warmup,
                size=args.size,
                java=java,
                say=say,
                native=native,
            )
            identity = broker_identity(info)
            load = MachineLoad()
            results = run_rounds(settings, args.workloads, args.rounds)
            load_line = load.summary()
            profile = None
            if args.profile:
                say(f"{args.profile}: one more jmspy run under cProfile ...")
                profile = ThreadProfiles()
                with profile.active():
                    run_one(settings, args.profile, "jmspy")
    except BenchmarkError as exc:
        say(f"vs_qpid_jms benchmark failed: {exc}")
        return 1
    except jmspy.JMSException as exc:
        say(f"vs_qpid_jms benchmark failed in jmspy: {type(exc).__name__}: {exc}")
        return 1
    except KeyboardInterrupt:
        say("vs_qpid_jms benchmark interrupted")
        return 130
    print(
        f"jmspy {jmspy.__version__} vs Qpid JMS {java.version.get('qpidJms')} "
        f"(Java {java.version.get('java')}) vs bare proton, {args.size}-byte BytesMessages"
    )
    print(versions_line())
    print(f"broker: {identity}, {info.description}")
    print(
        f"{args.rounds} interleaved rounds of {args.n} messages ({settings.persistent_count} for "
        f"send-p), {args.warmup} untimed first; {time.strftime('%Y-%m-%d %H:%M %Z')}, "
        f"{time.monotonic() - started:.0f} s"
    )
    print(f"machine: {load_line}")
    print()
    print(table(results, args.workloads))
    print()
    print(ratio_table(results, args.workloads))
    print()
    if native.path is None and "receive" in args.workloads:
        print(f"no proton-c rows (the receive ceiling): {native.missing}")
    print(
        "median [min-max] over the rounds; ratios are per round (same load), then the median.\n"
        "CPU us/msg: the client process's CPU over the timed part per message (all threads).\n"
        "proton-c: a consumer in C on Proton's proactor (benchmarks/native/receive.c): how fast\n"
        "this broker hands one consumer its messages when the client costs next to nothing."
    )
    if profile is not None:
        profile.report(f"jmspy {args.profile}", 30, "tottime")
    return 0


if __name__ == "__main__":
    sys.exit(main())
