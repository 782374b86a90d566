"""Topics shared between the clients: live subscribers and durable subscriptions."""

from __future__ import annotations

import uuid
from typing import Any

from interop_support import JavaClient, JsonObject, describe_message, send_with_jmspy, topic

import jmspy

SPECS: list[JsonObject] = [
    {
        "type": "text",
        "body": f"news {i}",
        "jmsType": "news",
        "properties": [{"name": "i", "type": "long", "value": i}],
    }
    for i in range(3)
]


def test_java_publishes_python_subscribes(java: JavaClient, factory: Any, unique_name: str) -> None:
    with factory.createConnection() as connection:
        session = connection.createSession()
        subscriber = session.createConsumer(session.createTopic(unique_name))
        connection.start()
        sent = java.send(topic(unique_name), SPECS)
        got = [subscriber.receive(10_000) for _ in SPECS]
        assert all(isinstance(m, jmspy.TextMessage) for m in got)
        described = [describe_message(m) for m in got]
    assert [d["messageId"] for d in described] == [s["messageId"] for s in sent]
    assert [d["destination"] for d in described] == [topic(unique_name)] * 3
    assert [d["properties"]["i"] for d in described] == [
        {"type": "Long", "value": i} for i in range(3)
    ]


def test_python_publications_reach_a_java_durable_subscription(
    java: JavaClient, factory: Any, unique_name: str
) -> None:
    """Published by jmspy while the Java durable subscriber is offline, received on resume."""
    subscription: JsonObject = {
        "clientId": f"interop-{uuid.uuid4().hex[:8]}",
        "subscription": "interop-sub",
        "topic": unique_name,
    }
    created = java.run("durable-subscribe", {**subscription, "count": 0})
    assert created["messages"] == []
    with factory.createConnection() as connection:
        sent = send_with_jmspy(connection.createSession(), topic(unique_name), SPECS)
    resumed = java.run(
        "durable-resume", {**subscription, "count": 3, "timeoutMs": 10_000, "unsubscribe": True}
    )
    messages = resumed["messages"]
    assert [m["messageId"] for m in messages] == [s["messageId"] for s in sent]
    assert [m["destination"] for m in messages] == [topic(unique_name)] * 3
    assert [(m["redelivered"], m["deliveryCount"]) for m in messages] == [(False, 1)] * 3


def test_python_resumes_a_java_durable_subscription(
    java: JavaClient, broker: Any, unique_name: str
) -> None:
    """Same client id and subscription name: jmspy attaches to the subscription Qpid JMS made,
    gets what was published while nobody was attached, and unsubscribes it."""
    client_id = f"interop-{uuid.uuid4().hex[:8]}"
    subscription: JsonObject = {
        "clientId": client_id,
        "subscription": "interop-sub",
        "topic": unique_name,
    }
    java.run("durable-subscribe", {**subscription, "count": 0})
    sent = java.send(topic(unique_name), SPECS)
    factory = jmspy.ConnectionFactory(
        broker.url, broker.username, broker.password, client_id=client_id
    )
    with factory.createConnection() as connection:
        session = connection.createSession()
        consumer = session.createDurableConsumer(session.createTopic(unique_name), "interop-sub")
        connection.start()
        got = [consumer.receive(10_000) for _ in SPECS]
        assert [m.getJMSMessageID() for m in got if m is not None] == [s["messageId"] for s in sent]
        consumer.close()
        session.unsubscribe("interop-sub")
    # Unsubscribed from Python: Java creates a fresh subscription, without the old messages.
    java.send(topic(unique_name), SPECS[:1])
    again = java.run("durable-resume", {**subscription, "count": 1, "timeoutMs": 500})
    assert again["messages"] == []
    java.run("durable-resume", {**subscription, "count": 0, "unsubscribe": True})


def test_java_resumes_a_python_durable_subscription(
    java: JavaClient, broker: Any, unique_name: str
) -> None:
    client_id = f"interop-{uuid.uuid4().hex[:8]}"
    factory = jmspy.ConnectionFactory(
        broker.url, broker.username, broker.password, client_id=client_id
    )
    with factory.createConnection() as connection:
        session = connection.createSession()
        session.createDurableConsumer(session.createTopic(unique_name), "py-sub").close()
    sent = java.send(topic(unique_name), SPECS)
    resumed = java.run(
        "durable-resume",
        {
            "clientId": client_id,
            "subscription": "py-sub",
            "topic": unique_name,
            "count": 3,
            "timeoutMs": 10_000,
            "unsubscribe": True,
        },
    )
    assert [m["messageId"] for m in resumed["messages"]] == [s["messageId"] for s in sent]


def test_shared_durable_subscription_across_clients(
    java: JavaClient, factory: Any, unique_name: str
) -> None:
    """A shared durable subscription without client id (Qpid JMS's "name|global" link),
    created by jmspy, is resumed by Qpid JMS, and the other way round."""
    with factory.createConnection() as connection:
        session = connection.createSession()
        session.createSharedDurableConsumer(session.createTopic(unique_name), "shared").close()
    with factory.createConnection() as connection:
        sent = send_with_jmspy(connection.createSession(), topic(unique_name), SPECS)
    shared: JsonObject = {"shared": True, "subscription": "shared", "topic": unique_name}
    resumed = java.run("durable-resume", {**shared, "count": 3, "timeoutMs": 10_000})
    assert [m["messageId"] for m in resumed["messages"]] == [s["messageId"] for s in sent]

    sent = java.send(topic(unique_name), SPECS)
    with factory.createConnection() as connection:
        session = connection.createSession()
        consumer = session.createSharedDurableConsumer(session.createTopic(unique_name), "shared")
        connection.start()
        got = [consumer.receive(10_000) for _ in SPECS]
        assert [m.getJMSMessageID() for m in got if m is not None] == [s["messageId"] for s in sent]
    java.run("durable-resume", {**shared, "count": 0, "unsubscribe": True})


def test_python_unsubscribes_a_global_shared_durable_subscription(
    java: JavaClient, factory: Any, unique_name: str
) -> None:
    """jmspy removes a shared durable subscription Qpid JMS made: the message it held goes
    with it, so Qpid JMS subscribing again under the same name finds an empty, new one."""
    shared: JsonObject = {"shared": True, "subscription": "shared", "topic": unique_name}
    java.run("durable-subscribe", {**shared, "count": 0})
    java.send(topic(unique_name), SPECS[:1])  # held by the subscription while nobody listens
    try:
        with factory.createConnection() as connection:
            connection.createSession().unsubscribe("shared")
        # Had the unsubscribe left the subscription in place, this would get the held message
        # at once; 3 s is only the bound on waiting for nothing.
        resumed = java.run("durable-resume", {**shared, "count": 1, "timeoutMs": 3000})
        assert resumed["messages"] == [], "the subscription survived jmspy's unsubscribe"
    finally:
        # Whatever jmspy did, the subscription is gone after this (or was already).
        java.run("durable-resume", {**shared, "count": 0, "unsubscribe": True})
