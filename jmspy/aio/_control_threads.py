"""The threads asyncio connections run their few blocking engine calls on, shared by all of
them: started when a call finds none idle, ended after :data:`IDLE_S` without work.

A pool per connection kept two threads for as long as the connection was open, so a process
with many asyncio connections (``transport.sharedEventLoopThreads`` included) grew two
threads per connection that did nothing between calls. Here an idle process has no control
thread at all, and a busy one as many as it has calls in flight (link attach, commit,
rollback, close, the drain of a timed-out receive: each bounded by the timeout the blocking
API honours), up to :data:`MAX_THREADS`; a call past that waits for a thread to be free.
A call never waits behind another connection's slow call while fewer are in flight.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["ControlThreads", "control_threads"]

log = logging.getLogger("jmspy.aio")

T = TypeVar("T")

IDLE_S = 30.0  # a thread with no work for this long ends
MAX_THREADS = 64

_Job = tuple[concurrent.futures.Future[Any], Callable[..., Any], tuple[Any, ...]]


class ControlThreads:
    """Threads started on demand for blocking calls, each ending after ``idle_s`` idle."""

    def __init__(self, idle_s: float = IDLE_S, max_threads: int = MAX_THREADS) -> None:
        self._idle_s = idle_s
        self._max_threads = max_threads
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        # Threads waiting for a job that no submitted job has claimed; jobs queued when every
        # thread was busy and no more could start (the next thread to finish takes one); all
        # threads.
        self._idle = 0
        self._unclaimed = 0
        self._threads = 0
        self._names = itertools.count(1)

    @property
    def threads(self) -> int:
        """Control threads alive now."""
        return self._threads

    def submit(self, function: Callable[..., T], *args: Any) -> concurrent.futures.Future[T]:
        """``function(*args)`` on a control thread; its outcome is the future's."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._lock:
            if self._idle > 0:
                self._idle -= 1  # that thread's next job is this one
                start = False
            else:
                start = self._threads < self._max_threads
                if start:
                    self._threads += 1
                else:
                    self._unclaimed += 1
        self._jobs.put((future, function, args))
        if start:
            thread = threading.Thread(
                target=self._work, name=f"jmspy-aio-control-{next(self._names)}", daemon=True
            )
            try:
                thread.start()
            except BaseException:
                with self._lock:
                    self._threads -= 1
                raise
        return future

    def _work(self) -> None:
        try:
            while True:
                try:
                    future, function, args = self._jobs.get(timeout=self._idle_s)
                except queue.Empty:
                    with self._lock:
                        if self._idle > 0:
                            # Unclaimed: leave. A thread every submitted job counted on is
                            # still waiting (idle counts only threads no job claimed).
                            self._idle -= 1
                            self._threads -= 1
                            return
                    continue  # a job claimed this thread and is on its way
                if future.set_running_or_notify_cancel():
                    try:
                        future.set_result(function(*args))
                    except BaseException as exc:  # noqa: BLE001 - the caller's to see
                        future.set_exception(exc)
                del future, function, args  # nothing of a finished call is kept while idle
                with self._lock:
                    if self._unclaimed > 0:
                        self._unclaimed -= 1  # a queued job is this thread's next
                    else:
                        self._idle += 1
        except BaseException:  # pragma: no cover - a thread must not die unnoticed
            log.exception("aio control thread failed")
            with self._lock:
                self._threads -= 1
            raise


_shared: ControlThreads | None = None
_shared_lock = threading.Lock()


def control_threads() -> ControlThreads:
    """The process's control threads (created on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ControlThreads()
        return _shared
