"""Wake-ups deferred to the end of a shared loop turn (jmspy/_deferred_wakeups.py) and the
dispatch pool's use of them: one wake-up per turn, however many sessions it made ready."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import pytest

from jmspy import _dispatch_pool
from jmspy._deferred_wakeups import WakeupDeferral, defer_wakeup, deferred_wakeups


def _broken_wakeup() -> None:
    raise RuntimeError("wake-up failed")


def test_outside_a_scope_nothing_is_deferred() -> None:
    calls: list[str] = []
    assert defer_wakeup("k", lambda: calls.append("k")) is False
    assert calls == []


def test_a_wakeup_runs_once_per_key_when_the_scope_ends() -> None:
    calls: list[str] = []
    with deferred_wakeups():
        assert defer_wakeup("a", lambda: calls.append("a")) is True
        assert defer_wakeup("a", lambda: calls.append("a again")) is True
        assert defer_wakeup("b", lambda: calls.append("b")) is True
        assert calls == []
    assert calls == ["a", "b"]
    assert defer_wakeup("a", lambda: calls.append("late")) is False


def test_nested_scopes_run_the_wakeups_at_the_outer_end() -> None:
    calls: list[str] = []
    with deferred_wakeups():
        with deferred_wakeups():
            defer_wakeup("a", lambda: calls.append("a"))
        assert calls == []
    assert calls == ["a"]


def test_wakeups_run_when_the_body_raises_and_one_failing_does_not_stop_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[str] = []

    with caplog.at_level(logging.ERROR, logger="jmspy.engine"):
        with pytest.raises(KeyError):
            with deferred_wakeups():
                defer_wakeup("broken", _broken_wakeup)
                defer_wakeup("b", lambda: calls.append("b"))
                raise KeyError("body")
    assert calls == ["b"]
    assert "deferred wake-up failed" in caplog.text


def test_another_thread_is_not_deferred_by_this_threads_scope() -> None:
    results: list[bool] = []
    with deferred_wakeups():
        other = threading.Thread(target=lambda: results.append(defer_wakeup("x", lambda: None)))
        other.start()
        other.join(10)
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
    with deferred_wakeups():
        for session in sessions:
            pool.schedule(session)  # type: ignore[arg-type]
        assert wakes == []
    assert len(wakes) == 1
    for session in sessions:
        assert session.ran.wait(10), "a session made ready in the turn never ran"
    assert [s.turns for s in sessions] == [1] * 5


# ---- WakeupDeferral: the long-lived scope of a connection's own engine thread --------------


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
