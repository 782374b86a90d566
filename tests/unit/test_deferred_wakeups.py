"""Wake-ups an engine thread defers while input keeps coming (jmspy/_deferred_wakeups.py),
the dispatch pool's use of them (one wake-up for the sessions many connections made ready),
and the shared event loop's wait, which runs them before it blocks."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import pytest

from jmspy import _dispatch_pool
from jmspy._amqp.event_loop import SharedEventLoop
from jmspy._deferred_wakeups import WakeupDeferral, defer_wakeup


def _broken_wakeup() -> None:
    raise RuntimeError("wake-up failed")


def _in_thread(body: Callable[[], None]) -> None:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            body()
        except BaseException as exc:  # noqa: BLE001 - re-raised on the test's thread
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    assert not thread.is_alive()
    if errors:
        raise errors[0]


def test_outside_a_scope_nothing_is_deferred() -> None:
    calls: list[str] = []
    assert defer_wakeup("k", lambda: calls.append("k")) is False
    assert calls == []


def test_another_thread_is_not_deferred_by_this_threads_scope() -> None:
    results: list[bool] = []

    def body() -> None:
        WakeupDeferral().enter()
        other = threading.Thread(target=lambda: results.append(defer_wakeup("x", lambda: None)))
        other.start()
        other.join(10)

    _in_thread(body)
    assert results == [False]


class _Session:
    """Stands in for a jmspy Session on the pool: records its turns."""

    def __init__(self) -> None:
        self.turns = 0
        self.ran = threading.Event()

    def _dispatch_some(self, limit: int) -> tuple[bool, float | None]:
        self.turns += 1
        self.ran.set()
        return False, None


def test_the_pool_is_woken_once_for_the_sessions_a_turn_made_ready(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pool = _dispatch_pool.DispatchPool(2)
    wakes: list[int] = []
    real_wake = pool._wake_for_ready

    def counted_wake() -> None:
        wakes.append(len(pool._ready))
        real_wake()

    monkeypatch.setattr(pool, "_wake_for_ready", counted_wake)
    sessions = [_Session() for _ in range(5)]

    def body() -> None:
        deferral = WakeupDeferral()
        deferral.enter()
        for session in sessions:
            pool.schedule(session)  # type: ignore[arg-type]
        assert wakes == []
        deferral.run()

    _in_thread(body)
    assert len(wakes) == 1
    for session in sessions:
        assert session.ran.wait(10), "a session made ready in the turn never ran"
    assert [s.turns for s in sessions] == [1] * 5


def test_an_entered_deferral_keeps_wakeups_until_run_in_order_once_per_key() -> None:
    calls: list[str] = []

    def body() -> None:
        deferral = WakeupDeferral()
        assert not deferral
        deferral.enter()
        assert defer_wakeup("a", lambda: calls.append("a")) is True
        assert defer_wakeup("b", lambda: calls.append("b")) is True
        assert defer_wakeup("a", lambda: calls.append("a again")) is True
        assert deferral and calls == []
        deferral.run()
        assert calls == ["a", "b"] and not deferral
        # Still the thread's scope after a run: the next wake-up is deferred again.
        assert defer_wakeup("c", lambda: calls.append("c")) is True
        deferral.run()
        assert calls == ["a", "b", "c"]

    _in_thread(body)


def test_a_wakeup_deferred_by_a_running_wakeup_runs_in_the_same_run() -> None:
    calls: list[str] = []

    def body() -> None:
        deferral = WakeupDeferral()
        deferral.enter()
        defer_wakeup("first", lambda: defer_wakeup("second", lambda: calls.append("second")))
        deferral.run()
        assert calls == ["second"] and not deferral

    _in_thread(body)


def test_a_failing_deferred_wakeup_does_not_stop_the_others(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[str] = []

    def body() -> None:
        deferral = WakeupDeferral()
        deferral.enter()
        defer_wakeup("broken", _broken_wakeup)
        defer_wakeup("b", lambda: calls.append("b"))
        deferral.run()

    with caplog.at_level(logging.ERROR, logger="jmspy.engine"):
        _in_thread(body)
    assert calls == ["b"]
    assert "deferred wake-up failed" in caplog.text


def test_a_deferral_is_due_once_its_oldest_wakeup_waited_the_limit() -> None:
    deferral = WakeupDeferral()
    start = 1000.0
    assert deferral.due(start) is False  # the first look starts the clock
    assert deferral.due(start + WakeupDeferral.MAX_DEFER_S / 2) is False
    assert deferral.due(start + WakeupDeferral.MAX_DEFER_S * 2) is True
    deferral.run()
    assert deferral.due(start + 10.0) is False  # a run restarts it


class _Poller:
    """Stands in for the loop's epoll: scripted answers, and the timeouts it was asked for."""

    def __init__(self, answers: list[list[tuple[int, int]]]) -> None:
        self.answers = answers
        self.timeouts: list[float] = []

    def poll(self, timeout_s: float) -> list[tuple[int, int]]:
        self.timeouts.append(timeout_s)
        return self.answers.pop(0)


def test_the_shared_loop_keeps_wakeups_while_input_is_there_and_runs_them_before_it_waits() -> None:
    calls: list[str] = []

    def body() -> None:
        deferral = WakeupDeferral()
        deferral.enter()
        defer_wakeup("turn", lambda: calls.append("turn"))
        # More input already there: the events come back, the wake-up still waits.
        poller = _Poller([[(7, 1)]])
        assert SharedEventLoop._wait(poller, deferral, 5.0) == [(7, 1)]  # type: ignore[arg-type]
        assert poller.timeouts == [0.0] and calls == [] and deferral
        # Nothing there: the wake-up runs, then the loop waits as long as it meant to.
        poller = _Poller([[], [(8, 1)]])
        assert SharedEventLoop._wait(poller, deferral, 5.0) == [(8, 1)]  # type: ignore[arg-type]
        assert poller.timeouts == [0.0, 5.0] and calls == ["turn"] and not deferral

    _in_thread(body)


def test_the_shared_loop_runs_a_wakeup_that_waited_the_limit_even_while_input_comes() -> None:
    calls: list[str] = []

    def body() -> None:
        deferral = WakeupDeferral()
        deferral.enter()
        defer_wakeup("turn", lambda: calls.append("turn"))
        assert deferral.due(time.monotonic() - WakeupDeferral.MAX_DEFER_S * 2) is False
        poller = _Poller([[(7, 1)]])
        assert SharedEventLoop._wait(poller, deferral, 0.0) == [(7, 1)]  # type: ignore[arg-type]
        assert calls == ["turn"] and poller.timeouts == [0.0]

    _in_thread(body)


def test_a_deferral_left_runs_what_waits_and_defers_nothing_more() -> None:
    calls: list[str] = []

    def body() -> None:
        deferral = WakeupDeferral()
        deferral.enter()
        defer_wakeup("a", lambda: calls.append("a"))
        deferral.leave()
        assert calls == ["a"] and not deferral
        # An ending engine tells its handler it is done after leaving: such a wake-up runs
        # at once, it is not kept for a run that will not come.
        assert defer_wakeup("b", lambda: calls.append("b")) is False

    _in_thread(body)
