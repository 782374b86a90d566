"""Wake-ups a thread defers while it has more input to take in.

An engine thread (a connection's own, or a shared event loop thread stepping many
connections) reads a few transfers at a time and hands each read to the consumers at once. A
receive() waiting for messages, a session's dispatch thread or the shared listener dispatch
pool, woken at every read, takes the few messages and waits again: the threads then trade the
GIL at every read (a thread switch costs more than handing over the messages), and with many
connections the pool was woken once per connection. Inside a :class:`WakeupDeferral` scope a
wake-up registered with :func:`defer_wakeup` runs once per key, when the engine is about to
wait or has deferred it for :data:`WakeupDeferral.MAX_DEFER_S`. Other threads are not
affected: the deferral is per thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

__all__ = ["WakeupDeferral", "defer_wakeup"]

log = logging.getLogger("jmspy.engine")

_local = threading.local()


def _run_wakeups(pending: dict[object, Callable[[], None]]) -> None:
    """Run and remove each of ``pending`` in order, including any a running one adds (a
    listener's turn makes the dispatch pool defer its own wake-up); one failing does not stop
    the rest."""
    while pending:
        wake = pending.pop(next(iter(pending)))
        try:
            wake()
        except Exception:  # noqa: BLE001 - one failed wake-up must not stop the others
            log.exception("deferred wake-up failed")


class WakeupDeferral:
    """The deferral scope of an engine thread, for as long as the thread runs.

    The consumers and the dispatch pool defer their wake-ups in it; the engine runs them when
    it is about to wait for input (:meth:`run`) or when one has waited :data:`MAX_DEFER_S`,
    and a consumer whose buffer reached its threshold wakes its receiver at once. Owned by
    one thread: :meth:`enter` on it, then :meth:`run` and :meth:`due` from it only.
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

    def leave(self) -> None:
        """The thread stops deferring (it is ending): what is deferred runs now, and a
        wake-up registered from here on, while the engine tells everyone it is done, runs at
        once instead of waiting for a run that will not come."""
        if getattr(_local, "pending", None) is self._pending:
            _local.pending = None
        self.run()


def defer_wakeup(key: object, wake: Callable[[], None]) -> bool:
    """Run ``wake`` when this thread's :class:`WakeupDeferral` runs (once per ``key``);
    False, and nothing registered, when the thread has no such scope."""
    pending: dict[object, Callable[[], None]] | None = getattr(_local, "pending", None)
    if pending is None:
        return False
    if key not in pending:
        pending[key] = wake
    return True
