"""Receiving ahead for the streaming source (option ``pipeline``): a thread of the runner
process takes messages from the consumer and turns them into raw rows while Spark runs the
current micro-batch, so that planning the next one finds its rows ready.

The consumer's session is INDIVIDUAL_ACKNOWLEDGE (rule JMS-67): each message is settled on
its own, once Spark has recorded the batch that holds it, so messages received ahead (for a
batch not planned yet) are never settled with an earlier batch. Nothing here settles; the
stream consumer does (see ``_stream``).
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import jmspy

from ._rows import message_to_raw_row

log = logging.getLogger("jmspy.spark")

RowAndMessage = tuple[tuple[Any, ...], jmspy.Message]


class ReceiveAhead:
    """Rows received and not yet handed to a micro-batch, at most ``limit`` of them."""

    def __init__(
        self,
        next_message: Callable[[bool], jmspy.Message | None],
        limit: int,
        poll_timeout_ms: int,
        cutoff_ms: int | None,
    ) -> None:
        # next_message(idle_wait): the next message, or None when the destination has nothing
        # now (with idle_wait, after also waiting pollTimeoutMs for one).
        self._next_message = next_message
        # Trigger.AvailableNow: receive what is there, stop at the first message stamped
        # after this (taken) or when the destination is first found empty.
        self._cutoff_ms = cutoff_ms
        self._finished = False
        self._limit = max(1, limit)
        self._poll_timeout_s = poll_timeout_ms / 1000
        self._ready: collections.deque[RowAndMessage] = collections.deque()
        self._cv = threading.Condition()
        # How many times the destination was found empty: a take waiting for more rows ends
        # when this moves on (the broker has nothing more now).
        self._empty_count = 0
        self._error: BaseException | None = None
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="jmspy-spark-receive", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while True:
                with self._cv:
                    while not self._stopped and len(self._ready) >= self._limit:
                        self._cv.wait()
                    if self._stopped:
                        return
                    cutoff = self._cutoff_ms
                message = self._next_message(cutoff is None)
                if message is None:
                    with self._cv:
                        self._empty_count += 1
                        self._finished = cutoff is not None
                        self._cv.notify_all()
                    if self._finished:
                        return
                    continue
                row = message_to_raw_row(message)
                with self._cv:
                    self._ready.append((row, message))
                    # Sent after an availableNow run started: taken, then no more, so a
                    # producer that never pauses cannot keep the run going forever.
                    self._finished = cutoff is not None and message.getJMSTimestamp() > cutoff
                    self._cv.notify_all()
                if self._finished:
                    return
        except BaseException as exc:  # noqa: BLE001 - reported to the next take, never lost
            with self._cv:
                if not self._stopped:
                    log.error("receiving ahead for the JMS source failed: %s", exc, exc_info=exc)
                    self._error = exc
                self._cv.notify_all()

    def take(self, budget: int) -> list[RowAndMessage]:
        """Up to ``budget`` rows: at once when that many are ready; else the wait ends when
        the destination is found empty with some rows ready, or after pollTimeoutMs (an idle
        stream's wait for its next message); in an availableNow run, when the receiving has
        finished. Raises what stopped the receiving thread."""
        deadline = time.monotonic() + self._poll_timeout_s
        with self._cv:
            empty_before = self._empty_count
            while len(self._ready) < budget:
                if self._error is not None:
                    raise self._error
                if self._stopped or self._finished:
                    break
                if self._cutoff_ms is not None:
                    # Each receive of the thread is bounded (a drain's answer, or
                    # pollTimeoutMs), so the run finishes; this wait only re-checks.
                    self._cv.wait(1.0)
                    continue
                if self._ready and self._empty_count != empty_before:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cv.wait(remaining)
            taken = [self._ready.popleft() for _ in range(min(budget, len(self._ready)))]
            self._cv.notify_all()
        return taken

    def available_now(self, cutoff_ms: int) -> None:
        """Trigger.AvailableNow begins (Spark says so before planning its first batch)."""
        with self._cv:
            self._cutoff_ms = cutoff_ms
            if self._thread.is_alive():  # a finished run stays finished
                self._finished = False
            self._cv.notify_all()

    def exhausted(self) -> bool:
        """An availableNow run has received everything it will, and all of it was taken."""
        with self._cv:
            return self._finished and not self._ready

    def stop(self) -> None:
        """Stop receiving. Rows not taken are dropped: their messages were never settled and
        go back to the broker when the connection closes, which also ends a receive the
        thread is blocked in (then :meth:`join`)."""
        with self._cv:
            self._stopped = True
            self._ready.clear()
            self._cv.notify_all()

    def join(self, timeout_s: float) -> None:
        if self._thread is not threading.current_thread():
            self._thread.join(timeout_s)
