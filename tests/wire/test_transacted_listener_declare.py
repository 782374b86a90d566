"""A transacted session's MessageListener or BatchMessageListener whose delivery cannot join a
transaction (the broker refuses or does not answer the declare): the message or batch stays
with its consumer, in front and in order, its credit given back; the ExceptionListener hears
of it; and the delivery is tried again after a growing pause, so a broker that keeps refusing
declares is not asked again at every message.

The ``coordinator`` fixture (tests/wire/peer_coordinator.py) declares and refuses on cue.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message

import jmspy

from .client_support import Clients, clients_fixture, wait_until, wire_barrier
from .peer import ScriptedPeer
from .peer_coordinator import Coordinator

PREFETCH = 4


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _granted(peer: ScriptedPeer, link_name: str) -> int:
    """Deliveries the client has allowed on its link in all (delivery-count + link-credit of
    its last flow)."""
    flows = [
        f
        for f in peer.flows
        if f.link_name == link_name and f.link_credit is not None and f.delivery_count is not None
    ]
    last = flows[-1]
    assert last.delivery_count is not None and last.link_credit is not None
    return last.delivery_count + last.link_credit


def _transacted_consumer(
    peer: ScriptedPeer,
    clients: Clients,
    coordinator: Coordinator,
    count: int,
    query: str = "",
    **options: Any,
) -> tuple[jmspy.Connection, jmspy.Session, jmspy.MessageConsumer, str, list[BaseException]]:
    """A stopped connection with a transacted session (its first transaction committed, so
    the next delivery declares one) and a consumer of ``count`` queued messages."""
    for number in range(count):
        peer.enqueue("q", Message(body=f"m{number}"))
    query = f"jms.prefetchPolicy.all={PREFETCH}" + (f"&{query}" if query else "")
    connection = clients.connect(peer, query=query, **options)
    reported: list[BaseException] = []
    connection.setExceptionListener(reported.append)
    session = connection.createSession(jmspy.SESSION_TRANSACTED)
    consumer = session.createConsumer(session.createQueue("q"))
    link = peer.wait_for_attach(role="receiver").name
    return connection, session, consumer, link, reported


def test_a_listener_message_whose_declare_is_refused_is_kept_in_order(
    peer: ScriptedPeer, clients: Clients, coordinator: Coordinator
) -> None:
    connection, session, consumer, link, reported = _transacted_consumer(
        peer, clients, coordinator, 6
    )
    # Refused: the declare after this commit, and the one the first delivery makes.
    coordinator.reject_declares = coordinator.rejected + 2
    session.commit()
    received: list[str] = []
    done = threading.Event()

    def on_message(message: jmspy.Message) -> None:
        received.append(message.getBody(str))
        if len(received) == 6:
            session.commit()
            done.set()

    consumer.setMessageListener(on_message)
    connection.start()
    assert done.wait(15), f"the listener got {received}"
    assert received == [f"m{n}" for n in range(6)], "the held-back message was lost or moved"
    assert coordinator.discharges[-1] == (b"txn-2", False)
    wait_until(lambda: reported, what="the ExceptionListener to hear of the refused declare")
    assert isinstance(reported[0], jmspy.JMSException)
    wire_barrier(connection)
    # The put-back message's credit was given back: the window never grew past the prefetch.
    assert _granted(peer, link) - len(received) <= PREFETCH


def test_a_batch_whose_declare_is_refused_is_kept_in_order(
    peer: ScriptedPeer, clients: Clients, coordinator: Coordinator
) -> None:
    connection, session, consumer, link, reported = _transacted_consumer(
        peer, clients, coordinator, 8
    )
    coordinator.reject_declares = coordinator.rejected + 2
    session.commit()
    received: list[str] = []
    done = threading.Event()

    def on_messages(messages: list[jmspy.Message]) -> None:
        received.extend(message.getBody(str) for message in messages)
        if len(received) >= 8:
            session.commit()
            done.set()

    consumer.setBatchMessageListener(on_messages, 3)
    connection.start()
    assert done.wait(15), f"the batch listener got {received}"
    assert received == [f"m{n}" for n in range(8)], "the held-back batch was lost or moved"
    wait_until(lambda: reported, what="the ExceptionListener to hear of the refused declare")
    wire_barrier(connection)
    assert _granted(peer, link) - len(received) <= PREFETCH


# Listeners run on the session's own thread, or on the shared dispatch pool.
@pytest.mark.parametrize("query", ["", "transport.sharedEventLoopThreads=2"])
def test_refused_declares_are_retried_after_a_growing_pause(
    peer: ScriptedPeer, clients: Clients, coordinator: Coordinator, query: str
) -> None:
    count = 20
    connection, session, consumer, _link, reported = _transacted_consumer(
        peer, clients, coordinator, count, query
    )
    coordinator.reject_declares = 1_000_000  # a broker that cannot start transactions
    session.commit()
    base = coordinator.rejected
    received: list[str] = []
    consumer.setMessageListener(lambda message: received.append(message.getBody(str)))
    began, cpu_began = time.monotonic(), time.process_time()
    connection.start()
    wait_until(lambda: coordinator.rejected >= base + 4, timeout=15, what="four declares")
    took, cpu = time.monotonic() - began, time.process_time() - cpu_began
    # Asked again no sooner than 0.1 s, 0.2 s, 0.4 s after each refusal (not once a message).
    assert took >= 0.6, f"four declares in {took:.2f} s: the broker is flooded"
    # And the pauses are waited out, not spun through by the dispatch thread.
    assert cpu < took / 3, f"{cpu:.2f} s of CPU in {took:.2f} s of pauses"
    assert received == []
    coordinator.reject_declares = coordinator.rejected  # the broker serves again
    wait_until(lambda: len(received) == count, timeout=15, what="every message")
    assert received == [f"m{n}" for n in range(count)]
    assert len(reported) >= 4
    session.commit()


def test_an_unanswered_declare_keeps_the_listener_message(
    peer: ScriptedPeer, clients: Clients, coordinator: Coordinator
) -> None:
    connection, session, consumer, _link, reported = _transacted_consumer(
        peer, clients, coordinator, 3, request_timeout=500
    )
    coordinator.answer_declares = coordinator.declared  # declares go unanswered
    session.commit()  # its next declare times out (logged, made again on first use)
    received: list[str] = []
    consumer.setMessageListener(lambda message: received.append(message.getBody(str)))
    connection.start()
    wait_until(lambda: reported, timeout=10, what="the ExceptionListener")
    coordinator.answer_declares = None
    wait_until(lambda: len(received) == 3, timeout=15, what="every message")
    assert received == ["m0", "m1", "m2"]
    session.commit()
