"""Shared pieces of the jmspy benchmarks: the broker, bare python-qpid-proton clients that do
the same work as jmspy (the baseline), queue draining, profiling and table output.

Nothing here asserts on speed; a failure (no broker, a rejected message, a lost message, a
stalled run) raises :class:`BenchmarkError` with a message saying what went wrong.
"""

from __future__ import annotations

import contextlib
import cProfile
import io
import os
import platform
import pstats
import resource
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import proton
from proton import Message, byte, symbol
from proton.handlers import MessagingHandler
from proton.reactor import Container, LinkOption

# The message annotations jmspy (and Qpid JMS) put on a BytesMessage sent to a queue, so the
# bare proton messages are the same size and shape on the wire and the broker does the same work.
JMS_BYTES_ANNOTATIONS = {
    symbol("x-opt-jms-msg-type"): byte(3),
    symbol("x-opt-jms-dest"): byte(0),
}
OCTET_STREAM = symbol("application/octet-stream")


class QueueCapability(LinkOption):
    """Mark the link's node as a queue (target of a sender, source of a receiver), as jmspy and
    Qpid JMS do; without it Artemis auto-creates a multicast address that drops messages
    nobody subscribed to."""

    def apply(self, link: Any) -> None:
        terminus = link.source if link.is_receiver else link.target
        data = terminus.capabilities
        data.put_array(False, proton.Data.SYMBOL)
        data.enter()
        data.put_symbol(symbol("queue"))
        data.exit()


class BenchmarkError(Exception):
    """A benchmark could not run or its result cannot be trusted (lost or refused messages)."""


# --------------------------------------------------------------------------------- timing


def process_cpu_s() -> float:
    """CPU seconds (user + system) this process used so far, all threads together."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def median_spread(values: Sequence[float], fmt: str) -> str:
    """``median [min-max]`` of ``values``, each formatted with ``fmt`` ("-" when empty)."""
    if not values:
        return "-"
    median = format(statistics.median(values), fmt)
    if len(values) == 1:
        return median
    return f"{median} [{format(min(values), fmt)}-{format(max(values), fmt)}]"


def broker_cpu_s(info: BrokerInfo) -> float | None:
    """CPU seconds (user + system) the processes of a broker this script started used so far,
    read from /proc (Linux); None for another broker or elsewhere. The broker shares the
    machine's cores with the client, so what it spends is part of every figure here."""
    if info.process_group is None:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended meanwhile
        if int(fields[2]) == info.process_group:  # pgrp; utime and stime follow at 11, 12
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


@dataclass(frozen=True)
class Timing:
    """Wall-clock seconds of a timed section and the client process's CPU seconds in it."""

    wall_s: float
    cpu_s: float


class Stopwatch:
    def __init__(self) -> None:
        self._wall = 0.0
        self._cpu = 0.0
        self.started = False

    def start(self) -> None:
        self.started = True
        self._cpu = process_cpu_s()
        self._wall = time.perf_counter()

    def stop(self) -> Timing:
        wall = time.perf_counter()
        if not self.started:
            raise BenchmarkError("a stopwatch was stopped before it was started")
        return Timing(wall - self._wall, process_cpu_s() - self._cpu)


# --------------------------------------------------------------------------------- broker


@dataclass(frozen=True)
class BrokerInfo:
    url: str
    username: str
    password: str
    provisioned: bool
    description: str
    # The process group of a broker this script started (None for JMSPY_BROKER_URL).
    process_group: int | None = None


@contextlib.contextmanager
def broker(say: Callable[[str], None] = print) -> Iterator[BrokerInfo]:
    """The broker named by JMSPY_BROKER_URL, else a local Apache Artemis for the run."""
    url = os.environ.get("JMSPY_BROKER_URL")
    user = os.environ.get("JMSPY_BROKER_USER", "admin")
    password = os.environ.get("JMSPY_BROKER_PASSWORD", "admin")
    if url:
        yield BrokerInfo(url, user, password, False, f"{url} (JMSPY_BROKER_URL)")
        return
    from jmspy.conformance.brokers import ArtemisBroker

    say("starting a local Apache Artemis (the first run downloads it from Maven Central) ...")
    started = time.monotonic()
    local = ArtemisBroker()
    try:
        local.start()
    except BaseException as exc:
        local.stop()
        raise BenchmarkError(f"could not start a local Apache Artemis: {exc}") from exc
    try:
        say(f"Artemis {local.version} ready at {local.url} in {time.monotonic() - started:.1f} s")
        yield BrokerInfo(
            local.url,
            local.username,
            local.password,
            True,
            f"local Apache Artemis {local.version} at {local.url}",
            local.pid,
        )
    finally:
        local.stop()


def fresh_queue(kind: str) -> str:
    """A queue name nobody used before (the broker auto-creates it on first attach)."""
    return f"jmspy.bench.{kind}.{uuid.uuid4().hex[:12]}"


def versions_line() -> str:
    return (
        f"Python {platform.python_version()} ({platform.python_implementation()}, "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs), "
        f"python-qpid-proton {'.'.join(map(str, proton.VERSION))}"
    )


# ------------------------------------------------------------------ bare proton clients


class _ProtonRun(MessagingHandler):
    """One connection driven by a Container, with a deadline and error capture."""

    def __init__(
        self, info: BrokerInfo, timeout_s: float, prefetch: int, auto_accept: bool
    ) -> None:
        super().__init__(prefetch=prefetch, auto_accept=auto_accept, auto_settle=True)
        self.info = info
        self.timeout_s = timeout_s
        self.error: str | None = None
        self.connection: Any = None
        self.remote_properties: dict[str, Any] = {}
        self.finished = False
        self.container: Any = None
        self.deadline_task: Any = None

    def run(self) -> None:
        container = Container(self)
        container.container_id = f"jmspy-bench-{uuid.uuid4().hex[:8]}"
        container.run()
        if self.error is not None:
            raise BenchmarkError(self.error)
        if not self.finished:
            raise BenchmarkError("the bare proton client stopped before finishing its work")

    def on_start(self, event: Any) -> None:
        self.connection = event.container.connect(
            self.info.url,
            user=self.info.username,
            password=self.info.password,
            allowed_mechs="PLAIN",
            allow_insecure_mechs=True,
            reconnect=False,
        )
        self.container = event.container
        self.deadline_task = event.container.schedule(self.timeout_s, self)
        self.open_links(event.container, self.connection)

    def open_links(self, container: Container, connection: Any) -> None:
        raise NotImplementedError

    def on_timer_task(self, event: Any) -> None:
        if not self.finished:
            self.fail(f"did not finish within {self.timeout_s:g} s ({self.progress()})")
            # A stalled peer may never answer the close either.
            self.container.stop()

    def progress(self) -> str:
        return ""

    def on_connection_opened(self, event: Any) -> None:
        props = event.connection.remote_properties or {}
        self.remote_properties = {str(k): v for k, v in props.items()}

    def done(self) -> None:
        self.finished = True
        self.deadline_task.cancel()
        self.connection.close()

    def fail(self, error: str) -> None:
        if self.error is None:
            self.error = error
        if self.deadline_task is not None:
            self.deadline_task.cancel()
        if self.connection is not None:
            self.connection.close()

    def on_transport_error(self, event: Any) -> None:
        cond = event.transport.condition
        self.fail(f"bare proton connection to {self.info.url} failed: {cond}")

    def on_connection_error(self, event: Any) -> None:
        self.fail(f"broker closed the connection: {event.connection.remote_condition}")

    def on_link_error(self, event: Any) -> None:
        self.fail(f"broker closed the link: {event.link.remote_condition}")

    def on_session_error(self, event: Any) -> None:
        self.fail(f"broker ended the session: {event.session.remote_condition}")


class ProtonSender(_ProtonRun):
    """Sends ``warmup`` then ``count`` messages with at most ``window`` unsettled at a time.

    The timed part starts once every warm-up message is settled and ends when the last timed
    message is accepted. ``window=1`` is the one-round-trip-per-send discipline of a
    synchronous JMS send.
    """

    def __init__(
        self,
        info: BrokerInfo,
        address: str,
        count: int,
        *,
        payload: bytes,
        durable: bool,
        window: int,
        warmup: int = 0,
        timeout_s: float = 120.0,
    ) -> None:
        super().__init__(info, timeout_s, prefetch=0, auto_accept=False)
        self.address = address
        self.payload = payload
        self.durable = durable
        self.window = max(1, window)
        self.warmup = warmup
        self.total = warmup + count
        self.sent = 0
        self.settled = 0
        self.watch = Stopwatch()
        self.timing = Timing(0.0, 0.0)
        self.id_prefix = f"ID:{uuid.uuid4()}:1:1:1-"
        self.sender: Any = None

    def progress(self) -> str:
        return f"{self.settled} of {self.total} messages settled"

    def open_links(self, container: Container, connection: Any) -> None:
        self.sender = container.create_sender(connection, self.address, options=QueueCapability())

    def on_sendable(self, event: Any) -> None:
        self._pump()

    def _pump(self) -> None:
        sender = self.sender
        while (
            sender.credit > 0 and self.sent < self.total and self.sent - self.settled < self.window
        ):
            if self.sent == self.warmup:
                if self.settled < self.warmup:
                    return  # the timed part starts once the warm-up is settled
                if not self.watch.started:
                    self.watch.start()
            self.sent += 1
            sender.send(
                Message(
                    body=self.payload,
                    inferred=True,
                    durable=self.durable,
                    id=self.id_prefix + str(self.sent),
                    address=self.address,
                    content_type=OCTET_STREAM,
                    creation_time=time.time(),
                    annotations=JMS_BYTES_ANNOTATIONS,
                )
            )

    def on_accepted(self, event: Any) -> None:
        self.settled += 1
        if self.settled == self.total:
            if not self.watch.started:  # count == 0
                self.watch.start()
            self.timing = self.watch.stop()
            self.done()
        else:
            self._pump()

    def on_rejected(self, event: Any) -> None:
        self.fail(f"the broker rejected a message: {event.delivery.remote.condition}")

    def on_released(self, event: Any) -> None:
        self.fail("the broker released (did not take) a message")


class ProtonReceiver(_ProtonRun):
    """Receives ``warmup`` then ``count`` messages with a credit window of ``prefetch``,
    accepting each. The timed part runs from the last warm-up message to the last message."""

    def __init__(
        self,
        info: BrokerInfo,
        address: str,
        count: int,
        *,
        prefetch: int,
        body_size: int,
        warmup: int = 0,
        timeout_s: float = 120.0,
    ) -> None:
        super().__init__(info, timeout_s, prefetch=prefetch, auto_accept=True)
        self.address = address
        self.body_size = body_size
        self.warmup = warmup
        self.total = warmup + count
        self.received = 0
        self.watch = Stopwatch()
        self.timing = Timing(0.0, 0.0)

    def progress(self) -> str:
        return f"{self.received} of {self.total} messages received"

    def open_links(self, container: Container, connection: Any) -> None:
        container.create_receiver(connection, self.address, options=QueueCapability())

    def on_link_opened(self, event: Any) -> None:
        if self.warmup == 0 and event.link.is_receiver:
            self.watch.start()

    def on_message(self, event: Any) -> None:
        body = event.message.body
        if len(body) != self.body_size:
            self.fail(f"received a body of {len(body)} bytes, expected {self.body_size}")
            return
        self.received += 1
        if self.received == self.warmup:
            self.watch.start()
        if self.received == self.total:
            self.timing = self.watch.stop()
            self.done()


class _Tick:
    """A container timer target that calls back (MessagingHandler reserves on_timer_task)."""

    def __init__(self, callback: Callable[[Any], None]) -> None:
        self.callback = callback

    def on_timer_task(self, event: Any) -> None:
        self.callback(event)


class QueueDrainer(_ProtonRun):
    """Consumes (accepts) everything on a queue.

    AMQP drain mode cannot tell "empty" on Artemis: a drain issued before the broker has
    handed queued messages to the new consumer completes at once with nothing. So the drainer
    keeps a credit window open and stops when the queue stays quiet: ``settle_s`` after the
    expected number of messages arrived (to catch extras), or ``quiet_s`` after the last
    message (or the attach) when fewer arrived.
    """

    TICK_S = 0.05

    def __init__(
        self,
        info: BrokerInfo,
        address: str,
        expected: int = 0,
        *,
        settle_s: float = 0.25,
        quiet_s: float = 2.0,
        timeout_s: float = 120.0,
    ) -> None:
        super().__init__(info, timeout_s, prefetch=1000, auto_accept=True)
        self.address = address
        self.expected = expected
        self.settle_s = settle_s
        self.quiet_s = quiet_s
        self.count = 0
        self._last_activity = 0.0
        self._tick = _Tick(self._on_tick)

    def progress(self) -> str:
        return f"{self.count} messages drained so far"

    def open_links(self, container: Container, connection: Any) -> None:
        container.create_receiver(connection, self.address, options=QueueCapability())

    def on_link_opened(self, event: Any) -> None:
        if event.link.is_receiver:
            self._last_activity = time.monotonic()
            event.container.schedule(self.TICK_S, self._tick)

    def on_message(self, event: Any) -> None:
        self.count += 1
        self._last_activity = time.monotonic()

    def _on_tick(self, event: Any) -> None:
        if self.finished or self.error is not None:
            return
        quiet = time.monotonic() - self._last_activity
        if quiet >= (self.settle_s if self.count >= self.expected else self.quiet_s):
            self.done()
        else:
            event.container.schedule(self.TICK_S, self._tick)


def proton_send(info: BrokerInfo, address: str, count: int, **kwargs: Any) -> ProtonSender:
    sender = ProtonSender(info, address, count, **kwargs)
    sender.run()
    return sender


def prefilled_queue(
    info: BrokerInfo, kind: str, count: int, payload: bytes, window: int, timeout_s: float
) -> str:
    """A fresh queue holding ``count`` non-persistent messages of ``payload``, sent by a bare
    proton sender with up to ``window`` in flight (what the receive phases start from)."""
    address = fresh_queue(kind)
    proton_send(
        info, address, count, payload=payload, durable=False, window=window, timeout_s=timeout_s
    )
    return address


def proton_receive(info: BrokerInfo, address: str, count: int, **kwargs: Any) -> ProtonReceiver:
    receiver = ProtonReceiver(info, address, count, **kwargs)
    receiver.run()
    return receiver


def drain_queue(info: BrokerInfo, address: str, expected: int = 0) -> int:
    """Remove every message left on ``address`` (``expected`` of them if all went well);
    return how many there were."""
    drainer = QueueDrainer(info, address, expected)
    drainer.run()
    return drainer.count


def broker_identity(info: BrokerInfo) -> str:
    """Product and version the broker announces in its AMQP open frame."""
    probe = QueueDrainer(info, fresh_queue("probe"), settle_s=0.0, timeout_s=30.0)
    probe.run()
    props = probe.remote_properties
    product = props.get("product", "unknown broker")
    version = props.get("version", "")
    return f"{product} {version}".strip()


# ---------------------------------------------------------------------------- profiling


@dataclass
class ThreadProfiles:
    """cProfile for the calling thread plus every thread started while active (jmspy's engine
    thread is started inside the profiled code, so it is captured too)."""

    profiles: dict[str, cProfile.Profile] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        main = cProfile.Profile()

        def hook(_frame: Any, _event: str, _arg: Any) -> None:
            # Runs once in each new thread, then cProfile takes over that thread's hook.
            profile = cProfile.Profile()
            with self._lock:
                self.profiles[_unique(self.profiles, threading.current_thread().name)] = profile
            profile.enable()

        threading.setprofile(hook)
        main.enable()
        try:
            yield
        finally:
            main.disable()
            threading.setprofile(None)
            self.profiles[_unique(self.profiles, "application thread")] = main

    def report(self, title: str, top: int, sort: str, out: Any = sys.stdout) -> None:
        for name, profile in self.profiles.items():
            buffer = io.StringIO()
            stats = pstats.Stats(profile, stream=buffer)
            if not stats.stats:  # type: ignore[attr-defined]
                continue
            stats.sort_stats(sort).print_stats(top)
            print(f"\n--- cProfile, {title}, thread {name!r}, top {top} by {sort} ---", file=out)
            print(_trim_profile(buffer.getvalue()), file=out)


def _unique(existing: dict[str, Any], name: str) -> str:
    candidate, n = name, 1
    while candidate in existing:
        n += 1
        candidate = f"{name} #{n}"
    return candidate


def _trim_profile(text: str) -> str:
    """Drop pstats' preamble lines and shorten site-packages paths."""
    lines = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith(("Ordered by", "List reduced")):
            continue
        for marker in ("site-packages/", "/lib/python3"):
            pos = line.find(marker)
            if pos >= 0:
                start = line.rfind(" ", 0, pos) + 1
                line = line[:start] + line[pos + len(marker) :]
        lines.append(line)
    return "\n".join(lines)


# ------------------------------------------------------------------------------- output


def format_rate(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:,.0f}"


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        first = f"{cells[0]:<{widths[0]}}"
        rest = [f"{c:>{w}}" for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])
