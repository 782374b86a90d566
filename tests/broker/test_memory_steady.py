"""Nothing is kept per message or per connection: after a warm-up, thousands more messages
(every body type, every property type, through the codec as installed, built with mypyc or
not) and dozens more connection cycles leave the interpreter's live memory blocks where they
were.

``sys.getallocatedblocks()`` counts the blocks Python's allocator holds, objects created by
the built codec included; after a full collection it moves by a handful between identical
rounds. A reference kept per message (a cache keyed by message ID, a delivery never let go, a
leaked reference in compiled code) adds at least one block per message, thousands here.
Counting blocks rather than RSS keeps the test exact: RSS moves with the allocator's arenas
and the machine's load.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

import jmspy
from jmspy import DeliveryMode

# Allowed growth of live blocks across the measured part: a tenth of a block per message (one
# object kept per message is ten times that), one per connection cycle (a connection that is
# kept keeps hundreds: its threads, socket, proton objects).
_PER_MESSAGE = 0.1
_PER_CONNECTION = 1.0
# Allowed growth per cycle of the long-lived connection test (see there).
_PROTON_KEEPS_PER_CYCLE = 20.0


def _live_blocks() -> int:
    for _ in range(3):  # cycles freed by one pass may release more on the next
        gc.collect()
    return sys.getallocatedblocks()


def _mixed_message(session: Any, i: int) -> Any:
    kind = i % 5
    if kind == 0:
        message = session.createBytesMessage()
        message.writeBytes(bytes([i % 256]) * 200)
    elif kind == 1:
        message = session.createTextMessage(f"héllo {i}")
    elif kind == 2:
        message = session.createMapMessage()
        message.setString("text", "x" * 10)
        message.setLong("long", i)
        message.setDouble("double", 1.5)
        message.setBytes("bytes", b"\x00\x01")
    elif kind == 3:
        message = session.createStreamMessage()
        message.writeInt(i)
        message.writeString("s")
        message.writeBoolean(True)
    else:
        message = session.createMessage()
    message.setIntProperty("i", i)
    message.setStringProperty("s", f"v{i}")
    message.setDoubleProperty("d", 0.5)
    message.setBooleanProperty("b", True)
    message.setLongProperty("l", 1 << 40)
    message.setJMSCorrelationID(f"corr-{i}")
    message.setJMSType("t")
    return message


def _assert_flat(
    run: Callable[[int, int], None], warmup: int, measured: int, what: str, per_unit: float
) -> None:
    run(0, warmup)
    before = _live_blocks()
    run(warmup, warmup + measured)
    grown = _live_blocks() - before
    allowed = measured * per_unit
    assert grown < allowed, (
        f"{grown} more live memory blocks after {measured} {what} than before them "
        f"(allowed: under {allowed:.0f}); something is kept per {what[:-1]}"
    )


def test_send_and_receive_keep_no_memory_per_message(
    factory: jmspy.ConnectionFactory, unique_name: str
) -> None:
    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        producer = session.createProducer(queue)
        producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)
        consumer = session.createConsumer(queue)
        connection.start()

        def run(first: int, end: int) -> None:
            for i in range(first, end):
                producer.send(_mixed_message(session, i))
                received = consumer.receive(10000)
                assert received is not None, f"message {i} did not arrive"
                assert received.getIntProperty("i") == i
                assert received.getStringProperty("s") == f"v{i}"
                received.getJMSMessageID()
                list(received.getPropertyNames())

        _assert_flat(run, warmup=1000, measured=4000, what="messages", per_unit=_PER_MESSAGE)


def test_listener_and_transactions_keep_no_memory_per_message(
    factory: jmspy.ConnectionFactory, unique_name: str
) -> None:
    """A listener in a transacted session, committing every 50 messages: the dispatch
    thread, the transaction's acceptances and the settled deliveries are all let go."""
    with factory.createConnection() as connection:
        sending = connection.createSession()
        queue = sending.createQueue(unique_name)
        producer = sending.createProducer(queue)
        producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)
        listening = connection.createSession(jmspy.SESSION_TRANSACTED)
        consumer = listening.createConsumer(queue)
        lock = threading.Lock()
        state = {"seen": 0, "target": 0}
        reached = threading.Event()

        def on_message(message: Any) -> None:
            with lock:
                state["seen"] += 1
                if state["seen"] % 50 == 0:
                    listening.commit()
                if state["seen"] >= state["target"]:
                    reached.set()

        consumer.setMessageListener(on_message)
        connection.start()

        def run(first: int, end: int) -> None:
            with lock:
                state["target"] = end
                reached.clear()
            for i in range(first, end):
                producer.send(_mixed_message(sending, i))
            assert reached.wait(60), f"{state['seen']} of {end} messages reached the listener"

        _assert_flat(run, warmup=1000, measured=4000, what="messages", per_unit=_PER_MESSAGE)


def test_connection_cycles_keep_no_memory_per_connection(
    factory: jmspy.ConnectionFactory, unique_name: str
) -> None:
    """Open, send, receive, close: threads, sockets, proton objects and the connection's
    registrations all go with it."""

    def run(first: int, end: int) -> None:
        for i in range(first, end):
            with factory.createConnection() as connection:
                session = connection.createSession()
                queue = session.createQueue(unique_name)
                session.createProducer(queue).send(session.createTextMessage(str(i)))
                consumer = session.createConsumer(queue)
                connection.start()
                received = consumer.receive(10000)
                assert received is not None and received.getText() == str(i)

    _assert_flat(run, warmup=10, measured=40, what="connections", per_unit=_PER_CONNECTION)


def test_a_long_lived_connection_keeps_nothing_per_consumer_producer_or_session(
    factory: jmspy.ConnectionFactory, unique_name: str
) -> None:
    """Consumers, producers and sessions opened and closed on one connection for as long as it
    lives: proton keeps a link or a session it was never asked to free as long as the
    connection, with what jmspy hung on it, so each consumer kept about 90 blocks (16 KiB) and
    each session 20 (5 KiB) before jmspy let go of its objects there."""
    with factory.createConnection() as connection:
        connection.start()
        main = connection.createSession()
        queue = main.createQueue(unique_name)
        producer = main.createProducer(queue)

        def run(first: int, end: int) -> None:
            for i in range(first, end):
                consumer = main.createConsumer(queue)
                producer.send(main.createTextMessage(str(i)))
                received = consumer.receive(10000)
                assert received is not None and received.getText() == str(i)
                consumer.close()
                main.createProducer(queue).close()
                session = connection.createSession()
                session.createConsumer(session.createQueue(unique_name)).close()
                session.close()

        # Keeping jmspy's consumer, producer or session objects cost about 300 blocks per cycle,
        # proton's links and sessions (never freed) about 12 more.
        _assert_flat(run, warmup=20, measured=200, what="cycles", per_unit=_PROTON_KEEPS_PER_CYCLE)


class _Marker:
    """Hung on a proton link's or session's record: it goes when proton finalizes the object."""


def test_proton_finalizes_the_links_and_sessions_closed_on_a_long_lived_connection(
    factory: jmspy.ConnectionFactory, unique_name: str
) -> None:
    """Python's block count does not see proton's C memory: a consumer and a session opened and
    closed on one connection each left their C link or session (3.6 KiB and 11 KiB of RSS per
    cycle, measured) until the connection closed. Each proton object here carries a marker in
    its record; proton frees the record when it finalizes the object, and the marker goes."""
    markers: list[weakref.ref[_Marker]] = []

    def mark(proton_object: Any) -> None:
        marker = _Marker()
        proton_object.jmspy_test_marker = marker
        markers.append(weakref.ref(marker))

    with factory.createConnection() as connection:
        connection.start()
        main = connection.createSession()
        queue = main.createQueue(unique_name)
        for _ in range(30):
            consumer = main.createConsumer(queue)
            mark(consumer._receiver.link)
            consumer.close()
            session = connection.createSession()
            session_consumer = session.createConsumer(session.createQueue(unique_name))
            mark(session_consumer._receiver.link)
            mark(session._amqp._proton)
            session.close()
        del consumer, session, session_consumer
        deadline = time.monotonic() + 30.0
        while True:
            gc.collect()
            kept = sum(1 for marker in markers if marker() is not None)
            if kept == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.05)  # the engine lets go on its own turns (a deadline poll)
        assert kept == 0, (
            f"proton still keeps {kept} of the {len(markers)} links and sessions closed on the "
            "connection, 30 s after the last"
        )
