"""OpenTelemetry SDK set-up shared by the tracing tests: one process-wide tracer provider
(OpenTelemetry allows setting it once) with an in-memory exporter, emptied for each test."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

_exporter: InMemorySpanExporter | None = None


def span_exporter() -> InMemorySpanExporter:
    """The in-memory exporter of the global tracer provider, emptied."""
    global _exporter
    if _exporter is None:
        exporter = InMemorySpanExporter()
        provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            provider = TracerProvider()
            trace.set_tracer_provider(provider)
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        _exporter = exporter
    _exporter.clear()
    return _exporter


def wait_for_spans(
    exporter: InMemorySpanExporter,
    match: Callable[[Sequence[ReadableSpan]], bool],
    timeout_s: float = 30.0,
) -> Sequence[ReadableSpan]:
    """Poll the finished spans until ``match`` accepts them (spans end on other threads)."""
    deadline = time.monotonic() + timeout_s
    while True:
        spans = exporter.get_finished_spans()
        if match(spans) or time.monotonic() > deadline:
            return spans
        time.sleep(0.02)


def named(spans: Sequence[ReadableSpan], prefix: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name.startswith(prefix)]
