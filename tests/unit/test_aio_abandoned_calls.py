"""jmspy.aio's blocking calls whose caller went away, without a broker: what a call returns
after its await was cancelled goes to ``on_abandoned`` on a control thread, and a coroutine
listener's runner refuses calls once the listener is done, so they reach the control threads
instead of a queue nobody reads."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from typing import Any

import pytest

from jmspy.aio._bridge import Control, ListenerRunner

# Generous: only a broken bridge gets near it, so a busy machine does not fail the test.
BOUND_S = 30.0


class _Created:
    """What a blocking create returns, standing in for a consumer or a session."""

    def __init__(self) -> None:
        self.closed_on: int | None = None
        self.closed = threading.Event()

    def close(self) -> None:
        self.closed_on = threading.get_ident()
        self.closed.set()


def _blocking_create(
    started: threading.Event, finish: threading.Event, created: _Created
) -> _Created:
    started.set()
    if not finish.wait(BOUND_S):
        raise TimeoutError("the test never let the create finish")
    return created


def test_what_a_cancelled_call_creates_is_closed_on_a_control_thread() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        control = Control(loop, 30000)
        started, finish, created = threading.Event(), threading.Event(), _Created()
        task = asyncio.create_task(
            control.call(_blocking_create, started, finish, created, on_abandoned=_Created.close)
        )
        assert await asyncio.to_thread(started.wait, BOUND_S), "the call did not start"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not created.closed.is_set()  # not before the create returned it
        finish.set()
        assert await asyncio.to_thread(created.closed.wait, BOUND_S), "it was never closed"
        assert created.closed_on not in (None, threading.get_ident())
        control.shutdown()

    asyncio.run(main())


def test_a_result_on_its_way_when_the_await_is_cancelled_is_closed() -> None:
    """The call finished, but the task was cancelled before it resumed with the result: the
    caller never sees the object, so it is closed too."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        control = Control(loop, 30000)
        created = _Created()
        returned = threading.Event()

        def create() -> _Created:
            returned.set()
            return created

        task = asyncio.create_task(control.call(create, on_abandoned=_Created.close))
        await asyncio.sleep(0)  # the task submitted the call and awaits it
        # Blocking the loop here keeps the task from resuming while the call completes.
        assert returned.wait(BOUND_S), "the call did not run"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await asyncio.to_thread(created.closed.wait, BOUND_S), "it was never closed"
        control.shutdown()

    asyncio.run(main())


def test_a_call_that_fails_after_its_await_was_cancelled_abandons_nothing() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        control = Control(loop, 30000)
        started, finish = threading.Event(), threading.Event()
        abandoned: list[Any] = []
        failed = threading.Event()

        def create() -> None:
            started.set()
            finish.wait(BOUND_S)
            failed.set()
            raise RuntimeError("attach refused")

        task = asyncio.create_task(control.call(create, on_abandoned=abandoned.append))
        assert await asyncio.to_thread(started.wait, BOUND_S)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        finish.set()
        assert await asyncio.to_thread(failed.wait, BOUND_S)
        # The done callback runs on the control thread right after the failure is set; a
        # second call on the same threads runs only after that.
        await control.call(lambda: None)
        assert abandoned == []
        control.shutdown()

    asyncio.run(main())


def test_a_close_of_an_abandoned_object_that_fails_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        control = Control(loop, 30000)
        logged = threading.Event()

        class _Signal(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                logged.set()

        def close(created: object) -> None:
            raise RuntimeError("link already detached")

        handler = _Signal(logging.WARNING)
        logging.getLogger("jmspy.aio").addHandler(handler)
        try:
            control.dispose(close, "a consumer")
            assert await asyncio.to_thread(logged.wait, BOUND_S), "nothing was logged"
        finally:
            logging.getLogger("jmspy.aio").removeHandler(handler)
        control.shutdown()

    with caplog.at_level(logging.WARNING, logger="jmspy.aio"):
        asyncio.run(main())
    assert any("link already detached" in m for m in caplog.messages), caplog.messages


def test_a_listener_runner_refuses_calls_once_the_listener_is_done() -> None:
    """The dispatch thread is still running a call when the listener completes. A call
    submitted then (by a task the listener started) used to be accepted and queued after the
    end marker, where nobody ran it; now it is refused (the caller uses the control threads),
    and the call queued before the listener completed still runs."""
    loop = asyncio.new_event_loop()
    try:
        runner = ListenerRunner()
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        running, release = threading.Event(), threading.Event()

        def busy() -> str:
            running.set()
            release.wait(BOUND_S)
            return "busy"

        served: list[bool] = []
        dispatch = threading.Thread(
            target=lambda: served.append(runner.serve_until(done, loop)), daemon=True
        )
        first = runner.submit(busy, ())
        assert first is not None
        dispatch.start()
        assert running.wait(BOUND_S), "the dispatch thread did not run the call"
        queued_before = runner.submit(lambda: "queued before", ())
        assert queued_before is not None
        done.set_result(None)  # the listener returned
        assert runner.submit(lambda: "after", ()) is None
        release.set()
        dispatch.join(BOUND_S)
        assert not dispatch.is_alive()
        assert served == [True]
        assert first.result(0) == "busy"
        assert queued_before.result(0) == "queued before"
    finally:
        loop.close()
