"""Shared pieces of the failover tests: URLs, a recording ConnectionListener, deadline polls,
and a broker crash triggered from inside a running workload."""

from __future__ import annotations

import collections
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import jmspy

# Artemis restarts in 5-20 s on a busy 2-core machine; every wait here is generous.
RESTART_TIMEOUT = 180.0
LONG = 240.0


def failover_url(*urls: str, **options: Any) -> str:
    """``failover:(url,...)`` with test-friendly timeouts (options by their dotted names)."""
    merged = {
        "jms.sendTimeout": 240000,
        "jms.requestTimeout": 240000,
        "jms.connectTimeout": 20000,
        "failover.maxReconnectDelay": 500,
    }
    merged.update({k.replace("__", "."): v for k, v in options.items()})
    query = "&".join(f"{k}={v}" for k, v in merged.items())
    return f"failover:({','.join(urls)})?{query}"


def wait_until(predicate: Callable[[], bool], timeout: float = LONG, what: str = "") -> None:
    """Poll ``predicate`` until it holds; fail the test naming ``what`` at the deadline."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.02)


class Events:
    """A ConnectionListener recording every event with the thread it arrived on."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any, str]] = []
        self._cond = threading.Condition()

    def _add(self, kind: str, arg: Any) -> None:
        with self._cond:
            self.events.append((kind, arg, threading.current_thread().name))
            self._cond.notify_all()

    def onConnectionEstablished(self, uri: str) -> None:
        self._add("established", uri)

    def onConnectionInterrupted(self, uri: str) -> None:
        self._add("interrupted", uri)

    def onConnectionRestored(self, uri: str) -> None:
        self._add("restored", uri)

    def onConnectionFailure(self, exception: jmspy.JMSException) -> None:
        self._add("failure", exception)

    def count(self, kind: str) -> int:
        with self._cond:
            return sum(1 for k, _, _ in self.events if k == kind)

    def wait(self, kind: str, count: int = 1, timeout: float = LONG) -> None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while sum(1 for k, _, _ in self.events if k == kind) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(
                        f"no {count} {kind!r} event(s) within {timeout:.0f} s: {self.events}"
                    )
                self._cond.wait(remaining)

    def of(self, kind: str) -> list[Any]:
        with self._cond:
            return [arg for k, arg, _ in self.events if k == kind]

    def threads(self) -> set[str]:
        with self._cond:
            return {name for _, _, name in self.events}


class Crash:
    """Kill -9 the broker once a workload reaches ``at`` (call :meth:`tick` per step), then
    restart it on the same data; runs on its own thread so the workload keeps going."""

    def __init__(self, broker: Any, at: int) -> None:
        self.broker = broker
        self.at = at
        self.count = 0
        self.killed = threading.Event()
        self.restarted = threading.Event()
        self.error: BaseException | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def tick(self, step: int = 1) -> None:
        with self._lock:
            self.count += step
            if self.count >= self.at and self._thread is None:
                self._thread = threading.Thread(target=self._run, name="test-crash", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        try:
            self.broker.kill()
            self.killed.set()
            self.broker.restart(timeout=RESTART_TIMEOUT)
        except BaseException as exc:  # noqa: BLE001 - reported by join()
            self.error = exc
        finally:
            self.killed.set()
            self.restarted.set()

    def join(self, timeout: float = LONG) -> None:
        assert self._thread is not None, f"the workload never reached step {self.at}"
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the broker restart did not finish"
        if self.error is not None:
            raise self.error


def drain_bodies(
    factory: jmspy.ConnectionFactory, queue: str, quiet_ms: int = 3000
) -> collections.Counter[str]:
    """Every message left on ``queue`` (by body), taken until ``quiet_ms`` pass with none."""
    found: collections.Counter[str] = collections.Counter()
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        consumer = session.createConsumer(session.createQueue(queue))
        connection.start()
        while True:
            message = consumer.receive(quiet_ms)
            if message is None:
                return found
            found[str(message.getBody(str))] += 1


def unique_name(name: str) -> str:
    return f"fo.{name}.{time.monotonic_ns()}"


def preload(info: Any, queue: str, count: int) -> None:
    """``count`` persistent messages "0".."count-1" on ``queue``, sent without failover."""
    plain = jmspy.ConnectionFactory(info.url, info.username, info.password)
    with plain.createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        producer = session.createProducer(session.createQueue(queue))
        for i in range(count):
            producer.send(session.createTextMessage(str(i)))


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def jmspy_threads() -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("jmspy"))
