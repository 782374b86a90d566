"""The shared dispatch pool at the process's thread limit: a thread that cannot start is logged,
not counted, and never raised into whoever scheduled the work (the engine thread); the next
schedule starts it and the queued work runs."""

from __future__ import annotations

import logging
import threading

import pytest

from jmspy import _dispatch_pool


class _Session:
    """Stands in for a jmspy Session on the pool: records that it ran."""

    def __init__(self) -> None:
        self.ran = threading.Event()

    def _dispatch_some(self, limit: int) -> tuple[bool, float | None]:
        self.ran.set()
        return False, None


def test_a_pool_thread_that_cannot_start_is_retried_by_the_next_schedule(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A size no other test uses: the pool's daemon thread outlives the test, and tests of the
    # shared loop count the threads of the pools they make (named by size).
    pool = _dispatch_pool.DispatchPool(5)
    real_start = threading.Thread.start
    refusals = [1]

    def start(thread: threading.Thread) -> None:
        if refusals and thread.name.startswith("jmspy-shared-dispatch"):
            refusals.pop()
            raise RuntimeError("can't start new thread")
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    first, second = _Session(), _Session()
    with caplog.at_level(logging.ERROR, logger="jmspy.session"):
        pool.schedule(first)  # type: ignore[arg-type]  # must not raise
    assert "could not start a shared dispatch thread" in caplog.text
    assert pool._threads == []  # not counted: the next schedule may start one
    pool.schedule(second)  # type: ignore[arg-type]
    assert first.ran.wait(10), "the work queued while no thread could start never ran"
    assert second.ran.wait(10)
