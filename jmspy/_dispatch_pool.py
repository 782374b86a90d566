"""A listener dispatch pool shared by many sessions (``transport.sharedEventLoopThreads``).

By default each session with a listener has a dispatch thread of its own. With the shared
event loop option the sessions of connections asking for N threads hand their listener calls
to a pool of N threads instead, so the thread count does not grow with the connections.

JMS session semantics are kept: a session is run by at most one pool thread at a time (its
listener calls are never concurrent and stay in order), and while a pool thread runs a
session it is that session's dispatch thread (``running``), so the rules about what a listener
may call on its own session and connection still apply. A session's turn runs the work that
was ready when it began (a listener run of at most LISTENER_RUN messages, or a batch, per
consumer; at most ``_TURN`` of them), and the work a run asks for as it ends waits for the
session's next turn, behind the other ready sessions, so one busy session cannot starve the
others; a listener that blocks holds one of the N threads.
"""

from __future__ import annotations

import collections
import heapq
import itertools
import logging
import threading
import time
from typing import TYPE_CHECKING

from ._deferred_wakeups import defer_wakeup

if TYPE_CHECKING:
    from .session import Session

log = logging.getLogger("jmspy.session")

# At most this many dispatches (listener runs or batches) per turn of one session.
_TURN = 64

_pools: dict[int, DispatchPool] = {}
_pools_lock = threading.Lock()


def dispatch_pool(threads: int) -> DispatchPool | None:
    """The pool shared by sessions of connections with ``sharedEventLoopThreads=threads``."""
    if threads <= 0:
        return None
    with _pools_lock:
        pool = _pools.get(threads)
        if pool is None:
            pool = _pools[threads] = DispatchPool(threads)
        return pool


class DispatchPool:
    def __init__(self, threads: int) -> None:
        self._size = threads
        self._threads: list[threading.Thread] = []
        self._cv = threading.Condition()
        self._ready: collections.deque[Session] = collections.deque()
        self._queued: set[Session] = set()
        # Sessions being run and by which thread; sessions signalled while being run.
        self._running: dict[Session, threading.Thread] = {}
        self._again: set[Session] = set()
        # Batch listener deadlines: (when, seq, session).
        self._timers: list[tuple[float, int, Session]] = []
        self._seq = itertools.count()

    def running(self, session: Session) -> threading.Thread | None:
        """The pool thread running ``session`` now, if any (its dispatch thread)."""
        return self._running.get(session)

    def schedule(self, session: Session) -> None:
        """``session`` has work ready (any thread, typically the engine's)."""
        with self._cv:
            self._enqueue(session)

    def _enqueue(self, session: Session) -> None:
        if session in self._running:
            self._again.add(session)
        elif session not in self._queued:
            self._queued.add(session)
            self._ready.append(session)
            if len(self._threads) < self._size and len(self._threads) < len(self._ready) + len(
                self._running
            ):
                self._start_thread()
            # On a shared loop thread stepping many connections: one wake-up before the loop
            # waits, not one per connection (see _deferred_wakeups).
            if not defer_wakeup(self, self._wake_for_ready):
                self._cv.notify()

    def _wake_for_ready(self) -> None:
        with self._cv:
            if self._ready:
                self._cv.notify(len(self._ready))

    def _start_thread(self) -> None:
        thread = threading.Thread(
            target=self._work,
            name=f"jmspy-shared-dispatch-{self._size}-{len(self._threads)}",
            daemon=True,
        )
        self._threads.append(thread)
        try:
            thread.start()
        except RuntimeError:  # "can't start new thread": the process is at its thread limit
            # Counted only once it runs, so the next schedule tries again; the caller (the
            # engine thread, or a pool thread re-queueing) must not die of it.
            self._threads.remove(thread)
            log.exception(
                "could not start a shared dispatch thread (%d running); the work stays queued",
                len(self._threads),
            )

    def _next(self) -> Session:
        with self._cv:
            while True:
                now = time.monotonic()
                while self._timers and self._timers[0][0] <= now:
                    self._enqueue(heapq.heappop(self._timers)[2])
                if self._ready:
                    session = self._ready.popleft()
                    self._queued.discard(session)
                    self._running[session] = threading.current_thread()
                    return session
                timeout = self._timers[0][0] - now if self._timers else None
                self._cv.wait(timeout)

    def _work(self) -> None:
        while True:
            session = self._next()
            more = False
            deadline: float | None = None
            try:
                # A session scheduled itself on this pool (Session._signal_ready): the pool
                # stands in for that session's own dispatch thread, so it runs its turn.
                more, deadline = session._dispatch_some(_TURN)
            except BaseException:  # noqa: BLE001 - the pool thread must survive anything
                log.exception("message dispatch failed")
            with self._cv:
                del self._running[session]
                again = session in self._again
                self._again.discard(session)
                if deadline is not None:
                    heapq.heappush(self._timers, (deadline, next(self._seq), session))
                    self._cv.notify()
                if more or again:
                    self._enqueue(session)
