"""jmspy on the wire: a consumer takes the transfers of one engine pass at once, a
MessageListener gets a bounded run of messages per turn of its session's thread, and
acceptances are settled together. None of that may lose, repeat or reorder a message, delay a
transfer past an outcome that came after it, or starve another consumer of the session.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message as AmqpMessage

from jmspy import AUTO_ACKNOWLEDGE, Message, TextMessage
from jmspy.prefetch import LISTENER_RUN

from .client_support import (
    Clients,
    clients_fixture,
    wait_for_disposition,
    wait_until,
    wire_barrier,
)
from .peer import ScriptedPeer
from .peer_records import AttachRecord

WAIT_S = 30.0


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _enqueue(peer: ScriptedPeer, address: str, count: int) -> list[bytes]:
    tags = [f"{address}-{i}".encode() for i in range(count)]
    for i, tag in enumerate(tags):
        peer.enqueue(address, AmqpMessage(body=f"{address}:{i}"), tag=tag)
    return tags


class _Recorder:
    """A MessageListener recording the text of every message, in order."""

    def __init__(self, expected: int, log: list[str], lock: threading.Lock) -> None:
        self.expected = expected
        self.log = log
        self.lock = lock
        self.count = 0
        self.done = threading.Event()

    def onMessage(self, message: Message) -> None:
        assert isinstance(message, TextMessage)
        with self.lock:
            self.log.append(message.getText() or "")
            self.count += 1
            if self.count == self.expected:
                self.done.set()


def test_a_listener_run_accepts_every_message_exactly_once(peer: ScriptedPeer, clients: Clients):
    tags = _enqueue(peer, "q", 200)
    connection = clients.connect(peer)
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("q"))
    log: list[str] = []
    recorder = _Recorder(200, log, threading.Lock())
    consumer.setMessageListener(recorder)

    connection.start()

    assert recorder.done.wait(WAIT_S), f"the listener got {recorder.count} of 200"
    assert log == [f"q:{i}" for i in range(200)]
    wait_for_disposition(peer, tags[-1], timeout=WAIT_S)
    wire_barrier(connection)
    accepted = [d for d in peer.dispositions if d.kind == "accepted"]
    assert all(d.settled and d.role == "receiver" for d in accepted)
    settled_tags = [t for d in accepted for t in d.delivery_tags]
    assert sorted(settled_tags) == sorted(tags)  # each exactly once
    # Settled together: consecutive acceptances leave as disposition ranges.
    assert len(accepted) < len(tags)


def test_transfers_are_buffered_before_a_later_answer_wakes_the_application(
    peer: ScriptedPeer, clients: Clients
):
    """Whatever the peer sent before answering a request is in the consumer's buffer when the
    request returns: a local-only receiveNoWait then finds every message, in order."""
    _enqueue(peer, "q", 50)
    connection = clients.connect(peer, start=True, **{"jms.receiveNoWaitLocalOnly": True})
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("q"))

    # A session begin, answered after the transfers the consumer's credit let the peer send.
    wire_barrier(connection)

    texts: list[Any] = []
    for _ in range(50):
        message = consumer.receiveNoWait()
        assert message is not None, f"only {len(texts)} of 50 were buffered"
        texts.append(message.getBody(str))
    assert texts == [f"q:{i}" for i in range(50)]


class _TwoListeners:
    """Listeners "a" and "b" on one session, each expecting ``count`` messages, recording
    into one log."""

    def __init__(self, session: Any, destinations: list[Any], count: int) -> None:
        self.count = count
        self.log: list[str] = []
        lock = threading.Lock()
        self.recorders = []
        for destination, selector in destinations:
            consumer = session.createConsumer(destination, selector)
            recorder = _Recorder(count, self.log, lock)
            consumer.setMessageListener(recorder)
            self.recorders.append(recorder)

    def assert_took_turns(self) -> None:
        """Each got its messages in order, and neither got all of them before the other got
        any (each turn delivers at most LISTENER_RUN)."""
        for recorder in self.recorders:
            assert recorder.done.wait(WAIT_S), f"a listener got {recorder.count} of {self.count}"
        log, last = self.log, self.count - 1
        for name in ("a", "b"):
            mine = [t for t in log if t.startswith(f"{name}:")]
            assert mine == [f"{name}:{i}" for i in range(self.count)]
        first_of = {name: log.index(f"{name}:0") for name in ("a", "b")}
        last_of = {name: log.index(f"{name}:{last}") for name in ("a", "b")}
        took_turns = first_of["a"] < last_of["b"] and first_of["b"] < last_of["a"]
        assert took_turns, log[: 2 * LISTENER_RUN]


def test_listeners_of_one_session_take_turns(peer: ScriptedPeer, clients: Clients):
    """Two listeners with full buffers on one session take turns."""
    count = 3 * LISTENER_RUN
    _enqueue(peer, "a", count)
    _enqueue(peer, "b", count)
    connection = clients.connect(peer)
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    queues = [(session.createQueue(name), None) for name in ("a", "b")]
    listeners = _TwoListeners(session, queues, count)
    wire_barrier(connection)  # every transfer is buffered now

    connection.start()

    listeners.assert_took_turns()


def test_listeners_fed_one_message_at_a_time_take_turns_too(make_peer: Any, clients: Clients):
    """Transfers handed over one at a time (here topic subscribers whose selector the client
    evaluates, on a broker that cannot filter) queue one turn per listener, not one per
    message: turns queued per message let the first listener deliver everything it held while
    the other waited."""
    peer = make_peer(properties={"product": "RabbitMQ"}, offered_capabilities=())
    count = 3 * LISTENER_RUN
    connection = clients.connect(peer)
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    topics = [(session.createTopic(name), "colour = 'red'") for name in ("a", "b")]
    listeners = _TwoListeners(session, topics, count)
    wire_barrier(connection)  # both attaches recorded
    addresses = [
        r.source.address
        for r in peer.records()
        if isinstance(r, AttachRecord) and r.role == "receiver" and r.source is not None
    ]
    assert len(addresses) == 2, addresses
    for address, name in zip(addresses, ("a", "b"), strict=True):
        assert address is not None
        for i in range(count):
            peer.enqueue(address, AmqpMessage(body=f"{name}:{i}", properties={"colour": "red"}))
    wire_barrier(connection)  # every transfer is buffered now

    connection.start()

    listeners.assert_took_turns()


def test_close_from_another_thread_ends_a_listener_run_after_the_current_message(
    peer: ScriptedPeer, clients: Clients
):
    """close() from another thread waits for the message being delivered (not for the rest
    of the run)."""
    _enqueue(peer, "q", 100)
    connection = clients.connect(peer)
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("q"))
    entered = threading.Event()
    release = threading.Event()
    delivered: list[str] = []

    def on_message(message: Message) -> None:
        delivered.append(message.getBody(str))
        entered.set()
        release.wait(WAIT_S)

    consumer.setMessageListener(on_message)
    wire_barrier(connection)  # all 100 are buffered: a run could go on for LISTENER_RUN
    connection.start()
    assert entered.wait(WAIT_S)
    closer = threading.Thread(target=consumer.close)
    closer.start()
    wait_until(lambda: consumer._close_requested, WAIT_S, "close() to take effect")
    # The listener is still in onMessage: close() has not returned (JMS 2.0, 4.4.16).
    assert closer.is_alive()

    release.set()
    closer.join(WAIT_S)

    assert not closer.is_alive()
    assert delivered == ["q:0"]


def test_recover_from_a_listener_puts_the_message_back_before_the_rest_of_its_run(
    peer: ScriptedPeer, clients: Clients
):
    """A listener run holds up to LISTENER_RUN messages taken from the buffer: a recover()
    from onMessage must put the recovered message back in front of them, not behind."""
    count = 10
    _enqueue(peer, "q", count)
    connection = clients.connect(peer)
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("q"))
    log: list[tuple[str, bool]] = []
    done = threading.Event()

    def on_message(message: Message) -> None:
        log.append((message.getBody(str), message.getJMSRedelivered()))
        if len(log) == 2:  # the second message, first time: recovered
            session.recover()
        if len(log) == count + 1:
            done.set()

    consumer.setMessageListener(on_message)
    wire_barrier(connection)  # all ten are buffered: one run takes them all
    connection.start()
    assert done.wait(WAIT_S), log

    assert log == [("q:0", False), ("q:1", False), ("q:1", True)] + [
        (f"q:{i}", False) for i in range(2, count)
    ]
