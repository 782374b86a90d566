"""Turns of listener dispatch: a batch listener's partial batch is delivered at its timeout even
while another consumer of the session keeps the dispatch thread busy; on the shared dispatch
pool a session's turn is one listener run, so a session with a backlog does not make another
session wait behind its whole backlog; replacing a MessageListener by a batch listener and back
loses no turn, even from inside onMessage; recover() from a listener keeps the credit window."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message as AmqpMessage

import jmspy
from jmspy.prefetch import LISTENER_RUN

from .client_support import Clients, clients_fixture, wait_until, wire_barrier
from .peer import ScriptedPeer

WAIT_S = 30.0


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def test_a_partial_batch_is_due_at_its_timeout_while_another_listener_is_busy(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """The session's thread looked at batch deadlines only when nothing else was ready: with
    a MessageListener of the same session working through a backlog, the partial batch waited
    for the whole backlog instead of its timeout."""
    backlog = 6 * LISTENER_RUN
    connection = clients.connect(peer)
    session = connection.createSession()
    batch_consumer = session.createConsumer(session.createQueue("qb"))
    busy_consumer = session.createConsumer(session.createQueue("qa"))
    for i in range(backlog):
        peer.enqueue("qa", AmqpMessage(body=f"a{i}"))
    peer.enqueue("qb", AmqpMessage(body="b0"))
    wait_until(
        lambda: (
            busy_consumer.getPrefetchedCount() == backlog
            and batch_consumer.getPrefetchedCount() == 1
        ),
        timeout=WAIT_S,
        what="every message buffered",
    )
    handled = 0
    at_batch: list[int] = []
    batch_done = threading.Event()

    def on_message(message: jmspy.Message) -> None:
        nonlocal handled
        handled += 1
        if handled == 1:
            # The first call outlasts the partial batch's timeout; the rest are quick.
            deadline = session._batch_deadlines.get(batch_consumer)
            assert deadline is not None, "the batch consumer had no turn before this one"
            wait_until(lambda: time.monotonic() > deadline, timeout=WAIT_S, what="the deadline")

    def on_messages(messages: list[jmspy.Message]) -> None:
        at_batch.append(handled)
        batch_done.set()

    connection.start()
    # One turn for each, in this order: the batch consumer's records its deadline.
    batch_consumer.setBatchMessageListener(on_messages, 100, 2000)
    wait_until(
        lambda: batch_consumer in session._batch_deadlines,
        timeout=WAIT_S,
        what="the partial batch waiting",
    )
    busy_consumer.setMessageListener(on_message)
    assert batch_done.wait(WAIT_S), "the partial batch was never delivered"
    # Due during the first run of the busy listener: at most its next run comes first.
    assert at_batch[0] <= 2 * LISTENER_RUN, f"delivered after {at_batch[0]} of {backlog}"


def test_a_session_with_a_backlog_lets_another_session_through_on_the_shared_pool(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """A session's turn on the pool went on while its queue of work was not empty: one
    listener with a backlog kept the pool thread for up to 64 runs of 64 messages."""
    backlog = 6 * LISTENER_RUN
    busy = clients.connect(peer, shared_event_loop_threads=1)
    other = clients.connect(peer, shared_event_loop_threads=1, start=True)
    busy_session = busy.createSession()
    other_session = other.createSession()
    busy_consumer = busy_session.createConsumer(busy_session.createQueue("qa"))
    for i in range(backlog):
        peer.enqueue("qa", AmqpMessage(body=f"a{i}"))
    wait_until(
        lambda: busy_consumer.getPrefetchedCount() == backlog,
        timeout=WAIT_S,
        what="the backlog buffered",
    )
    other_consumer = other_session.createConsumer(other_session.createQueue("qo"))
    handled = 0
    at_other: list[int] = []
    other_done = threading.Event()

    def on_busy(message: jmspy.Message) -> None:
        nonlocal handled
        handled += 1
        if handled == 1:
            # While this session has the pool thread, the other session's work arrives.
            peer.enqueue("qo", AmqpMessage(body="o0"))
            queued = other_session._pool
            assert queued is not None
            wait_until(
                lambda: other_session in queued._queued,
                timeout=WAIT_S,
                what="the other session queued on the pool",
            )

    def on_other(message: jmspy.Message) -> None:
        at_other.append(handled)
        other_done.set()

    other_consumer.setMessageListener(on_other)
    busy.start()
    busy_consumer.setMessageListener(on_busy)  # one turn queued, for one run
    assert other_done.wait(WAIT_S), "the other session's listener was never called"
    # Its turn comes after the busy session's current run.
    assert at_other[0] <= LISTENER_RUN, f"called after {at_other[0]} of {backlog}"


def test_a_listener_set_again_after_a_batch_listener_gets_new_messages(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """A turn queued for the MessageListener and run for the batch listener that replaced it
    left the consumer believing a turn was still queued: the next MessageListener was never
    woken for new arrivals."""
    connection = clients.connect(peer)
    session = connection.createSession()
    consumer = session.createConsumer(session.createQueue("q"))
    first: list[str] = []
    consumer.setMessageListener(lambda m: first.append(m.getText()))
    peer.enqueue("q", AmqpMessage(body="m0"))
    # The connection is stopped: the turn this arrival queued waits for start().
    wait_until(lambda: consumer.getPrefetchedCount() == 1, timeout=WAIT_S, what="m0 buffered")
    batches: list[list[str]] = []
    consumer.setMessageListener(None)
    consumer.setBatchMessageListener(lambda ms: batches.append([m.getText() for m in ms]), 10, 0)
    connection.start()
    wait_until(lambda: batches == [["m0"]], timeout=WAIT_S, what="m0 in a batch")
    consumer.setBatchMessageListener(None)
    later: list[str] = []
    got = threading.Event()

    def on_message(message: Any) -> None:
        later.append(message.getText())
        got.set()

    consumer.setMessageListener(on_message)
    peer.enqueue("q", AmqpMessage(body="m1"))
    assert got.wait(10), f"m1 never reached the listener ({consumer.getPrefetchedCount()} buffered)"
    assert later == ["m1"] and first == []


def test_a_batch_listener_set_from_onmessage_gets_the_rest_of_the_run(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """The messages a listener run had taken from the buffer went back to it after the run
    without a turn asked for the batch listener that replaced the MessageListener: they
    waited for an arrival that might never come."""
    connection = clients.connect(peer)
    session = connection.createSession()
    consumer = session.createConsumer(session.createQueue("q"))
    for i in range(5):
        peer.enqueue("q", AmqpMessage(body=f"m{i}"))
    wait_until(lambda: consumer.getPrefetchedCount() == 5, timeout=WAIT_S, what="all buffered")
    single: list[str] = []
    batches: list[list[str]] = []
    got = threading.Event()

    def on_messages(messages: list[Any]) -> None:
        batches.append([m.getText() for m in messages])
        got.set()

    def on_message(message: Any) -> None:
        single.append(message.getText())
        # The rest of the run (all five were taken at once) now goes to a batch listener.
        consumer.setMessageListener(None)
        consumer.setBatchMessageListener(on_messages, 10, 0)

    connection.start()
    consumer.setMessageListener(on_message)  # one turn, whose run takes all five
    assert got.wait(10), f"no batch ({consumer.getPrefetchedCount()} buffered)"
    assert single == ["m0"] and batches == [["m1", "m2", "m3", "m4"]]


def test_recover_from_a_listener_keeps_the_credit_window(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """A message recover() puts back is taken from the buffer again, and its credit was
    counted each time: every recover widened the window by one, so a listener retrying a
    message with recover() let the broker send ever more past the prefetch."""
    connection = clients.connect(peer, query="jms.prefetchPolicy.all=10")
    session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("q"))
    peer.enqueue("q", AmqpMessage(body="poison"))
    calls = 0
    done = threading.Event()

    def on_message(message: Any) -> None:
        nonlocal calls
        calls += 1
        if calls < 40:
            session.recover()
        else:
            message.acknowledge()
            done.set()

    consumer.setMessageListener(on_message)
    connection.start()
    assert done.wait(WAIT_S), f"{calls} deliveries"
    connection.stop()
    for i in range(40):
        peer.enqueue("q", AmqpMessage(body=f"m{i}"))
    wire_barrier(connection)  # whatever the credit allowed has arrived
    assert consumer.getPrefetchedCount() <= 10


def test_a_listener_run_ended_early_keeps_the_credit_window(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """A run that ends before its last message (here the listener is replaced from inside
    onMessage) puts the rest back in the buffer; their credit was counted when the run took
    them and again when they are taken next, so each early end widened the window by the
    messages it put back."""
    connection = clients.connect(peer, query="jms.prefetchPolicy.all=10")
    session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("q"))
    for i in range(10):
        peer.enqueue("q", AmqpMessage(body=f"m{i}"))
    wait_until(lambda: consumer.getPrefetchedCount() == 10, WAIT_S, "the prefetch to arrive")
    bodies: list[str] = []
    done = threading.Event()

    def swap(message: Any) -> None:
        # Each call replaces the listener, so every run ends after one message and puts the
        # rest of its run back.
        bodies.append(message.getBody(str))
        message.acknowledge()
        if len(bodies) == 10:
            done.set()
        consumer.setMessageListener(other if consumer.getMessageListener() is swap else swap)

    def other(message: Any) -> None:
        swap(message)

    consumer.setMessageListener(swap)
    connection.start()
    assert done.wait(WAIT_S), f"{len(bodies)} delivered"
    assert bodies == [f"m{i}" for i in range(10)]
    connection.stop()
    for i in range(10, 60):
        peer.enqueue("q", AmqpMessage(body=f"m{i}"))
    wire_barrier(connection)  # whatever the credit allowed has arrived
    assert consumer.getPrefetchedCount() <= 10
