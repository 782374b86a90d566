"""Presettlement on real brokers: Qpid JMS's no-acknowledgement session modes (NO_ACKNOWLEDGE
257, ARTEMIS_PRE_ACKNOWLEDGE 100; rule JMS-68) and its presettle policy (rule WM-17). The
broker settles each message as it sends it to a presettled consumer, so what the consumer
holds is gone from the queue whether the application takes it or not; a presettled producer's
sends are done once written, and the broker takes them as any other."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

import jmspy

NO_ACK_MODES = [
    pytest.param(jmspy.NO_ACKNOWLEDGE, id="NO_ACKNOWLEDGE"),
    pytest.param(jmspy.ARTEMIS_PRE_ACKNOWLEDGE, id="ARTEMIS_PRE_ACKNOWLEDGE"),
]


def _name(tag: str) -> str:
    return f"jmspy.noack.{tag}.{uuid.uuid4().hex[:10]}"


def _send(connection: Any, queue_name: str, texts: list[str]) -> None:
    session = connection.createSession()
    producer = session.createProducer(session.createQueue(queue_name))
    for text in texts:
        producer.send(session.createTextMessage(text))
    session.close()


def _left_on(connection: Any, queue_name: str, first_wait_ms: int = 3000) -> list[str]:
    """What a fresh AUTO_ACKNOWLEDGE consumer gets from the queue: the first message within
    ``first_wait_ms`` (a released message may take the broker a moment), then the rest until
    500 ms pass without one."""
    session = connection.createSession()
    consumer = session.createConsumer(session.createQueue(queue_name))
    out = []
    message = consumer.receive(first_wait_ms)
    while message is not None:
        out.append(message.getText())
        message = consumer.receive(500)
    session.close()
    return out


class _Recorder:
    """A MessageListener recording each message's text and JMSRedelivered; it raises after
    recording when ``fails(seen)`` says so, and sets ``done`` once ``expected`` were seen."""

    def __init__(self, expected: int, fails: Callable[[list[tuple[str, bool]]], bool]) -> None:
        self.expected = expected
        self.fails = fails
        self.seen: list[tuple[str, bool]] = []
        self.done = threading.Event()

    def onMessage(self, message: Any) -> None:
        self.seen.append((message.getText(), message.getJMSRedelivered()))
        if len(self.seen) == self.expected:
            self.done.set()
        if self.fails(self.seen):
            raise RuntimeError(f"the listener fails on {self.seen[-1]} on purpose")


def _until(condition: Any, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return bool(condition())
        time.sleep(0.01)
    return True


@pytest.fixture
def connection(started_any_broker_connection: Any) -> Any:
    """Here a started connection to each broker in turn."""
    return started_any_broker_connection


@pytest.mark.parametrize("mode", NO_ACK_MODES)
def test_receive_consumes_as_sent(connection: Any, mode: int) -> None:
    name = _name("receive")
    _send(connection, name, [f"m{i}" for i in range(5)])
    session = connection.createSession(mode)
    assert session.getAcknowledgeMode() == mode
    consumer = session.createConsumer(session.createQueue(name))
    first = consumer.receive(10_000)
    assert first is not None and first.getText() == "m0"
    assert not first.getJMSRedelivered()
    first.acknowledge()  # nothing to acknowledge: no error
    session.recover()  # nothing to deliver again
    second = consumer.receive(10_000)
    assert second is not None and second.getText() == "m1"
    # The rest came presettled: once held here, closing the consumer does not return them
    # (an AUTO_ACKNOWLEDGE consumer would release them to the queue).
    assert _until(lambda: consumer.getPrefetchedCount() == 3)
    consumer.close()
    assert _left_on(connection, name) == []


def test_an_auto_acknowledge_consumer_returns_what_it_holds(connection: Any) -> None:
    """The contrast that makes the test above mean something: the same steps without
    presettlement leave the unconsumed messages on the queue."""
    name = _name("auto")
    _send(connection, name, [f"m{i}" for i in range(5)])
    session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue(name))
    assert [consumer.receive(10_000).getText() for _ in range(2)] == ["m0", "m1"]
    assert _until(lambda: consumer.getPrefetchedCount() == 3)
    consumer.close()
    assert _left_on(connection, name, 10_000) == ["m2", "m3", "m4"]


@pytest.mark.parametrize("mode", NO_ACK_MODES)
def test_a_listener_that_raises_gets_nothing_again(connection: Any, mode: int) -> None:
    name = _name("listener")
    _send(connection, name, ["a", "b", "c"])
    listener = _Recorder(3, fails=lambda seen: seen[-1][0] == "b")
    session = connection.createSession(mode)
    consumer = session.createConsumer(session.createQueue(name))
    consumer.setMessageListener(listener)
    assert listener.done.wait(10)
    seen = listener.seen
    # Whatever more would come, it would come in this time: b is not delivered again.
    receiver_side = connection.createSession(mode)
    probe = receiver_side.createConsumer(receiver_side.createQueue(name))
    assert probe.receive(1000) is None
    assert seen == [("a", False), ("b", False), ("c", False)]
    session.close()


@pytest.mark.parametrize("mode", NO_ACK_MODES)
def test_batch_listener(connection: Any, mode: int) -> None:
    name = _name("batch")
    texts = [f"m{i}" for i in range(25)]
    _send(connection, name, texts)
    got: list[str] = []
    done = threading.Event()

    def on_messages(messages: list[Any]) -> None:
        got.extend(m.getText() for m in messages)
        if len(got) >= len(texts):
            done.set()

    session = connection.createSession(mode)
    consumer = session.createConsumer(session.createQueue(name))
    consumer.setBatchMessageListener(on_messages, 10, 200)
    assert done.wait(10)
    assert got == texts
    session.close()
    assert _left_on(connection, name) == []


def test_a_context_takes_the_modes(any_broker: Any) -> None:
    factory = any_broker.factory()
    for mode in (jmspy.NO_ACKNOWLEDGE, jmspy.ARTEMIS_PRE_ACKNOWLEDGE):
        with factory.createContext(mode) as context:
            assert context.getSessionMode() == mode
            name = _name("context")
            queue = context.createQueue(name)
            context.createProducer().send(queue, "x")
            consumer = context.createConsumer(queue)
            assert consumer.receiveBody(str, 10_000) == "x"
            context.acknowledge()  # nothing to do in this mode
            context.recover()
            assert consumer.receiveNoWait() is None


def test_presettle_policy_by_destination_kind(any_broker: Any) -> None:
    """presettleQueueConsumers presettles queue consumers (what they hold is gone when they
    close); presettleTopicConsumers leaves them alone (what they hold goes back)."""
    for option, presettled in (
        ("jms.presettlePolicy.presettleQueueConsumers", True),
        ("jms.presettlePolicy.presettleConsumers", True),
        ("jms.presettlePolicy.presettleTopicConsumers", False),
    ):
        factory = any_broker.factory(**{option: "true"})
        with factory.createConnection() as connection:
            connection.start()
            name = _name("policy")
            _send(connection, name, ["a", "b", "c"])
            session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
            consumer = session.createConsumer(session.createQueue(name))
            assert consumer.receive(10_000).getText() == "a"
            assert _until(lambda c=consumer: c.getPrefetchedCount() == 2), option
            consumer.close()
            expected = [] if presettled else ["b", "c"]
            assert _left_on(connection, name, 1000 if presettled else 10_000) == expected, option


def test_presettle_policy_never_applies_to_a_transacted_session(any_broker: Any) -> None:
    if not any_broker.profile.transactions:
        # No AMQP transactions on this broker (its adapter says so): nothing to presettle.
        with any_broker.factory().createConnection() as connection:
            with pytest.raises(jmspy.JMSException):
                session = connection.createSession(jmspy.SESSION_TRANSACTED)
                session.createConsumer(session.createQueue(_name("txn")))
        return
    factory = any_broker.factory(**{"jms.presettlePolicy.presettleConsumers": "true"})
    with factory.createConnection() as connection:
        connection.start()
        name = _name("txn")
        _send(connection, name, ["a"])
        session = connection.createSession(jmspy.SESSION_TRANSACTED)
        consumer = session.createConsumer(session.createQueue(name))
        assert consumer.receive(10_000).getText() == "a"
        session.rollback()
        again = consumer.receive(10_000)
        assert again is not None and again.getText() == "a" and again.getJMSRedelivered()
        session.commit()
        session.close()
        assert _left_on(connection, name, 1000) == []


def test_auto_acknowledge_presettled_listener_failure_is_redelivered_by_the_client(
    any_broker: Any,
) -> None:
    """AUTO_ACKNOWLEDGE promises a failed listener the message again; the broker of a
    presettled consumer cannot send it again, so the client does (rule WM-17)."""
    factory = any_broker.factory(**{"jms.presettlePolicy.presettleConsumers": "true"})
    with factory.createConnection() as connection:
        connection.start()
        name = _name("redeliver")
        _send(connection, name, ["a", "b"])
        listener = _Recorder(3, fails=lambda seen: seen == [("a", False)])
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        session.createConsumer(session.createQueue(name)).setMessageListener(listener)
        assert listener.done.wait(10)
        seen = listener.seen
        # The client holds a failed message for the policy's delay and redelivers it
        # itself, so b, already here, may come before it.
        assert seen[0] == ("a", False)
        assert sorted(seen[1:]) == [("a", True), ("b", False)]
        session.close()


def test_client_acknowledge_presettled_recover_delivers_again_locally(any_broker: Any) -> None:
    factory = any_broker.factory(**{"jms.presettlePolicy.presettleConsumers": "true"})
    with factory.createConnection() as connection:
        connection.start()
        name = _name("client")
        _send(connection, name, ["a", "b"])
        session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
        consumer = session.createConsumer(session.createQueue(name))
        assert [consumer.receive(10_000).getText() for _ in range(2)] == ["a", "b"]
        session.recover()
        again = [consumer.receive(10_000) for _ in range(2)]
        assert [(m.getText(), m.getJMSRedelivered()) for m in again] == [
            ("a", True),
            ("b", True),
        ]
        again[1].acknowledge()
        session.close()
        assert _left_on(connection, name, 1000) == []


# ---- presettled producers ---------------------------------------------------------------------


def test_presettled_persistent_sends_arrive_in_order(any_broker: Any) -> None:
    factory = any_broker.factory(**{"jms.presettlePolicy.presettleProducers": "true"})
    with factory.createConnection() as connection:
        connection.start()
        name = _name("producer")
        session = connection.createSession()
        producer = session.createProducer(session.createQueue(name))
        texts = [f"m{i}" for i in range(200)]
        for text in texts:
            producer.send(session.createTextMessage(text))  # persistent: no wait for an outcome
        producer.close()
        assert _left_on(connection, name, 10_000) == texts


def test_an_anonymous_producer_presettles_queue_sends(any_broker: Any) -> None:
    factory = any_broker.factory(**{"jms.presettlePolicy.presettleQueueProducers": "true"})
    with factory.createConnection() as connection:
        connection.start()
        names = [_name("anon-a"), _name("anon-b")]
        session = connection.createSession()
        producer = session.createProducer(None)
        for name in names:
            for i in range(3):
                producer.send(session.createQueue(name), session.createTextMessage(f"{name}:{i}"))
        producer.close()
        for name in names:
            assert _left_on(connection, name, 10_000) == [f"{name}:{i}" for i in range(3)]


def test_presettled_transactional_sends_count_at_commit_only(any_broker: Any) -> None:
    if not any_broker.profile.transactions:
        # No AMQP transactions on this broker (its adapter says so).
        with any_broker.factory().createConnection() as connection:
            with pytest.raises(jmspy.JMSException):
                session = connection.createSession(jmspy.SESSION_TRANSACTED)
                session.createProducer(session.createQueue(_name("txn"))).send(
                    session.createTextMessage("x")
                )
        return
    factory = any_broker.factory(**{"jms.presettlePolicy.presettleTransactedProducers": "true"})
    with factory.createConnection() as connection:
        connection.start()
        name = _name("txn-send")
        session = connection.createSession(jmspy.SESSION_TRANSACTED)
        producer = session.createProducer(session.createQueue(name))
        producer.send(session.createTextMessage("rolled back"))
        session.rollback()
        producer.send(session.createTextMessage("committed 1"))
        producer.send(session.createTextMessage("committed 2"))
        session.commit()
        session.close()
        assert _left_on(connection, name, 10_000) == ["committed 1", "committed 2"]
