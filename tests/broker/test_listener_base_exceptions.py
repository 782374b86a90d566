"""Whatever an application callback raises (SystemExit, KeyboardInterrupt, any other
BaseException), the thread that called it carries on and the failure is visible: a message
or batch listener's failure is a failed delivery, redelivered under the policy; a
KeyboardInterrupt also reaches the ExceptionListener; completion and exception listeners
keep being called and their failures are logged."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

import jmspy


class _Boom(BaseException):
    """A BaseException that is neither Exception, SystemExit nor KeyboardInterrupt."""


def _send(connection: Any, queue_name: str, *texts: str) -> None:
    session = connection.createSession()
    producer = session.createProducer(session.createQueue(queue_name))
    for text in texts:
        producer.send(session.createTextMessage(text))
    session.close()


@pytest.mark.parametrize("raised", [SystemExit, _Boom], ids=["SystemExit", "BaseException"])
def test_a_message_listener_raising_a_base_exception_gets_the_message_again(
    connection: Any, unique_name: str, raised: type[BaseException]
) -> None:
    seen: list[tuple[str, bool]] = []
    done = threading.Event()

    def on_message(message: Any) -> None:
        seen.append((message.getText(), message.getJMSRedelivered()))
        if len(seen) == 1:
            raise raised("from the listener")
        if len(seen) == 3:
            done.set()

    session = connection.createSession()
    session.createConsumer(session.createQueue(unique_name)).setMessageListener(on_message)
    connection.start()
    _send(connection, unique_name, "first", "second")
    assert done.wait(30), f"the dispatcher stopped after the listener raised: {seen}"
    assert seen[0] == ("first", False)
    assert ("first", True) in seen[1:], "the failed delivery was not redelivered"
    assert ("second", False) in seen[1:]


def test_keyboard_interrupt_in_a_listener_reaches_the_exception_listener(
    connection: Any, unique_name: str
) -> None:
    reported: list[jmspy.JMSException] = []
    heard = threading.Event()
    delivered: list[str] = []
    redelivered = threading.Event()

    def on_exception(error: jmspy.JMSException) -> None:
        reported.append(error)
        heard.set()

    def on_message(message: Any) -> None:
        delivered.append(message.getText())
        if len(delivered) == 1:
            raise KeyboardInterrupt
        redelivered.set()

    connection.setExceptionListener(on_exception)
    session = connection.createSession()
    session.createConsumer(session.createQueue(unique_name)).setMessageListener(on_message)
    connection.start()
    _send(connection, unique_name, "only")
    assert heard.wait(30), "the KeyboardInterrupt was never reported"
    assert isinstance(reported[0], jmspy.JMSException)
    assert "KeyboardInterrupt" in str(reported[0])
    assert redelivered.wait(30), f"the dispatcher stopped: {delivered}"


def test_a_batch_listener_raising_system_exit_gets_the_batch_again(
    connection: Any, unique_name: str
) -> None:
    batches: list[list[str]] = []
    done = threading.Event()

    def on_messages(messages: list[Any]) -> None:
        batches.append([m.getText() for m in messages])
        if len(batches) == 1:
            raise SystemExit(3)
        if sum(len(b) for b in batches[1:]) >= 2:
            done.set()

    _send(connection, unique_name, "a", "b")
    session = connection.createSession()
    consumer = session.createConsumer(session.createQueue(unique_name))
    consumer.setBatchMessageListener(on_messages, 2, 2000)
    connection.start()
    assert done.wait(30), f"the dispatcher stopped after the batch listener raised: {batches}"
    assert sorted(t for b in batches[1:] for t in b) == ["a", "b"]


def test_a_completion_listener_raising_system_exit_does_not_stop_later_callbacks(
    connection: Any, unique_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    completed: list[str] = []
    done = threading.Event()

    class Listener:
        def onCompletion(self, message: Any) -> None:
            completed.append(message.getText())
            if len(completed) == 1:
                raise SystemExit(1)
            done.set()

        def onException(self, message: Any, exception: BaseException) -> None:
            completed.append(f"failed: {exception}")

    session = connection.createSession()
    producer = session.createProducer(session.createQueue(unique_name))
    with caplog.at_level(logging.ERROR, logger="jmspy.session"):
        producer.send(session.createTextMessage("one"), Listener())
        producer.send(session.createTextMessage("two"), Listener())
        assert done.wait(30), f"the completion thread stopped: {completed}"
    assert completed == ["one", "two"]
    assert any("CompletionListener raised" in r.getMessage() for r in caplog.records)


def test_an_exception_listener_raising_system_exit_is_logged_and_called_again(
    connection: Any, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[str] = []
    second = threading.Event()

    def on_exception(error: jmspy.JMSException) -> None:
        calls.append(error.reason)
        if len(calls) == 1:
            raise SystemExit(2)
        second.set()

    connection.setExceptionListener(on_exception)
    with caplog.at_level(logging.ERROR, logger="jmspy.connection"):
        connection._notify_exception_listener(jmspy.JMSException("first"))
        connection._notify_exception_listener(jmspy.JMSException("second"))
        assert second.wait(30)
    assert calls == ["first", "second"]
    assert any("ExceptionListener raised" in r.getMessage() for r in caplog.records)
