"""Request/reply across the clients with temporary reply destinations.

The requester creates a temporary queue (or topic), sends a request whose JMSReplyTo is that
destination, and waits for the reply there; the responder answers on getJMSReplyTo() with the
request's JMSMessageID as JMSCorrelationID. The reply-to must arrive as a temporary destination
of the right kind that the other client can send to.
"""

from __future__ import annotations

from typing import Any

import pytest
from interop_support import JavaClient, queue

import jmspy


@pytest.mark.parametrize("kind", ["queue", "topic"])
def test_python_requests_java_replies(
    kind: str, java: JavaClient, factory: Any, unique_name: str
) -> None:
    with factory.createConnection() as connection:
        session = connection.createSession()
        temporary = (
            session.createTemporaryQueue() if kind == "queue" else session.createTemporaryTopic()
        )
        replies = session.createConsumer(temporary)
        connection.start()
        request = session.createTextMessage("ping")
        request.setJMSReplyTo(temporary)
        session.createProducer(session.createQueue(unique_name)).send(request)

        result = java.run("reply", {"destination": queue(unique_name), "count": 1})
        (seen,) = result["messages"]
        assert seen["messageId"] == request.getJMSMessageID()
        expected_kind = "temp-queue" if kind == "queue" else "temp-topic"
        assert seen["replyTo"]["kind"] == expected_kind
        assert seen["replyTo"]["name"] == (
            temporary.getQueueName() if kind == "queue" else temporary.getTopicName()
        )

        reply = replies.receive(10_000)
        assert isinstance(reply, jmspy.TextMessage)
        assert reply.getText() == "reply to ping"
        assert reply.getJMSCorrelationID() == request.getJMSMessageID()
        assert reply.getJMSMessageID() == result["replies"][0]["messageId"]
        assert reply.getJMSDestination() == temporary


@pytest.mark.parametrize("kind", ["queue", "topic"])
def test_java_requests_python_replies(
    kind: str, java: JavaClient, factory: Any, unique_name: str
) -> None:
    requester = java.start(
        "request",
        {
            "destination": queue(unique_name),
            "replyKind": kind,
            "message": {"type": "text", "body": "ping"},
            "timeoutMs": 20_000,
        },
    )
    try:
        with factory.createConnection() as connection:
            session = connection.createSession()
            consumer = session.createConsumer(session.createQueue(unique_name))
            connection.start()
            request = consumer.receive(30_000)
            assert isinstance(request, jmspy.TextMessage)
            reply_to = request.getJMSReplyTo()
            expected = jmspy.TemporaryQueue if kind == "queue" else jmspy.TemporaryTopic
            assert isinstance(reply_to, expected)
            reply = session.createTextMessage("pong")
            reply.setJMSCorrelationID(request.getJMSMessageID())
            session.createProducer(None).send(reply_to, reply)
    finally:
        result = requester.result()
    assert result["sent"]["messageId"] == request.getJMSMessageID()
    assert result["replyTo"]["kind"] == ("temp-queue" if kind == "queue" else "temp-topic")
    answer = result["reply"]
    assert answer is not None, "Qpid JMS got no reply on its temporary destination"
    assert answer["body"] == "pong"
    assert answer["correlationId"] == request.getJMSMessageID()
    assert answer["messageId"] == reply.getJMSMessageID()
    assert answer["destination"] == result["replyTo"]
