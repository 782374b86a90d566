"""The listener dispatch of a session: one thread per session, started with the first listener,
runs the MessageListener and batch listener deliveries of all its consumers one at a time.

A mixin of :class:`jmspy.session.Session`, which holds the state it reads and writes.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import TYPE_CHECKING, Any, cast

from ._dispatch_pool import DispatchPool, dispatch_pool

if TYPE_CHECKING:
    from ._ports import ConnectionPort, ConsumerHooks, ListenerWaits
    from .connection import Connection
    from .consumer import MessageConsumer
    from .session import Session

__all__ = ["SessionDispatch"]

log = logging.getLogger("jmspy.session")


class SessionDispatch:
    """The session's listener dispatch thread and its wake-ups."""

    _seq: int
    _closed: bool
    _connection_port: ConnectionPort
    _consumer_hooks: dict[MessageConsumer, ConsumerHooks]
    _ready: queue.SimpleQueue[MessageConsumer | None]
    _dispatcher: threading.Thread | None
    _delivery_lock: Any
    _listener_waits: ListenerWaits
    _batch_deadlines: dict[MessageConsumer, float]
    _pool: DispatchPool | None
    _connection: Connection

    if TYPE_CHECKING:

        def _is_dispatch_thread(self, thread: threading.Thread) -> bool: ...

    def _has_listener(self) -> bool:
        # Every receive() asks (JMS-21): a plain loop, no generator.
        for hooks in list(self._consumer_hooks.values()):
            if hooks.has_listener() or hooks.has_batch_listener():
                return True
        return False

    def _ensure_dispatcher(self) -> None:
        if self._pool is None and self._dispatcher is None:
            self._pool = dispatch_pool(self._connection.options.shared_event_loop_threads)
        if self._pool is None and self._dispatcher is None:
            self._dispatcher = threading.Thread(
                target=self._dispatch_loop, name=f"jmspy-session-{self._seq}", daemon=True
            )
            self._dispatcher.start()

    def _signal_ready(self, consumer: MessageConsumer, count: int = 1) -> None:
        for _ in range(count):
            self._ready.put(consumer)
        if self._pool is not None:
            self._pool.schedule(cast("Session", self))

    def _dispatch_loop(self) -> None:
        connection = self._connection_port
        while True:
            # Batch listeners waiting to fill a batch need a turn at their deadline, checked
            # at every turn: while other consumers of the session keep work queued, waiting
            # for the queue to empty would hold a partial batch past its timeout.
            timeout = self._queue_due_batches()
            try:
                consumer = self._ready.get(timeout=timeout)
            except queue.Empty:
                continue
            if consumer is None:
                return
            if not connection.wait_started(lambda: None):
                return
            if not self._dispatch_ready(consumer):
                return

    def _queue_due_batches(self) -> float | None:
        """Queue a turn for each batch consumer whose pending batch is due (behind the work
        already queued); returns the seconds until the next deadline, or None."""
        deadlines = self._batch_deadlines
        if not deadlines:
            return None
        now = time.monotonic()
        for consumer in [c for c, d in deadlines.items() if d <= now]:
            del deadlines[consumer]
            self._ready.put(consumer)
        return max(0.0, min(deadlines.values()) - now) if deadlines else None

    def _dispatch_ready(self, consumer: MessageConsumer) -> bool:
        """Deliver what ``consumer`` has ready; False once the session is closed."""
        connection = self._connection_port
        try:
            if self._listener_waits.awaited:
                # A close() or stop() waits for the listener: it goes first, or this thread,
                # which just let the lock go, mostly takes it back before the waiter wakes.
                self._listener_waits.let_through()
            with self._delivery_lock:
                if not connection.started():
                    # Stopped between the wait and the lock: keep the work for later.
                    self._ready.put(consumer)
                    return True
                if self._closed:
                    return False
                hooks = self._consumer_hooks.get(consumer)
                if hooks is None:
                    return True  # closed since it was queued
                if hooks.has_batch_listener():
                    deadline = hooks.dispatch_batch()
                    if deadline is not None:
                        self._batch_deadlines[consumer] = deadline
                    else:
                        self._batch_deadlines.pop(consumer, None)
                else:
                    hooks.dispatch_one()
        except BaseException:  # noqa: BLE001 - SystemExit too: never a silent stop
            # A dispatch failure must never kill the session's thread silently.
            log.exception("message dispatch failed on session %s", self._seq)
        return True

    def _dispatch_some(self, limit: int) -> tuple[bool, float | None]:
        """One turn on the shared dispatch pool: at most ``limit`` dispatches, without
        waiting. Returns whether more is ready and the next batch-listener deadline. While
        the connection is stopped the work stays queued; start() signals it again."""
        self._queue_due_batches()
        connection = self._connection_port
        # What was ready when the turn began, and no more: a listener run asks for the next
        # one as it ends, and taking that too kept the pool thread for up to ``limit`` runs
        # of one consumer while other sessions waited. Now it waits for the session's next
        # turn, behind the sessions that were ready meanwhile.
        for _ in range(min(limit, self._ready.qsize())):
            if self._closed or not connection.started():
                return False, None
            try:
                ready = self._ready.get_nowait()
            except queue.Empty:
                break
            if ready is None or not self._dispatch_ready(ready):
                return False, None
        more = not self._ready.empty() and connection.started() and not self._closed
        return more, min(self._batch_deadlines.values(), default=None)

    def _wait_for_listener(self) -> None:
        """Return once no listener of this session is running (used by stop and close).

        Waits for the listener call in progress only: a listener run of any consumer ends
        after its current message while a thread waits here (see ListenerWaits)."""
        if self._is_dispatch_thread(threading.current_thread()):
            return
        waits = self._listener_waits
        waits.enter()
        try:
            with self._delivery_lock:
                pass
        finally:
            waits.leave()
