"""The jmspy client against a real RabbitMQ 3.x (AMQP 1.0 plugin): rule DD-1 for real, what
the other rules and mappings do there, and client-side redelivery with dead letters.

Timing tolerance for client-side redelivery: never earlier than the computed delay minus
50 ms, never more than 1500 ms later.
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
from jmspy.redelivery import RedeliveryPolicy

EARLY_MS = 50
LATE_MS = 1500


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


@pytest.fixture
def rabbit_factory(rabbitmq: Any) -> jmspy.ConnectionFactory:
    return jmspy.ConnectionFactory(
        rabbitmq.url, rabbitmq.username, rabbitmq.password, connect_timeout=15000
    )


@pytest.fixture
def rabbit_connection(rabbit_factory: jmspy.ConnectionFactory) -> Iterator[Any]:
    connection = rabbit_factory.createConnection()
    try:
        yield connection
    finally:
        connection.close()


def _queue_name(prefix: str = "jmspy.t") -> str:
    return f"{prefix}.{uuid.uuid4().hex[:10]}"


def test_adapter_is_detected(rabbit_connection: Any) -> None:
    meta = rabbit_connection.getMetaData()
    assert meta.getAdapter() == "rabbitmq"
    assert meta.getBrokerProduct() == "RabbitMQ"
    assert "DELAYED_DELIVERY" not in meta.getOfferedCapabilities()


def test_dd1_delivery_delay_is_refused_for_real(rabbit_connection: Any) -> None:
    session = rabbit_connection.createSession()
    queue = session.createQueue(_queue_name())
    producer = session.createProducer(queue)
    with pytest.raises(jmspy.JMSException) as info:
        producer.setDeliveryDelay(1000)
    assert info.value.getErrorCode() == "MQRC_FUNCTION_NOT_SUPPORTED"
    assert info.value.rule_id == "DD-1"
    assert "RabbitMQ" in str(info.value)
    anonymous = session.createProducer(None)
    anonymous.setDeliveryDelay(500)
    with pytest.raises(jmspy.JMSException) as info:
        anonymous.send(queue, session.createTextMessage("x"))
    assert info.value.reason_number == 2298
    # Nothing reached the queue; delay 0 works.
    producer.send(session.createTextMessage("now"))
    rabbit_connection.start()
    consumer = session.createConsumer(queue)
    assert consumer.receive(5000).getText() == "now"
    assert consumer.receive(300) is None


def test_dd1_through_jms_context(rabbit_factory: Any) -> None:
    with rabbit_factory.createContext() as context:
        with pytest.raises(jmspy.JMSRuntimeException) as info:
            context.createProducer().setDeliveryDelay(10)
        assert info.value.getErrorCode() == "MQRC_FUNCTION_NOT_SUPPORTED"


def test_round_trip_headers_properties_and_ttl(rabbit_connection: Any) -> None:
    session = rabbit_connection.createSession()
    queue = session.createQueue(_queue_name())
    producer = session.createProducer(queue)
    message = session.createTextMessage("hello rabbit")
    message.setIntProperty("n", 7)
    message.setStringProperty("s", "v")
    message.setJMSType("greeting")
    message.setJMSCorrelationID("corr")
    producer.setPriority(6)
    producer.send(message)
    producer.send(session.createTextMessage("expires"), DeliveryMode.PERSISTENT, 4, 50)
    deadline = time.monotonic() + 0.3
    while time.monotonic() < deadline:
        time.sleep(0.02)  # let the second message's time to live pass
    rabbit_connection.start()
    consumer = session.createConsumer(queue)
    received = consumer.receive(5000)
    assert received.getText() == "hello rabbit"
    assert received.getJMSMessageID() == message.getJMSMessageID()
    assert received.getIntProperty("n") == 7 and received.getStringProperty("s") == "v"
    assert received.getJMSType() == "greeting"
    assert received.getJMSCorrelationID() == "corr"
    assert received.getJMSPriority() == 6
    assert consumer.receive(500) is None, "the expired message is not delivered"


def test_priority_queue_orders_by_priority(rabbitmq: Any, rabbit_factory: Any) -> None:
    name = _queue_name("jmspy.prio")
    rabbitmq.broker.declare_queue(name, {"x-max-priority": 10})
    with rabbit_factory.createConnection() as connection:
        session = connection.createSession()
        # An existing queue with arguments is reached as /amq/queue/NAME (no redeclare).
        queue = session.createQueue(f"/amq/queue/{name}")
        producer = session.createProducer(queue)
        for priority in (1, 8, 3, 9):
            producer.send(
                session.createTextMessage(str(priority)), DeliveryMode.PERSISTENT, priority, 0
            )
        producer.close()
    with jmspy.ConnectionFactory(
        rabbitmq.url,
        rabbitmq.username,
        rabbitmq.password,
        **{"jms.prefetchPolicy.queuePrefetch": 1},
    ).createConnection() as connection:
        session = connection.createSession()
        connection.start()
        consumer = session.createConsumer(session.createQueue(f"/amq/queue/{name}"))
        got = [consumer.receive(5000).getJMSPriority() for _ in range(4)]
    assert got == [9, 8, 3, 1]


class Failing:
    def __init__(self, fail_times: int, expected: int) -> None:
        self.fail_times = fail_times
        self.expected = expected
        self.deliveries: list[tuple[str, int, bool, int]] = []
        self.done = threading.Event()

    def onMessage(self, message: Any) -> None:
        self.deliveries.append(
            (
                message.getText(),
                _now_ms(),
                message.getJMSRedelivered(),
                message.getIntProperty("JMSXDeliveryCount"),
            )
        )
        if len(self.deliveries) >= self.expected:
            self.done.set()
        poison = [d for d in self.deliveries if d[0] == "poison"]
        if message.getText() == "poison" and len(poison) <= self.fail_times:
            raise RuntimeError("simulated failure")


def test_client_side_redelivery_delay_counts_and_dead_letter(
    rabbitmq: Any, rabbit_factory: Any
) -> None:
    """RabbitMQ neither delays nor counts redeliveries: the client holds the failed message
    for the policy's delay (300, 600 ms), counts attempts, and after 3 attempts rejects it
    (afterLastAttempt=reject: the queue's own dead-letter routing is wanted), which RabbitMQ
    dead-letters through the queue's exchange to jmspy.dlq. A healthy message behind it is
    not held back."""
    name = _queue_name("jmspy.dl")
    marker = uuid.uuid4().hex
    listener = Failing(fail_times=10, expected=4)
    policy = RedeliveryPolicy.create(
        redelivery_delay=300,
        redelivery_delay_multiplier=2,
        max_delivery_attempts=3,
        after_last_attempt="reject",
    )
    with rabbit_factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(name, redelivery=policy)
        consumer = session.createConsumer(queue)
        consumer.setMessageListener(listener)
        producer = session.createProducer(queue)
        poison = session.createTextMessage("poison")
        poison.setStringProperty("marker", marker)
        producer.send(poison)
        producer.send(session.createTextMessage("healthy"))
        connection.start()
        assert listener.done.wait(10)
        consumer.close()
    poison_deliveries = [d for d in listener.deliveries if d[0] == "poison"]
    assert [d[3] for d in poison_deliveries] == [1, 2, 3]
    assert [d[2] for d in poison_deliveries] == [False, True, True]
    gaps = [b[1] - a[1] for a, b in zip(poison_deliveries, poison_deliveries[1:], strict=False)]
    for gap, expected in zip(gaps, [300, 600], strict=True):
        assert expected - EARLY_MS <= gap <= expected + LATE_MS, gaps
    healthy = [d for d in listener.deliveries if d[0] == "healthy"]
    assert healthy and healthy[0][1] < poison_deliveries[1][1], "healthy message held back"
    # Dead-lettered: read it from the DLX's queue (an existing queue: /amq/queue/).
    with jmspy.ConnectionFactory(
        rabbitmq.url,
        rabbitmq.username,
        rabbitmq.password,
        **{"jmspy.adapter": "generic"},
    ).createConnection() as connection:
        session = connection.createSession()
        connection.start()
        dlq = session.createConsumer(session.createQueue("/amq/queue/jmspy.dlq"))
        found = None
        while (message := dlq.receive(3000)) is not None:
            if message.getStringProperty("marker") == marker:
                found = message
                break
    assert found is not None and found.getText() == "poison"


def test_default_policy_never_loses_a_message(rabbit_factory: Any) -> None:
    """Without a configured policy the client redelivers up to jmspy's default limit (7
    attempts; see tests/broker/test_rabbitmq_dead_letter.py for what follows)."""
    listener = Failing(fail_times=4, expected=5)
    with rabbit_factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(_queue_name())
        session.createConsumer(queue).setMessageListener(listener)
        session.createProducer(queue).send(session.createTextMessage("poison"))
        connection.start()
        assert listener.done.wait(10)
    assert [d[3] for d in listener.deliveries] == [1, 2, 3, 4, 5]


def test_recover_and_close_in_client_ack(rabbit_factory: Any) -> None:
    name = _queue_name()
    with rabbit_factory.createConnection() as connection:
        session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
        queue = session.createQueue(name)
        session.createProducer(queue).send(session.createTextMessage("m"))
        connection.start()
        consumer = session.createConsumer(queue)
        first = consumer.receive(5000)
        assert (first.getJMSRedelivered(), first.getIntProperty("JMSXDeliveryCount")) == (False, 1)
        session.recover()
        again = consumer.receive(5000)
        assert (again.getJMSRedelivered(), again.getIntProperty("JMSXDeliveryCount")) == (True, 2)
        consumer.close()  # unacknowledged: released back (RabbitMQ has no modified outcome)
    with rabbit_factory.createConnection() as connection:
        session = connection.createSession()
        connection.start()
        back = session.createConsumer(session.createQueue(name)).receive(5000)
        assert back is not None and back.getText() == "m"


def test_unsupported_features_fail_clearly(rabbit_connection: Any) -> None:
    rabbit_connection.setClientID(f"cid-{uuid.uuid4().hex[:6]}")
    session = rabbit_connection.createSession()
    with pytest.raises(jmspy.JMSException, match="temporary destinations"):
        session.createTemporaryQueue()
    with pytest.raises(jmspy.JMSException, match="durable subscriptions"):
        session.createDurableSubscriber(session.createTopic("t"), "s")
    with pytest.raises(jmspy.JMSException, match="cannot browse"):
        list(session.createBrowser(session.createQueue(_queue_name())).getEnumeration())
    with pytest.raises(jmspy.JMSException, match="cannot filter"):
        session.createConsumer(session.createQueue(_queue_name()), "a = 1")


def test_anonymous_producer_keeps_a_bounded_set_of_links(rabbit_connection: Any) -> None:
    """RabbitMQ 3.x has no anonymous relay: an anonymous producer attaches a link per
    destination and keeps at most amqp.anonymousFallbackCacheSize (1) of them. Sending
    asynchronously, with a CompletionListener, to 4 queues in turn closes a link with sends
    still in flight every time; each send's outcome still arrives, and every message is on its
    queue."""
    session = rabbit_connection.createSession()
    names = [_queue_name() for _ in range(4)]
    queues = [session.createQueue(name) for name in names]
    producer = session.createProducer(None)
    producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)
    done = threading.Semaphore(0)
    failures: list[Any] = []

    class Listener:
        def onCompletion(self, message: Any) -> None:
            done.release()

        def onException(self, message: Any, exception: Any) -> None:
            failures.append(exception)
            done.release()

    rounds = 25
    for index in range(rounds * len(queues)):
        producer.send(
            queues[index % len(queues)], session.createTextMessage(str(index)), Listener()
        )
        assert len(producer._links) <= 1
    for _ in range(rounds * len(queues)):
        assert done.acquire(timeout=30), "a send's outcome never arrived"
    assert failures == []
    rabbit_connection.start()
    for position, queue in enumerate(queues):
        consumer = session.createConsumer(queue)
        got = [consumer.receive(10_000) for _ in range(rounds)]
        assert [m.getText() for m in got if m is not None] == [
            str(position + len(queues) * n) for n in range(rounds)
        ]
        consumer.close()
    producer.close()
