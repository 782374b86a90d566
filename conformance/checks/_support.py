"""Small helpers shared by the check modules: listeners that record, timing, draining, a
session on a fresh queue."""

from __future__ import annotations

import gc
import sys
import threading
import time
from typing import Any

import jmspy

from ..context import CheckContext

#: A delivery observed earlier than its due time by more than this is early (same machine
#: clock for broker and client; the margin covers millisecond rounding).
EARLY_MS = 25
#: How late a broker-timed event may be on a busy two-core machine before it counts as wrong.
LATE_MS = 1500


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def drain(consumer: Any, timeout_ms: int = 300) -> list[Any]:
    """Every message the consumer gets until one receive times out."""
    out: list[Any] = []
    while True:
        message = consumer.receive(timeout_ms)
        if message is None:
            return out
        out.append(message)


def text_of(message: Any) -> str:
    if isinstance(message, jmspy.TextMessage):
        return str(message.getText())
    return repr(message)


class Deliveries:
    """A MessageListener that records (text, arrival ms, JMSRedelivered, JMSXDeliveryCount)
    and raises for the texts in ``fail`` until each failed ``fail_times`` times."""

    def __init__(self, expected: int, fail: tuple[str, ...] = (), fail_times: int = 1) -> None:
        self.expected = expected
        self.fail = fail
        self.fail_times = fail_times
        self.seen: list[tuple[str, int, bool, int]] = []
        self.threads: set[str] = set()
        self.done = threading.Event()
        self._failures: dict[str, int] = {}
        self._lock = threading.Lock()

    def onMessage(self, message: Any) -> None:
        text = message.getText()
        with self._lock:
            self.seen.append(
                (
                    text,
                    now_ms(),
                    message.getJMSRedelivered(),
                    message.getIntProperty("JMSXDeliveryCount"),
                )
            )
            self.threads.add(threading.current_thread().name)
            if len(self.seen) >= self.expected:
                self.done.set()
            failing = text in self.fail and self._failures.get(text, 0) < self.fail_times
            if failing:
                self._failures[text] = self._failures.get(text, 0) + 1
        if failing:
            raise RuntimeError(f"conformance check: simulated failure for {text!r}")

    def of(self, text: str) -> list[tuple[str, int, bool, int]]:
        return [d for d in self.seen if d[0] == text]

    def flags(self, text: str) -> list[tuple[bool, int]]:
        return [(d[2], d[3]) for d in self.of(text)]


class Batches:
    """A BatchMessageListener recording each batch (texts, flags, time, thread)."""

    def __init__(self, expected_messages: int) -> None:
        self.expected = expected_messages
        self.batches: list[list[str]] = []
        self.flags: list[list[tuple[bool, int]]] = []
        self.times: list[float] = []
        self.threads: set[str] = set()
        self.overlaps = 0
        self.done = threading.Event()
        self.fail_first = False
        self.on_batch: Any = None
        self._running = 0
        self._lock = threading.Lock()

    def onMessages(self, messages: list[Any]) -> None:
        with self._lock:
            self._running += 1
            if self._running > 1:
                self.overlaps += 1
        try:
            self.times.append(time.monotonic())
            self.threads.add(threading.current_thread().name)
            self.batches.append([m.getText() for m in messages])
            self.flags.append(
                [(m.getJMSRedelivered(), m.getIntProperty("JMSXDeliveryCount")) for m in messages]
            )
            if self.on_batch is not None:
                self.on_batch(messages)
            if sum(len(b) for b in self.batches) >= self.expected:
                self.done.set()
            if self.fail_first and len(self.batches) == 1:
                raise RuntimeError("conformance check: batch failed on purpose")
        finally:
            with self._lock:
                self._running -= 1

    @property
    def sizes(self) -> list[int]:
        return [len(b) for b in self.batches]


def send_texts(session: Any, destination: Any, texts: list[str], persistent: bool = False) -> None:
    producer = session.createProducer(destination)
    producer.setDeliveryMode(
        jmspy.DeliveryMode.PERSISTENT if persistent else jmspy.DeliveryMode.NON_PERSISTENT
    )
    for text in texts:
        producer.send(session.createTextMessage(text))
    producer.close()


def wait_buffered(consumer: Any, count: int, timeout: float = 5.0) -> bool:
    """Wait until ``count`` messages sit in the consumer's local prefetch buffer."""
    buffered = getattr(consumer, "_buffered_count", None)
    if buffered is None:
        time.sleep(0.3)
        return True
    deadline = time.monotonic() + timeout
    while buffered() < count:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _current_frames() -> dict[int, Any]:
    """``sys._current_frames()`` with the cyclic collector paused: on CPython 3.11 a collection
    that starts inside it (it allocates while holding the interpreter's thread list lock) and
    frees a ``threading.local`` takes that lock again and deadlocks the whole process
    (python/cpython#106883; 3.12 pauses the collector itself)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return sys._current_frames()
    finally:
        if was_enabled:
            gc.enable()


def wait_blocked_in_receive(thread: threading.Thread, timeout: float = 10.0) -> bool:
    """Wait (a deadline poll) until ``thread`` is blocked inside a consumer's receive: its
    stack holds a jmspy consumer frame with a ``threading`` wait on top. This is the state a
    check about "a blocked receive" needs, observed rather than guessed with a sleep."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        frame = _current_frames().get(thread.ident or -1)
        names: list[tuple[str, str]] = []
        while frame is not None:
            names.append((frame.f_code.co_filename, frame.f_code.co_name))
            frame = frame.f_back
        in_consumer = any(f.endswith(("consumer.py", "context.py")) for f, _ in names)
        waiting = any(f.endswith("threading.py") and n == "wait" for f, n in names)
        if in_consumer and waiting:
            return True
        if not thread.is_alive():
            return False
        time.sleep(0.01)
    return False


def queue_session(ctx: CheckContext, *args: Any) -> tuple[Any, Any, Any]:
    """(connection, session, queue) on a fresh unique queue."""
    connection = ctx.connection()
    session = connection.createSession(*args)
    return connection, session, session.createQueue(ctx.name())
