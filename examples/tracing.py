"""OpenTelemetry tracing: a send and the listener call that processes the message, one trace.

Needs the otel extra and an OpenTelemetry SDK (pip install 'jmspy-amqp[otel]'
opentelemetry-sdk). Uses the broker named by JMSPY_BROKER_URL (with JMSPY_BROKER_USER /
JMSPY_BROKER_PASSWORD); without it, starts a local Apache Artemis for the run.
"""

from __future__ import annotations

import os
import sys
import threading

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

import jmspy


class PrintSpans(SpanExporter):
    """Prints each finished span: kind, name, trace id, parent span id."""

    def export(self, spans: object) -> SpanExportResult:
        for span in spans:  # type: ignore[attr-defined]
            assert isinstance(span, ReadableSpan) and span.context is not None
            parent = format(span.parent.span_id, "016x") if span.parent else "-"
            # One write per line: the listener thread prints too, and print() writes the
            # text and its newline separately, so two threads' lines could interleave.
            sys.stdout.write(
                f"{span.kind.name:<8} {span.name:<30} "
                f"trace={span.context.trace_id:032x} parent={parent}\n"
            )
        return SpanExportResult.SUCCESS


def run(url: str, user: str, password: str) -> None:
    # The application owns the SDK: any exporter (OTLP, console, ...) works the same way.
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(PrintSpans()))
    trace.set_tracer_provider(provider)

    # jmspy.tracing=true switches tracing on for this factory's connections.
    factory = jmspy.ConnectionFactory(f"{url}?jmspy.tracing=true", user, password)
    processed = threading.Event()

    def on_message(message: jmspy.Message) -> None:
        body = message.getBody(str)
        traceparent = message.getStringProperty("traceparent")
        sys.stdout.write(f"processing {body} traceparent {traceparent}\n")
        processed.set()

    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue("jmspy.tracing-example")
        session.createConsumer(queue).setMessageListener(on_message)
        connection.start()
        session.createProducer(queue).send(session.createTextMessage("order 17"))
        if not processed.wait(30):
            raise SystemExit("no message within 30 s")
    provider.shutdown()


if __name__ == "__main__":
    broker_url = os.environ.get("JMSPY_BROKER_URL")
    if broker_url:
        run(
            broker_url,
            os.environ.get("JMSPY_BROKER_USER", "admin"),
            os.environ.get("JMSPY_BROKER_PASSWORD", "admin"),
        )
    else:
        from jmspy.conformance.brokers import ArtemisBroker

        with ArtemisBroker() as broker:
            run(broker.url, broker.username, broker.password)
