"""What a connection that lives for days must not pile up: work the engine keeps doing for a
producer long closed, threads, link names and bookkeeping that only grow. Each test drives the
real client against the scripted peer and looks at what is left once the work is done."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

import jmspy
from jmspy import DeliveryMode

from .client_support import Clients, clients_fixture, wait_until
from .peer import ScriptedPeer


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _settle_polls(connection: jmspy.Connection) -> int:
    """How many engine timers are polls of a producer waiting for its sends to be settled.

    Read on the engine thread itself, so a poll being run at that moment (off the timer heap
    while it runs) cannot be missed."""
    engine: Any = connection._amqp.engine  # type: ignore[union-attr]

    def look(completion: Any) -> None:
        completion.succeed(
            sum(
                1
                for _due, _seq, work in engine._timers
                if "wait_settled" in getattr(work, "__qualname__", "")
            )
        )

    count: int = engine.call(look, 30.0, "reading the engine's timers", jmspy.JMSException)
    return count


def test_a_producer_close_that_times_out_leaves_no_poll_on_the_engine(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """The peer grants credit but never settles: the producer's close waits for the settlement
    until jms.closeTimeout, then closes the link anyway. The engine must stop polling for that
    settlement then, not every 5 ms for the rest of the connection's life."""
    peer.script("silent", outcome=None)
    connection = clients.connect(peer, close_timeout=4000)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("silent"))
    producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)  # asynchronous: send() returns
    producer.send(session.createTextMessage("never settled"))
    peer.wait_for_transfers(1, timeout=20)

    closing = threading.Thread(target=producer.close, name="test-producer-close")
    closing.start()
    # While the close waits, the poll is there (so the probe below does find such a timer).
    wait_until(lambda: _settle_polls(connection) == 1, 20, "the close to poll for settlement")
    closing.join(60)
    assert not closing.is_alive(), "the producer close did not end within its close timeout"
    peer.wait_for_detach(timeout=20)

    wait_until(lambda: _settle_polls(connection) == 0, 20, "the settlement poll to stop")

    # The connection still works.
    other = session.createProducer(session.createQueue("accepting"))
    other.send(session.createTextMessage("settled"))
    assert _settle_polls(connection) == 0
