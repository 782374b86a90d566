"""jmspy against a real ActiveMQ Classic 5.18 (the ``activemq`` session fixture): the facts
the ``activemq`` adapter profile states, and the fixes they needed.

* the open frame's ``queue-prefix`` / ``topic-prefix`` are applied to addresses and stripped
  from ``to`` / ``reply-to`` (a topic's JMSDestination and JMSReplyTo are ``Topic('name')``),
  and a durable subscription can be unsubscribed;
* ActiveMQ puts no limit and no delay on redelivery to AMQP consumers, so jmspy's default
  client policy (7 attempts, 1 s apart, then ``rejected``) ends a listener that always raises
  in ``ActiveMQ.DLQ``;
* closing a CLIENT_ACKNOWLEDGE consumer stops the link's credit before it settles the
  unacknowledged message, so the broker cannot resend it on the closing link and nothing is
  lost (ActiveMQ then redelivers it to the next consumer, uncounted: its documented
  deviation);
* a consumer holding unacknowledged messages stops getting any after some hundreds until
  something wakes the queue (its expiry scan every 30 s): jmspy drains such a link when
  nothing comes for the profile's probe interval, so a CLIENT_ACKNOWLEDGE listener gets a
  whole backlog;
* the provisioned broker can be crashed and restarted on its data (fault tests).
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pytest

import jmspy
from jmspy.redelivery import RedeliveryPolicy

DLQ = "ActiveMQ.DLQ"


def _name(tag: str) -> str:
    return f"jmspy.amq.{tag}.{uuid.uuid4().hex[:10]}"


def _queue_holding(
    session: Any, name: str, texts: list[str], mode: int = jmspy.DeliveryMode.PERSISTENT
) -> Any:
    """The queue ``name`` with ``texts`` sent to it through ``session``, in order."""
    queue = session.createQueue(name)
    producer = session.createProducer(queue)
    producer.setDeliveryMode(mode)
    for text in texts:
        producer.send(session.createTextMessage(text))
    producer.close()
    return queue


@pytest.fixture
def amq_factory(activemq: Any) -> jmspy.ConnectionFactory:
    return jmspy.ConnectionFactory(
        activemq.url, activemq.username, activemq.password, connect_timeout=15000
    )


def test_open_frame_and_detected_adapter(amq_factory: Any) -> None:
    with amq_factory.createConnection() as connection:
        meta = connection.getMetaData()
        assert meta.getAdapter() == "activemq"
        assert meta.getBrokerProduct() == "ActiveMQ"
        assert {"ANONYMOUS-RELAY", "DELAYED_DELIVERY"} <= set(meta.getOfferedCapabilities())
        # The prefixes the broker announced are the ones in use.
        assert (connection.adapter.queue_prefix, connection.adapter.topic_prefix) == (
            "queue://",
            "topic://",
        )


def test_topic_destination_and_reply_to_lose_the_prefix(amq_factory: Any) -> None:
    with amq_factory.createConnection() as connection:
        session = connection.createSession()
        topic = session.createTopic(_name("t"))
        reply = session.createQueue(_name("reply"))
        consumer = session.createConsumer(topic)
        connection.start()
        message = session.createTextMessage("hello")
        message.setJMSReplyTo(topic)
        session.createProducer(topic).send(message)
        got = consumer.receive(10000)
        assert got is not None
        assert got.getJMSDestination() == topic
        assert isinstance(got.getJMSDestination(), jmspy.Topic)
        assert got.getJMSReplyTo() == topic
        queued = session.createTextMessage("q")
        queued.setJMSReplyTo(reply)
        queue = session.createQueue(_name("q"))
        session.createProducer(queue).send(queued)
        back = session.createConsumer(queue).receive(10000)
        assert back is not None
        assert back.getJMSDestination() == queue and back.getJMSReplyTo() == reply


def test_durable_subscription_keeps_backlog_and_unsubscribes(amq_factory: Any) -> None:
    topic_name = _name("dur")
    with amq_factory.createConnection() as connection:
        connection.setClientID(f"cid-{uuid.uuid4().hex[:8]}")
        session = connection.createSession()
        topic = session.createTopic(topic_name)
        subscriber = session.createDurableSubscriber(topic, "sub1")
        subscriber.close()
        session.createProducer(topic).send(session.createTextMessage("while away"))
        connection.start()
        subscriber = session.createDurableSubscriber(topic, "sub1")
        got = subscriber.receive(10000)
        assert got is not None and got.getText() == "while away"
        subscriber.close()
        session.unsubscribe("sub1")
        # Gone: a new subscription with that name starts empty.
        session.createProducer(topic).send(session.createTextMessage("nobody kept this"))
        fresh = session.createDurableSubscriber(topic, "sub1")
        assert fresh.receive(1000) is None
        fresh.close()
        session.unsubscribe("sub1")


def test_listener_that_always_raises_ends_in_the_dlq(amq_factory: Any) -> None:
    """The default client policy on ActiveMQ: 7 attempts about 1 s apart, then rejected,
    which the broker moves to ActiveMQ.DLQ (without the policy it looped forever)."""
    queue_name = _name("poison")
    marker = uuid.uuid4().hex
    attempts: list[tuple[float, int]] = []
    lock = threading.Lock()

    def fail(message: Any) -> None:
        with lock:
            attempts.append((time.monotonic(), message.getIntProperty("JMSXDeliveryCount")))
        raise RuntimeError("always fails")

    with amq_factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(queue_name)
        consumer = session.createConsumer(queue)
        policy = consumer.getRedeliveryPolicy()
        assert (policy.max_delivery_attempts, policy.redelivery_delay) == (7, 1000)
        consumer.setMessageListener(fail)
        poison = session.createTextMessage("poison")
        poison.setStringProperty("marker", marker)
        session.createProducer(queue).send(poison)
        connection.start()
        reader = connection.createSession()
        dead = reader.createConsumer(reader.createQueue(DLQ), f"marker = '{marker}'").receive(60000)
        with lock:
            seen = list(attempts)
    assert dead is not None and dead.getText() == "poison"
    assert [count for _, count in seen] == [1, 2, 3, 4, 5, 6, 7]
    gaps = [b - a for (a, _), (b, _) in zip(seen, seen[1:], strict=False)]
    assert all(gap >= 0.9 for gap in gaps), gaps


def test_explicit_unlimited_policy_is_respected(amq_factory: Any) -> None:
    """-1 is the application's choice: no default limit is put in its place."""
    with amq_factory.createConnection() as connection:
        session = connection.createSession()
        consumer = session.createConsumer(session.createQueue(_name("unlimited")))
        consumer.setRedeliveryPolicy(
            RedeliveryPolicy.create(max_delivery_attempts=-1, redelivery_delay=10)
        )
        assert consumer.getRedeliveryPolicy().max_delivery_attempts == -1


def test_client_ack_close_stops_credit_and_loses_nothing(amq_factory: Any) -> None:
    name = _name("ack")
    with amq_factory.createConnection() as connection:
        session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
        queue = _queue_holding(session, name, ["a", "b"])
        connection.start()
        consumer = session.createConsumer(queue)
        first = consumer.receive(10000)
        assert first is not None and first.getText() == "a"
        consumer.close()  # "a" unacknowledged, "b" prefetched
        reader = connection.createSession()
        again = reader.createConsumer(queue)
        texts = sorted(m.getText() for m in iter(lambda: again.receive(3000), None))
    # Both back exactly once; ActiveMQ does not count the failed attempt (JMSXDeliveryCount
    # stays 1 after the consumer is gone): the deviation RD-4 reports.
    assert texts == ["a", "b"]


# Without the probe the listener stalls at about 1,400 messages and then after every further
# 400-600 until the broker's 30 s expiry scan: 4,000 take several of them (minutes). With it,
# each stall lasts one to two probe intervals (0.5-1 s): a few seconds in all.
BACKLOG = 4000
BACKLOG_WITHIN_S = 45.0


def test_a_client_ack_listener_gets_a_backlog_it_does_not_acknowledge(amq_factory: Any) -> None:
    name = _name("backlog")
    with amq_factory.createConnection() as connection:
        sender = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        texts = [str(i) for i in range(BACKLOG)]
        queue = _queue_holding(sender, name, texts, jmspy.DeliveryMode.NON_PERSISTENT)
        session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
        received: list[jmspy.Message] = []
        all_in = threading.Event()

        def on_message(message: jmspy.Message) -> None:
            received.append(message)
            if len(received) == BACKLOG:
                all_in.set()

        consumer = session.createConsumer(queue)
        consumer.setMessageListener(on_message)
        connection.start()
        assert all_in.wait(BACKLOG_WITHIN_S), f"{len(received)} of {BACKLOG} arrived"
        assert [m.getText() for m in received] == texts
        received[-1].acknowledge()  # CLIENT_ACKNOWLEDGE: all of them
        consumer.close()
        left = connection.createSession().createConsumer(queue)
        assert left.receive(1000) is None


def test_kill_and_restart_keep_persistent_messages(activemq: Any) -> None:
    """A private broker (the session's one stays up): crash it, restart on its data."""
    if activemq.broker is None:
        pytest.skip("JMSPY_ACTIVEMQ_URL names a broker this session did not start")
    from jmspy.conformance.brokers import ActiveMQBroker

    broker = ActiveMQBroker()
    try:
        broker.start(timeout=120)
        factory = jmspy.ConnectionFactory(broker.url, broker.username, broker.password)
        name = _name("crash")
        with factory.createConnection() as connection:
            session = connection.createSession()
            session.createProducer(session.createQueue(name)).send(
                session.createTextMessage("kept")
            )
        broker.kill()
        assert not broker.running
        broker.restart(timeout=120)
        with factory.createConnection() as connection:
            session = connection.createSession()
            connection.start()
            got = session.createConsumer(session.createQueue(name)).receive(15000)
        assert got is not None and got.getText() == "kept"
    finally:
        broker.stop()
