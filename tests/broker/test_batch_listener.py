"""BatchMessageListener (JMS_SPEC-36) against Artemis.

Timing tolerance: a partial batch is delivered no earlier than ``batchTimeout`` after its first
message arrived and no later than ``batchTimeout + 1000 ms`` (2-core machine, shared with the
broker).
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest

import jmspy
from jmspy import DeliveryMode

LATE_S = 1.0


class Recorder:
    """Records each batch (texts, redelivery flags, delivery counts, thread, time)."""

    def __init__(self, expected_messages: int) -> None:
        self.batches: list[list[str]] = []
        self.flags: list[list[tuple[bool, int]]] = []
        self.times: list[float] = []
        self.threads: set[str] = set()
        self.expected = expected_messages
        self.done = threading.Event()
        self.fail_first = False
        self.on_batch: Any = None

    def onMessages(self, messages: list[Any]) -> None:
        self.times.append(time.monotonic())
        self.threads.add(threading.current_thread().name)
        self.batches.append([m.getText() for m in messages])
        self.flags.append(
            [(m.getJMSRedelivered(), m.getIntProperty("JMSXDeliveryCount")) for m in messages]
        )
        if self.on_batch is not None:
            self.on_batch(messages)
        if sum(len(b) for b in self.batches) >= self.expected:
            self.done.set()
        if self.fail_first and len(self.batches) == 1:
            raise RuntimeError("batch failed on purpose")


def _send(session: Any, queue: Any, texts: list[str]) -> None:
    producer = session.createProducer(queue)
    producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)
    for text in texts:
        producer.send(session.createTextMessage(text))
    producer.close()


def test_batches_never_exceed_the_size_under_random_arrival(factory: Any, unique_name: str) -> None:
    rng = random.Random(36)
    for run in range(5):
        size = rng.choice([1, 3, 7, 20])
        total = rng.randint(10, 60)
        recorder = Recorder(total)
        with factory.createConnection() as connection:
            session = connection.createSession()
            queue = session.createQueue(f"{unique_name}-{run}")
            consumer = session.createConsumer(queue)
            consumer.setBatchMessageListener(recorder, size, rng.choice([0, 20, 100]))
            connection.start()
            sender = connection.createSession()
            producer = sender.createProducer(queue)
            for i in range(total):
                producer.send(sender.createTextMessage(str(i)))
                if rng.random() < 0.2:
                    time.sleep(rng.random() * 0.02)  # uneven arrival, not synchronisation
            assert recorder.done.wait(10), (run, recorder.batches)
        flat = [int(x) for batch in recorder.batches for x in batch]
        assert flat == list(range(total)), "every message once, in delivery order"
        assert all(1 <= len(batch) <= size for batch in recorder.batches), (size, recorder.batches)


def test_full_batch_delivered_at_once_and_partial_after_timeout(
    factory: Any, unique_name: str
) -> None:
    recorder = Recorder(13)
    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        _send(session, queue, [str(i) for i in range(13)])
        consumer = session.createConsumer(queue)
        consumer.setBatchMessageListener(recorder, 5, 800)
        # Wait until everything is in the local buffer so the timing is the listener's.
        deadline = time.monotonic() + 10
        while consumer.getPrefetchedCount() < 13 and time.monotonic() < deadline:
            time.sleep(0.01)
        started = time.monotonic()
        connection.start()
        assert recorder.done.wait(10)
    assert [len(b) for b in recorder.batches] == [5, 5, 3]
    # The two full batches go at once; the partial one waits for the timeout, which runs
    # from the arrival of its first message (before start), so it is due right away too.
    assert recorder.times[1] - started < LATE_S
    assert len(recorder.threads) == 1


def test_partial_batch_waits_for_the_timeout(factory: Any, unique_name: str) -> None:
    recorder = Recorder(2)
    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        consumer = session.createConsumer(queue)
        consumer.setBatchMessageListener(recorder, 10, 700)
        connection.start()
        sender = connection.createSession()
        _send(sender, queue, ["a", "b"])
        sent = time.monotonic()
        assert recorder.done.wait(10)
    assert recorder.batches == [["a", "b"]]
    waited = recorder.times[0] - sent
    assert 0.7 - 0.05 <= waited <= 0.7 + LATE_S, waited


def test_timeout_zero_delivers_what_is_available(factory: Any, unique_name: str) -> None:
    recorder = Recorder(1)
    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        consumer = session.createConsumer(queue)
        consumer.setBatchMessageListener(recorder, 100, 0)
        connection.start()
        _send(connection.createSession(), queue, ["only"])
        assert recorder.done.wait(5)
    assert recorder.batches == [["only"]]


def test_illegal_states_and_arguments(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    consumer = session.createConsumer(session.createQueue(unique_name))
    recorder = Recorder(1)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(jmspy.IllegalArgumentException) as info:
            consumer.setBatchMessageListener(recorder, bad, 10)
        assert repr(bad) in str(info.value)
    with pytest.raises(jmspy.IllegalArgumentException):
        consumer.setBatchMessageListener(recorder, 10, -1)
    consumer.setBatchMessageListener(recorder, 10, 10)
    with pytest.raises(jmspy.IllegalStateException):
        consumer.setMessageListener(lambda m: None)
    with pytest.raises(jmspy.IllegalStateException):
        consumer.receive(10)
    consumer.setBatchMessageListener(None)
    consumer.setMessageListener(lambda m: None)
    with pytest.raises(jmspy.IllegalStateException):
        consumer.setBatchMessageListener(recorder, 10, 10)


def test_jms_consumer_illegal_state_is_runtime(factory: Any, unique_name: str) -> None:
    with factory.createContext() as context:
        consumer = context.createConsumer(context.createQueue(unique_name))
        consumer.setMessageListener(lambda m: None)
        with pytest.raises(jmspy.IllegalStateRuntimeException):
            consumer.setBatchMessageListener(Recorder(1), 5, 0)


def test_auto_ack_failed_batch_is_redelivered_whole(factory: Any, unique_name: str) -> None:
    recorder = Recorder(6)
    recorder.fail_first = True
    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        _send(session, queue, ["a", "b", "c"])
        consumer = session.createConsumer(queue)
        consumer.setBatchMessageListener(recorder, 3, 500)
        connection.start()
        assert recorder.done.wait(10)
    assert recorder.batches[:2] == [["a", "b", "c"], ["a", "b", "c"]]
    assert recorder.flags[0] == [(False, 1)] * 3
    assert recorder.flags[1] == [(True, 2)] * 3
    # Acknowledged after the successful call: nothing left.
    with factory.createConnection() as connection:
        connection.start()
        s = connection.createSession()
        assert s.createConsumer(s.createQueue(unique_name)).receive(300) is None


def test_dups_ok_acknowledges_lazily_but_surely(factory: Any, unique_name: str) -> None:
    recorder = Recorder(50)
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.DUPS_OK_ACKNOWLEDGE)
        queue = session.createQueue(unique_name)
        _send(session, queue, [str(i) for i in range(50)])
        consumer = session.createConsumer(queue)
        consumer.setBatchMessageListener(recorder, 10, 50)
        connection.start()
        assert recorder.done.wait(10)
        consumer.close()
    with factory.createConnection() as connection:
        connection.start()
        s = connection.createSession()
        assert s.createConsumer(s.createQueue(unique_name)).receive(300) is None


def test_client_ack_acknowledges_everything_delivered(factory: Any, unique_name: str) -> None:
    recorder = Recorder(6)
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
        queue = session.createQueue(unique_name)
        _send(session, queue, [str(i) for i in range(6)])
        consumer = session.createConsumer(queue)
        kept: list[Any] = []
        recorder.on_batch = kept.extend
        consumer.setBatchMessageListener(recorder, 3, 100)
        connection.start()
        assert recorder.done.wait(10)
        kept[0].acknowledge()  # acknowledges all six
    with factory.createConnection() as connection:
        connection.start()
        s = connection.createSession()
        assert s.createConsumer(s.createQueue(unique_name)).receive(300) is None


def test_client_ack_without_acknowledge_redelivers(factory: Any, unique_name: str) -> None:
    recorder = Recorder(3)
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
        queue = session.createQueue(unique_name)
        _send(session, queue, ["x", "y", "z"])
        session.createConsumer(queue).setBatchMessageListener(recorder, 3, 100)
        connection.start()
        assert recorder.done.wait(10)
    with factory.createConnection() as connection:
        connection.start()
        s = connection.createSession()
        consumer = s.createConsumer(s.createQueue(unique_name))
        again = [consumer.receive(5000) for _ in range(3)]
        assert [m.getText() for m in again] == ["x", "y", "z"]
        assert all(m.getJMSRedelivered() for m in again)


def test_transacted_batch_commit_and_rollback(factory: Any, unique_name: str) -> None:
    recorder = Recorder(6)
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.SESSION_TRANSACTED)
        queue = session.createQueue(unique_name)
        setup = connection.createSession()
        _send(setup, queue, ["a", "b", "c"])

        def decide(messages: list[Any]) -> None:
            if len(recorder.batches) == 1:
                session.rollback()  # the first time: undo, the broker redelivers
            else:
                session.commit()

        recorder.on_batch = decide
        session.createConsumer(queue).setBatchMessageListener(recorder, 3, 300)
        connection.start()
        assert recorder.done.wait(10)
    assert recorder.batches[0] == ["a", "b", "c"]
    assert sorted(recorder.batches[1]) == ["a", "b", "c"]
    assert all(flag == (True, 2) for flag in recorder.flags[1])
    with factory.createConnection() as connection:
        connection.start()
        s = connection.createSession()
        assert s.createConsumer(s.createQueue(unique_name)).receive(300) is None


def test_no_batch_while_stopped_and_close_from_inside(factory: Any, unique_name: str) -> None:
    recorder = Recorder(3)
    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        consumer = session.createConsumer(queue)
        recorder.on_batch = lambda messages: consumer.close()
        consumer.setBatchMessageListener(recorder, 3, 0)
        _send(session, queue, ["1", "2", "3", "4", "5", "6"])
        assert not recorder.done.wait(0.5), "a stopped connection delivers no batch"
        connection.start()
        assert recorder.done.wait(10)
        # Closed from inside onMessages: that batch was acknowledged, nothing else delivered,
        # undelivered prefetched messages went back to the broker.
        rest = connection.createSession().createConsumer(session.createQueue(unique_name))
        texts = []
        while (m := rest.receive(1000)) is not None:
            texts.append(m.getText())
    assert recorder.batches == [["1", "2", "3"]]
    assert texts == ["4", "5", "6"]


def test_expired_messages_never_appear_in_a_batch(factory: Any, unique_name: str) -> None:
    recorder = Recorder(2)
    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        consumer = session.createConsumer(queue)
        producer = session.createProducer(queue)
        producer.send(session.createTextMessage("keep1"))
        producer.send(session.createTextMessage("expire"), DeliveryMode.PERSISTENT, 4, 300)
        producer.send(session.createTextMessage("keep2"))
        deadline = time.monotonic() + 10
        while consumer.getPrefetchedCount() < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        expiry_passed = time.monotonic() + 0.4
        while time.monotonic() < expiry_passed:
            time.sleep(0.02)  # let the middle message's expiration pass while buffered
        consumer.setBatchMessageListener(recorder, 10, 0)
        connection.start()
        assert recorder.done.wait(5)
    assert [t for b in recorder.batches for t in b] == ["keep1", "keep2"]
