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

__all__ = ["defer_wakeup", "deferred_wakeups"]

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
        for wake in pending.values():
            try:
                wake()
            except Exception:  # noqa: BLE001 - one failed wake-up must not stop the others
                log.exception("deferred wake-up failed")


def defer_wakeup(key: object, wake: Callable[[], None]) -> bool:
    """Run ``wake`` at the end of this thread's :func:`deferred_wakeups` scope (once per
    ``key``); False, and nothing registered, when the thread is not in such a scope."""
    pending: dict[object, Callable[[], None]] | None = getattr(_local, "pending", None)
    if pending is None:
        return False
    if key not in pending:
        pending[key] = wake
    return True
