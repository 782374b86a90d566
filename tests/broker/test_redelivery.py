"""Redelivery and dead letters on Artemis (as its redelivery documentation describes them): the
broker's address settings, the client's failed-delivery reporting, and a client-side policy on top.

The session's Artemis is started with address settings per queue-name prefix (see
ARTEMIS_TEST_ADDRESS_SETTINGS in tests/conftest.py): ``jmspy.rd.delay.*`` delay 400 ms,
multiplier 2, max 1000 ms, 4 attempts then ``DLQ``; ``jmspy.rd.cav.*`` delay 400 ms with
collision-avoidance factor 0.5; ``jmspy.rd.dla.*`` 3 attempts then auto-created
``DLA::DLQ.<address>``.

Timing tolerance: a redelivery never comes earlier than its computed delay minus 50 ms (the
broker's clock and ours are the same machine's) and no later than 1500 ms after it.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pytest

import jmspy
from jmspy.redelivery import RedeliveryPolicy

EARLY_MS = 50
LATE_MS = 1500


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


@pytest.fixture(autouse=True)
def _needs_local_artemis(broker: Any) -> None:
    if broker.source != "local" or broker.kind != "artemis":
        pytest.skip("needs the project's local Artemis, started with test address settings")


class FailingListener:
    """Raises for the message until ``fail_times`` deliveries have been seen; records every
    delivery with its arrival time and JMS redelivery headers."""

    def __init__(self, fail_times: int, expected: int) -> None:
        self.fail_times = fail_times
        self.deliveries: list[tuple[str, int, bool, int]] = []
        self.done = threading.Event()
        self.expected = expected

    def onMessage(self, message: Any) -> None:
        self.deliveries.append(
            (
                message.getText(),
                _now_ms(),
                message.getJMSRedelivered(),
                message.getIntProperty("JMSXDeliveryCount"),
            )
        )
        failing = [d for d in self.deliveries if d[0] == "poison"]
        if len(self.deliveries) >= self.expected:
            self.done.set()
        if message.getText() == "poison" and len(failing) <= self.fail_times:
            raise RuntimeError("simulated failure")


def _gaps(times: list[int]) -> list[int]:
    return [b - a for a, b in zip(times, times[1:], strict=False)]


def test_broker_redelivery_delay_multiplier_and_max_then_dead_letter(
    factory: Any,
) -> None:
    name = f"jmspy.rd.delay.{uuid.uuid4().hex[:8]}"
    listener = FailingListener(fail_times=10, expected=5)
    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(name)
        consumer = session.createConsumer(queue)
        consumer.setMessageListener(listener)
        producer = session.createProducer(queue)
        poison = session.createTextMessage("poison")
        poison.setStringProperty("test", name)
        producer.send(poison)
        producer.send(session.createTextMessage("healthy"))
        connection.start()
        assert listener.done.wait(15)
        # Give the broker time to move the message after the fourth failure.
        dlq_session = connection.createSession()
        dlq = dlq_session.createConsumer(dlq_session.createQueue("DLQ"), f"test = '{name}'")
        dead = dlq.receive(10_000)
    poison_deliveries = [d for d in listener.deliveries if d[0] == "poison"]
    healthy = [d for d in listener.deliveries if d[0] == "healthy"]
    assert len(poison_deliveries) == 4, "max-delivery-attempts 4"
    assert [d[3] for d in poison_deliveries] == [1, 2, 3, 4]
    assert [d[2] for d in poison_deliveries] == [False, True, True, True]
    gaps = _gaps([d[1] for d in poison_deliveries])
    for gap, expected in zip(gaps, [400, 800, 1000], strict=True):
        assert expected - EARLY_MS <= gap <= expected + LATE_MS, (gaps, expected)
    # The healthy message was not held back behind the failing one.
    assert len(healthy) == 1 and healthy[0][1] < poison_deliveries[1][1]
    assert dead is not None and dead.getText() == "poison"
    assert dead.getStringProperty("JMSPY_ORIGINAL_DESTINATION") == name
    assert dead.getJMSMessageID() == poison.getJMSMessageID()


def test_broker_collision_avoidance_factor(factory: Any) -> None:
    name = f"jmspy.rd.cav.{uuid.uuid4().hex[:8]}"
    listener = FailingListener(fail_times=3, expected=4)
    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(name)
        session.createConsumer(queue).setMessageListener(listener)
        session.createProducer(queue).send(session.createTextMessage("poison"))
        connection.start()
        assert listener.done.wait(15)
    gaps = _gaps([d[1] for d in listener.deliveries])
    # 400 ms +- 50 % (factor 0.5 times a random fraction).
    for gap in gaps:
        assert 200 - EARLY_MS <= gap <= 600 + LATE_MS, gaps


def test_auto_created_dead_letter_queue_keeps_the_original_address(factory: Any) -> None:
    name = f"jmspy.rd.dla.{uuid.uuid4().hex[:8]}"
    listener = FailingListener(fail_times=10, expected=3)
    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(name)
        session.createConsumer(queue).setMessageListener(listener)
        session.createProducer(queue).send(session.createTextMessage("poison"))
        connection.start()
        assert listener.done.wait(15)
        reader = connection.createSession()
        # The auto-created queue lives on the multicast DLA address: read it by its FQQN.
        dead = reader.createConsumer(reader.createQueue(f"DLA::DLQ.{name}")).receive(10_000)
    assert [d[3] for d in listener.deliveries] == [1, 2, 3]
    assert dead is not None and dead.getText() == "poison"
    assert dead.getStringProperty("JMSPY_ORIGINAL_DESTINATION") == name


def test_client_side_limit_on_top_of_the_broker(factory: Any, unique_name: str) -> None:
    """A client policy with 2 attempts on a queue where the broker allows 10: the client
    dead-letters (rejected -> the broker's DLQ) after the second failed attempt, and never
    hands the message out a third time."""
    listener = FailingListener(fail_times=10, expected=2)
    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        consumer = session.createConsumer(queue)
        consumer.setRedeliveryPolicy(RedeliveryPolicy.create(max_delivery_attempts=2))
        consumer.setMessageListener(listener)
        poison = session.createTextMessage("poison")
        poison.setStringProperty("test", unique_name)
        session.createProducer(queue).send(poison)
        connection.start()
        assert listener.done.wait(10)
        reader = connection.createSession()
        dead = reader.createConsumer(reader.createQueue("DLQ"), f"test = '{unique_name}'").receive(
            10_000
        )
        assert dead is not None
        assert dead.getStringProperty("JMSPY_ORIGINAL_DESTINATION") == unique_name
    assert [d[3] for d in listener.deliveries] == [1, 2]


def test_client_side_delay_on_top_of_the_broker(factory: Any, unique_name: str) -> None:
    """Artemis's default redelivery delay is 0: the client policy's 300 ms, multiplier 2, is
    what separates the attempts."""
    listener = FailingListener(fail_times=2, expected=3)
    url_factory = jmspy.ConnectionFactory(
        f"{factory.endpoint.display()}?jmspy.redeliveryPolicy.redeliveryDelay=300"
        "&jmspy.redeliveryPolicy.redeliveryDelayMultiplier=2",
        factory.options.username,
        factory.options.password.get_secret_value(),
    )
    with url_factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        session.createConsumer(queue).setMessageListener(listener)
        session.createProducer(queue).send(session.createTextMessage("poison"))
        connection.start()
        assert listener.done.wait(10)
    gaps = _gaps([d[1] for d in listener.deliveries])
    for gap, expected in zip(gaps, [300, 600], strict=True):
        assert expected - EARLY_MS <= gap <= expected + LATE_MS, gaps
    assert [d[3] for d in listener.deliveries] == [1, 2, 3]


def test_delivery_count_after_recover_rollback_and_listener_failure(
    factory: Any, unique_name: str
) -> None:
    with factory.createConnection() as connection:
        connection.start()
        setup = connection.createSession()
        queue = setup.createQueue(unique_name)
        setup.createProducer(queue).send(setup.createTextMessage("m"))
        # recover (CLIENT_ACKNOWLEDGE): attempt 2
        client = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
        consumer = client.createConsumer(queue)
        assert consumer.receive(5000).getIntProperty("JMSXDeliveryCount") == 1
        client.recover()
        again = consumer.receive(5000)
        assert (again.getJMSRedelivered(), again.getIntProperty("JMSXDeliveryCount")) == (True, 2)
        # Closing with the message unacknowledged is a failed delivery the broker counts. The
        # local recover() attempt is not reported on its own (AMQP's modified outcome carries
        # a flag, not a count; Qpid JMS behaves the same), so the broker's count is 2.
        client.close()
        tx = connection.createSession(jmspy.SESSION_TRANSACTED)
        tx_consumer = tx.createConsumer(queue)
        third = tx_consumer.receive(5000)
        assert (third.getJMSRedelivered(), third.getIntProperty("JMSXDeliveryCount")) == (True, 2)
        tx.rollback()  # rollback: one more attempt, counted by the broker
        fourth = tx_consumer.receive(5000)
        assert (fourth.getJMSRedelivered(), fourth.getIntProperty("JMSXDeliveryCount")) == (
            True,
            3,
        )
        tx.commit()
        tx.close()
        # A listener failure: one more.
        listener = FailingListener(fail_times=1, expected=2)
        setup.createProducer(queue).send(setup.createTextMessage("poison"))
        listening = connection.createSession()
        listening.createConsumer(queue).setMessageListener(listener)
        assert listener.done.wait(10)
        assert [(d[2], d[3]) for d in listener.deliveries] == [(False, 1), (True, 2)]
