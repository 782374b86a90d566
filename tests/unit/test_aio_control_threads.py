"""The control threads asyncio connections share (jmspy/aio/_control_threads.py): calls run
on them with their outcome in the future, calls in flight together each get a thread up to
the limit, a call past the limit waits for a free thread, and idle threads end."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from jmspy.aio._control_threads import ControlThreads


def _until(condition: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def test_a_call_runs_on_a_control_thread_and_its_outcome_is_the_futures() -> None:
    threads = ControlThreads(idle_s=30.0)
    names = threads.submit(lambda: threading.current_thread().name).result(10)
    assert names.startswith("jmspy-aio-control-")

    def fail() -> None:
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        threads.submit(fail).result(10)


def test_calls_in_flight_together_each_get_a_thread() -> None:
    threads = ControlThreads(idle_s=30.0, max_threads=8)
    together = threading.Barrier(3, timeout=10)
    futures = [threads.submit(together.wait) for _ in range(3)]
    # Each returns only once all three run at the same time: none waited behind another.
    assert sorted(f.result(20) for f in futures) == [0, 1, 2]
    assert threads.threads == 3


def test_one_call_after_another_reuses_a_thread() -> None:
    threads = ControlThreads(idle_s=30.0)
    for i in range(20):
        assert threads.submit(lambda i=i: i * 2).result(10) == i * 2
    # The thread that ran a call may not be idle yet when the next one is submitted.
    assert threads.threads <= 2


def test_a_call_past_the_limit_waits_for_a_free_thread() -> None:
    threads = ControlThreads(idle_s=30.0, max_threads=2)
    release = threading.Event()
    blocked = [threads.submit(release.wait, 10) for _ in range(2)]
    third = threads.submit(lambda: "ran")
    assert not third.done()
    assert threads.threads == 2
    release.set()
    assert [f.result(10) for f in blocked] == [True, True]
    assert third.result(10) == "ran"
    assert threads.threads == 2


def test_idle_threads_end_and_new_calls_start_new_ones() -> None:
    threads = ControlThreads(idle_s=0.05, max_threads=8)
    together = threading.Barrier(3, timeout=10)
    for future in [threads.submit(together.wait) for _ in range(3)]:
        future.result(20)
    assert _until(lambda: threads.threads == 0), f"{threads.threads} threads left"
    assert threads.submit(lambda: 7).result(10) == 7


def test_every_call_of_a_busy_burst_completes() -> None:
    threads = ControlThreads(idle_s=0.01, max_threads=3)
    futures = [threads.submit(time.sleep, 0.001) for _ in range(200)]
    for future in futures:
        future.result(30)
    assert threads.threads <= 3
