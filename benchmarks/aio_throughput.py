"""jmspy.aio against the blocking jmspy API: send and receive rates on the same broker, in one
run, with the aio/sync ratio of each phase.

    python benchmarks/aio_throughput.py [-n N] [--size 256] [--rounds 3] [--min-ratio 0.8]

Phases (fresh queues each time; every count is checked):

* ``send-p``   persistent sends, one at a time: ``producer.send(m)`` (waits for the broker's
  outcome, as JMS requires) against ``await producer.send(m)`` (the same wait on a future).
* ``send-np``  non-persistent sends: blocking ``send`` (asynchronous on the wire, bounded by
  jms.maxAsyncSendsInFlight) timed until ``close()``, against ``producer.send`` futures
  with at most as many unsettled (the oldest awaited), timed until the last one is settled.
* ``receive``  from a pre-filled queue, AUTO_ACKNOWLEDGE, default prefetch: a ``receive()``
  loop against an ``await consumer.receive()`` loop.

Rounds alternate the two APIs (sync then aio, aio then sync, ...) and each rate is the best
of its rounds, so a burst of load from other processes hurts both sides alike. The load average is
printed before and after. Without JMSPY_BROKER_URL a local Apache Artemis is started. The exit
status is 1 when a count is wrong or, with ``--min-ratio``, when a ratio is below it.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import os
import sys
import time
from collections.abc import Callable

try:
    from _common import BenchmarkError, BrokerInfo, broker, drain_queue, fresh_queue, versions_line

    import jmspy
    from jmspy import aio
except ImportError as exc:  # pragma: no cover - a broken environment, said plainly
    print(f"aio throughput benchmark cannot start: {exc}", file=sys.stderr)
    raise SystemExit(2) from exc

PHASES = ("send-p", "send-np", "receive")
PERSISTENT_DIVISOR = 10  # send-p moves N / 10 messages: each waits for a journal write
WINDOW = 2048  # aio send-np: unsettled sends at most (jms.maxAsyncSendsInFlight's default)
RECEIVE_TIMEOUT_MS = 30_000


def _factory(info: BrokerInfo) -> jmspy.ConnectionFactory:
    return jmspy.ConnectionFactory(info.url, info.username, info.password, connect_timeout=30000)


def _body(size: int) -> str:
    return "x" * size


def sync_send(info: BrokerInfo, count: int, size: int, persistent: bool) -> float:
    queue_name = fresh_queue("sync-send")
    with _factory(info).createConnection() as connection:
        session = connection.createSession()
        producer = session.createProducer(session.createQueue(queue_name))
        mode = jmspy.DeliveryMode.PERSISTENT if persistent else jmspy.DeliveryMode.NON_PERSISTENT
        producer.setDeliveryMode(mode)
        body = _body(size)
        started = time.perf_counter()
        for _ in range(count):
            producer.send(session.createTextMessage(body))
        producer.close()  # every send settled
        elapsed = time.perf_counter() - started
    _check(drain_queue(info, queue_name, count), count, "sync send")
    return count / elapsed


def aio_send(info: BrokerInfo, count: int, size: int, persistent: bool) -> float:
    queue_name = fresh_queue("aio-send")

    async def run() -> float:
        async with aio.connect(info.url, info.username, info.password) as connection:
            session = await connection.create_session()
            producer = await session.create_producer(session.create_queue(queue_name))
            mode = (
                jmspy.DeliveryMode.PERSISTENT if persistent else jmspy.DeliveryMode.NON_PERSISTENT
            )
            producer.setDeliveryMode(mode)
            body = _body(size)
            started = time.perf_counter()
            if persistent:
                for _ in range(count):
                    await producer.send(session.create_text_message(body))
            else:
                # A sliding window: at most WINDOW sends unsettled, as the blocking producer
                # keeps at most jms.maxAsyncSendsInFlight.
                in_flight: collections.deque[asyncio.Future[None]] = collections.deque()
                for _ in range(count):
                    in_flight.append(producer.send(session.create_text_message(body)))
                    if len(in_flight) >= WINDOW:
                        await in_flight.popleft()
                await asyncio.gather(*in_flight)
            await producer.close()
            return count / (time.perf_counter() - started)

    rate = asyncio.run(run())
    _check(drain_queue(info, queue_name, count), count, "aio send")
    return rate


def _fill(info: BrokerInfo, queue_name: str, count: int, size: int) -> None:
    with _factory(info).createConnection() as connection:
        session = connection.createSession()
        producer = session.createProducer(session.createQueue(queue_name))
        producer.setDeliveryMode(jmspy.DeliveryMode.NON_PERSISTENT)
        body = _body(size)
        for _ in range(count):
            producer.send(session.createTextMessage(body))


def sync_receive(info: BrokerInfo, count: int, size: int) -> float:
    queue_name = fresh_queue("sync-receive")
    _fill(info, queue_name, count, size)
    with _factory(info).createConnection() as connection:
        session = connection.createSession()
        consumer = session.createConsumer(session.createQueue(queue_name))
        connection.start()
        started = time.perf_counter()
        got = 0
        while got < count and consumer.receive(RECEIVE_TIMEOUT_MS) is not None:
            got += 1
        elapsed = time.perf_counter() - started
    _check(got, count, "sync receive")
    _check(drain_queue(info, queue_name, 0), 0, "left after sync receive")
    return count / elapsed


def aio_receive(info: BrokerInfo, count: int, size: int) -> float:
    queue_name = fresh_queue("aio-receive")
    _fill(info, queue_name, count, size)

    async def run() -> tuple[int, float]:
        async with aio.connect(info.url, info.username, info.password) as connection:
            session = await connection.create_session()
            consumer = await session.create_consumer(session.create_queue(queue_name))
            started = time.perf_counter()
            got = 0
            while got < count and await consumer.receive(RECEIVE_TIMEOUT_MS) is not None:
                got += 1
            return got, time.perf_counter() - started

    got, elapsed = asyncio.run(run())
    _check(got, count, "aio receive")
    _check(drain_queue(info, queue_name, 0), 0, "left after aio receive")
    return count / elapsed


def _check(actual: int, expected: int, what: str) -> None:
    if actual != expected:
        raise BenchmarkError(f"{what}: counted {actual} messages, expected {expected}")


def _best_of(
    rounds: int, sync: Callable[[], float], asyncio_: Callable[[], float]
) -> tuple[float, float]:
    """Best rate of each API over ``rounds`` rounds; the order alternates, so neither side
    always runs first (on a fresh queue, or right after a JIT-warming run of the broker)."""
    sync_rates: list[float] = []
    aio_rates: list[float] = []
    for index in range(rounds):
        if index % 2 == 0:
            sync_rates.append(sync())
            aio_rates.append(asyncio_())
        else:
            aio_rates.append(asyncio_())
            sync_rates.append(sync())
    print(
        "    rounds: sync "
        + ", ".join(f"{r:,.0f}" for r in sync_rates)
        + " / aio "
        + ", ".join(f"{r:,.0f}" for r in aio_rates),
        flush=True,
    )
    return max(sync_rates), max(aio_rates)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=10_000, help="messages per receive phase")
    parser.add_argument("--size", type=int, default=256, help="body size in characters")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--phases", default=",".join(PHASES))
    parser.add_argument("--min-ratio", type=float, default=None)
    args = parser.parse_args()
    phases = [p for p in args.phases.split(",") if p]
    print(versions_line())
    print(f"load average before: {os.getloadavg()}")
    results: list[tuple[str, int, float, float]] = []
    try:
        with broker() as info:
            print(f"broker: {info.description}")
            for phase in phases:
                if phase == "send-p":
                    n = max(1, args.n // PERSISTENT_DIVISOR)
                    pair = _best_of(
                        args.rounds,
                        functools.partial(sync_send, info, n, args.size, True),
                        functools.partial(aio_send, info, n, args.size, True),
                    )
                elif phase == "send-np":
                    n = args.n
                    pair = _best_of(
                        args.rounds,
                        functools.partial(sync_send, info, n, args.size, False),
                        functools.partial(aio_send, info, n, args.size, False),
                    )
                elif phase == "receive":
                    n = args.n
                    pair = _best_of(
                        args.rounds,
                        functools.partial(sync_receive, info, n, args.size),
                        functools.partial(aio_receive, info, n, args.size),
                    )
                else:
                    raise BenchmarkError(f"unknown phase {phase!r}; phases: {', '.join(PHASES)}")
                results.append((phase, n, *pair))
                print(f"  {phase}: sync {pair[0]:,.0f} msg/s, aio {pair[1]:,.0f} msg/s", flush=True)
    except BenchmarkError as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    print(f"load average after: {os.getloadavg()}")
    print(f"\n{'phase':<9} {'messages':>9} {'sync msg/s':>11} {'aio msg/s':>10} {'aio/sync':>9}")
    below = []
    for phase, n, sync_rate, aio_rate in results:
        ratio = aio_rate / sync_rate
        print(f"{phase:<9} {n:>9,} {sync_rate:>11,.0f} {aio_rate:>10,.0f} {ratio:>9.2f}")
        if args.min_ratio is not None and ratio < args.min_ratio:
            below.append(phase)
    print("every count checked: all messages sent were on the queue, all received once")
    if below:
        print(f"below --min-ratio {args.min_ratio}: {', '.join(below)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
