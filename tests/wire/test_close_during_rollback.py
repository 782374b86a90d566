"""Session.close() and Connection.close() from another thread while a rollback waits for a
broker that does not answer: the close keeps to jms.closeTimeout instead of waiting behind the
rollback's network waits (up to jms.requestTimeout each), and the rollback, which can only
roll back, returns once the session is closed.

The scripted peer answers transaction controls through the ``coordinator`` fixture
(tests/wire/peer_coordinator.py); here it declares transactions and withholds the answer to
every discharge.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

import jmspy

from .client_support import Clients, clients_fixture, in_thread, wait_until
from .peer import ScriptedPeer
from .peer_coordinator import Coordinator

# The rollback's discharge would wait this long for its answer without the close's help.
REQUEST_TIMEOUT_MS = 30_000
CLOSE_TIMEOUT_MS = 1_000
# Far below REQUEST_TIMEOUT_MS, far above CLOSE_TIMEOUT_MS: a loaded machine still passes.
CLOSE_BOUND_S = 8.0


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _rollback_waiting(
    peer: ScriptedPeer, clients: Clients, coordinator: Coordinator
) -> tuple[jmspy.Connection, jmspy.Session, threading.Event, list[BaseException]]:
    """A transacted session with a send and a consumer, whose rollback() waits on another
    thread for the answer to its discharge."""
    coordinator.answer_discharge = False
    connection = clients.connect(
        peer, request_timeout=REQUEST_TIMEOUT_MS, close_timeout=CLOSE_TIMEOUT_MS
    )
    session = connection.createSession(jmspy.SESSION_TRANSACTED)
    session.createConsumer(session.createQueue("in"))
    session.createProducer(session.createQueue("out")).send(session.createTextMessage("undone"))
    done, errors = in_thread(session.rollback)
    wait_until(lambda: coordinator.discharges, what="the rollback's discharge")
    assert not done.is_set(), "the rollback must be waiting for the broker's answer"
    return connection, session, done, errors


def test_session_close_does_not_wait_behind_an_unanswered_rollback(
    make_peer: Any, clients: Clients, coordinator: Coordinator
) -> None:
    _connection, session, rolled_back, errors = _rollback_waiting(make_peer(), clients, coordinator)
    began = time.monotonic()
    session.close()
    took = time.monotonic() - began
    assert took < CLOSE_BOUND_S, f"Session.close() took {took:.1f} s behind the rollback"
    # The rollback ends with the session: a discharge that fails and a session that ends
    # both roll the transaction back, so it is not reported as in doubt.
    assert rolled_back.wait(CLOSE_BOUND_S), "the rollback still waits after the close"
    assert errors == [], errors
    assert [fail for _txn, fail in coordinator.discharges] == [True]
    with pytest.raises(jmspy.IllegalStateException):
        session.rollback()


def test_connection_close_does_not_wait_behind_an_unanswered_rollback(
    make_peer: Any, clients: Clients, coordinator: Coordinator
) -> None:
    connection, _session, rolled_back, errors = _rollback_waiting(make_peer(), clients, coordinator)
    began = time.monotonic()
    connection.close()
    took = time.monotonic() - began
    assert took < CLOSE_BOUND_S, f"Connection.close() took {took:.1f} s behind the rollback"
    assert rolled_back.wait(CLOSE_BOUND_S), "the rollback still waits after the close"
    assert errors == [], errors


def test_a_commit_cut_short_by_close_is_in_doubt(
    make_peer: Any, clients: Clients, coordinator: Coordinator
) -> None:
    """A commit whose discharge went out and whose session then closed: the broker may have
    committed, so the commit says in doubt, never committed or rolled back."""
    coordinator.answer_discharge = False
    connection = clients.connect(
        make_peer(), request_timeout=REQUEST_TIMEOUT_MS, close_timeout=CLOSE_TIMEOUT_MS
    )
    session = connection.createSession(jmspy.SESSION_TRANSACTED)
    session.createProducer(session.createQueue("out")).send(session.createTextMessage("kept?"))
    committed, errors = in_thread(session.commit)
    wait_until(lambda: coordinator.discharges, what="the commit's discharge")
    began = time.monotonic()
    session.close()
    assert time.monotonic() - began < CLOSE_BOUND_S
    assert committed.wait(CLOSE_BOUND_S), "the commit still waits after the close"
    assert len(errors) == 1 and isinstance(errors[0], jmspy.TransactionInDoubtException), errors
    assert [fail for _txn, fail in coordinator.discharges] == [False]
