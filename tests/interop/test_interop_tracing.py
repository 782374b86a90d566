"""W3C trace context between jmspy (jmspy.tracing=true) and Qpid JMS: the ``traceparent``
application property jmspy writes is an ordinary String property to the Java client, and one a
Java producer sets is the parent of jmspy's process span."""

from __future__ import annotations

import threading
from typing import Any

from interop_support import JavaClient, queue
from otel_support import named, span_exporter, wait_for_spans

import jmspy

# A context as an upstream Java service (e.g. one instrumented by the OpenTelemetry Java agent)
# would have put on its message.
JAVA_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
JAVA_SPAN_ID = "00f067aa0ba902b7"
JAVA_TRACEPARENT = f"00-{JAVA_TRACE_ID}-{JAVA_SPAN_ID}-01"


def _traced(broker: Any) -> Any:
    return jmspy.ConnectionFactory(
        f"{broker.url}?jmspy.tracing=true", broker.username, broker.password
    )


def test_java_reads_the_traceparent_of_the_python_send_span(
    java: JavaClient, broker: Any, unique_name: str
) -> None:
    exporter = span_exporter()
    with _traced(broker).createConnection() as connection:
        session = connection.createSession()
        producer = session.createProducer(session.createQueue(unique_name))
        producer.send(session.createTextMessage("from python"))
    (send,) = named(exporter.get_finished_spans(), "send ")
    result = java.receive(queue(unique_name), count=1, timeout_ms=10_000)
    (message,) = result["messages"]
    traceparent = message["properties"]["traceparent"]
    assert traceparent["type"] == "String"
    version, trace_id, span_id, flags = traceparent["value"].split("-")
    assert version == "00"
    assert int(flags, 16) & 1  # sampled
    assert trace_id == format(send.context.trace_id, "032x")
    assert span_id == format(send.context.span_id, "016x")


def test_python_listener_continues_the_trace_of_a_java_message(
    java: JavaClient, broker: Any, unique_name: str
) -> None:
    exporter = span_exporter()
    done = threading.Event()
    with _traced(broker).createConnection() as connection:
        session = connection.createSession()
        consumer = session.createConsumer(session.createQueue(unique_name))
        consumer.setMessageListener(lambda message: done.set())
        connection.start()
        java.send(
            queue(unique_name),
            [
                {
                    "type": "text",
                    "body": "from java",
                    "properties": [
                        {"name": "traceparent", "type": "string", "value": JAVA_TRACEPARENT},
                        {"name": "tracestate", "type": "string", "value": "vendor=java"},
                    ],
                }
            ],
        )
        assert done.wait(30), "the listener was not called"
    spans = wait_for_spans(exporter, lambda s: bool(named(s, "process ")))
    (process,) = named(spans, "process ")
    assert format(process.context.trace_id, "032x") == JAVA_TRACE_ID
    assert process.parent is not None
    assert format(process.parent.span_id, "016x") == JAVA_SPAN_ID
    assert process.parent.is_remote
    assert process.parent.trace_state.get("vendor") == "java"
