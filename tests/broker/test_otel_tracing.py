"""OpenTelemetry tracing (jmspy.tracing=true) through the real Artemis: span names, kinds and
attributes per the messaging semantic conventions, and W3C trace context carried in the
message's application properties from the send span to the consumer's spans."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode
from otel_support import named, span_exporter, wait_for_spans

import jmspy

pytestmark = pytest.mark.broker


@pytest.fixture
def traced(broker: Any) -> Any:
    return jmspy.ConnectionFactory(
        f"{broker.url}?jmspy.tracing=true", broker.username, broker.password
    )


def _hex_trace(span: Any) -> str:
    return format(span.context.trace_id, "032x")


def test_listener_process_span_continues_the_send_trace(traced: Any, unique_name: str) -> None:
    exporter = span_exporter()
    received: list[Any] = []
    done = threading.Event()

    def on_message(message: Any) -> None:
        received.append(message)
        # The process span is current while the listener runs.
        received.append(trace.get_current_span())
        done.set()

    with traced.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        consumer = session.createConsumer(queue)
        consumer.setMessageListener(on_message)
        connection.start()
        message = session.createTextMessage("traced")
        message.setJMSCorrelationID("order-17")
        session.createProducer(queue).send(message)
        assert done.wait(30), "the listener was not called"

    spans = wait_for_spans(exporter, lambda s: bool(named(s, "process ")))
    (send,) = named(spans, "send ")
    (process,) = named(spans, "process ")
    assert send.name == f"send {unique_name}"
    assert send.kind == SpanKind.PRODUCER
    assert send.attributes is not None
    assert send.attributes["messaging.system"] == "activemq"
    assert send.attributes["messaging.destination.name"] == unique_name
    assert send.attributes["messaging.operation.name"] == "send"
    assert send.attributes["messaging.message.id"] == message.getJMSMessageID()
    assert send.attributes["messaging.message.conversation_id"] == "order-17"
    assert send.attributes["server.address"]
    assert isinstance(send.attributes["server.port"], int)

    assert process.name == f"process {unique_name}"
    assert process.kind == SpanKind.CONSUMER
    assert process.context.trace_id == send.context.trace_id
    assert process.parent is not None and process.parent.span_id == send.context.span_id
    assert [link.context.span_id for link in process.links] == [send.context.span_id]
    assert process.attributes is not None
    assert process.attributes["messaging.message.id"] == message.getJMSMessageID()
    assert process.attributes["messaging.operation.type"] == "process"
    assert received[1].get_span_context().span_id == process.context.span_id
    # The context travelled as a W3C traceparent application property.
    traceparent = received[0].getStringProperty("traceparent")
    assert traceparent.split("-")[1] == _hex_trace(send)
    assert traceparent.split("-")[2] == format(send.context.span_id, "016x")


def test_receive_span_links_the_creation_context(traced: Any, unique_name: str) -> None:
    exporter = span_exporter()
    with traced.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        session.createProducer(queue).send(session.createTextMessage("pull"))
        consumer = session.createConsumer(queue)
        connection.start()
        got = consumer.receive(10_000)
        assert got is not None
        assert consumer.receiveNoWait() is None
    spans = exporter.get_finished_spans()
    (send,) = named(spans, "send ")
    receives = named(spans, "receive ")
    assert [r.kind for r in receives] == [SpanKind.CONSUMER, SpanKind.CONSUMER]
    first, empty = receives
    assert [link.context.span_id for link in first.links] == [send.context.span_id]
    assert first.attributes is not None
    assert first.attributes["messaging.message.id"] == got.getJMSMessageID()
    assert empty.links == () or list(empty.links) == []
    assert empty.attributes is not None and "messaging.message.id" not in empty.attributes


def test_batch_listener_process_span_links_every_message(traced: Any, unique_name: str) -> None:
    exporter = span_exporter()
    done = threading.Event()
    batches: list[int] = []

    def on_messages(messages: list[Any]) -> None:
        batches.append(len(messages))
        done.set()

    with traced.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        producer = session.createProducer(queue)
        for i in range(3):
            producer.send(session.createTextMessage(f"b{i}"))
        consumer = session.createConsumer(queue)
        consumer.setBatchMessageListener(on_messages, 3, 5_000)
        connection.start()
        assert done.wait(30)
    assert batches == [3]
    spans = wait_for_spans(exporter, lambda s: bool(named(s, "process ")))
    sends = named(spans, "send ")
    (process,) = named(spans, "process ")
    assert process.kind == SpanKind.CONSUMER
    assert process.attributes is not None
    assert process.attributes["messaging.batch.message_count"] == 3
    assert {link.context.span_id for link in process.links} == {s.context.span_id for s in sends}


def test_listener_failure_sets_error_type(traced: Any, unique_name: str) -> None:
    exporter = span_exporter()
    calls: list[bool] = []
    done = threading.Event()

    def on_message(message: Any) -> None:
        calls.append(message.getJMSRedelivered())
        if len(calls) == 1:
            raise ValueError("first attempt fails")
        done.set()

    with traced.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        session.createConsumer(queue).setMessageListener(on_message)
        connection.start()
        session.createProducer(queue).send(session.createTextMessage("x"))
        assert done.wait(30)
    spans = wait_for_spans(exporter, lambda s: len(named(s, "process ")) >= 2)
    failed, retried = named(spans, "process ")[:2]
    assert failed.attributes is not None and failed.attributes["error.type"] == "ValueError"
    assert failed.status.status_code == StatusCode.ERROR
    assert retried.attributes is not None and "error.type" not in retried.attributes
    assert retried.context.trace_id == failed.context.trace_id


def test_failed_send_records_error_type(traced: Any) -> None:
    exporter = span_exporter()
    with traced.createConnection() as connection:
        session = connection.createSession()
        temporary = session.createTemporaryQueue()
        producer = session.createProducer(None)
        temporary.delete()
        with pytest.raises(jmspy.IllegalStateException):
            producer.send(temporary, session.createTextMessage("too late"))
    (send,) = named(exporter.get_finished_spans(), "send ")
    assert send.name == "send (temporary)"
    assert send.attributes is not None
    assert send.attributes["messaging.destination.temporary"] is True
    assert send.attributes["error.type"] == "jmspy.errors.IllegalStateException"
    assert send.status.status_code == StatusCode.ERROR


def test_forwarded_message_keeps_its_creation_context(traced: Any, unique_name: str) -> None:
    exporter = span_exporter()
    with traced.createConnection() as connection:
        session = connection.createSession()
        first = session.createQueue(unique_name)
        second = session.createQueue(unique_name + "-fwd")
        session.createProducer(first).send(session.createTextMessage("hop"))
        connection.start()
        got = session.createConsumer(first).receive(10_000)
        assert got is not None
        session.createProducer(second).send(got)  # read-only properties: sent on as it is
        forwarded = session.createConsumer(second).receive(10_000)
    assert forwarded is not None
    original = named(exporter.get_finished_spans(), "send ")[0]
    assert forwarded.getStringProperty("traceparent") == got.getStringProperty("traceparent")
    assert forwarded.getStringProperty("traceparent").split("-")[1] == _hex_trace(original)


def test_tracing_is_off_by_default(factory: Any, unique_name: str) -> None:
    exporter = span_exporter()
    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        producer = session.createProducer(queue)
        consumer = session.createConsumer(queue)
        # Nothing is wrapped: the untraced methods run, not even a check per call.
        assert "_send" not in vars(producer)
        assert "_receive" not in vars(consumer) and consumer._tracing is None
        producer.send(session.createTextMessage("plain"))
        connection.start()
        got = consumer.receive(10_000)
    assert got is not None
    assert not got.propertyExists("traceparent")
    assert exporter.get_finished_spans() == ()


def test_jmscontext_sends_and_receives_are_traced(traced: Any, unique_name: str) -> None:
    exporter = span_exporter()
    with traced.createContext() as context:
        queue = context.createQueue(unique_name)
        context.createProducer().send(queue, "simplified")
        assert context.createConsumer(queue).receiveBody(str, 10_000) == "simplified"
    spans = exporter.get_finished_spans()
    (send,) = named(spans, "send ")
    (receive,) = named(spans, "receive ")
    assert send.kind == SpanKind.PRODUCER
    assert [link.context.span_id for link in receive.links] == [send.context.span_id]
