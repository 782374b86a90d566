"""Transacted sessions over the AMQP transaction coordinator, against Artemis (and DD-8)."""

from __future__ import annotations

import time
from typing import Any

import pytest

import jmspy


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def test_sends_are_invisible_until_commit(connection: Any, unique_name: str) -> None:
    tx = connection.createSession(jmspy.SESSION_TRANSACTED)
    assert tx.getTransacted() and tx.getAcknowledgeMode() == jmspy.SESSION_TRANSACTED
    queue = tx.createQueue(unique_name)
    producer = tx.createProducer(queue)
    for i in range(3):
        producer.send(tx.createTextMessage(str(i)))
    observer = connection.createSession()
    connection.start()
    consumer = observer.createConsumer(queue)
    assert consumer.receive(300) is None
    tx.commit()
    assert [consumer.receive(5000).getText() for _ in range(3)] == ["0", "1", "2"]


def test_rolled_back_sends_are_discarded(connection: Any, unique_name: str) -> None:
    tx = connection.createSession(jmspy.SESSION_TRANSACTED)
    queue = tx.createQueue(unique_name)
    producer = tx.createProducer(queue)
    producer.send(tx.createTextMessage("discarded"))
    tx.rollback()
    producer.send(tx.createTextMessage("kept"))
    tx.commit()
    connection.start()
    consumer = connection.createSession().createConsumer(queue)
    assert consumer.receive(5000).getText() == "kept"
    assert consumer.receive(300) is None


def test_rollback_redelivers_received_messages_in_order(connection: Any, unique_name: str) -> None:
    setup = connection.createSession()
    queue = setup.createQueue(unique_name)
    producer = setup.createProducer(queue)
    for i in range(5):
        producer.send(setup.createTextMessage(str(i)))
    tx = connection.createSession(jmspy.SESSION_TRANSACTED)
    consumer = tx.createConsumer(queue)
    connection.start()
    first = [consumer.receive(5000) for _ in range(2)]
    assert [m.getText() for m in first] == ["0", "1"]
    tx.rollback()
    again = [consumer.receive(5000) for _ in range(5)]
    assert [m.getText() for m in again] == ["0", "1", "2", "3", "4"]
    assert [m.getJMSRedelivered() for m in again[:2]] == [True, True]
    assert [m.getIntProperty("JMSXDeliveryCount") for m in again[:2]] == [2, 2]
    tx.commit()
    assert consumer.receive(300) is None


def test_commit_acknowledges_received_messages(factory: Any, unique_name: str) -> None:
    with factory.createConnection() as connection:
        setup = connection.createSession()
        queue = setup.createQueue(unique_name)
        setup.createProducer(queue).send(setup.createTextMessage("once"))
        tx = connection.createSession(jmspy.SESSION_TRANSACTED)
        connection.start()
        assert tx.createConsumer(queue).receive(5000).getText() == "once"
        tx.commit()
    with factory.createConnection() as connection:
        connection.start()
        session = connection.createSession()
        assert session.createConsumer(session.createQueue(unique_name)).receive(300) is None


def test_messages_received_before_their_consumer_closed_are_consumed_by_the_commit(
    factory: Any, unique_name: str
) -> None:
    # JMS: closing a consumer does not take its received messages out of the session's
    # transaction. Its link closes before the commit, with the other prefetched messages
    # (left on the link) given back: only what was received is consumed.
    with factory.createConnection() as connection:
        setup = connection.createSession()
        queue = setup.createQueue(unique_name)
        producer = setup.createProducer(queue)
        for text in ("one", "two", "three", "four"):
            producer.send(setup.createTextMessage(text))
        tx = connection.createSession(jmspy.SESSION_TRANSACTED)
        connection.start()
        consumer = tx.createConsumer(queue)
        assert [consumer.receive(5000).getText() for _ in range(2)] == ["one", "two"]
        consumer.close()
        tx.commit()
    with factory.createConnection() as connection:
        connection.start()
        session = connection.createSession()
        rest = session.createConsumer(session.createQueue(unique_name))
        assert [rest.receive(5000).getText() for _ in range(2)] == ["three", "four"]
        assert rest.receive(300) is None


def test_close_rolls_back(factory: Any, unique_name: str) -> None:
    with factory.createConnection() as connection:
        tx = connection.createSession(jmspy.SESSION_TRANSACTED)
        queue = tx.createQueue(unique_name)
        tx.createProducer(queue).send(tx.createTextMessage("never committed"))
        tx.close()
        connection.start()
        assert connection.createSession().createConsumer(queue).receive(300) is None


def test_transaction_state_errors(connection: Any) -> None:
    plain = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
    with pytest.raises(jmspy.IllegalStateException):
        plain.commit()
    with pytest.raises(jmspy.IllegalStateException):
        plain.rollback()
    tx = connection.createSession(True, jmspy.AUTO_ACKNOWLEDGE)
    assert tx.getTransacted()
    with pytest.raises(jmspy.IllegalStateException):
        tx.recover()


def test_dd8_delayed_message_in_transaction_waits_for_commit(
    connection: Any, unique_name: str
) -> None:
    """DD-8: a delayed message sent in a transaction is invisible before the commit, and its
    JMSDeliveryTime counts from the send call, not from the commit."""
    tx = connection.createSession(jmspy.SESSION_TRANSACTED)
    queue = tx.createQueue(unique_name)
    producer = tx.createProducer(queue)
    producer.setDeliveryDelay(1500)
    message = tx.createTextMessage("delayed in a transaction")
    producer.send(message)
    sent_at = message.getJMSTimestamp()
    assert message.getJMSDeliveryTime() == sent_at + 1500
    observer = connection.createSession()
    connection.start()
    consumer = observer.createConsumer(queue)
    # Past the delivery time but before the commit: still invisible.
    while _now_ms() < message.getJMSDeliveryTime() + 300:
        assert consumer.receive(100) is None
    tx.commit()
    received = consumer.receive(5000)
    assert received is not None
    assert received.getJMSDeliveryTime() == sent_at + 1500


def test_jms_context_transacted(factory: Any, unique_name: str) -> None:
    with factory.createContext(jmspy.SESSION_TRANSACTED) as context:
        queue = context.createQueue(unique_name)
        context.createProducer().send(queue, "in a transaction")
        context.commit()
        consumer = context.createConsumer(queue)
        assert consumer.receiveBody(str, 5000) == "in a transaction"
        context.rollback()
        assert consumer.receiveBody(str, 5000) == "in a transaction"
        context.commit()
