"""transport.sharedEventLoopThreads against Artemis: many connections on a few shared threads
deliver every message once, batch listeners get their timed partial batches from the shared
dispatch pool, and a stopped connection holds its messages until it is started again."""

from __future__ import annotations

import threading
import time
from typing import Any

import jmspy
from jmspy import DeliveryMode


def _shared_factory(broker: Any, threads: int = 2) -> jmspy.ConnectionFactory:
    return jmspy.ConnectionFactory(
        broker.url,
        broker.username,
        broker.password,
        connect_timeout=30000,
        shared_event_loop_threads=threads,
    )


def _send(factory: jmspy.ConnectionFactory, queue: str, count: int) -> None:
    with factory.createConnection() as connection:
        session = connection.createSession()
        producer = session.createProducer(session.createQueue(queue))
        producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)
        for i in range(count):
            producer.send(session.createTextMessage(str(i)))
        producer.close()


def _listen(
    factory: jmspy.ConnectionFactory,
    queue: str,
    count: int,
    on_message: Any,
    connections: list[jmspy.Connection],
) -> None:
    """``count`` started connections, each with a listener on ``queue``, added to
    ``connections`` one by one (so the caller closes whatever was opened)."""
    for _ in range(count):
        connection = factory.createConnection()
        connections.append(connection)
        session = connection.createSession()
        consumer = session.createConsumer(session.createQueue(queue))
        consumer.setMessageListener(on_message)
        connection.start()


def _named(prefix: str) -> int:
    return sum(1 for t in threading.enumerate() if t.name.startswith(prefix))


def test_twenty_connections_on_two_threads_deliver_every_message_once(
    broker: Any, unique_name: str
) -> None:
    factory = _shared_factory(broker, threads=2)
    seen: list[str] = []
    lock = threading.Lock()
    done = threading.Event()
    total = 400

    def on_message(message: jmspy.Message) -> None:
        with lock:
            seen.append(str(message.getBody(str)))
            if len(seen) >= total:
                done.set()

    loops_before = _named("jmspy-shared-loop-2-")
    dispatchers_before = _named("jmspy-shared-dispatch-2-")
    connections: list[jmspy.Connection] = []
    try:
        _listen(factory, unique_name, 20, on_message, connections)
        _send(factory, unique_name, total)
        assert done.wait(120), f"{len(seen)} of {total} messages arrived"
        assert sorted(seen, key=int) == [str(i) for i in range(total)]
        # Counted against the threads of those names before the test: a unit test's own
        # DispatchPool(2), run earlier in the same process, leaves two of its daemon threads.
        assert _named("jmspy-shared-loop-2-") - loops_before <= 2
        assert _named("jmspy-shared-dispatch-2-") - dispatchers_before <= 2
    finally:
        for connection in connections:
            connection.close()


def test_deadline_heap_stays_small_while_busy_engines_are_stepped(
    broker: Any, unique_name: str
) -> None:
    """A busy engine is stepped once per message or so, its deadline about 5 s ahead: a heap
    entry per step would leave thousands of stale entries (each popped later at O(log n)),
    so only a deadline earlier than the engine's live entry is pushed."""
    from jmspy._amqp import event_loop

    factory = _shared_factory(broker, threads=1)
    received = threading.Semaphore(0)
    total = 2000
    connections: list[jmspy.Connection] = []
    try:
        _listen(factory, unique_name, 10, lambda message: received.release(), connections)
        _send(factory, unique_name, total)
        for count in range(total):
            assert received.acquire(timeout=60), f"{count} of {total} messages arrived"
        (loop,) = event_loop._groups[1]
        # One live entry per engine (11 here, the sender's included), plus the few left
        # behind when a step brings an engine's deadline forward.
        assert len(loop._deadlines) < 100, len(loop._deadlines)
    finally:
        for connection in connections:
            connection.close()


def test_batch_listener_gets_its_timed_partial_batch_from_the_pool(
    broker: Any, unique_name: str
) -> None:
    """Fewer messages than the batch size: the batch comes when batchTimeout runs out (the
    pool's timer), with every message in it."""
    factory = _shared_factory(broker)
    batches: list[list[str]] = []
    arrived = threading.Event()

    def on_messages(messages: list[jmspy.Message]) -> None:
        batches.append([str(m.getBody(str)) for m in messages])
        if sum(len(b) for b in batches) >= 5:
            arrived.set()

    with factory.createConnection() as connection:
        session = connection.createSession()
        consumer = session.createConsumer(session.createQueue(unique_name))
        consumer.setBatchMessageListener(
            type("L", (), {"onMessages": staticmethod(on_messages)})(),
            batchSize=100,
            batchTimeout=300,
        )
        connection.start()
        _send(factory, unique_name, 5)
        assert arrived.wait(60), f"batches so far: {batches}"
    assert [m for b in batches for m in b] == ["0", "1", "2", "3", "4"]


def test_stopped_connection_holds_messages_until_started(broker: Any, unique_name: str) -> None:
    factory = _shared_factory(broker)
    received: list[str] = []
    first = threading.Event()
    rest = threading.Event()

    def on_message(message: jmspy.Message) -> None:
        received.append(str(message.getBody(str)))
        first.set()
        if len(received) >= 6:
            rest.set()

    with factory.createConnection() as connection:
        session = connection.createSession()
        consumer = session.createConsumer(session.createQueue(unique_name))
        consumer.setMessageListener(on_message)
        connection.start()
        _send(factory, unique_name, 1)
        assert first.wait(60)
        connection.stop()
        _send(factory, unique_name, 5)
        # The messages reach the consumer's buffer; none is delivered while stopped.
        deadline = time.monotonic() + 60
        while consumer.getPrefetchedCount() < 5 and time.monotonic() < deadline:
            rest.wait(0.05)
        assert consumer.getPrefetchedCount() == 5
        assert received == ["0"]
        connection.start()
        assert rest.wait(60), f"after start: {received}"
    assert received == ["0", "0", "1", "2", "3", "4"]
