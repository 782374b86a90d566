"""Poison messages on a real RabbitMQ 3.x: jmspy's default client policy is bounded, and the
end loses nothing.

RabbitMQ drops a ``rejected`` message from a queue without a dead-letter exchange, so after the
last attempt jmspy forwards the message to a dead-letter queue itself (jmspy.dead_letter), and
accepts the original only once the broker accepted the copy; when the forward fails the
original is released and stays on its queue.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

import jmspy
from jmspy.dead_letter import DELIVERY_COUNT, ORIGINAL_DESTINATION, ORIGINAL_MESSAGE_ID


class _AlwaysFails:
    def __init__(self) -> None:
        self.counts: list[int] = []
        self.changed = threading.Condition()

    def onMessage(self, message: Any) -> None:
        with self.changed:
            self.counts.append(message.getIntProperty("JMSXDeliveryCount"))
            self.changed.notify_all()
        raise RuntimeError("always fails")

    def wait_for(self, n: int, timeout: float) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: len(self.counts) >= n, timeout)


def _name(tag: str) -> str:
    # Not jmspy.dl.*: the provisioned node gives those queues a dead-letter exchange, and
    # these are the queues RabbitMQ would drop a rejected message from.
    return f"jmspy.dlf.{tag}.{uuid.uuid4().hex[:10]}"


def _factory(rabbitmq: Any, **options: Any) -> jmspy.ConnectionFactory:
    return jmspy.ConnectionFactory(
        rabbitmq.url, rabbitmq.username, rabbitmq.password, connect_timeout=15000, **options
    )


def _send_poison(connection: Any, queue_name: str, marker: str) -> None:
    session = connection.createSession()
    poison = session.createTextMessage("poison")
    poison.setStringProperty("marker", marker)
    poison.setShortProperty("small", 7)
    session.createProducer(session.createQueue(queue_name)).send(poison)
    session.close()


def test_default_limit_then_forwarded_to_the_dead_letter_queue(rabbitmq: Any) -> None:
    """The default limit (7 attempts) holds with only the delay changed; the message then is
    on the configured dead-letter queue with its origin and attempt count, and not on its own
    queue any more."""
    name = _name("poison")
    dlq_name = _name("dlq")
    factory = _factory(
        rabbitmq,
        **{
            "jmspy.redeliveryPolicy.redeliveryDelay": 100,
            "jmspy.redeliveryPolicy.deadLetterQueue": dlq_name,
        },
    )
    marker = uuid.uuid4().hex
    listener = _AlwaysFails()
    with factory.createConnection() as connection:
        session = connection.createSession()
        consumer = session.createConsumer(session.createQueue(name))
        assert consumer.getRedeliveryPolicy().max_delivery_attempts == 7
        consumer.setMessageListener(listener)
        _send_poison(connection, name, marker)
        connection.start()
        reader = connection.createSession()
        dead = reader.createConsumer(reader.createQueue(dlq_name)).receive(60000)
        assert dead is not None, listener.counts
        assert not listener.wait_for(8, 1.0), listener.counts
        assert listener.counts == [1, 2, 3, 4, 5, 6, 7]
        consumer.close()
        left = reader.createConsumer(reader.createQueue(name)).receive(1000)
    assert dead.getText() == "poison"
    assert dead.getStringProperty("marker") == marker
    assert dead.getShortProperty("small") == 7, "properties keep their Java type"
    assert dead.getStringProperty(ORIGINAL_DESTINATION) == name
    assert dead.getIntProperty(DELIVERY_COUNT) == 7
    assert dead.getStringProperty(ORIGINAL_MESSAGE_ID)
    assert dead.getJMSDeliveryMode() == jmspy.DeliveryMode.PERSISTENT
    assert left is None, "the original was accepted after the forward"


def test_forward_failure_keeps_the_message_on_its_queue(rabbitmq: Any) -> None:
    """A dead-letter address the broker refuses (an exchange that does not exist): the
    forward fails, the original is released, and RabbitMQ still has it."""
    name = _name("kept")
    factory = _factory(
        rabbitmq,
        **{
            "jmspy.redeliveryPolicy.redeliveryDelay": 50,
            "jmspy.redeliveryPolicy.maxDeliveryAttempts": 2,
            "jmspy.redeliveryPolicy.deadLetterQueue": "/exchange/jmspy.no.such.exchange/dlq",
        },
    )
    marker = uuid.uuid4().hex
    listener = _AlwaysFails()
    with factory.createConnection() as connection:
        session = connection.createSession()
        session.createConsumer(session.createQueue(name)).setMessageListener(listener)
        _send_poison(connection, name, marker)
        connection.start()
        # Released after the failed forward, the broker delivers it again: the client counts
        # from 1 once more (RabbitMQ's delivery-count is always 0).
        assert listener.wait_for(3, 60), listener.counts
        assert listener.counts[:2] == [1, 2]
    with factory.createConnection() as connection:
        session = connection.createSession()
        connection.start()
        kept = session.createConsumer(session.createQueue(name)).receive(15000)
    assert kept is not None and kept.getStringProperty("marker") == marker
    assert not kept.propertyExists(ORIGINAL_DESTINATION)


def test_after_last_attempt_reject_keeps_the_rejected_outcome(rabbitmq: Any) -> None:
    """afterLastAttempt=reject: no forward; the queue's own dead-letter exchange decides (the
    provisioned node dead-letters jmspy.dl.* queues through jmspy.dlx to jmspy.dlq)."""
    name = f"jmspy.dl.rejected.{uuid.uuid4().hex[:10]}"
    dlq_name = _name("unused")
    factory = _factory(
        rabbitmq,
        **{
            "jmspy.redeliveryPolicy.redeliveryDelay": 50,
            "jmspy.redeliveryPolicy.maxDeliveryAttempts": 2,
            "jmspy.redeliveryPolicy.afterLastAttempt": "reject",
            "jmspy.redeliveryPolicy.deadLetterQueue": dlq_name,
        },
    )
    marker = uuid.uuid4().hex
    listener = _AlwaysFails()
    with factory.createConnection() as connection:
        session = connection.createSession()
        consumer = session.createConsumer(session.createQueue(name))
        consumer.setMessageListener(listener)
        _send_poison(connection, name, marker)
        connection.start()
        assert listener.wait_for(2, 60), listener.counts
        assert not listener.wait_for(3, 2.0), listener.counts
        assert listener.counts == [1, 2]
        consumer.close()
        reader = connection.createSession()
        assert reader.createConsumer(reader.createQueue(dlq_name)).receive(500) is None
        assert reader.createConsumer(reader.createQueue(name)).receive(500) is None
        dlx_queue = reader.createConsumer(reader.createQueue("/amq/queue/jmspy.dlq"))
        found = None
        while found is None and (message := dlx_queue.receive(5000)) is not None:
            if message.getStringProperty("marker") == marker:
                found = message
    assert found is not None, "rejected: dead-lettered by the queue's exchange"
    assert not found.propertyExists(ORIGINAL_DESTINATION), "jmspy forwarded nothing"


def test_receive_path_forwards_without_blocking_the_consumer(rabbitmq: Any) -> None:
    """CLIENT_ACKNOWLEDGE with recover(): the attempt over the limit is found inside receive()
    (under the consumer's buffer lock); the forward runs beside it, so receive() returns and
    the message reaches the dead-letter queue."""
    name = _name("recover")
    dlq_name = _name("dlq")
    factory = _factory(
        rabbitmq,
        **{
            "jmspy.redeliveryPolicy.maxDeliveryAttempts": 2,
            "jmspy.redeliveryPolicy.deadLetterQueue": dlq_name,
        },
    )
    marker = uuid.uuid4().hex
    with factory.createConnection() as connection:
        _send_poison(connection, name, marker)
        session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
        consumer = session.createConsumer(session.createQueue(name))
        connection.start()
        counts = []
        for _ in range(2):
            message = consumer.receive(15000)
            assert message is not None
            counts.append(message.getIntProperty("JMSXDeliveryCount"))
            session.recover()
        assert counts == [1, 2]
        assert consumer.receive(1000) is None, "the third attempt is not handed out"
        reader = connection.createSession()
        dead = reader.createConsumer(reader.createQueue(dlq_name)).receive(30000)
    assert dead is not None and dead.getStringProperty("marker") == marker
    assert dead.getIntProperty(DELIVERY_COUNT) == 2
    assert dead.getStringProperty(ORIGINAL_DESTINATION) == name


def test_explicit_unlimited_stays_unlimited(rabbitmq: Any) -> None:
    """maxDeliveryAttempts=-1 is the application's choice: past the default limit of 7 the
    message keeps coming back, and nothing is forwarded."""
    name = _name("unlimited")
    dlq_name = _name("unused")
    factory = _factory(
        rabbitmq,
        **{
            "jmspy.redeliveryPolicy.maxDeliveryAttempts": -1,
            "jmspy.redeliveryPolicy.deadLetterQueue": dlq_name,
        },
    )
    listener = _AlwaysFails()
    with factory.createConnection() as connection:
        session = connection.createSession()
        consumer = session.createConsumer(session.createQueue(name))
        consumer.setMessageListener(listener)
        _send_poison(connection, name, uuid.uuid4().hex)
        connection.start()
        assert listener.wait_for(10, 60), listener.counts
        consumer.close()
        assert listener.counts[:10] == list(range(1, 11))
        reader = connection.createSession()
        assert reader.createConsumer(reader.createQueue(dlq_name)).receive(500) is None
