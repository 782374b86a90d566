"""The one-shot result an API thread waits for while the engine thread does the work."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Completion", "NotifiedCompletion"]

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
