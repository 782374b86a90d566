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
    # (producer, completion, message, listener, deadline): the deadline is jms.sendTimeout
    # after send() returned, so sends waiting behind one another time out together.
    _completions: collections.deque[tuple[Any, NotifiedCompletion[None], Any, Any, float]]
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
            deadline = time.monotonic() + self._connection.options.send_timeout / 1000.0
            self._completions.append((producer, completion, message, listener, deadline))
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
        timeout_ms = self._connection.options.send_timeout
        while True:
            with self._completion_cv:
                while not self._completions:
                    if self._closed:
                        return
                    self._completion_cv.wait(1.0)
                producer, completion, message, listener, deadline = self._completions[0]
                # The send's outcome, bounded by its deadline (settlements notify the
                # condition, see _on_async_send_settled).
                while not completion.done() and not self._closed:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    self._completion_cv.wait(remaining)
                if self._closed and not completion.done():
                    # close() has returned (or given up waiting for these callbacks within
                    # jms.closeTimeout) and this send has no outcome yet: the close ends it,
                    # on the engine thread, maybe later than now. Every send left still gets
                    # its one callback, in order, now: its outcome, or withdrawn (not sent)
                    # or unknown.
                    left = list(self._completions)
                    self._completions.clear()
                    self._completion_cv.notify_all()
                    break
            self._report(producer, completion, message, listener, timeout_ms)
            with self._completion_cv:
                self._completions.popleft()
                self._completion_cv.notify_all()
        for producer, completion, message, listener, _ in left:
            self._report(producer, completion, message, listener, None)

    def _report(
        self,
        producer: MessageProducer,
        completion: NotifiedCompletion[None],
        message: Any,
        listener: Any,
        timeout_ms: int | None,
    ) -> None:
        """Completion thread: the one callback of an asynchronous send (see _timed_out for
        one without an outcome by its deadline, or by its session's close when
        ``timeout_ms`` is None)."""
        if completion.done():
            error = completion.error
        else:
            error = self._timed_out(producer, completion, timeout_ms)
        try:
            if error is None:
                listener.onCompletion(message)
            else:
                listener.onException(message, error)
        except BaseException:  # noqa: BLE001 - the next callbacks must still run
            log.exception("CompletionListener raised")

    @staticmethod
    def _timed_out(
        producer: MessageProducer, completion: NotifiedCompletion[None], timeout_ms: int | None
    ) -> BaseException | None:
        """What an asynchronous send that got no outcome by its deadline (``timeout_ms``, its
        jms.sendTimeout) or by its session's close (None) reports. One still queued for credit
        is withdrawn, so it is never written after this report."""
        # Reach-in kept: the session owns its producers' links for their sends' outcomes.
        closed = timeout_ms is None
        for link in list(producer._links.values()):
            pending = link.withdraw(completion)
            if pending is None:
                continue
            address = link.spec.address
            if pending.written and closed:
                return JMSException(
                    f"asynchronous send to {address!r} was written but its session was closed "
                    "before the peer settled it: its outcome is unknown, the broker may or may "
                    "not have the message"
                )
            if pending.written:
                return JMSException(
                    f"asynchronous send to {address!r} was written before the connection was "
                    f"interrupted and not resent within {timeout_ms} ms (jms.sendTimeout): its "
                    "outcome is unknown, the broker may or may not have the message (it will "
                    "not be resent)"
                )
            if closed:
                return JMSException(
                    f"asynchronous send to {address!r} was not sent: its session was closed "
                    "before it could be written (it was withdrawn)"
                )
            return JMSException(
                f"asynchronous send to {address!r} could not be written within {timeout_ms} "
                "ms (jms.sendTimeout, no link credit or no connection); it was withdrawn, the "
                "message was not sent"
            )
        if completion.done():  # settled while it was looked for
            return completion.error
        if closed:
            return JMSException(
                "asynchronous send: its session was closed before the peer settled it: its "
                "outcome is unknown, the broker may or may not have the message"
            )
        return JMSException(
            f"asynchronous send was not settled by the peer within {timeout_ms} ms "
            "(jms.sendTimeout): its outcome is unknown, the broker may or may not have the "
            "message"
        )

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
