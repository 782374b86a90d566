"""The rest of the JMS 2.0 surface against Artemis: temporary destinations, subscriptions,
browsers, request/reply, asynchronous send, JMSContext, and the listener/closing rules.
Each test names the jms-spec.md checklist rule it covers (JMS-n)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import jmspy


class Completions:
    def __init__(self, expected: int) -> None:
        self.completed: list[str] = []
        self.failed: list[tuple[str, BaseException]] = []
        self.threads: set[str] = set()
        self.done = threading.Event()
        self.expected = expected
        self.hook: Any = None

    def _record(self) -> None:
        self.threads.add(threading.current_thread().name)
        if len(self.completed) + len(self.failed) >= self.expected:
            self.done.set()

    def onCompletion(self, message: Any) -> None:
        self.completed.append(message.getText())
        if self.hook is not None:
            self.hook(message)
        self._record()

    def onException(self, message: Any, exception: BaseException) -> None:
        self.failed.append((message.getText(), exception))
        self._record()


# ---- temporary destinations and request/reply (JMS-24) --------------------------------------


def test_temporary_queue_request_reply(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    requests = session.createQueue(unique_name)
    reply_to = session.createTemporaryQueue()
    assert isinstance(reply_to, jmspy.TemporaryQueue)
    responder_session = connection.createSession()
    responder_producer = responder_session.createProducer(None)

    def respond(message: Any) -> None:
        reply = responder_session.createTextMessage(message.getText().upper())
        reply.setJMSCorrelationID(message.getJMSMessageID())
        responder_producer.send(message.getJMSReplyTo(), reply)

    responder_session.createConsumer(requests).setMessageListener(respond)
    replies = session.createConsumer(reply_to)
    connection.start()
    request = session.createTextMessage("ping")
    request.setJMSReplyTo(reply_to)
    session.createProducer(requests).send(request)
    reply = replies.receive(10_000)
    assert reply is not None and reply.getText() == "PING"
    assert reply.getJMSCorrelationID() == request.getJMSMessageID()
    assert reply.getJMSDestination() == reply_to


def test_jms24_temporary_destination_rules(factory: Any) -> None:
    with factory.createConnection() as owner, factory.createConnection() as other:
        session = owner.createSession()
        temp_queue = session.createTemporaryQueue()
        temp_topic = session.createTemporaryTopic()
        assert isinstance(temp_topic, jmspy.TemporaryTopic)
        # Only the creating connection may consume.
        with pytest.raises(jmspy.InvalidDestinationException):
            other.createSession().createConsumer(temp_queue)
        consumer = session.createConsumer(temp_queue)
        with pytest.raises(jmspy.IllegalStateException):
            temp_queue.delete()  # an active consumer
        consumer.close()
        temp_queue.delete()
        with pytest.raises(jmspy.IllegalStateException):
            session.createProducer(None).send(temp_queue, session.createTextMessage("x"))
        temp_topic.delete()


# ---- durable and shared subscriptions (JMS-25, JMS-26, JMS-27, JMS-29) ------------------------


def test_jms25_durable_subscription_survives_close(factory: Any, unique_name: str) -> None:
    with factory.createConnection() as connection:
        connection.setClientID(f"cid-{unique_name}")
        session = connection.createSession()
        topic = session.createTopic(unique_name)
        subscriber = session.createDurableSubscriber(topic, "sub")
        producer = session.createProducer(topic)
        connection.start()
        producer.send(session.createTextMessage("while subscribed"))
        assert subscriber.receive(5000).getText() == "while subscribed"
        subscriber.close()  # detached, not closed: the subscription stays
        producer.send(session.createTextMessage("while away"))
    with factory.createConnection() as connection:
        connection.setClientID(f"cid-{unique_name}")
        session = connection.createSession()
        connection.start()
        resumed = session.createDurableConsumer(session.createTopic(unique_name), "sub")
        assert resumed.receive(5000).getText() == "while away"
        resumed.close()
        session.unsubscribe("sub")
        with pytest.raises(jmspy.InvalidDestinationException):
            session.unsubscribe("sub")


def test_jms25_durable_subscription_needs_client_id(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    with pytest.raises(jmspy.IllegalStateException):
        session.createDurableSubscriber(session.createTopic(unique_name), "sub")


def test_jms29_unsubscribe_with_active_consumer_is_refused(factory: Any, unique_name: str) -> None:
    with factory.createConnection() as connection:
        connection.setClientID(f"cid-{unique_name}")
        session = connection.createSession()
        subscriber = session.createDurableSubscriber(session.createTopic(unique_name), "s")
        with pytest.raises(jmspy.IllegalStateException):
            session.unsubscribe("s")
        subscriber.close()
        session.unsubscribe("s")


def test_jms27_shared_durable_subscription_splits_messages(
    connection: Any, unique_name: str
) -> None:
    session = connection.createSession()
    topic = session.createTopic(unique_name)
    first = session.createSharedDurableConsumer(topic, "shared")
    second = session.createSharedDurableConsumer(topic, "shared")
    connection.start()
    producer = session.createProducer(topic)
    for i in range(10):
        producer.send(session.createTextMessage(str(i)))
    got: list[str] = []
    for consumer in (first, second):
        while (message := consumer.receive(500)) is not None:
            got.append(message.getText())
    assert sorted(got, key=int) == [str(i) for i in range(10)]


def test_jms26_shared_non_durable_subscription(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    topic = session.createTopic(unique_name)
    a = session.createSharedConsumer(topic, "volatile")
    b = session.createSharedConsumer(topic, "volatile")
    plain = session.createConsumer(topic)
    connection.start()
    producer = session.createProducer(topic)
    for i in range(6):
        producer.send(session.createTextMessage(str(i)))
    shared: list[str] = []
    for consumer in (a, b):
        while (message := consumer.receive(500)) is not None:
            shared.append(message.getText())
    everything = []
    while (message := plain.receive(500)) is not None:
        everything.append(message.getText())
    assert sorted(shared, key=int) == [str(i) for i in range(6)]
    assert everything == [str(i) for i in range(6)]


def test_jms23_no_local_on_topic(factory: Any, unique_name: str) -> None:
    with factory.createConnection() as mine, factory.createConnection() as theirs:
        session = mine.createSession()
        topic = session.createTopic(unique_name)
        no_local = session.createConsumer(topic, None, True)
        mine.start()
        session.createProducer(topic).send(session.createTextMessage("own"))
        other = theirs.createSession()
        other.createProducer(other.createTopic(unique_name)).send(
            other.createTextMessage("foreign")
        )
        assert no_local.receive(5000).getText() == "foreign"
        assert no_local.receive(300) is None


# ---- browser ------------------------------------------------------------------------------


def test_queue_browser_is_non_destructive_and_filters(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    producer = session.createProducer(queue)
    for colour in ("red", "blue", "red"):
        message = session.createTextMessage(colour)
        message.setStringProperty("colour", colour)
        producer.send(message)
    with session.createBrowser(queue) as browser:
        assert [m.getText() for m in browser.getEnumeration()] == ["red", "blue", "red"]
        assert browser.getQueue() == queue
    red = session.createBrowser(queue, "colour = 'red'")
    assert [m.getText() for m in red] == ["red", "red"]
    connection.start()
    consumer = session.createConsumer(queue)
    assert [consumer.receive(5000).getText() for _ in range(3)] == ["red", "blue", "red"]
    assert list(session.createBrowser(queue).getEnumeration()) == []


# ---- asynchronous send (JMS-39, JMS-40) --------------------------------------------------------


def test_jms39_completion_listener_order_and_thread(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    producer = session.createProducer(queue)
    listener = Completions(20)
    for i in range(20):
        producer.send(session.createTextMessage(str(i)), listener)
    assert listener.done.wait(10)
    assert listener.completed == [str(i) for i in range(20)]
    assert threading.current_thread().name not in listener.threads
    assert len(listener.threads) == 1
    with pytest.raises(jmspy.IllegalArgumentException):
        producer.send(session.createTextMessage("x"), None)


def test_jms40_close_and_commit_from_completion_listener(connection: Any, unique_name: str) -> None:
    session = connection.createSession(jmspy.SESSION_TRANSACTED)
    producer = session.createProducer(session.createQueue(unique_name))
    errors: list[BaseException] = []

    def misuse(_message: Any) -> None:
        for call in (
            producer.close,
            session.commit,
            session.rollback,
            session.close,
            connection.close,
        ):
            try:
                call()
            except jmspy.IllegalStateException as exc:
                errors.append(exc)

    listener = Completions(1)
    listener.hook = misuse
    producer.send(session.createTextMessage("x"), listener)
    assert listener.done.wait(10)
    assert len(errors) == 5
    session.commit()  # waits for the callback, then commits


def test_jms_context_async_producer(factory: Any, unique_name: str) -> None:
    with factory.createContext() as context:
        queue = context.createQueue(unique_name)
        listener = Completions(3)
        producer = context.createProducer().setAsync(listener)
        for body in ("a", "b", "c"):
            producer.send(queue, body)
        assert listener.done.wait(10)
        assert listener.completed == ["a", "b", "c"]
        consumer = context.createConsumer(queue)
        assert [consumer.receiveBody(str, 5000) for _ in range(3)] == ["a", "b", "c"]


# ---- JMSContext (JMS-1, JMS-2, JMS-3) ----------------------------------------------------------


def test_jms_context_basics(factory: Any, broker: Any, unique_name: str) -> None:
    with pytest.raises(jmspy.JMSRuntimeException):
        factory.createContext(42)
    with pytest.raises(jmspy.JMSSecurityRuntimeException):
        factory.createContext(broker.username, "wrong")
    with factory.createContext(jmspy.CLIENT_ACKNOWLEDGE) as context:
        assert context.getSessionMode() == jmspy.CLIENT_ACKNOWLEDGE
        queue = context.createQueue(unique_name)
        producer = context.createProducer()
        producer.setProperty("kind", "order").setJMSType("t").setPriority(7)
        producer.send(queue, {"id": 1})
        producer.send(queue, b"\x00\x01")
        # A second context shares the connection; the connection closes with the last one.
        second = context.createContext(jmspy.AUTO_ACKNOWLEDGE)
        consumer = second.createConsumer(queue)  # autostart
        first = consumer.receive(5000)
        assert isinstance(first, jmspy.MapMessage)
        assert first.getStringProperty("kind") == "order" and first.getJMSPriority() == 7
        assert consumer.receiveBody(bytes, 5000) == b"\x00\x01"
        second.close()
        assert context.getClientID() is None or isinstance(context.getClientID(), str)
    with pytest.raises(jmspy.IllegalStateRuntimeException):
        context.createProducer()


def test_jms4_set_client_id_late_is_illegal_state(factory: Any, unique_name: str) -> None:
    with factory.createConnection() as connection:
        connection.createSession()
        with pytest.raises(jmspy.IllegalStateException):
            connection.setClientID(unique_name)
    with factory.createContext() as context:
        context.createProducer()
        with pytest.raises(jmspy.IllegalStateRuntimeException):
            context.setClientID(unique_name)


def test_receive_body_wrong_type_leaves_message(factory: Any, unique_name: str) -> None:
    with factory.createContext() as context:
        queue = context.createQueue(unique_name)
        context.createProducer().send(queue, "text body")
        consumer = context.createConsumer(queue)
        with pytest.raises(jmspy.MessageFormatRuntimeException):
            consumer.receiveBody(bytes, 5000)
        assert consumer.receiveBody(str, 5000) == "text body"


# ---- listener and closing rules (JMS-9, JMS-10, JMS-13, JMS-20, JMS-21) -------------------------


def test_jms9_10_20_stop_and_close_from_own_listener(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    outcomes: list[str] = []
    done = threading.Event()

    def on_message(_message: Any) -> None:
        for name, call in (
            ("stop", connection.stop),
            ("connection.close", connection.close),
            ("session.close", session.close),
        ):
            try:
                call()
                outcomes.append(f"{name}: no error")
            except jmspy.IllegalStateException:
                outcomes.append(f"{name}: IllegalStateException")
        consumer.close()  # allowed: closing its own consumer
        outcomes.append("consumer.close: ok")
        done.set()

    consumer = session.createConsumer(queue)
    consumer.setMessageListener(on_message)
    session.createProducer(queue).send(session.createTextMessage("x"))
    connection.start()
    assert done.wait(10)
    assert outcomes == [
        "stop: IllegalStateException",
        "connection.close: IllegalStateException",
        "session.close: IllegalStateException",
        "consumer.close: ok",
    ]


def test_jms13_closed_objects(factory: Any, unique_name: str) -> None:
    connection = factory.createConnection()
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    producer = session.createProducer(queue)
    consumer = session.createConsumer(queue)
    producer.send(session.createTextMessage("x"))
    connection.close()
    connection.close()  # a second close is a no-op
    for call in (
        connection.start,
        lambda: connection.createSession(),
        lambda: session.createProducer(queue),
        lambda: producer.send(session.createTextMessage("y")),
        lambda: consumer.receive(10),
        session.commit,
    ):
        with pytest.raises(jmspy.IllegalStateException):
            call()


def test_jms21_receive_while_session_has_listener(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    a = session.createConsumer(session.createQueue(unique_name))
    b = session.createConsumer(session.createQueue(unique_name + "b"))
    a.setMessageListener(lambda m: None)
    with pytest.raises(jmspy.IllegalStateException):
        b.receiveNoWait()
