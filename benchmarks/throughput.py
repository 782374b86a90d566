"""Throughput of jmspy against a bare python-qpid-proton client, on the same broker, same run.

    python benchmarks/throughput.py [-n N] [--size 1024] [--phases send-np,send-p,receive]

Phases (each uses fresh queues; whatever a phase leaves on the broker is drained and counted):

* ``send-np``  non-persistent sends. jmspy: ``MessageProducer.send`` with NON_PERSISTENT
  (asynchronous, bounded by jms.maxAsyncSendsInFlight), timed until ``close()`` returns, i.e.
  until the broker settled every send. Bare proton: durable=False, unsettled, as fast as credit
  allows, timed until the last message is accepted.
* ``send-p``   persistent sends. jmspy: PERSISTENT, synchronous (one round trip per send, as
  JMS requires). Bare proton: durable=True with one message in flight (the next is sent when
  the previous is accepted), and for reference with up to 1000 in flight.
* ``receive``  from a pre-filled queue. jmspy: ``MessageConsumer.receive()`` loop in
  AUTO_ACKNOWLEDGE with the default prefetch (1000). Bare proton: a ``MessagingHandler`` with
  prefetch 1000 that accepts each message.

Every client first moves ``--warmup`` messages that are not timed. Without JMSPY_BROKER_URL a
local Apache Artemis is started for the run (JMSPY_BROKER_USER / JMSPY_BROKER_PASSWORD, default
admin/admin, are the credentials of a given broker). ``--profile`` adds one more jmspy run per
phase under cProfile and prints the hottest functions of each thread. Nothing is asserted
about speed; the exit status is non-zero only when the run failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

try:
    from _common import (
        BenchmarkError,
        BrokerInfo,
        Stopwatch,
        ThreadProfiles,
        Timing,
        broker,
        broker_identity,
        drain_queue,
        format_rate,
        format_table,
        fresh_queue,
        prefilled_queue,
        proton_receive,
        proton_send,
        versions_line,
    )

    import jmspy
except ImportError as exc:  # pragma: no cover - a broken environment, said plainly
    print(f"throughput benchmark cannot start: {exc}", file=sys.stderr)
    raise SystemExit(2) from exc

PHASES = ("send-np", "send-p", "receive")
DEFAULT_COUNT = 20_000
PERSISTENT_DIVISOR = 10  # send-p moves N / 10 messages: every send waits for a disk write
JMSPY_PREFETCH = 1000  # jms.prefetchPolicy.queuePrefetch default, used by bare proton too
PROTON_REFERENCE_WINDOW = 1000
RECEIVE_TIMEOUT_MS = 10_000
CLIENT_TIMEOUT_S = 180.0


@dataclass
class Row:
    phase: str
    count: int
    jmspy: Timing | None
    proton: Timing | None

    def rate(self, timing: Timing | None) -> float | None:
        return None if timing is None or timing.wall_s <= 0 else self.count / timing.wall_s

    def cpu_us(self, timing: Timing | None) -> float | None:
        return None if timing is None else timing.cpu_s / self.count * 1e6

    @property
    def ratio(self) -> float | None:
        jmspy_rate, proton_rate = self.rate(self.jmspy), self.rate(self.proton)
        if jmspy_rate is None or proton_rate is None:
            return None
        return jmspy_rate / proton_rate

    def cells(self) -> list[str]:
        ratio = self.ratio
        return [
            self.phase,
            f"{self.count:,}",
            format_rate(self.rate(self.jmspy)),
            format_rate(self.rate(self.proton)),
            "-" if ratio is None else f"{ratio:.2f}",
            format_rate(self.cpu_us(self.jmspy)),
            format_rate(self.cpu_us(self.proton)),
        ]


HEADERS = [
    "phase",
    "messages",
    "jmspy msg/s",
    "proton msg/s",
    "jmspy/proton",
    "jmspy CPU us/msg",
    "proton CPU us/msg",
]


# ----------------------------------------------------------------------------- jmspy side


# Options for jmspy's connections only (--tracing sets jmspy.tracing=true).
JMSPY_OPTIONS: dict[str, Any] = {}


def _connection(info: BrokerInfo) -> Any:
    factory = jmspy.ConnectionFactory(info.url, info.username, info.password, **JMSPY_OPTIONS)
    return factory.createConnection()


def _set_up_tracing(mode: str) -> None:
    """--tracing api: jmspy.tracing=true with the OpenTelemetry API alone (no-op spans);
    sdk: also an SDK tracer provider whose batch processor hands every span to an exporter
    that drops it (the cost of recording and exporting, without a collector)."""
    if mode == "off":
        return
    JMSPY_OPTIONS["tracing"] = True
    if mode == "sdk":
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            SpanExporter,
            SpanExportResult,
        )

        class Drop(SpanExporter):
            def export(self, spans: Any) -> SpanExportResult:
                return SpanExportResult.SUCCESS

        provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(Drop()))
        trace.set_tracer_provider(provider)


def _send_batch(session: Any, producer: Any, payload: bytes, count: int) -> None:
    create = session.createBytesMessage
    send = producer.send
    for _ in range(count):
        message = create()
        message.writeBytes(payload)
        send(message)


def jmspy_send(
    info: BrokerInfo, address: str, count: int, warmup: int, payload: bytes, persistent: bool
) -> Timing:
    """``count`` sends, timed from the first send until every send is settled."""
    mode = jmspy.DeliveryMode.PERSISTENT if persistent else jmspy.DeliveryMode.NON_PERSISTENT
    with _connection(info) as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        queue = session.createQueue(address)
        if warmup:
            producer = session.createProducer(queue)
            producer.setDeliveryMode(mode)
            _send_batch(session, producer, payload, warmup)
            producer.close()
        producer = session.createProducer(queue)
        producer.setDeliveryMode(mode)
        watch = Stopwatch()
        watch.start()
        _send_batch(session, producer, payload, count)
        # close() returns once the broker has settled every send (asynchronous ones included).
        producer.close()
        return watch.stop()


def _receive_batch(consumer: Any, count: int, size: int) -> None:
    receive = consumer.receive
    for index in range(count):
        message = receive(RECEIVE_TIMEOUT_MS)
        if message is None:
            raise BenchmarkError(
                f"jmspy received nothing within {RECEIVE_TIMEOUT_MS} ms "
                f"after {index} of {count} messages"
            )
        if message.getBodyLength() != size:
            raise BenchmarkError(
                f"jmspy received a body of {message.getBodyLength()} bytes, expected {size}"
            )


def jmspy_receive(info: BrokerInfo, address: str, count: int, warmup: int, size: int) -> Timing:
    """``count`` receive() calls, timed, after ``warmup`` untimed ones."""
    with _connection(info) as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        consumer = session.createConsumer(session.createQueue(address))
        connection.start()
        _receive_batch(consumer, warmup, size)
        watch = Stopwatch()
        watch.start()
        _receive_batch(consumer, count, size)
        timing = watch.stop()
        consumer.close()
        return timing


# ------------------------------------------------------------------------------- phases


@dataclass
class Settings:
    info: BrokerInfo
    count: int
    persistent_count: int
    size: int
    warmup: int
    profile: bool
    say: Callable[[str], None]

    @property
    def payload(self) -> bytes:
        return bytes(range(256)) * (self.size // 256) + bytes(self.size % 256)


def _expect_left(info: BrokerInfo, address: str, expected: int, who: str) -> None:
    left = drain_queue(info, address, expected)
    if left != expected:
        raise BenchmarkError(
            f"{who}: expected {expected} messages on {address} after the run, found {left}"
        )


def _profiled(profile: ThreadProfiles | None, work: Callable[[], Timing]) -> Timing:
    if profile is None:
        return work()
    with profile.active():
        return work()


def _jmspy_send_checked(
    s: Settings, count: int, persistent: bool, profile: ThreadProfiles | None = None
) -> Timing:
    address = fresh_queue("send-p" if persistent else "send-np")
    elapsed = _profiled(
        profile, lambda: jmspy_send(s.info, address, count, s.warmup, s.payload, persistent)
    )
    _expect_left(s.info, address, s.warmup + count, "jmspy send")
    return elapsed


def _proton_send_checked(s: Settings, count: int, durable: bool, window: int) -> Timing:
    address = fresh_queue("send-p" if durable else "send-np")
    sender = proton_send(
        s.info,
        address,
        count,
        payload=s.payload,
        durable=durable,
        window=window,
        warmup=s.warmup,
        timeout_s=CLIENT_TIMEOUT_S,
    )
    _expect_left(s.info, address, s.warmup + count, "bare proton send")
    return sender.timing


def _prefill(s: Settings, count: int) -> str:
    return prefilled_queue(
        s.info, "receive", s.warmup + count, s.payload, PROTON_REFERENCE_WINDOW, CLIENT_TIMEOUT_S
    )


def _jmspy_receive_checked(
    s: Settings, count: int, profile: ThreadProfiles | None = None
) -> Timing:
    address = _prefill(s, count)
    elapsed = _profiled(profile, lambda: jmspy_receive(s.info, address, count, s.warmup, s.size))
    _expect_left(s.info, address, 0, "jmspy receive (unacknowledged messages)")
    return elapsed


def _proton_receive_checked(s: Settings, count: int) -> Timing:
    address = _prefill(s, count)
    receiver = proton_receive(
        s.info,
        address,
        count,
        prefetch=JMSPY_PREFETCH,
        body_size=s.size,
        warmup=s.warmup,
        timeout_s=CLIENT_TIMEOUT_S,
    )
    _expect_left(s.info, address, 0, "bare proton receive (unacknowledged messages)")
    return receiver.timing


def run_phase(phase: str, s: Settings, profiles: dict[str, ThreadProfiles]) -> list[Row]:
    if phase == "send-np":
        s.say(f"send-np: {s.count} non-persistent messages of {s.size} bytes ...")
        jm = _jmspy_send_checked(s, s.count, persistent=False)
        pr = _proton_send_checked(s, s.count, durable=False, window=sys.maxsize)
        rows = [Row("send-np (async)", s.count, jm, pr)]

        def run(profile: ThreadProfiles) -> Timing:
            return _jmspy_send_checked(s, s.count, False, profile)

    elif phase == "send-p":
        n = s.persistent_count
        s.say(f"send-p: {n} persistent messages of {s.size} bytes ...")
        jm = _jmspy_send_checked(s, n, persistent=True)
        pr = _proton_send_checked(s, n, durable=True, window=1)
        ref = _proton_send_checked(s, n, durable=True, window=PROTON_REFERENCE_WINDOW)
        rows = [
            Row("send-p (1 in flight)", n, jm, pr),
            Row(f"send-p proton {PROTON_REFERENCE_WINDOW} in flight (ref.)", n, None, ref),
        ]

        def run(profile: ThreadProfiles) -> Timing:
            return _jmspy_send_checked(s, n, True, profile)

    elif phase == "receive":
        s.say(f"receive: {s.count} messages of {s.size} bytes from a pre-filled queue ...")
        jm = _jmspy_receive_checked(s, s.count)
        pr = _proton_receive_checked(s, s.count)
        rows = [Row(f"receive (prefetch {JMSPY_PREFETCH})", s.count, jm, pr)]

        def run(profile: ThreadProfiles) -> Timing:
            return _jmspy_receive_checked(s, s.count, profile)

    else:  # parse_args rejects unknown phases
        raise BenchmarkError(f"unknown phase {phase!r}")
    if s.profile:
        s.say(f"{phase}: one more jmspy run under cProfile ...")
        profiled = ThreadProfiles()
        run(profiled)
        profiles[phase] = profiled
    return rows


def warm_up_broker(s: Settings) -> None:
    """Give the broker's JIT some traffic before the first timed client."""
    address = fresh_queue("broker-warmup")
    count = max(2_000, s.warmup * 4)
    proton_send(
        s.info,
        address,
        count,
        payload=s.payload,
        durable=True,
        window=PROTON_REFERENCE_WINDOW,
        timeout_s=CLIENT_TIMEOUT_S,
    )
    drain_queue(s.info, address, count)


# ---------------------------------------------------------------------------------- CLI


def _phases(text: str) -> list[str]:
    phases = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [p for p in phases if p not in PHASES]
    if unknown or not phases:
        raise argparse.ArgumentTypeError(
            f"unknown phase(s) {', '.join(unknown) or '(none given)'}; choose from "
            + ",".join(PHASES)
        )
    return phases


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text}")
    return value


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="jmspy vs bare python-qpid-proton throughput on the same broker.",
    )
    parser.add_argument(
        "-n",
        type=_positive,
        default=DEFAULT_COUNT,
        help=f"messages for send-np and receive (default {DEFAULT_COUNT}); "
        f"send-p uses N/{PERSISTENT_DIVISOR} unless --persistent-n is given",
    )
    parser.add_argument("--persistent-n", type=_positive, default=None, help="messages for send-p")
    parser.add_argument(
        "--size", type=_positive, default=1024, help="body size in bytes (default 1024)"
    )
    parser.add_argument(
        "--phases",
        type=_phases,
        default=list(PHASES),
        help=f"comma-separated phases to run (default {','.join(PHASES)})",
    )
    parser.add_argument(
        "--warmup",
        type=_non_negative,
        default=500,
        help="untimed messages each client moves first (default 500)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="after each phase, run jmspy once more under cProfile and print the top functions",
    )
    parser.add_argument(
        "--profile-top", type=_positive, default=25, help="functions per profile (default 25)"
    )
    parser.add_argument(
        "--profile-sort",
        choices=("tottime", "cumulative", "ncalls"),
        default="tottime",
        help="order of the profile listing (default tottime)",
    )
    parser.add_argument(
        "--tracing",
        choices=("off", "api", "sdk"),
        default="off",
        help="jmspy.tracing for jmspy's connections: off (default), api (OpenTelemetry API "
        "only, no-op spans) or sdk (an SDK provider exporting to a discarding exporter)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    _set_up_tracing(args.tracing)

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    persistent_count = args.persistent_n or max(1, args.n // PERSISTENT_DIVISOR)
    started = time.monotonic()
    try:
        with broker(say) as info:
            settings = Settings(
                info=info,
                count=args.n,
                persistent_count=persistent_count,
                size=args.size,
                warmup=args.warmup,
                profile=args.profile,
                say=say,
            )
            identity = broker_identity(info)
            warm_up_broker(settings)
            rows: list[Row] = []
            profiles: dict[str, ThreadProfiles] = {}
            for phase in args.phases:
                rows.extend(run_phase(phase, settings, profiles))
    except BenchmarkError as exc:
        say(f"throughput benchmark failed: {exc}")
        return 1
    except jmspy.JMSException as exc:
        say(f"throughput benchmark failed in jmspy: {type(exc).__name__}: {exc}")
        return 1
    except OSError as exc:
        say(f"throughput benchmark failed: {type(exc).__name__}: {exc}")
        return 1
    except KeyboardInterrupt:
        say("throughput benchmark interrupted")
        return 130

    table = format_table(HEADERS, [row.cells() for row in rows])
    print(
        f"jmspy {jmspy.__version__} throughput, {args.size}-byte BytesMessage bodies, "
        f"tracing {args.tracing}"
    )
    print(versions_line())
    print(f"broker: {identity}, {info.description}")
    print(
        f"warm-up: {args.warmup} untimed messages per client; total run time "
        f"{time.monotonic() - started:.1f} s"
    )
    print()
    print(table)
    print()
    print(
        "msg/s: messages / wall-clock seconds of the timed part. CPU us/msg: user + system CPU of\n"
        "this Python process (all its threads) in the timed part per message; the broker's CPU\n"
        "is not included. The broker shares the machine, so rates vary by some 10-30 % per run."
    )
    for phase, profiled in profiles.items():
        profiled.report(f"jmspy {phase}", args.profile_top, args.profile_sort)
    return 0


if __name__ == "__main__":
    sys.exit(main())
