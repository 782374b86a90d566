"""Every call bounded against a stalled broker; nothing of a closed connection left behind;
a frame too large for the broker refused for that call only.

The stalled broker is a real Artemis behind :class:`support_proxy.StallingProxy`: the TCP
connection stays open but nothing reaches either side once the proxy stalls. Bounds are
the documented ones plus a generous margin for a busy machine; each is far below what the
call would take if it waited for a per-step timeout (e.g. 60 s of amqp.drainTimeout).
"""

from __future__ import annotations

import gc
import logging
import threading
import time
import weakref
from collections.abc import Iterator
from typing import Any

import pytest
from support_proxy import StallingProxy

import jmspy

# Scheduling noise on a loaded 2-core machine; added to every documented bound below.
MARGIN_S = 1.5


@pytest.fixture
def proxy(broker: Any) -> Iterator[StallingProxy]:
    with StallingProxy(broker.host, broker.port) as p:
        yield p


class _FrameWatch(logging.Handler):
    """Sets ``seen`` when jmspy's frame trace (amqp.traceFrames) logs a line with every one of
    ``parts``: the wire's own signal, where no API call shows what a frame did."""

    def __init__(self, *parts: str) -> None:
        super().__init__(logging.DEBUG)
        self.parts = parts
        self.seen = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        line = record.getMessage()
        if all(part in line for part in self.parts):
            self.seen.set()


def _factory(broker: Any, proxy: StallingProxy, **options: Any) -> jmspy.ConnectionFactory:
    return jmspy.ConnectionFactory(proxy.url, broker.username, broker.password, **options)


def test_receive_with_a_timeout_and_receive_no_wait_return_on_time_when_the_broker_stalls(
    broker: Any, proxy: StallingProxy, unique_name: str
) -> None:
    # amqp.drainTimeout keeps its 60 s default: the receive calls must not wait for it.
    # amqp.traceFrames shows when the broker's late answer to the drain arrives.
    factory = _factory(broker, proxy, close_timeout=1000, trace_frames=True)
    late_drain_answer = _FrameWatch("<- @flow", "drain=true")
    frames = logging.getLogger("jmspy.frames")
    level = frames.level
    frames.setLevel(logging.DEBUG)
    frames.addHandler(late_drain_answer)
    connection = factory.createConnection()
    try:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        consumer = session.createConsumer(queue)
        connection.start()
        assert consumer.receiveNoWait() is None  # a drain that the broker answers
        proxy.stall()

        started = time.monotonic()
        assert consumer.receive(1000) is None
        took_receive = time.monotonic() - started
        started = time.monotonic()
        assert consumer.receiveNoWait() is None
        took_no_wait = time.monotonic() - started

        bound = connection.options.receive_drain_timeout / 1000.0
        assert took_receive < 1.0 + bound + MARGIN_S, f"receive(1000) took {took_receive:.1f} s"
        assert took_no_wait < bound + MARGIN_S, f"receiveNoWait() took {took_no_wait:.1f} s"

        # The drain's answer arrives late; once it has, the next message must still flow.
        # (It is handled in the engine pass that read it, well before the send below, made
        # on a new connection, can reach the broker.)
        late_drain_answer.seen.clear()  # the answers before the stall do not count
        proxy.resume()
        assert late_drain_answer.seen.wait(30), "the drain was never answered"
        direct = jmspy.ConnectionFactory(broker.url, broker.username, broker.password)
        with direct.createConnection() as other:
            other_session = other.createSession()
            other_session.createProducer(other_session.createQueue(unique_name)).send(
                other_session.createTextMessage("after the stall")
            )
        started = time.monotonic()
        message = consumer.receive(30000)
        took = time.monotonic() - started
        assert message is not None and message.getText() == "after the stall"
        # Delivered on the restored credit window, not by the drain at the end of the wait.
        assert took < 10, f"the message took {took:.1f} s: the link was left without credit"
    finally:
        connection.close()
        frames.removeHandler(late_drain_answer)
        frames.setLevel(level)


def test_connection_close_against_a_stalled_broker_takes_one_close_timeout(
    broker: Any, proxy: StallingProxy, unique_name: str
) -> None:
    factory = _factory(broker, proxy, close_timeout=2000)
    earlier_threads = set(threading.enumerate())
    connection = factory.createConnection()
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    for _ in range(5):
        session.createProducer(queue)
        session.createConsumer(queue)
    started_by_connection = set(threading.enumerate()) - earlier_threads
    assert started_by_connection, "the connection runs no thread of its own (its engine)"
    proxy.stall()

    started = time.monotonic()
    connection.close()
    took = time.monotonic() - started

    assert took < 2.0 + MARGIN_S, f"close() took {took:.1f} s with a 2 s close timeout"
    alive = [t.name for t in started_by_connection if t.is_alive()]
    assert alive == [], f"threads of the connection outlived close(): {alive}"
    # The proxy reads even while stalled, so it sees the client end the TCP connection.
    assert proxy.client_closed.wait(10), "the socket is still open"


def test_session_and_consumer_close_against_a_stalled_broker_take_one_close_timeout(
    broker: Any, proxy: StallingProxy, unique_name: str
) -> None:
    factory = _factory(broker, proxy, close_timeout=2000)
    connection = factory.createConnection()
    try:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        consumer = session.createConsumer(queue)
        other = connection.createSession()
        for _ in range(4):
            other.createProducer(queue)
            other.createConsumer(queue)
        proxy.stall()

        started = time.monotonic()
        consumer.close()
        took_consumer = time.monotonic() - started
        started = time.monotonic()
        other.close()
        took_session = time.monotonic() - started

        assert took_consumer < 2.0 + MARGIN_S, f"consumer close took {took_consumer:.1f} s"
        assert took_session < 2.0 + MARGIN_S, f"session close took {took_session:.1f} s"
    finally:
        started = time.monotonic()
        connection.close()
        assert time.monotonic() - started < 2.0 + MARGIN_S


def test_a_silent_peer_is_detected_within_the_idle_timeout(
    broker: Any, proxy: StallingProxy
) -> None:
    factory = _factory(broker, proxy, **{"amqp.idleTimeout": 2000})
    connection = factory.createConnection()
    failures: list[tuple[float, jmspy.JMSException]] = []
    reported = threading.Event()

    def on_exception(error: jmspy.JMSException) -> None:
        failures.append((time.monotonic(), error))
        reported.set()

    try:
        connection.setExceptionListener(on_exception)
        connection.createSession()
        connection.start()
        proxy.stall()
        stalled_at = time.monotonic()
        assert reported.wait(30), "the dead peer was never reported"
        detected_at, error = failures[0]
        took = detected_at - stalled_at
        assert isinstance(error, jmspy.JMSException)
        assert "idle timeout expired" in str(error), str(error)
        assert "amqp.idleTimeout=2000 ms" in str(error), str(error)
        # The last frame arrived at most one heartbeat interval before the stall, so the
        # detection lands within 2 s of the stall; 2x (the old behaviour) is 4 s or more.
        assert took < 2.2 + 0.6, f"detected {took:.2f} s after the stall"
    finally:
        connection.close()


def _cycle(factory: jmspy.ConnectionFactory, queue_name: str) -> list[Any]:
    """One connect/send/receive/close cycle; returns weak references to what it created."""
    connection = factory.createConnection()
    session = connection.createSession()
    queue = session.createQueue(queue_name)
    session.createProducer(queue).send(session.createTextMessage("x"))
    consumer = session.createConsumer(queue)
    connection.start()
    message = consumer.receive(10000)
    assert message is not None and message.getText() == "x"
    amqp = connection._amqp
    assert amqp is not None
    refs = [
        weakref.ref(connection),
        weakref.ref(amqp),
        weakref.ref(amqp._proton),
        weakref.ref(amqp.engine.transport),
        weakref.ref(session),
        weakref.ref(consumer),
    ]
    connection.close()
    return refs


def test_nothing_of_a_closed_connection_stays_reachable(broker: Any, unique_name: str) -> None:
    factory = jmspy.ConnectionFactory(broker.url, broker.username, broker.password)
    refs = [ref for _ in range(3) for ref in _cycle(factory, unique_name)]
    gc.collect()
    alive = [ref() for ref in refs if ref() is not None]
    assert alive == [], f"still reachable after close: {[type(o).__name__ for o in alive]}"


def test_an_attach_larger_than_the_broker_frame_is_refused_for_that_call_only(
    broker: Any, unique_name: str
) -> None:
    factory = jmspy.ConnectionFactory(broker.url, broker.username, broker.password)
    with factory.createConnection() as connection:
        bystander = connection.createSession()
        queue = bystander.createQueue(unique_name)
        bystander_consumer = bystander.createConsumer(queue)
        connection.start()

        session = connection.createSession()
        huge = session.createQueue("q" + "x" * 100_000)
        with pytest.raises(jmspy.InvalidDestinationException, match="max frame size"):
            session.createConsumer(huge)
        with pytest.raises(jmspy.InvalidDestinationException, match="max frame size"):
            session.createProducer(huge)
        selector = "a = '" + "y" * 180_000 + "'"
        with pytest.raises(jmspy.InvalidSelectorException, match="max frame size"):
            session.createConsumer(queue, selector)

        # The connection and every session carry on.
        session.createProducer(queue).send(session.createTextMessage("still here"))
        message = bystander_consumer.receive(10000)
        assert message is not None and message.getText() == "still here"
