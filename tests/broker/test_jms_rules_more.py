"""More JMS 2.0 client rules against Artemis, each named by its checklist number (JMS-n)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

import jmspy


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def test_jms7_client_id_in_use_by_one_connection_only(factory: Any, unique_name: str) -> None:
    with factory.createConnection() as first:
        first.setClientID(unique_name)
        first.createSession()
        second = factory.createConnection()
        with pytest.raises(jmspy.InvalidClientIDException):
            second.setClientID(unique_name)
        second.close()


def test_jms28_subscription_names_up_to_128_portable_characters(
    factory: Any, unique_name: str
) -> None:
    name = ("Sub_." + "-x9" * 60)[:128]
    assert len(name) == 128
    with factory.createConnection() as connection:
        connection.setClientID(f"cid-{unique_name}")
        session = connection.createSession()
        subscriber = session.createDurableSubscriber(session.createTopic(unique_name), name)
        subscriber.close()
        session.unsubscribe(name)


def test_jms31_create_queue_only_wraps_a_name(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    assert queue.getQueueName() == unique_name
    # Nothing exists on the broker until used: a browser of it sees nothing, no error.
    assert list(session.createBrowser(queue).getEnumeration()) == []


def test_jms35_negative_time_to_live_or_delay_rejected(connection: Any, unique_name: str) -> None:
    """Decided differently from Qpid JMS (see docs/porting.md): a negative value is an error."""
    producer = connection.createSession().createProducer(None)
    with pytest.raises(jmspy.JMSException, match="-1"):
        producer.setTimeToLive(-1)
    with pytest.raises(jmspy.JMSException, match="-5"):
        producer.setDeliveryDelay(-5)


class _Completion:
    def __init__(self) -> None:
        self.threads: list[str] = []
        self.done = threading.Event()

    def onCompletion(self, _message: Any) -> None:
        self.threads.append(threading.current_thread().name)
        self.done.set()

    def onException(self, _message: Any, _exc: BaseException) -> None:
        self.done.set()


def test_jms49_set_async_none_makes_sends_synchronous(factory: Any, unique_name: str) -> None:
    with factory.createContext() as context:
        queue = context.createQueue(unique_name)
        listener = _Completion()
        producer = context.createProducer().setAsync(listener)
        producer.send(queue, "async")
        assert listener.done.wait(10) and listener.threads[0] != threading.current_thread().name
        assert producer.setAsync(None).getAsync() is None
        producer.send(queue, "sync")  # returns once the broker accepted it
        consumer = context.createConsumer(queue)
        assert [consumer.receiveBody(str, 5000) for _ in range(2)] == ["async", "sync"]


def test_jms51_contexts_share_the_connection_until_the_last_closes(
    broker: Any, factory: Any, unique_name: str
) -> None:
    # The shared connection holds a client id while it is open; the broker (sole connection
    # per container id, JMS-7) shows whether it still is.
    first = jmspy.ConnectionFactory(
        broker.url, broker.username, broker.password, client_id=unique_name
    ).createContext()
    second = first.createContext(jmspy.AUTO_ACKNOWLEDGE)
    queue = first.createQueue(unique_name)
    first.close()
    # The second context still works: the connection closes with the last context.
    second.createProducer().send(queue, "still open")
    assert second.createConsumer(queue).receiveBody(str, 5000) == "still open"
    probe = factory.createConnection()
    with pytest.raises(jmspy.InvalidClientIDException):
        probe.setClientID(unique_name)
    probe.close()
    second.close()
    deadline = time.monotonic() + 30
    while True:  # the broker frees the id as it processes the close
        probe = factory.createConnection()
        try:
            probe.setClientID(unique_name)
            break
        except jmspy.InvalidClientIDException:
            assert time.monotonic() < deadline, "the client id is still in use after close"
        finally:
            probe.close()


def test_jms55_stop_from_own_context_listener(factory: Any, unique_name: str) -> None:
    outcome: list[str] = []
    done = threading.Event()
    with factory.createContext() as context:
        queue = context.createQueue(unique_name)

        def on_message(_message: Any) -> None:
            try:
                context.stop()
                outcome.append("no error")
            except jmspy.IllegalStateRuntimeException:
                outcome.append("IllegalStateRuntimeException")
            done.set()

        context.createConsumer(queue).setMessageListener(on_message)
        context.createProducer().send(queue, "x")
        assert done.wait(10)
    assert outcome == ["IllegalStateRuntimeException"]


def test_jms56_context_durable_consumer_rules(factory: Any, unique_name: str) -> None:
    with factory.createContext() as context:
        topic = context.createTopic(unique_name)
        with pytest.raises(jmspy.IllegalStateRuntimeException):
            context.createDurableConsumer(topic, "s")
        with pytest.raises(jmspy.InvalidSelectorRuntimeException):
            context.createConsumer(topic, "a >")
        with pytest.raises(jmspy.InvalidDestinationRuntimeException):
            context.createConsumer(None)


def test_jms57_second_listener_on_a_started_session_is_safe(
    connection: Any, unique_name: str
) -> None:
    session = connection.createSession()
    first_queue = session.createQueue(unique_name + "-a")
    second_queue = session.createQueue(unique_name + "-b")
    got: list[str] = []
    done = threading.Event()

    def record(message: Any) -> None:
        got.append(message.getText())
        if len(got) == 2:
            done.set()

    connection.start()
    session.createConsumer(first_queue).setMessageListener(record)
    session.createConsumer(second_queue).setMessageListener(record)
    sender = connection.createSession()
    sender.createProducer(first_queue).send(sender.createTextMessage("a"))
    sender.createProducer(second_queue).send(sender.createTextMessage("b"))
    assert done.wait(10)
    assert sorted(got) == ["a", "b"]


def test_jms66_browser_argument_rules(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    with pytest.raises(jmspy.InvalidDestinationException):
        session.createBrowser(None)
    with pytest.raises(jmspy.InvalidSelectorException):
        session.createBrowser(session.createQueue(unique_name), "x =")
    assert session.createBrowser(session.createQueue(unique_name), "").getMessageSelector() is None


def test_jms67_browser_never_shows_a_message_before_its_delivery_time(
    broker: Any, connection: Any, unique_name: str
) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    producer = session.createProducer(queue)
    producer.setDeliveryDelay(1500)
    message = session.createTextMessage("later")
    producer.send(message)
    # Only a browse that ended before the delivery time must be empty: the clock is read
    # after the browse (on a busy machine a browse started just before may end after it).
    while True:
        early = list(session.createBrowser(queue).getEnumeration())
        if _now_ms() >= message.getJMSDeliveryTime():
            break
        assert early == [], "a browser showed a message before its delivery time"
    # Once due, the message shows. A browse racing the broker's move of the message out of
    # its schedule may get no answer to its drain (Artemis left one unanswered for the whole
    # 60 s amqp.drainTimeout once, under heavy load): such a browse counts as "not seen yet",
    # and another one is made on a connection whose drains give up after 5 s.
    seen: list[Any] = []
    browsing_factory = jmspy.ConnectionFactory(
        broker.url, broker.username, broker.password, drain_timeout=5000
    )
    with browsing_factory.createConnection() as browsing:
        browsing_session = browsing.createSession()
        deadline = time.monotonic() + 60
        while not seen and time.monotonic() < deadline:
            try:
                seen = list(browsing_session.createBrowser(queue).getEnumeration())
            except jmspy.JMSException as exc:
                assert "did not complete" in str(exc), exc
    assert [m.getText() for m in seen] == ["later"]
