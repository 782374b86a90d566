"""The conformance runner keeps control of a run: a check that hangs is abandoned at its limit,
and with the watchdog armed a check that freezes the interpreter itself ends the process
instead of hanging it."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
import threading
from typing import Any

from jmspy.conformance.checks._support import _current_frames
from jmspy.conformance.runner import _call


class _Context:
    check_id = "T-1"
    closed = False

    def close(self) -> None:
        self.closed = True


def test_a_hanging_check_is_abandoned_at_its_limit() -> None:
    release = threading.Event()

    def hangs(ctx: Any) -> Any:
        release.wait(60)

    try:
        status, value = _call(hangs, _Context(), 0.2)  # type: ignore[arg-type]
    finally:
        release.set()
    assert (status, value) == ("timeout", None)


def test_the_watchdog_ends_a_process_whose_interpreter_froze() -> None:
    # libc's sleep called through PyDLL keeps the GIL: the runner's join cannot time out, as
    # when a C call never returns while holding it.
    script = textwrap.dedent(
        """
        import ctypes
        import jmspy.conformance.runner as runner

        class Context:
            check_id = "T-1"

            def close(self):
                pass

        def freezes(ctx):
            ctypes.PyDLL(None).sleep(120)

        runner.WATCHDOG_GRACE_S = 0.5
        runner._call(freezes, Context(), 0.2, watchdog=True)
        print("the runner took control back")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=90
    )
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert "the runner took control back" not in done.stdout
    assert "Timeout" in done.stderr and "freezes" in done.stderr, done.stderr


def test_the_watchdog_is_disarmed_after_a_check_that_finishes() -> None:
    script = textwrap.dedent(
        """
        import time
        import jmspy.conformance.runner as runner

        class Context:
            check_id = "T-1"

            def close(self):
                pass

        runner.WATCHDOG_GRACE_S = 0.2
        print(runner._call(lambda ctx: "verdict", Context(), 0.2, watchdog=True))
        deadline = time.monotonic() + 1.5  # well past limit + grace
        while time.monotonic() < deadline:
            time.sleep(0.05)
        print("still running")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=90
    )
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    assert "('ok', 'verdict')" in done.stdout and "still running" in done.stdout


def test_current_frames_pauses_the_collector_only_around_the_call() -> None:
    assert gc.isenabled()
    frames = _current_frames()
    assert threading.get_ident() in frames
    assert gc.isenabled()
    gc.disable()
    try:
        _current_frames()
        assert not gc.isenabled()  # a collector the caller paused stays paused
    finally:
        gc.enable()
