"""jmspy.tracing without a broker: the switch, the attribute helpers, trace context in
message properties, and what happens when the OpenTelemetry API is missing."""

from __future__ import annotations

import builtins
import logging
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanKind
from otel_support import span_exporter

import jmspy
from jmspy import tracing
from jmspy.options import build_options


class _Adapter:
    name = "artemis"


class _Connection:
    """What the tracing scope reads from a connection."""

    adapter = _Adapter()

    def __init__(self, uri: str | None = "amqp://broker.example:5672", on: bool = True) -> None:
        self._uri = uri
        self.options = build_options({"jmspy.tracing": "true" if on else "false"}, {})

    def getConnectedURI(self) -> str | None:
        return self._uri


def test_tracing_is_off_unless_switched_on() -> None:
    assert build_options({}, {}).tracing is False
    assert build_options({"jmspy.tracing": "true"}, {}).tracing is True
    assert build_options({}, {"tracing": True}).tracing is True
    assert tracing.for_consumer(_Connection(on=False), jmspy.Queue("q")) is None  # type: ignore[arg-type]


def test_bad_tracing_value_names_the_option() -> None:
    with pytest.raises(jmspy.IllegalArgumentException, match="jmspy.tracing"):
        build_options({"jmspy.tracing": "sometimes"}, {})


def test_error_type_is_the_qualified_class_name() -> None:
    assert tracing.error_type(ValueError("x")) == "ValueError"
    assert tracing.error_type(jmspy.IllegalStateException("x")) == (
        "jmspy.errors.IllegalStateException"
    )


def test_send_span_writes_traceparent_and_attributes() -> None:
    exporter = span_exporter()
    message = jmspy.TextMessage()
    message.setJMSCorrelationID("c-1")

    def send_and_set_id(destination: Any, msg: Any, *rest: Any) -> None:
        msg.setJMSMessageID("ID:1")

    send = tracing.traced_send(_Connection(), send_and_set_id)  # type: ignore[arg-type]
    send(jmspy.Queue("orders"), message, 2, 4, 0, 0)
    (span,) = exporter.get_finished_spans()
    assert span.name == "send orders" and span.kind == SpanKind.PRODUCER
    assert span.attributes == {
        "messaging.system": "activemq",
        "messaging.destination.name": "orders",
        "messaging.operation.name": "send",
        "messaging.operation.type": "send",
        "server.address": "broker.example",
        "server.port": 5672,
        "messaging.message.id": "ID:1",
        "messaging.message.conversation_id": "c-1",
    }
    traceparent = message.getStringProperty("traceparent")
    assert traceparent == (
        f"00-{span.context.trace_id:032x}-{span.context.span_id:016x}-{span.context.trace_flags:02x}"
    )


def test_creation_context_round_trip_and_garbage() -> None:
    span_exporter()
    scope = tracing.for_consumer(_Connection(uri=None), jmspy.Queue("q"))  # type: ignore[arg-type]
    assert scope is not None
    message = jmspy.TextMessage()
    assert scope.creation_context(message) is None
    message.setStringProperty("traceparent", "not a traceparent")
    assert scope.creation_context(message) is None
    with trace.get_tracer("test").start_as_current_span("upstream") as upstream:
        message.setStringProperty(
            "traceparent",
            f"00-{upstream.get_span_context().trace_id:032x}-"
            f"{upstream.get_span_context().span_id:016x}-01",
        )
    context = scope.creation_context(message)
    assert context is not None and context.is_remote
    assert context.span_id == upstream.get_span_context().span_id


def test_missing_api_leaves_tracing_off_with_one_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real_import = builtins.__import__

    def no_opentelemetry(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("opentelemetry"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(tracing, "_api", None)
    monkeypatch.setattr(tracing, "_api_missing_logged", False)
    monkeypatch.setattr(builtins, "__import__", no_opentelemetry)
    caplog.set_level(logging.WARNING, logger="jmspy.tracing")

    def send(*args: Any) -> None:
        return None

    assert tracing.traced_send(_Connection(), send) is send  # type: ignore[arg-type]
    assert tracing.for_consumer(_Connection(), jmspy.Queue("q")) is None  # type: ignore[arg-type]
    assert not tracing.available()
    warnings = [r for r in caplog.records if r.name == "jmspy.tracing"]
    assert len(warnings) == 1 and "jmspy-amqp[otel]" in warnings[0].getMessage()
