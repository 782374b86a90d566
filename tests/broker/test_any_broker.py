"""Broker behaviour on every real broker the project provisions (``any_broker``: Artemis,
RabbitMQ, ActiveMQ Classic, ...), one representative test per behaviour.

Where brokers differ, the difference asserted is the one the broker's adapter profile (and the
README) documents, read from ``any_broker.profile``: RabbitMQ 3.x has no delayed delivery,
transactions, selectors, browsing or durable subscriptions, and orders by priority only on
queues declared with ``x-max-priority``; the redelivery limit is the broker's (Artemis: 10
attempts, then DLQ), jmspy's default client policy (ActiveMQ: 7 attempts 1 s apart, then
ActiveMQ.DLQ; RabbitMQ: 7 attempts 1 s apart, then jmspy forwards it to DLQ).

Time bounds are generous (the machine may be busy): a delayed message must never come early,
and may come up to 30 s late.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import jmspy
from jmspy import DeliveryMode

EARLY_MS = 50
LATE_MS = 30_000

#: Attempts before a listener that always raises stops getting the message, and where the
#: message is then; None: no limit by default (no broker the project provisions any more).
POISON: dict[str, tuple[int | None, str | None]] = {
    "artemis": (10, "DLQ"),  # the broker's default max-delivery-attempts and dead-letter queue
    "activemq": (7, "ActiveMQ.DLQ"),  # jmspy's default client policy, then rejected
    # jmspy's default client policy (7 attempts 1 s apart), then forwarded to /queue/DLQ.
    "rabbitmq": (7, "DLQ"),
    # jmspy's default client policy for Broker-J (5 attempts), ending in
    # modified(undeliverable-here); the provisioned queues move it to DLQ at their own limit 5.
    "qpid-broker-j": (5, "DLQ"),
}


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _name(tag: str) -> str:
    return f"jmspy.any.{tag}.{uuid.uuid4().hex[:10]}"


@pytest.fixture
def connection(any_broker: Any) -> Iterator[Any]:
    conn = any_broker.factory().createConnection()
    try:
        yield conn
    finally:
        conn.close()


def test_detected_adapter(any_broker: Any, connection: Any) -> None:
    assert connection.getMetaData().getAdapter() == any_broker.profile.name


def test_delivery_delay(any_broker: Any, connection: Any) -> None:
    session = connection.createSession()
    queue = session.createQueue(_name("delay"))
    producer = session.createProducer(queue)
    if any_broker.profile.delay_form == "unsupported":
        with pytest.raises(jmspy.JMSException) as info:
            producer.setDeliveryDelay(1000)
        assert info.value.rule_id == "DD-1"
        return
    producer.setDeliveryDelay(1500)
    message = session.createTextMessage("later")
    producer.send(message)
    due = message.getJMSDeliveryTime()
    connection.start()
    got = session.createConsumer(queue).receive(LATE_MS + 1500)
    arrived = _now_ms()
    assert got is not None and got.getText() == "later"
    assert arrived >= due - EARLY_MS, f"{due - arrived} ms early"
    assert got.getJMSDeliveryTime() == due


def test_time_to_live(connection: Any) -> None:
    session = connection.createSession()
    queue = session.createQueue(_name("ttl"))
    producer = session.createProducer(queue)
    producer.send(session.createTextMessage("expires"), DeliveryMode.PERSISTENT, 4, 200)
    kept = session.createTextMessage("kept")
    producer.send(kept, DeliveryMode.PERSISTENT, 4, 120_000)
    deadline = time.monotonic() + 0.6
    while time.monotonic() < deadline:  # let the first message's time to live pass
        time.sleep(0.05)
    connection.start()
    consumer = session.createConsumer(queue)
    got = consumer.receive(10000)
    assert got is not None and got.getText() == "kept"
    assert got.getJMSExpiration() == kept.getJMSExpiration()
    assert consumer.receive(500) is None, "the expired message is not delivered"


def test_priority_of_a_backlog(any_broker: Any) -> None:
    name = _name("prio")
    sent = [1, 9, 4, 0, 7]
    factory = any_broker.factory(**{"jms.prefetchPolicy.queuePrefetch": 1})
    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(name)
        producer = session.createProducer(queue)
        for priority in sent:
            producer.send(
                session.createTextMessage(str(priority)), DeliveryMode.PERSISTENT, priority, 0
            )
        connection.start()
        consumer = session.createConsumer(queue)
        got = [consumer.receive(10000).getJMSPriority() for _ in sent]
    if any_broker.kind == "rabbitmq":
        # Only queues declared with x-max-priority are ordered; a plain queue is FIFO.
        assert got == sent
    elif any_broker.kind == "qpid-broker-j":
        # Only queues of Broker-J's priority type are ordered; an auto-created queue is FIFO.
        assert not any_broker.profile.orders_by_priority
        assert got == sent
    else:
        assert any_broker.profile.orders_by_priority
        assert got == sorted(sent, reverse=True)


class _AlwaysFails:
    def __init__(self) -> None:
        self.counts: list[int] = []
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)

    def onMessage(self, message: Any) -> None:
        with self.changed:
            self.counts.append(message.getIntProperty("JMSXDeliveryCount"))
            self.changed.notify_all()
        raise RuntimeError("always fails")

    def wait_for(self, n: int, timeout: float) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: len(self.counts) >= n, timeout)


def test_listener_that_always_raises_is_bounded(any_broker: Any, connection: Any) -> None:
    limit, dead_letters = POISON.get(any_broker.kind, (None, None))
    marker = uuid.uuid4().hex
    listener = _AlwaysFails()
    session = connection.createSession()
    queue = session.createQueue(_name("poison"))
    session.createConsumer(queue).setMessageListener(listener)
    poison = session.createTextMessage("poison")
    poison.setStringProperty("marker", marker)
    session.createProducer(queue).send(poison)
    connection.start()
    if limit is None:
        # No default limit: redelivered (never lost) until the application sets one.
        assert listener.wait_for(12, 30)
        connection.stop()
        return
    assert dead_letters is not None
    reader = connection.createSession()
    if any_broker.profile.filters_selectors:
        selector = f"marker = '{marker}'"
        dead = reader.createConsumer(reader.createQueue(dead_letters), selector).receive(60000)
    else:
        # RabbitMQ cannot filter a queue: read the shared dead-letter queue until it comes.
        dlq = reader.createConsumer(reader.createQueue(dead_letters))
        deadline = time.monotonic() + 60
        dead = None
        while dead is None and time.monotonic() < deadline:
            got = dlq.receive(5000)
            if got is not None and got.getStringProperty("marker") == marker:
                dead = got
    assert dead is not None and dead.getText() == "poison"
    assert not listener.wait_for(limit + 1, 1.0), listener.counts
    assert listener.counts == list(range(1, limit + 1))


def test_transaction_commit_and_rollback(any_broker: Any, connection: Any) -> None:
    if not any_broker.profile.transactions:
        with pytest.raises(jmspy.JMSException):
            connection.createSession(jmspy.SESSION_TRANSACTED).createProducer(
                connection.createSession().createQueue(_name("tx"))
            ).send(connection.createSession().createTextMessage("x"))
        return
    tx = connection.createSession(jmspy.SESSION_TRANSACTED)
    queue = tx.createQueue(_name("tx"))
    producer = tx.createProducer(queue)
    producer.send(tx.createTextMessage("rolled back"))
    tx.rollback()
    producer.send(tx.createTextMessage("committed"))
    tx.commit()
    connection.start()
    consumer = tx.createConsumer(queue)
    first = consumer.receive(10000)
    assert first is not None and first.getText() == "committed"
    tx.rollback()
    again = consumer.receive(10000)
    assert again is not None and again.getText() == "committed" and again.getJMSRedelivered()
    tx.commit()
    assert consumer.receive(500) is None


def test_durable_subscription(any_broker: Any, connection: Any) -> None:
    connection.setClientID(f"cid-{uuid.uuid4().hex[:8]}")
    session = connection.createSession()
    topic = session.createTopic(_name("dur"))
    if not any_broker.profile.durable_subscriptions:
        with pytest.raises(jmspy.JMSException, match="durable subscriptions"):
            session.createDurableSubscriber(topic, "sub")
        return
    session.createDurableSubscriber(topic, "sub").close()
    session.createProducer(topic).send(session.createTextMessage("kept for the subscription"))
    connection.start()
    subscriber = session.createDurableSubscriber(topic, "sub")
    got = subscriber.receive(10000)
    assert got is not None and got.getText() == "kept for the subscription"
    subscriber.close()
    session.unsubscribe("sub")


def test_browse(any_broker: Any, connection: Any) -> None:
    session = connection.createSession()
    queue = session.createQueue(_name("browse"))
    if not any_broker.profile.browse:
        with pytest.raises(jmspy.JMSException, match="cannot browse"):
            list(session.createBrowser(queue).getEnumeration())
        return
    producer = session.createProducer(queue)
    for text in ("one", "two"):
        producer.send(session.createTextMessage(text))
    connection.start()
    seen = [m.getText() for m in session.createBrowser(queue).getEnumeration()]
    assert seen == ["one", "two"]
    consumer = session.createConsumer(queue)
    assert [consumer.receive(10000).getText() for _ in seen] == ["one", "two"]


def test_queue_selector(any_broker: Any, connection: Any) -> None:
    session = connection.createSession()
    queue = session.createQueue(_name("sel"))
    if not any_broker.profile.filters_selectors:
        with pytest.raises(jmspy.JMSException, match="cannot filter"):
            session.createConsumer(queue, "n = 1")
        return
    producer = session.createProducer(queue)
    for n in (1, 2, 3, 2):
        message = session.createTextMessage(str(n))
        message.setIntProperty("n", n)
        producer.send(message)
    connection.start()
    consumer = session.createConsumer(queue, "n = 2")
    assert [consumer.receive(10000).getText() for _ in range(2)] == ["2", "2"]
    assert consumer.receive(500) is None
    rest = session.createConsumer(queue)
    assert sorted(rest.receive(10000).getText() for _ in range(2)) == ["1", "3"]
