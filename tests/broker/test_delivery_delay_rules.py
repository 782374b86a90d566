"""Delivery delay, time to live and priority rules against a real Artemis (rule ids DD-n)."""

from __future__ import annotations

import time
from typing import Any

import pytest

import jmspy
from jmspy import DeliveryMode

# How late a delayed message may arrive after its JMSDeliveryTime on this 2-core machine: the
# broker's scheduler fires on time; the margin covers the dispatch and a busy machine.
LATENESS_TOLERANCE_MS = 3000


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def test_dd7_delayed_message_not_received_before_delivery_time(
    connection: Any, unique_name: str
) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    producer = session.createProducer(queue)
    connection.start()
    consumer = session.createConsumer(queue)
    delays = [1200, 400, 800]
    sent = []
    for delay in delays:
        producer.setDeliveryDelay(delay)
        message = session.createTextMessage(str(delay))
        producer.send(message)
        sent.append(message)
    # Nothing is visible before the shortest delay is over. On a busy machine the sends
    # alone may take that long, so a message this receive returns is checked like the
    # others below (it must not have come before its delivery time).
    arrivals: dict[str, tuple[int, Any]] = {}
    early = consumer.receive(200)
    if early is not None:
        arrivals[early.getText()] = (_now_ms(), early)
    while len(arrivals) < len(delays):
        received = consumer.receive(10_000)
        assert received is not None
        arrivals[received.getText()] = (_now_ms(), received)
    for message in sent:
        arrived, received = arrivals[message.getText()]
        assert received.getJMSDeliveryTime() == message.getJMSDeliveryTime()
        assert arrived >= message.getJMSDeliveryTime(), "delivered before JMSDeliveryTime"
        assert arrived - message.getJMSDeliveryTime() < LATENESS_TOLERANCE_MS
    # The broker released them in delivery-time order. That is the order of the delays only
    # when the three sends take less than 400 ms together; on a busy machine they may not, so
    # the expected order is taken from the JMSDeliveryTime each send stamped.
    by_delivery_time = [m.getText() for m in sorted(sent, key=lambda m: m.getJMSDeliveryTime())]
    assert sorted(arrivals, key=lambda k: arrivals[k][0]) == by_delivery_time


def test_dd7_expiry_counts_from_send_and_can_pass_while_delayed(
    connection: Any, unique_name: str
) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    producer = session.createProducer(queue)
    producer.setDeliveryDelay(1000)
    producer.setTimeToLive(1500)
    kept = session.createTextMessage("expires 500 ms after its delivery time")
    producer.send(kept)
    assert kept.getJMSExpiration() == kept.getJMSTimestamp() + 1500
    assert kept.getJMSDeliveryTime() == kept.getJMSTimestamp() + 1000
    connection.start()
    consumer = session.createConsumer(queue)
    received = consumer.receive(10_000)
    assert received is not None
    assert received.getJMSExpiration() == kept.getJMSExpiration()


def test_dd7_message_expiring_while_delayed_is_never_delivered(
    factory: Any, unique_name: str
) -> None:
    """DD-2 refuses ttl < delay, so the only way to get a message that expires while delayed
    is time passing after send with ttl == delay: it is due and expired at the same instant,
    and must never reach the application."""
    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        producer = session.createProducer(queue)
        producer.setDeliveryDelay(600)
        producer.setTimeToLive(600)
        producer.send(session.createTextMessage("never"))
        producer.setTimeToLive(0)
        producer.setDeliveryDelay(700)
        marker = session.createTextMessage("marker")
        producer.send(marker)
        connection.start()
        consumer = session.createConsumer(queue)
        got = []
        while True:
            message = consumer.receive(3000)
            if message is None:
                break
            got.append(message.getText())
            if message.getText() == "marker":
                break
        assert got == ["marker"]


def test_dd10_queue_default_delay_is_applied(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name, default_delivery_delay=800)
    producer = session.createProducer(queue)
    message = session.createTextMessage("default delay")
    producer.send(message)
    assert message.getJMSDeliveryTime() == message.getJMSTimestamp() + 800
    connection.start()
    consumer = session.createConsumer(session.createQueue(unique_name))
    received = consumer.receive(10_000)
    assert received is not None
    assert _now_ms() >= message.getJMSDeliveryTime()


def test_dd2_and_dd1_never_reach_the_broker(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    producer = session.createProducer(queue)
    producer.setDeliveryDelay(5000)
    with pytest.raises(jmspy.JMSException) as info:
        producer.send(session.createTextMessage("x"), DeliveryMode.PERSISTENT, 4, 10)
    assert info.value.getErrorCode() == "MQRC_EXPIRY_ERROR"
    connection.start()
    assert session.createConsumer(queue).receive(300) is None
    # Artemis offers DELAYED_DELIVERY: DD-1 does not apply.
    assert "DELAYED_DELIVERY" in connection.getMetaData().getOfferedCapabilities()


def test_dd14_priority_reaches_the_broker_and_orders_its_queue(
    connection: Any, unique_name: str
) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    producer = session.createProducer(queue)
    with pytest.raises(jmspy.JMSException):
        producer.setPriority(10)
    for priority in (1, 5, 9, 0):
        producer.setPriority(priority)
        producer.send(session.createTextMessage(str(priority)))
    connection.start()
    consumer = session.createConsumer(queue)
    assert [consumer.receive(10_000).getJMSPriority() for _ in range(4)] == [9, 5, 1, 0]


def test_dd15_local_priority_sequence_reorders_prefetched_messages(
    factory: Any, unique_name: str
) -> None:
    """Messages that reach the consumer's prefetch buffer in FIFO order are handed out by
    priority when the destination asks for the priority sequence, and in arrival order when it
    asks for FIFO. The consumer attaches before the sends, so the broker cannot reorder: the
    effect shown is the client's."""
    order = [2, 7, 4, 9, 0]
    results: dict[str, list[int]] = {}
    for sequence in ("fifo", "priority"):
        with factory.createConnection() as connection:
            session = connection.createSession()
            name = f"{unique_name}-{sequence}"
            queue = session.createQueue(name, delivery_sequence=sequence)
            consumer = session.createConsumer(queue)  # prefetch 1000 > len(order)
            producer = session.createProducer(session.createQueue(name))
            for priority in order:
                producer.send(
                    session.createTextMessage(str(priority)), DeliveryMode.PERSISTENT, priority, 0
                )
            # Wait until every message sits in the local buffer before reading any.
            deadline = time.monotonic() + 10
            while consumer.getPrefetchedCount() < len(order) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert consumer.getPrefetchedCount() == len(order)
            connection.start()
            results[sequence] = [consumer.receive(5000).getJMSPriority() for _ in order]
    assert results["fifo"] == order
    assert results["priority"] == sorted(order, reverse=True)


def test_dd16_queue_default_priority(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name, default_priority=7)
    session.createProducer(queue).send(session.createTextMessage("x"))
    connection.start()
    assert session.createConsumer(queue).receive(10_000).getJMSPriority() == 7


def test_jms_context_delay_round_trip(factory: Any, unique_name: str) -> None:
    with factory.createContext() as context:
        queue = context.createQueue(unique_name)
        producer = context.createProducer().setDeliveryDelay(500).setPriority(6)
        producer.send(queue, "from a JMSProducer")
        consumer = context.createConsumer(queue)
        body = consumer.receiveBody(str, 10_000)
        assert body == "from a JMSProducer"
