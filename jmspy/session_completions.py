"""Asynchronous sends of a session (a CompletionListener per send): the callbacks run on the
session's completion thread, one at a time, in send order, never on the sender's thread; close,
commit and rollback wait for them (JMS 2.0).

The engine tells the completion thread when a send is settled (``NotifiedCompletion.on_done``);
on an engine thread that wake-up waits while more input is there (see WakeupDeferral), so one
wake-up covers the outcomes of many sends. A send the peer does not settle within
jms.sendTimeout is reported to ``onException`` as unknown.

A mixin of :class:`jmspy.session.Session`, which holds the state it reads and writes.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from ._deferred_wakeups import defer_wakeup
from .errors import IllegalStateException, JMSException

if TYPE_CHECKING:
    from ._amqp.completion import NotifiedCompletion
    from .connection import Connection
    from .producer import MessageProducer

__all__ = ["SessionCompletions"]

log = logging.getLogger("jmspy.session")


class SessionCompletions:
    """The completion thread of a session and what waits for it."""

    _connection: Connection
    _seq: int
    _closed: bool
    _completions: collections.deque[tuple[Any, NotifiedCompletion[None], Any, Any]]
    _completion_cv: threading.Condition
    _completion_thread: threading.Thread | None

    def _is_completion_thread(self, thread: threading.Thread) -> bool:
        return self._completion_thread is thread

    def _track_async_send(
        self,
        producer: MessageProducer,
        completion: NotifiedCompletion[None],
        message: Any,
        listener: Any,
    ) -> None:
        """Queue a CompletionListener callback; callbacks run on the session's completion
        thread, one at a time, in send order, never on the caller's thread."""
        # Set before the completion thread can see it: a send settled earlier is done() by
        # then, one settled later notifies.
        completion.on_done = self._on_async_send_settled
        with self._completion_cv:
            # The completion thread waits for new items only when it has none.
            if not self._completions:
                self._completion_cv.notify_all()
            self._completions.append((producer, completion, message, listener))
            if self._completion_thread is None:
                self._completion_thread = threading.Thread(
                    target=self._completion_loop, name=f"jmspy-completion-{self._seq}", daemon=True
                )
                self._completion_thread.start()

    def _on_async_send_settled(self) -> None:
        """An asynchronous send was settled (usually on the engine thread): wake the
        completion thread. On an engine thread the wake-up waits while more input is there
        (see WakeupDeferral: at most 0.5 ms), so one wake-up covers the outcomes of many
        sends instead of a thread switch per send."""
        if not defer_wakeup(self._completion_cv, self._wake_completion_loop):
            self._wake_completion_loop()

    def _wake_completion_loop(self) -> None:
        with self._completion_cv:
            self._completion_cv.notify_all()

    def _completion_loop(self) -> None:
        timeout_s = self._connection.options.send_timeout / 1000.0
        while True:
            with self._completion_cv:
                while not self._completions:
                    if self._closed:
                        return
                    self._completion_cv.wait(1.0)
                producer, completion, message, listener = self._completions[0]
                # The send's outcome, bounded by jms.sendTimeout from now (settlements notify
                # the condition, see _on_async_send_settled).
                deadline = time.monotonic() + timeout_s
                while not completion.done():
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    self._completion_cv.wait(remaining)
            error: BaseException | None
            if completion.done():
                error = completion.error
            else:
                error = JMSException(
                    f"asynchronous send was not settled within {timeout_s:g} s (jms.sendTimeout)"
                )
            try:
                if error is None:
                    listener.onCompletion(message)
                else:
                    listener.onException(message, error)
            except BaseException:  # noqa: BLE001 - the next callbacks must still run
                log.exception("CompletionListener raised")
            with self._completion_cv:
                self._completions.popleft()
                self._completion_cv.notify_all()

    def _wait_completions(
        self, producer: MessageProducer | None = None, limit_s: float | None = None
    ) -> None:
        """Block until outstanding CompletionListener callbacks (of one producer, or all)
        have run (JMS: close, commit and rollback wait for them); a close waits at most
        ``limit_s``, what is left of its close timeout."""
        if self._completion_thread is threading.current_thread():
            return
        wait_s = self._connection.options.send_timeout / 1000.0 + 5
        if limit_s is not None:
            wait_s = min(wait_s, limit_s)
        deadline = time.monotonic() + wait_s
        with self._completion_cv:
            while any(producer is None or item[0] is producer for item in self._completions):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    log.warning("outstanding CompletionListener callbacks did not finish")
                    return
                self._completion_cv.wait(remaining)

    def _check_not_completion_thread(self, what: str) -> None:
        if self._completion_thread is threading.current_thread():
            raise IllegalStateException(
                f"Illegal invocation from CompletionListener callback: {what} must not be "
                "called from a completion listener of the same session"
            )
