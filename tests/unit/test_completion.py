"""NotifiedCompletion (jmspy/_amqp/completion.py): the outcome of an asynchronous send that no
thread blocks on. It is decided once, tells ``on_done`` once, runs its callbacks, and refuses
a blocking wait."""

from __future__ import annotations

import logging

import pytest

from jmspy._amqp.completion import Completion, NotifiedCompletion


def test_success_is_decided_once_and_notified_once() -> None:
    completion: NotifiedCompletion[None] = NotifiedCompletion()
    told: list[str] = []
    completion.on_done = lambda: told.append("done")
    assert not completion.done()
    completion.succeed(None)
    completion.fail(RuntimeError("too late"))
    completion.succeed(None)
    assert completion.done() and completion.error is None
    assert told == ["done"]


def test_a_failure_keeps_its_error() -> None:
    completion: NotifiedCompletion[None] = NotifiedCompletion()
    error = RuntimeError("refused")
    completion.fail(error)
    completion.succeed(None)
    assert completion.done() and completion.error is error


def test_callbacks_run_on_completion_or_at_once_when_added_after() -> None:
    completion: NotifiedCompletion[None] = NotifiedCompletion()
    seen: list[Completion[None]] = []
    completion.add_callback(seen.append)
    assert seen == []
    completion.succeed(None)
    assert seen == [completion]
    completion.add_callback(seen.append)
    assert seen == [completion, completion]


def test_a_failing_notification_does_not_escape_to_the_engine(
    caplog: pytest.LogCaptureFixture,
) -> None:
    completion: NotifiedCompletion[None] = NotifiedCompletion()

    def broken() -> None:
        raise ValueError("listener side broke")

    completion.on_done = broken
    with caplog.at_level(logging.ERROR, logger="jmspy.engine"):
        completion.succeed(None)
    assert completion.done()
    assert "completion notification failed" in caplog.text


def test_nobody_may_block_on_it() -> None:
    completion: NotifiedCompletion[None] = NotifiedCompletion()
    with pytest.raises(TypeError, match="on_done"):
        completion.wait(1.0, lambda: RuntimeError("timeout"))
