"""Connect, send, receive and close, over and over, and watch what the process keeps: resident
memory (RSS), threads, open file descriptors and live jmspy Connection objects.

    python benchmarks/soak.py [-n 2000] [--warmup 100] [--every 250] [--max-seconds 900]
                              [--long-lived]

Each cycle opens a connection, sends one message to a queue, receives it and closes the
connection. With ``--long-lived`` one connection serves the whole run, as a service's does
for months, and each cycle opens and closes what such a service opens per operation: a
session (AUTO_ACKNOWLEDGE, CLIENT_ACKNOWLEDGE and transacted in turn), a producer and a
consumer on the queue, a temporary queue with a consumer, and an anonymous producer that
sends to it. RSS growth is printed per cycle too.

After ``--warmup`` cycles the script takes its baseline; every ``--every`` cycles it prints
RSS, threads, fds and live connections. It exits non-zero when a message went missing or
came back wrong, when the run exceeded ``--max-seconds``, or when, after the warm-up, RSS grew
by more than ``--max-rss-growth-mb`` (default 5) or the thread or fd count or the number of
live connections grew at all (small slack for threads still exiting).

Uses JMSPY_BROKER_URL (with JMSPY_BROKER_USER / JMSPY_BROKER_PASSWORD) when set, otherwise
provisions the project's Artemis for the run.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
import threading
import time
import uuid
from collections.abc import Iterator

import jmspy

# Threads and fds that may still be on their way out when a sample is taken (an exception
# listener thread, a socket being closed by the engine thread as it ends).
SLACK = 2


@contextlib.contextmanager
def broker() -> Iterator[tuple[str, str, str]]:
    url = os.environ.get("JMSPY_BROKER_URL")
    if url:
        yield (
            url,
            os.environ.get("JMSPY_BROKER_USER", "admin"),
            os.environ.get("JMSPY_BROKER_PASSWORD", "admin"),
        )
        return
    from jmspy.conformance.brokers import ArtemisBroker

    with ArtemisBroker() as local:
        yield local.url, local.username, local.password


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError("no VmRSS in /proc/self/status")


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


def live_connections() -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, jmspy.Connection))


def sample() -> tuple[float, int, int, int]:
    gc.collect()
    return rss_mb(), threading.active_count(), fd_count(), live_connections()


def cycle(factory: jmspy.ConnectionFactory, queue_name: str, n: int) -> None:
    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(queue_name)
        session.createProducer(queue).send(session.createTextMessage(f"soak {n}"))
        consumer = session.createConsumer(queue)
        connection.start()
        message = consumer.receive(10000)
        if message is None or message.getText() != f"soak {n}":
            got = None if message is None else message.getText()
            raise SystemExit(f"cycle {n}: expected 'soak {n}', received {got!r}")


_MODES = (jmspy.AUTO_ACKNOWLEDGE, jmspy.CLIENT_ACKNOWLEDGE, jmspy.SESSION_TRANSACTED)


def long_lived_cycle(connection: jmspy.Connection, queue_name: str, n: int) -> None:
    """One operation on a connection that stays open: everything it opens, it closes."""
    mode = _MODES[n % len(_MODES)]
    with connection.createSession(mode) as session:
        queue = session.createQueue(queue_name)
        with session.createProducer(queue) as producer:
            producer.send(session.createTextMessage(f"soak {n}"))
        if mode == jmspy.SESSION_TRANSACTED:
            session.commit()
        with session.createConsumer(queue) as consumer:
            message = consumer.receive(10000)
            if message is None or message.getText() != f"soak {n}":
                got = None if message is None else message.getText()
                raise SystemExit(f"cycle {n}: expected 'soak {n}', received {got!r}")
            if mode == jmspy.CLIENT_ACKNOWLEDGE:
                message.acknowledge()
        temporary = session.createTemporaryQueue()
        with session.createConsumer(temporary) as replies, session.createProducer(None) as any_:
            any_.send(temporary, session.createTextMessage(f"reply {n}"))
            if mode == jmspy.SESSION_TRANSACTED:
                session.commit()
            reply = replies.receive(10000)
            if reply is None or reply.getText() != f"reply {n}":
                raise SystemExit(f"cycle {n}: the reply on the temporary queue did not arrive")
            if mode == jmspy.CLIENT_ACKNOWLEDGE:
                reply.acknowledge()
            elif mode == jmspy.SESSION_TRANSACTED:
                session.commit()
        temporary.delete()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=2000, help="cycles after the warm-up")
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--every", type=int, default=250, help="print a sample every N cycles")
    parser.add_argument("--max-seconds", type=float, default=900.0)
    parser.add_argument("--max-rss-growth-mb", type=float, default=5.0)
    parser.add_argument(
        "--long-lived",
        action="store_true",
        help="one connection for the whole run; sessions, producers, consumers and "
        "temporary queues opened and closed per cycle",
    )
    args = parser.parse_args()

    started = time.monotonic()
    with broker() as (url, user, password):
        factory = jmspy.ConnectionFactory(url, user, password)
        queue_name = f"jmspy.soak.{uuid.uuid4().hex[:8]}"
        kind = "operations on one connection" if args.long_lived else "connection cycles"
        print(f"soak: {args.warmup} warm-up {kind}, then {args.n}, against {url}")
        stack = contextlib.ExitStack()
        if args.long_lived:
            connection = stack.enter_context(factory.createConnection())
            connection.start()

            def one(n: int) -> None:
                long_lived_cycle(connection, queue_name, n)
        else:

            def one(n: int) -> None:
                cycle(factory, queue_name, n)

        for n in range(args.warmup):
            one(n)
        base = sample()
        print(f"{'cycles':>7} {'RSS MB':>8} {'threads':>8} {'fds':>5} {'connections':>12}")
        print(f"{0:>7} {base[0]:>8.1f} {base[1]:>8} {base[2]:>5} {base[3]:>12}")
        last = base
        with stack:
            for n in range(1, args.n + 1):
                one(args.warmup + n)
                if time.monotonic() - started > args.max_seconds:
                    print(f"soak: FAILED, still running after {args.max_seconds:g} s (cycle {n})")
                    return 1
                if n % args.every == 0 or n == args.n:
                    last = sample()
                    print(f"{n:>7} {last[0]:>8.1f} {last[1]:>8} {last[2]:>5} {last[3]:>12}")

    growth = last[0] - base[0]
    problems = []
    if growth > args.max_rss_growth_mb:
        problems.append(f"RSS grew {growth:.1f} MB (limit {args.max_rss_growth_mb:g})")
    if last[1] > base[1] + SLACK:
        problems.append(f"threads grew {base[1]} -> {last[1]}")
    if last[2] > base[2] + SLACK:
        problems.append(f"fds grew {base[2]} -> {last[2]}")
    if last[3] > base[3]:
        problems.append(f"live connections grew {base[3]} -> {last[3]}")
    took = time.monotonic() - started
    total = args.warmup + args.n
    print(f"soak: {total} cycles, every message received, in {took:.0f} s")
    print(
        f"soak: RSS {base[0]:.1f} -> {last[0]:.1f} MB after the warm-up ({growth:+.1f} MB, "
        f"{growth * 1024 / args.n:+.2f} KiB per cycle)"
    )
    if problems:
        print("soak: FAILED: " + "; ".join(problems))
        return 1
    print("soak: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
