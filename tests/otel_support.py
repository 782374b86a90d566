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


class _FailingSpanProcessor(SimpleSpanProcessor):
    """Raises from on_end, and from on_start when ``failing`` says so, while ``failing`` is
    set: an exporter or span processor that is misconfigured or broken."""

    failing: str | None = None  # "end", "start" (both), or None

    def __init__(self) -> None:
        super().__init__(InMemorySpanExporter())

    def on_start(self, span: object, parent_context: object = None) -> None:
        if _FailingSpanProcessor.failing == "start":
            raise RuntimeError("span processor broken (on_start)")

    def on_end(self, span: ReadableSpan) -> None:
        if _FailingSpanProcessor.failing:
            raise RuntimeError("span processor broken (on_end)")


_failing: _FailingSpanProcessor | None = None


class failing_spans:  # noqa: N801 - used as a context manager, named for what it does
    """Inside, every span the global SDK tracer provider ends raises (``where="end"``), or
    every span it starts and ends (``where="start"``)."""

    def __init__(self, where: str) -> None:
        self._where = where

    def __enter__(self) -> None:
        global _failing
        span_exporter()  # the SDK provider is in place
        if _failing is None:
            _failing = _FailingSpanProcessor()
            provider = trace.get_tracer_provider()
            assert isinstance(provider, TracerProvider)
            provider.add_span_processor(_failing)
        _FailingSpanProcessor.failing = self._where

    def __exit__(self, *exc_info: object) -> None:
        _FailingSpanProcessor.failing = None
