"""Consume the same N messages with a MessageListener and with BatchMessageListeners (batch
sizes 10 and 100) through the local Artemis, in one run, and print each rate and its ratio to
the single-message listener.

    python benchmarks/batch_listener.py [-n 20000] [--size 1024]

Uses JMSPY_BROKER_URL (and JMSPY_BROKER_USER / JMSPY_BROKER_PASSWORD) when set, otherwise
provisions the project's Artemis for the run. Every phase fills a fresh queue first (not
timed), then times from connection.start() to the last message acknowledged.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import jmspy
from jmspy import DeliveryMode


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


def fill(factory: jmspy.ConnectionFactory, queue_name: str, count: int, size: int) -> None:
    payload = os.urandom(size)
    with factory.createConnection() as connection:
        session = connection.createSession()
        producer = session.createProducer(session.createQueue(queue_name))
        producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)
        for _ in range(count):
            message = session.createBytesMessage()
            message.writeBytes(payload)
            producer.send(message)
        producer.close()  # waits until the broker settled every send


class Counter:
    def __init__(self, total: int) -> None:
        self.total = total
        self.seen = 0
        self.done = threading.Event()
        self.max_batch = 0

    def onMessage(self, _message: Any) -> None:
        self.seen += 1
        if self.seen >= self.total:
            self.done.set()

    def onMessages(self, messages: list[Any]) -> None:
        self.seen += len(messages)
        self.max_batch = max(self.max_batch, len(messages))
        if self.seen >= self.total:
            self.done.set()


def consume(factory: jmspy.ConnectionFactory, queue_name: str, total: int, batch: int) -> float:
    counter = Counter(total)
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        consumer = session.createConsumer(session.createQueue(queue_name))
        if batch == 0:
            consumer.setMessageListener(counter)
        else:
            consumer.setBatchMessageListener(counter, batch, 20)
        started = time.perf_counter()
        connection.start()
        if not counter.done.wait(300):
            raise RuntimeError(f"only {counter.seen} of {total} messages arrived")
        elapsed = time.perf_counter() - started
        if batch and counter.max_batch > batch:
            raise RuntimeError(f"a batch of {counter.max_batch} exceeded the size {batch}")
    return total / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20000, help="messages per phase")
    parser.add_argument("--size", type=int, default=1024, help="body size in bytes")
    args = parser.parse_args()
    rows: list[tuple[str, float]] = []
    with broker() as (url, user, password):
        factory = jmspy.ConnectionFactory(url, user, password)
        warm = f"bench.batch.warmup.{uuid.uuid4().hex[:6]}"
        fill(factory, warm, 500, args.size)
        consume(factory, warm, 500, 0)
        for label, batch in (("MessageListener", 0), ("batch 10", 10), ("batch 100", 100)):
            name = f"bench.batch.{batch}.{uuid.uuid4().hex[:6]}"
            fill(factory, name, args.n, args.size)
            rows.append((label, consume(factory, name, args.n, batch)))
    base = rows[0][1]
    print(f"batch listener benchmark: {args.n} messages of {args.size} bytes, AUTO_ACKNOWLEDGE")
    print(f"{'listener':<18}{'msgs/s':>12}{'vs MessageListener':>22}")
    for label, rate in rows:
        print(f"{label:<18}{rate:>12,.0f}{rate / base:>21.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
