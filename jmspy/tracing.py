"""OpenTelemetry tracing of sends, receives and listener calls (the ``otel`` extra).

Switched on per connection with ``jmspy.tracing=true`` in the URL (or ``tracing=True`` on
:class:`~jmspy.ConnectionFactory`) where the OpenTelemetry API (``opentelemetry-api``) is
installed; off by default. When it is off nothing here runs: producers and consumers keep their
untraced methods and ``opentelemetry`` is not even imported. Spans go to the tracer provider the
application configured (``opentelemetry.trace.set_tracer_provider``); with the API alone they
are OpenTelemetry's no-op spans.

Spans follow the OpenTelemetry semantic conventions for messaging:

* ``send <destination>`` (PRODUCER) around ``MessageProducer.send`` and ``JMSProducer.send``;
  its context is written to the message's application properties ``traceparent`` and
  ``tracestate`` (W3C Trace Context), so it is the message's creation context. A received
  message sent on unchanged (read-only properties) keeps the context it came with.
* ``receive <destination>`` (CONSUMER) around ``receive``/``receiveNoWait``/``receiveBody``,
  linked to the creation context of the message received.
* ``process <destination>`` (CONSUMER) around each ``MessageListener.onMessage`` call: a child
  of the message's creation context (so producer and consumer share one trace) and linked to
  it; current while the listener runs, so the listener's own spans and sends are its children.
  Around each ``BatchMessageListener.onMessages`` call: linked to every message's creation
  context, with ``messaging.batch.message_count``.

Attributes: ``messaging.system`` (from the broker adapter: ``activemq`` for Artemis and
ActiveMQ, ``rabbitmq``, ``servicebus``, ...), ``messaging.operation.name`` and
``messaging.operation.type``, ``messaging.destination.name`` (``messaging.destination.temporary``
for temporary destinations, whose span names say ``(temporary)``), ``messaging.message.id``
(JMSMessageID), ``messaging.message.conversation_id`` (JMSCorrelationID),
``messaging.batch.message_count``, ``server.address``/``server.port`` (the broker connected to),
and on failure ``error.type`` (the exception's class) with the span status set to ERROR.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .errors import JMSException
from .message import Message

if TYPE_CHECKING:
    from .connection import Connection
    from .destination import Destination

log = logging.getLogger("jmspy.tracing")

__all__ = [
    "TRACEPARENT",
    "TRACESTATE",
    "TracingScope",
    "available",
    "for_consumer",
    "traced_send",
]

TRACEPARENT = "traceparent"
TRACESTATE = "tracestate"
INSTRUMENTATION_NAME = "jmspy"

# messaging.system per broker adapter: the semantic conventions' well-known values where there
# is one, else the adapter's name.
_SYSTEMS = {
    "artemis": "activemq",
    "activemq": "activemq",
    "rabbitmq": "rabbitmq",
    "rabbitmq4": "rabbitmq",
    "servicebus": "servicebus",
    "ibmmq": "ibmmq",
}

F = TypeVar("F", bound=Callable[..., Any])
G = TypeVar("G", bound=Callable[..., Any])
T = TypeVar("T")

_api_missing_logged = False
# Telemetry failures already logged at WARNING (later ones of the same kind go to DEBUG).
_failures_logged: set[str] = set()


def _quietly(what: str, call: Callable[..., T], *args: Any, **kwargs: Any) -> T | None:
    """One OpenTelemetry call (a span started, ended, annotated; a context propagated). A
    tracer provider, span processor or exporter that raises must never reach messaging: a
    receive that raised after its message was acknowledged lost it, and a listener call that
    raised after the listener returned redelivered its message. The failure is logged (the
    first of each kind at WARNING) and the call gives None."""
    try:
        return call(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - whatever the SDK raises stays out of messaging
        _log_failure(what, exc)
        return None


def _log_failure(what: str, exc: BaseException) -> None:
    """Log an OpenTelemetry failure: the first of each kind at WARNING, later ones at DEBUG."""
    first = what not in _failures_logged
    _failures_logged.add(what)
    log.log(
        logging.WARNING if first else logging.DEBUG,
        "OpenTelemetry failed %s (%s: %s); messaging goes on, the span may be incomplete",
        what,
        type(exc).__name__,
        exc,
    )


class _Api:
    """The parts of the OpenTelemetry API used here, imported on first use."""

    def __init__(self) -> None:
        from opentelemetry import trace
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        self.trace = trace
        self.propagator = TraceContextTextMapPropagator()


_api: _Api | None = None  # the imported opentelemetry modules, once loaded (see _load)


def _load() -> _Api | None:
    global _api, _api_missing_logged
    if _api is None:
        try:
            _api = _Api()
        except Exception as exc:  # noqa: BLE001 - a broken install must not stop messaging
            if not isinstance(exc, ImportError):
                _log_failure("loading its API", exc)
                return None
            if not _api_missing_logged:
                _api_missing_logged = True
                log.warning(
                    "jmspy.tracing=true but the OpenTelemetry API is not installed "
                    "(pip install 'jmspy-amqp[otel]'): connections run without tracing"
                )
            return None
    return _api


def available() -> bool:
    """True when the OpenTelemetry API can be imported (tracing can be switched on)."""
    return _load() is not None


def error_type(exc: BaseException) -> str:
    """``error.type``: the exception's fully qualified class name (builtins unqualified)."""
    cls = type(exc)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


class TracingScope:
    """Span factory for one connection and, for consumers, one destination."""

    def __init__(self, api: _Api, connection: Connection) -> None:
        self._api = api
        self._trace = api.trace
        self._kind = api.trace.SpanKind
        self._tracer = api.trace.get_tracer(INSTRUMENTATION_NAME)
        self._connection = connection
        adapter = connection.adapter.name
        self._system = _SYSTEMS.get(adapter, adapter)
        self._per_destination: dict[Destination, tuple[str, dict[str, Any]]] = {}

    # ---- attributes ------------------------------------------------------------------------

    def _names(self, operation: str, destination: Destination) -> tuple[str, dict[str, Any]]:
        """Span name and attributes for an operation on a destination (cached per one)."""
        key = destination
        cached = self._per_destination.get(key)
        if cached is None:
            attributes: dict[str, Any] = {"messaging.system": self._system}
            if destination.is_temporary:
                where = "(temporary)"
                attributes["messaging.destination.temporary"] = True
            else:
                where = destination.name
            attributes["messaging.destination.name"] = destination.name
            cached = (where, attributes)
            if len(self._per_destination) < 1024:  # an anonymous producer's many destinations
                self._per_destination[key] = cached
        where, base = cached
        attributes = dict(base)
        attributes["messaging.operation.name"] = operation
        attributes["messaging.operation.type"] = operation
        uri = self._connection.getConnectedURI()
        if uri is not None:
            host, _, port = uri.partition("://")[2].rpartition(":")
            attributes["server.address"] = host
            if port.isdigit():
                attributes["server.port"] = int(port)
        return f"{operation} {where}", attributes

    @staticmethod
    def _message_attributes(span: Any, message: Message) -> None:
        message_id = message.getJMSMessageID()
        if message_id is not None:
            span.set_attribute("messaging.message.id", message_id)
        correlation_id = message.getJMSCorrelationID()
        if correlation_id is not None:
            span.set_attribute("messaging.message.conversation_id", correlation_id)

    def _failed(self, span: Any, exc: BaseException) -> None:
        span.set_attribute("error.type", error_type(exc))
        span.record_exception(exc)
        span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, str(exc)))

    # ---- trace context in application properties --------------------------------------------

    def _inject(self, span: Any, message: Message) -> None:
        carrier: dict[str, str] = {}
        self._api.propagator.inject(carrier, context=self._trace.set_span_in_context(span))
        try:
            for name, value in carrier.items():
                message.setStringProperty(name, value)
        except JMSException:
            # Read-only properties: a received message sent on as it is keeps the creation
            # context it arrived with.
            pass

    def creation_context(self, message: Message) -> Any:
        """The valid SpanContext in the message's ``traceparent``/``tracestate``, or None."""
        try:
            parent = message.getStringProperty(TRACEPARENT)
            if parent is None:
                return None
            carrier = {TRACEPARENT: parent}
            state = message.getStringProperty(TRACESTATE)
            if state is not None:
                carrier[TRACESTATE] = state
        except JMSException:
            return None
        context = self._api.propagator.extract(carrier)
        span_context = self._trace.get_current_span(context).get_span_context()
        return span_context if span_context.is_valid else None

    # ---- wrappers ----------------------------------------------------------------------------

    def wrap_send(self, send: F) -> F:
        """A PRODUCER span around ``MessageProducer._send(destination, message, ...)``."""
        tracer = self._tracer
        kind = self._kind.PRODUCER

        def traced(destination: Destination, message: Message, *args: Any, **kwargs: Any) -> Any:
            if not isinstance(message, Message) or destination is None:
                return send(destination, message, *args, **kwargs)  # it raises the JMS error
            name, attributes = self._names("send", destination)
            span = _quietly(
                "starting a send span", tracer.start_span, name, kind=kind, attributes=attributes
            )
            if span is None:
                return send(destination, message, *args, **kwargs)
            try:
                _quietly("writing the trace context", self._inject, span, message)
                result = send(destination, message, *args, **kwargs)
            except BaseException as exc:
                _quietly("recording a failed send", self._failed, span, exc)
                raise
            else:
                _quietly("annotating a send span", self._message_attributes, span, message)
                return result
            finally:
                _quietly("ending a send span", span.end)

        return traced  # type: ignore[return-value]


class ConsumerTracing(TracingScope):
    """The receive and process spans of one consumer."""

    def __init__(self, api: _Api, connection: Connection, destination: Destination) -> None:
        super().__init__(api, connection)
        self._destination = destination

    def wrap(self, receive: F, deliver_batch: G) -> tuple[F, G]:
        """The consumer's ``_receive`` and ``_deliver_batch``, traced."""
        return self.wrap_receive(receive), self.wrap_deliver_batch(deliver_batch)

    def wrap_receive(self, receive: F) -> F:
        """A CONSUMER ``receive`` span around ``MessageConsumer._receive``: created when the
        call returns (so it can link the message's creation context), started when it began."""
        tracer = self._tracer
        kind = self._kind.CONSUMER
        link_type = self._trace.Link

        def traced(*args: Any, **kwargs: Any) -> Any:
            start = time.time_ns()
            failure: BaseException | None = None
            message = None
            try:
                message = receive(*args, **kwargs)
                return message
            except BaseException as exc:
                failure = exc
                raise
            finally:
                # After the receive: its message is handed over (and acknowledged) already,
                # so nothing here may raise instead of returning it.
                _quietly("recording a receive span", record, start, message, failure)

        def record(start: int, message: Message | None, failure: BaseException | None) -> None:
            name, attributes = self._names("receive", self._destination)
            links = []
            if message is not None:
                creation = self.creation_context(message)
                if creation is not None:
                    links.append(link_type(creation))
            span = tracer.start_span(
                name, kind=kind, attributes=attributes, links=links, start_time=start
            )
            try:
                if message is not None:
                    self._message_attributes(span, message)
                if failure is not None:
                    self._failed(span, failure)
            finally:
                span.end()

        return traced  # type: ignore[return-value]

    def process_listener(self, listener: Any) -> Callable[[Message], None]:
        """The listener, called inside a CONSUMER ``process`` span whose parent is the
        message's creation context."""
        trace = self._trace
        tracer = self._tracer

        def start(message: Message) -> Any:
            name, attributes = self._names("process", self._destination)
            creation = self.creation_context(message)
            parent = None
            links = []
            if creation is not None:
                parent = trace.set_span_in_context(trace.NonRecordingSpan(creation))
                links.append(trace.Link(creation))
            span = tracer.start_span(
                name, context=parent, kind=self._kind.CONSUMER, attributes=attributes, links=links
            )
            _quietly("annotating a process span", self._message_attributes, span, message)
            return span

        def invoke(message: Message) -> None:
            if hasattr(listener, "onMessage"):
                listener.onMessage(message)
            else:
                listener(message)

        def call(message: Message) -> None:
            # Only the listener's own exception may fail the delivery (and redeliver it).
            span = _quietly("starting a process span", start, message)
            if span is None:
                invoke(message)
                return
            try:
                with trace.use_span(
                    span, end_on_exit=False, record_exception=False, set_status_on_exception=False
                ):
                    invoke(message)
            except BaseException as exc:
                _quietly("recording a failed listener call", self._failed, span, exc)
                raise
            finally:
                _quietly("ending a process span", span.end)

        return call

    def wrap_deliver_batch(self, deliver: G) -> G:
        """A CONSUMER ``process`` span around each BatchMessageListener call (the consumer's
        ``_deliver_batch(listener, batch)``), linked to every message's creation context."""
        trace = self._trace
        tracer = self._tracer

        def start(batch: list[Any]) -> Any:
            name, attributes = self._names("process", self._destination)
            attributes["messaging.batch.message_count"] = len(batch)
            links = []
            for inbound in batch:
                creation = self.creation_context(inbound.message)
                if creation is not None:
                    links.append(trace.Link(creation))
            return tracer.start_span(
                name, kind=self._kind.CONSUMER, attributes=attributes, links=links
            )

        def traced(listener: Any, batch: list[Any]) -> Any:
            span = _quietly("starting a batch process span", start, batch)
            if span is None:
                return deliver(listener, batch)

            def call(batch_messages: list[Message]) -> None:
                try:
                    if hasattr(listener, "onMessages"):
                        listener.onMessages(batch_messages)
                    else:
                        listener(batch_messages)
                except BaseException as exc:
                    _quietly("recording a failed batch listener call", self._failed, span, exc)
                    raise

            try:
                with trace.use_span(
                    span, end_on_exit=False, record_exception=False, set_status_on_exception=False
                ):
                    return deliver(call, batch)
            finally:
                _quietly("ending a batch process span", span.end)

        return traced  # type: ignore[return-value]


def traced_send(connection: Connection, send: F) -> F:
    """``send`` wrapped in a PRODUCER span, or ``send`` itself when the API is missing."""
    api = _load()
    if api is None:
        return send
    scope = _quietly("setting up a producer's tracer", TracingScope, api, connection)
    return send if scope is None else scope.wrap_send(send)


def for_consumer(connection: Connection, destination: Destination) -> ConsumerTracing | None:
    """The consumer's span factory, or None when tracing is off or the API is missing."""
    if not connection.options.tracing:
        return None
    api = _load()
    if api is None:
        return None
    # A tracer provider that cannot give a tracer (a misconfigured one raises StopIteration)
    # leaves the consumer untraced rather than failing createConsumer.
    return _quietly("setting up a consumer's tracer", ConsumerTracing, api, connection, destination)
