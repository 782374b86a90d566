"""Transaction rollbacks in one client are redeliveries in the other.

A rollback hands the received messages back to the broker as failed deliveries, so the next
consumer, in either language, sees JMSRedelivered=true and JMSXDeliveryCount=2 with the same
JMSMessageIDs. Transacted sends become visible to the other client only on commit.
"""

from __future__ import annotations

from typing import Any

from interop_support import JavaClient, JsonObject, describe_message, queue, send_with_jmspy

import jmspy

SPECS: list[JsonObject] = [
    {
        "type": "text",
        "body": f"tx {i}",
        "properties": [{"name": "i", "type": "int", "value": i}],
    }
    for i in range(3)
]


def _receive_python(factory: Any, name: str, count: int, timeout_ms: int = 10_000) -> list[Any]:
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        consumer = session.createConsumer(session.createQueue(name))
        connection.start()
        out = []
        for _ in range(count):
            message = consumer.receive(timeout_ms)
            if message is None:
                break
            out.append(describe_message(message))
        return out


def _redelivery(descriptions: list[JsonObject]) -> list[tuple[Any, ...]]:
    return [(d["messageId"], d["redelivered"], d["deliveryCount"]) for d in descriptions]


def test_java_rollback_is_a_redelivery_in_python(
    java: JavaClient, factory: Any, unique_name: str
) -> None:
    with factory.createConnection() as connection:
        sent = send_with_jmspy(connection.createSession(), queue(unique_name), SPECS)
    ids = [s["messageId"] for s in sent]

    result = java.receive(queue(unique_name), count=3, rollback="only")
    assert _redelivery(result["rolledBack"]) == [(i, False, 1) for i in ids]
    assert result["messages"] == []

    again = _receive_python(factory, unique_name, 3)
    assert _redelivery(again) == [(i, True, 2) for i in ids]
    assert [d["body"] for d in again] == ["tx 0", "tx 1", "tx 2"]
    assert _receive_python(factory, unique_name, 1, timeout_ms=300) == []


def test_python_rollback_is_a_redelivery_in_java(
    java: JavaClient, factory: Any, unique_name: str
) -> None:
    ids = [s["messageId"] for s in java.send(queue(unique_name), SPECS)]
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.SESSION_TRANSACTED)
        consumer = session.createConsumer(session.createQueue(unique_name))
        connection.start()
        first = [consumer.receive(10_000) for _ in range(3)]
        assert [m.getJMSMessageID() for m in first if m is not None] == ids
        assert [m.getJMSRedelivered() for m in first if m is not None] == [False] * 3
        session.rollback()
        session.close()

    result = java.receive(queue(unique_name), count=3)
    assert _redelivery(result["messages"]) == [(i, True, 2) for i in ids]
    assert [d["body"] for d in result["messages"]] == ["tx 0", "tx 1", "tx 2"]


def test_java_rollback_then_receive_again_on_python_messages(
    java: JavaClient, factory: Any, unique_name: str
) -> None:
    """Qpid JMS redelivers jmspy's messages within its own session after a rollback."""
    with factory.createConnection() as connection:
        sent = send_with_jmspy(connection.createSession(), queue(unique_name), SPECS)
    ids = [s["messageId"] for s in sent]
    result = java.receive(queue(unique_name), count=3, rollback="first")
    assert _redelivery(result["rolledBack"]) == [(i, False, 1) for i in ids]
    assert _redelivery(result["messages"]) == [(i, True, 2) for i in ids]
    assert _receive_python(factory, unique_name, 1, timeout_ms=300) == []


def test_python_rollback_twice_counts_in_java(
    java: JavaClient, factory: Any, unique_name: str
) -> None:
    """Two jmspy rollbacks, then Java: JMSXDeliveryCount 3."""
    (sent,) = java.send(queue(unique_name), SPECS[:1])
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.SESSION_TRANSACTED)
        consumer = session.createConsumer(session.createQueue(unique_name))
        connection.start()
        for attempt in (1, 2):
            message = consumer.receive(10_000)
            assert message is not None
            assert message.getIntProperty("JMSXDeliveryCount") == attempt
            session.rollback()
        session.close()
    (received,) = java.receive(queue(unique_name))["messages"]
    assert _redelivery([received]) == [(sent["messageId"], True, 3)]


def test_java_transacted_send_visible_to_python_only_on_commit(
    java: JavaClient, factory: Any, unique_name: str
) -> None:
    java.send(queue(unique_name), SPECS, transacted=True, rollback=True)
    assert _receive_python(factory, unique_name, 1, timeout_ms=500) == []
    sent = java.send(queue(unique_name), SPECS, transacted=True)
    got = _receive_python(factory, unique_name, 3)
    assert [d["messageId"] for d in got] == [s["messageId"] for s in sent]
    assert _redelivery(got) == [(s["messageId"], False, 1) for s in sent]


def test_python_transacted_send_visible_to_java_only_on_commit(
    java: JavaClient, factory: Any, unique_name: str
) -> None:
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.SESSION_TRANSACTED)
        send_with_jmspy(session, queue(unique_name), SPECS)
        session.rollback()
        sent = send_with_jmspy(session, queue(unique_name), SPECS)
        assert java.receive(queue(unique_name), count=1, timeout_ms=500)["messages"] == []
        session.commit()
    got = java.receive(queue(unique_name), count=3)["messages"]
    assert _redelivery(got) == [(s["messageId"], False, 1) for s in sent]
