"""The one-shot result an API thread waits for while the engine thread does the work."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

__all__ = ["Completion", "NotifiedCompletion", "WaitScope", "current_wait_scope"]

log = logging.getLogger("jmspy.engine")

T = TypeVar("T")


class Completion(Generic[T]):
    """A one-shot result handed from the engine thread to a waiting API thread.

    Lighter than ``concurrent.futures.Future`` and with the one operation we need: wait with
    a deadline, then either return the value or raise the failure.
    """

    __slots__ = ("_event", "_value", "_error", "callbacks")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None
        self.callbacks: list[Callable[[Completion[T]], None]] | None = None

    def done(self) -> bool:
        return self._event.is_set()

    def succeed(self, value: T | None = None) -> None:
        if self._event.is_set():
            return
        self._value = value
        self._event.set()
        self._run_callbacks()

    def fail(self, error: BaseException) -> None:
        if self._event.is_set():
            return
        self._error = error
        self._event.set()
        self._run_callbacks()

    def add_callback(self, callback: Callable[[Completion[T]], None]) -> None:
        if self.callbacks is None:
            self.callbacks = []
        self.callbacks.append(callback)
        if self._event.is_set():
            callback(self)

    def _run_callbacks(self) -> None:
        if self.callbacks:
            for callback in self.callbacks:
                try:
                    callback(self)
                except Exception:  # a callback must never break the engine
                    log.exception("completion callback failed")

    @property
    def error(self) -> BaseException | None:
        return self._error

    def wait(self, timeout_s: float, on_timeout: Callable[[], BaseException]) -> T:
        if not self._event.wait(timeout_s):
            raise on_timeout()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


class NotifiedCompletion(Completion[T]):
    """A Completion that no thread blocks on: whoever needs its outcome is told through
    ``on_done`` (called on the completing thread, usually the engine's) and reads ``done()``
    and ``error``. It has no Event: an asynchronous send (a CompletionListener's) made a
    Condition and a Lock for every message only to be waited on by its session's completion
    thread, which now waits on its own condition instead."""

    __slots__ = ("_done", "on_done")

    def __init__(self) -> None:  # no Event, unlike Completion
        self._done = False
        self._value = None
        self._error = None
        self.callbacks = None
        self.on_done: Callable[[], None] | None = None

    def done(self) -> bool:
        return self._done

    def succeed(self, value: T | None = None) -> None:
        if self._done:
            return
        self._value = value
        self._finish()

    def fail(self, error: BaseException) -> None:
        if self._done:
            return
        self._error = error
        self._finish()

    def _finish(self) -> None:
        self._done = True
        on_done = self.on_done
        if on_done is not None:
            try:
                on_done()
            except Exception:  # must never break the engine
                log.exception("completion notification failed")
        self._run_callbacks()

    def add_callback(self, callback: Callable[[Completion[T]], None]) -> None:
        if self.callbacks is None:
            self.callbacks = []
        self.callbacks.append(callback)
        if self._done:
            callback(self)

    def wait(self, timeout_s: float, on_timeout: Callable[[], BaseException]) -> T:
        raise TypeError("a NotifiedCompletion is observed through on_done, not waited on")


_entered = threading.local()


def current_wait_scope() -> WaitScope | None:
    """The scope the calling thread's waits belong to (see :meth:`WaitScope.entered`)."""
    scope: WaitScope | None = getattr(_entered, "scope", None)
    return scope


class WaitScope:
    """The engine waits of API calls that a close from another thread must be able to end.

    A session's rollback() and commit() wait for the broker (a drain, a discharge, the next
    declare), each up to jms.requestTimeout or amqp.drainTimeout. A Session.close() or
    Connection.close() from another thread keeps to jms.closeTimeout, so it cannot wait that
    long behind them: it calls :meth:`abort`, which fails every wait in the scope at once and
    every later one as it starts. The calls enter the scope on their own thread
    (:meth:`entered`), so the closing thread's own waits are never part of it.
    """

    __slots__ = ("_lock", "_waits", "_aborted")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waits: set[Completion[Any]] = set()
        self._aborted: BaseException | None = None

    @contextlib.contextmanager
    def entered(self) -> Iterator[None]:
        """The calling thread's engine waits belong to this scope until the block ends."""
        previous = getattr(_entered, "scope", None)
        _entered.scope = self
        try:
            yield
        finally:
            _entered.scope = previous

    @property
    def aborted(self) -> bool:
        return self._aborted is not None

    def add(self, completion: Completion[Any]) -> None:
        with self._lock:
            error = self._aborted
            if error is None:
                self._waits.add(completion)
                return
        completion.fail(error)

    def discard(self, completion: Completion[Any]) -> None:
        with self._lock:
            self._waits.discard(completion)

    def abort(self, error: BaseException) -> None:
        """Fail every wait of the scope now, and each one that starts later."""
        with self._lock:
            self._aborted = error
            waits = list(self._waits)
            self._waits.clear()
        for completion in waits:
            completion.fail(error)
