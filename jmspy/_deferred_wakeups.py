"""Wake-ups a thread defers to the end of what it is doing now.

A shared event loop thread (``transport.sharedEventLoopThreads``) steps many connections in
one turn, and each of them may hand messages to the shared listener dispatch pool. Waking a
pool thread once per connection made the loop and the pool trade the GIL at every connection
(``Condition.notify`` was a quarter of the loop thread's time with 100 connections); inside
:func:`deferred_wakeups` a wake-up registered with :func:`defer_wakeup` runs once, when the
turn ends, however many connections asked for it. Other threads are not affected: the
deferral is per thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["WakeupDeferral", "defer_wakeup", "deferred_wakeups"]

log = logging.getLogger("jmspy.engine")

_local = threading.local()


@contextmanager
def deferred_wakeups() -> Iterator[None]:
    """Run the wake-ups deferred on this thread meanwhile once each, at the end (always, even
    when the body raises: a wake-up left out would leave messages waiting for nobody)."""
    outer: dict[object, Callable[[], None]] | None = getattr(_local, "pending", None)
    if outer is not None:
        yield  # nested: the outer scope runs them
        return
    pending: dict[object, Callable[[], None]] = {}
    _local.pending = pending
    try:
        yield
    finally:
        _local.pending = None
        _run_wakeups(pending)


def _run_wakeups(pending: dict[object, Callable[[], None]]) -> None:
    """Run and remove each of ``pending`` in order, including any a running one adds (a
    dispatch pool's, deferred in a WakeupDeferral scope); one failing does not stop the rest."""
    while pending:
        wake = pending.pop(next(iter(pending)))
        try:
            wake()
        except Exception:  # noqa: BLE001 - one failed wake-up must not stop the others
            log.exception("deferred wake-up failed")


class WakeupDeferral:
    """A long-lived deferral scope for a connection's own engine thread.

    The engine thread reads a few transfers at a time (what the socket holds) and hands each
    read to the consumers at once. A receive() waiting for messages, woken at every read,
    takes the few messages and waits again: the two threads then trade the GIL at every read
    (a thread switch costs more than handing over the messages). Inside this scope the
    consumers defer that wake-up; the engine runs them when it is about to wait for input
    (:meth:`run`) or when one has waited :data:`MAX_DEFER_S`, and a consumer whose buffer
    reached its threshold wakes its receiver at once. Owned by one thread: :meth:`enter` on
    it, then :meth:`run` and :meth:`due` from it only.
    """

    MAX_DEFER_S = 0.0005  # the most a deferred wake-up waits while input keeps coming

    def __init__(self) -> None:
        self._pending: dict[object, Callable[[], None]] = {}
        self._since = 0.0

    def enter(self) -> None:
        """Make this the calling thread's scope (the engine thread, once, at its start)."""
        _local.pending = self._pending

    def __bool__(self) -> bool:
        return bool(self._pending)

    def due(self, now: float) -> bool:
        """Whether the oldest deferred wake-up has waited long enough (call when non-empty)."""
        if not self._since:
            self._since = now
            return False
        return now - self._since >= self.MAX_DEFER_S

    def run(self) -> None:
        """Run the deferred wake-ups now, once each (never raises)."""
        self._since = 0.0
        _run_wakeups(self._pending)


def defer_wakeup(key: object, wake: Callable[[], None]) -> bool:
    """Run ``wake`` at the end of this thread's :func:`deferred_wakeups` scope (once per
    ``key``); False, and nothing registered, when the thread is not in such a scope."""
    pending: dict[object, Callable[[], None]] | None = getattr(_local, "pending", None)
    if pending is None:
        return False
    if key not in pending:
        pending[key] = wake
    return True
