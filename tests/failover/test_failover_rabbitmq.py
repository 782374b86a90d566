"""Failover against a RabbitMQ 3.x node (AMQP 1.0 plugin) that is killed (-9) and restarted.

On RabbitMQ 3.x a queue survives a node restart only when it is durable, and the plugin
declares ``/queue/NAME`` queues non-durable (jmspy's terminus is not durable), so the durable
queue is declared on the node and reached as ``/amq/queue/NAME`` (which never declares). The
node has no duplicate detection: a send resent after the reconnect may be stored twice; such
a copy is a second message, not a redelivery, so it is told apart from redeliveries by the
send that was in flight when the connection dropped.
"""

from __future__ import annotations

import collections
import random
import threading
import time
from typing import Any

import pytest

import jmspy

from .failover_support import Crash, Events, drain_bodies, failover_url, wait_until

pytestmark = pytest.mark.timeout(600)


def _factory(info: Any, **options: Any) -> jmspy.ConnectionFactory:
    return jmspy.ConnectionFactory(failover_url(info.url, **options), info.username, info.password)


def _queue(name: str) -> str:
    return f"fo.rabbit.{name}.{time.monotonic_ns()}"


class _InFlight(Events):
    """Events, and which send was in progress when the connection dropped."""

    def __init__(self, current: list[int]) -> None:
        super().__init__()
        self.current = current
        self.at_drop: set[int] = set()

    def onConnectionInterrupted(self, uri: str) -> None:
        # Sends are synchronous: the one in progress is the only one the node may have
        # stored without the client learning it (the reconnect takes seconds, so this call
        # comes while that send is still blocked).
        self.at_drop.add(self.current[0])
        super().onConnectionInterrupted(uri)


def test_producer_and_consumer_survive_a_node_kill_on_a_durable_queue(
    failover_rabbitmq: Any,
) -> None:
    """A producer and a consumer, each on its own failover connection, across a kill -9 of
    the node: every message sent arrives; a message delivered again is flagged
    JMSRedelivered unless it is the copy of the send resent after the reconnect."""
    info = failover_rabbitmq
    name = _queue("durable")
    info.broker.declare_queue(name, durable=True)
    address = f"/amq/queue/{name}"
    total = 1500
    crash = Crash(info.broker, at=random.randint(300, 1000))
    deliveries: dict[str, list[bool]] = collections.defaultdict(list)
    lock = threading.Lock()
    stop = threading.Event()
    consumer_error: list[BaseException] = []
    consumer_events = Events()

    def consume() -> None:
        try:
            with _factory(info).createConnection() as connection:
                connection.setConnectionListener(consumer_events)
                session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
                consumer = session.createConsumer(session.createQueue(address))
                connection.start()
                while not stop.is_set():
                    message = consumer.receive(500)
                    if message is not None:
                        with lock:
                            deliveries[str(message.getBody(str))].append(
                                message.getJMSRedelivered()
                            )
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            consumer_error.append(exc)

    consumer_thread = threading.Thread(target=consume, name="test-consumer")
    consumer_thread.start()
    current = [0]
    producer_events = _InFlight(current)
    try:
        with _factory(info).createConnection() as connection:
            assert connection.getMetaData().getAdapter() == "rabbitmq"
            connection.setConnectionListener(producer_events)
            session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
            producer = session.createProducer(session.createQueue(address))
            producer.setDeliveryMode(jmspy.DeliveryMode.PERSISTENT)
            for i in range(total):
                current[0] = i
                producer.send(session.createTextMessage(str(i)))
                crash.tick()
            crash.join()
            producer_events.wait("restored")  # the producer lost the node and got it back
        # A consumer that failed (its exception is asserted below) ends the wait at once.
        wait_until(
            lambda: len(deliveries) >= total or bool(consumer_error),
            what="every message at the consumer",
        )
        consumer_events.wait("restored")
    finally:
        stop.set()
        consumer_thread.join(60)
    assert not consumer_error, consumer_error
    assert set(deliveries) == {str(i) for i in range(total)}, "messages lost"
    resent = {str(i) for i in producer_events.at_drop}
    unflagged = [
        body
        for body, flags in deliveries.items()
        if len(flags) > 1 and not all(flags[1:]) and body not in resent
    ]
    assert not unflagged, f"delivered again without JMSRedelivered: {unflagged[:10]}"
    twice = {b: f for b, f in sorted(deliveries.items(), key=lambda d: int(d[0])) if len(f) > 1}
    print(f"\nkill after send {crash.at}; in flight {sorted(resent)}; delivered again {twice}")
    assert not drain_bodies(_factory(info), address, quiet_ms=1500), "left on the queue"
    info.broker.delete_queue(name)


def test_a_non_durable_queue_loses_its_messages_but_the_links_come_back(
    failover_rabbitmq: Any,
) -> None:
    """``/queue/NAME`` (jmspy's RabbitMQ form) is declared non-durable: the node drops the
    queue and its messages, persistent ones included, with the restart. The failover
    connection re-attaches (declaring the queue again, empty) and works on."""
    info = failover_rabbitmq
    name = _queue("transient")
    events = Events()
    with _factory(info).createConnection() as connection:
        connection.setConnectionListener(events)
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        queue = session.createQueue(name)
        producer = session.createProducer(queue)
        producer.setDeliveryMode(jmspy.DeliveryMode.PERSISTENT)
        for i in range(50):
            producer.send(session.createTextMessage(str(i)))
        wait_until(lambda: info.broker.queue_depth(name) == 50, 60, "50 messages on the queue")
        info.broker.kill()
        info.broker.restart()
        events.wait("restored")
        # Re-attaching the producer declared the queue again: empty.
        wait_until(lambda: info.broker.queue_depth(name) is not None, 60, "the queue again")
        assert info.broker.queue_depth(name) == 0
        consumer = session.createConsumer(queue)
        connection.start()
        assert consumer.receive(2000) is None, "a message survived on a non-durable queue"
        producer.send(session.createTextMessage("after the restart"))
        message = consumer.receive(20_000)
        assert message is not None and message.getBody(str) == "after the restart"
