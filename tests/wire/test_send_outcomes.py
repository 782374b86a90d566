"""What a send or a commit reports when the broker gives no outcome: a send whose outcome is
unknown is reported as unknown, never as success or as "not sent", and a transaction with such
a send is never committed.

The scripted peer does not answer transaction controls itself; the ``coordinator`` fixture
(tests/wire/peer_coordinator.py) teaches it, for one test, to declare transactions and to
answer (or withhold the answer to) discharges.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

import jmspy

from .client_support import (
    Clients,
    clients_fixture,
    grant_credit,
    in_thread,
    no_credit_on,
    refusing_reconnects,
    wait_until,
    wire_barrier,
)
from .peer import AttachRecord, LinkScript, Outcome, ScriptedPeer
from .peer_coordinator import Coordinator


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def test_a_commit_with_unwritten_sends_rolls_back_and_never_writes_them(
    make_peer: Any, clients: Clients, coordinator: Coordinator
) -> None:
    """The broker withholds credit (an address full with a BLOCK policy): the transaction's
    send stays queued. The commit must not report success for it: it rolls back, says why,
    and the withdrawn send is not written when credit comes later."""
    # Transfers on the credit-0 link after the late grant are asserted below, not by strict.
    peer = make_peer(links=no_credit_on("full"), strict=False)
    connection = clients.connect(peer, send_timeout=1000)
    session = connection.createSession(jmspy.SESSION_TRANSACTED)
    producer = session.createProducer(session.createQueue("full"))
    producer.send(session.createTextMessage("held back by the broker"))
    with pytest.raises(jmspy.TransactionRolledBackException) as caught:
        session.commit()
    message = str(caught.value)
    assert "1000 ms (jms.sendTimeout)" in message and "1 of them never written" in message
    assert [fail for _txn, fail in coordinator.discharges] == [True], coordinator.discharges
    # Credit now: nothing of the finished transaction may go out.
    grant_credit(peer, "full", 10)
    session.createProducer(session.createQueue("open")).send(session.createTextMessage("next"))
    session.commit()
    assert [t.link_name for t in peer.transfers if "full" in (t.link_name or "")] == []
    assert [fail for _txn, fail in coordinator.discharges] == [True, False]


def test_a_commit_whose_rollback_gets_no_answer_is_in_doubt(
    make_peer: Any, clients: Clients, coordinator: Coordinator
) -> None:
    """As above, but the broker does not answer the rollback either: the client cannot know
    what became of the transaction, and says so."""
    coordinator.answer_discharge = False
    peer = make_peer(links=no_credit_on("full"))
    connection = clients.connect(peer, send_timeout=1000, request_timeout=1500)
    session = connection.createSession(jmspy.SESSION_TRANSACTED)
    producer = session.createProducer(session.createQueue("full"))
    producer.send(session.createTextMessage("held back by the broker"))
    with pytest.raises(jmspy.TransactionInDoubtException) as caught:
        session.commit()
    assert "rollback got no answer" in str(caught.value)
    assert "never written" in str(caught.value)
    assert [fail for _txn, fail in coordinator.discharges] == [True]


def test_transactional_sends_lost_with_their_link_roll_the_commit_back(
    make_peer: Any, clients: Clients, coordinator: Coordinator
) -> None:
    """The broker detaches the producer's link before settling the transaction's send: the
    send's fate is unknown, so the commit rolls back instead of committing without it."""
    peer = make_peer(links=lambda a: LinkScript(outcome=None) if a.address == "q" else None)
    connection = clients.connect(peer, send_timeout=5000)
    session = connection.createSession(jmspy.SESSION_TRANSACTED)
    producer = session.createProducer(session.createQueue("q"))
    producer.send(session.createTextMessage("never settled"))
    wait_until(lambda: peer.transfers, what="the transactional transfer")
    link = next(a.name for a in peer.attaches if a.address == "q")
    peer.close_link(link, "amqp:internal-error", "queue deleted")
    wait_until(lambda: producer._links[producer._destination].failure, what="the link failure")
    with pytest.raises(jmspy.TransactionRolledBackException, match="queue deleted"):
        session.commit()
    assert [fail for _txn, fail in coordinator.discharges] == [True]


def _failover(peer: ScriptedPeer) -> str:
    return f"failover:({peer.url})?failover.reconnectDelay=20&failover.maxReconnectDelay=100"


def test_a_send_written_before_a_failover_times_out_as_unknown_not_as_not_sent(
    make_peer: Any, clients: Clients
) -> None:
    """The broker may have stored a send written before the connection dropped: when the
    reconnect outlasts jms.sendTimeout, the send is reported as unknown (an application told
    "not sent" would send it again: a duplicate), and it is not resent after the restore."""
    peer = make_peer(links=lambda a: LinkScript(outcome=None) if a.address == "q" else None)
    connection = clients.track(
        clients.factory(_failover(peer), send_timeout=1500).createConnection()
    )
    restored = threading.Event()

    class Listener:
        def onConnectionInterrupted(self, uri: str) -> None:
            pass

        def onConnectionRestored(self, uri: str) -> None:
            restored.set()

    connection.setConnectionListener(Listener())
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("q"))
    done, errors = in_thread(lambda: producer.send(session.createTextMessage("stored?")))
    wait_until(lambda: peer.connections[0].transfers, what="the transfer")
    with refusing_reconnects(peer):
        peer.drop(reset=True)
        assert done.wait(30), "the send did not time out"
    assert len(errors) == 1 and isinstance(errors[0], jmspy.JMSException), errors
    message = str(errors[0])
    assert "outcome is unknown" in message and "was not sent" not in message, message
    assert restored.wait(30), "not restored"
    wire_barrier(connection)
    assert len(peer.transfers) == 1, "the send whose caller was told was sent again"


class _Listener:
    """A CompletionListener recording each outcome and when it arrived."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.exceptions: list[tuple[float, BaseException]] = []
        self.completed = 0

    def onCompletion(self, message: Any) -> None:
        with self._cond:
            self.completed += 1
            self._cond.notify_all()

    def onException(self, message: Any, exception: BaseException) -> None:
        with self._cond:
            self.exceptions.append((time.monotonic(), exception))
            self._cond.notify_all()

    def wait_for(self, count: int, timeout: float) -> None:
        with self._cond:
            done = self._cond.wait_for(
                lambda: len(self.exceptions) + self.completed >= count, timeout
            )
        assert done, f"{len(self.exceptions)} exceptions, {self.completed} completions"


def test_sends_lost_with_the_connection_say_whether_they_were_written(
    make_peer: Any, clients: Clients
) -> None:
    """The connection drops (no failover) while the broker holds sends unsettled: those
    were written, so their outcome is unknown; a send that was still waiting for credit was
    certainly not sent. A sync send and a CompletionListener are told the same."""

    def scripts(attach: AttachRecord) -> LinkScript | None:
        if attach.address == "q":
            return LinkScript(outcome=None)
        if attach.address == "full":
            return LinkScript(credit=0)
        return None

    peer = make_peer(links=scripts)
    connection = clients.connect(peer, send_timeout=60000)
    session = connection.createSession()
    written = session.createProducer(session.createQueue("q"))
    waiting = session.createProducer(session.createQueue("full"))
    listener = _Listener()
    written.send(session.createTextMessage("with a listener"), listener)
    sync_done, sync_errors = in_thread(lambda: written.send(session.createTextMessage("sync")))
    unwritten_done, unwritten_errors = in_thread(
        lambda: waiting.send(session.createTextMessage("no credit"))
    )
    wait_until(lambda: len(peer.transfers) >= 2, what="both transfers to q")
    peer.drop(reset=True)
    assert sync_done.wait(30) and unwritten_done.wait(30), "the sends were not failed"
    listener.wait_for(1, 30)
    for error in [sync_errors[0], listener.exceptions[0][1]]:
        assert isinstance(error, jmspy.JMSException)
        assert "outcome is unknown" in str(error), error
        assert isinstance(error.linked_exception, jmspy.JMSException), "the cause is lost"
    assert "was not sent" in str(unwritten_errors[0]), unwritten_errors[0]


def test_asynchronous_send_timeouts_are_counted_from_each_send_not_one_after_another(
    make_peer: Any, clients: Clients
) -> None:
    """Twenty CompletionListener sends to a broker that never settles them: each times out
    jms.sendTimeout after its own send, so the twenty reports arrive together (they used to
    come one sendTimeout apart, the twentieth about twenty seconds after the first), and each
    says the outcome is unknown."""
    peer = make_peer(links=lambda a: LinkScript(outcome=None) if a.address == "q" else None)
    connection = clients.connect(peer, send_timeout=1000)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("q"))
    listener = _Listener()
    for index in range(20):
        producer.send(session.createTextMessage(f"m{index}"), listener)
    listener.wait_for(20, 60)
    times = [at for at, _error in listener.exceptions]
    assert max(times) - min(times) < 8.0, f"reports spread over {max(times) - min(times):.1f} s"
    for _at, error in listener.exceptions:
        assert "outcome is unknown" in str(error), error


def test_an_asynchronous_send_that_times_out_unwritten_is_never_written_later(
    make_peer: Any, clients: Clients
) -> None:
    """A CompletionListener told that a send was not sent must be right: the send, held for
    want of credit, is withdrawn and not written when credit comes."""
    # A transfer after the late grant is asserted below, not by strict mode.
    peer = make_peer(links=no_credit_on("full"), strict=False)
    connection = clients.connect(peer, send_timeout=1000)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("full"))
    listener = _Listener()
    producer.send(session.createTextMessage("held back"), listener)
    listener.wait_for(1, 30)
    assert "was not sent" in str(listener.exceptions[0][1]), listener.exceptions
    grant_credit(peer, "full", 10)
    wire_barrier(connection)
    assert peer.transfers == [], "a send reported as not sent was written"


def test_a_send_still_unsettled_when_its_session_closes_is_reported_once_as_unknown(
    make_peer: Any, clients: Clients
) -> None:
    """close() waits for CompletionListener callbacks only within jms.closeTimeout; a send the
    broker has still not settled then is ended by the close, and its listener is told once
    that its outcome is unknown (possibly just after close() returned), never that it
    completed. The callback used to be dropped: the send got no outcome at all."""
    peer = make_peer(links=lambda a: LinkScript(outcome=None) if a.address == "q" else None)
    connection = clients.connect(peer, send_timeout=60000, close_timeout=1000)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("q"))
    listener = _Listener()
    producer.send(session.createTextMessage("never settled"), listener)
    wait_until(lambda: peer.transfers, what="the transfer")
    thread = session._completion_thread
    assert thread is not None
    began = time.monotonic()
    session.close()
    assert time.monotonic() - began < 8.0, "close() outlived jms.closeTimeout"
    listener.wait_for(1, 10.0)
    thread.join(20)
    assert not thread.is_alive(), "the completion thread is still running"
    assert listener.completed == 0
    assert len(listener.exceptions) == 1, listener.exceptions
    assert "outcome is unknown" in str(listener.exceptions[0][1])


def test_a_synchronous_send_waiting_for_an_in_flight_slot_keeps_one_send_timeout(
    make_peer: Any, clients: Clients
) -> None:
    """jms.sendTimeout bounds a send as a whole: a send that first waits for an in-flight slot
    (jms.maxAsyncSendsInFlight, taken by an asynchronous send held for want of credit) has
    only what is left of it for the outcome. Each wait used to get a full sendTimeout, so the
    send failed after up to twice its timeout (4.5 s here, against 3 s; the bound leaves a
    second for a busy machine)."""
    peer = make_peer(links=no_credit_on("full"))
    connection = clients.connect(peer, send_timeout=3000, max_async_sends_in_flight=1)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("full"))
    listener = _Listener()
    producer.send(session.createTextMessage("async, held for credit"), listener)
    # Not a synchronisation: the synchronous send starts when the asynchronous one is half
    # its timeout old, so the slot frees (at that timeout) in the middle of its wait.
    time.sleep(1.5)
    began = time.monotonic()
    with pytest.raises(jmspy.JMSException, match="timed out"):
        producer.send(session.createTextMessage("sync"))
    took = time.monotonic() - began
    assert took < 4.0, f"the send failed after {took:.1f} s against jms.sendTimeout=3000"
    listener.wait_for(1, 30)


@pytest.mark.parametrize(
    "outcome", [Outcome.settled_without_outcome(), Outcome.received_only()], ids=lambda o: o.kind
)
def test_a_send_the_peer_settles_without_an_outcome_is_unknown_never_sent(
    make_peer: Any, clients: Clients, outcome: Outcome
) -> None:
    """A settle with no outcome, or only the non-terminal received state: the broker may or may
    not have taken the message. Both were reported as success (a received state was even
    settled by the client, so a later rejection would have been lost)."""
    peer = make_peer(links=lambda a: LinkScript(outcome=outcome) if a.address == "q" else None)
    connection = clients.connect(peer, send_timeout=1500)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("q"))
    completions: list[str] = []
    done = threading.Event()

    class Listener:
        def onCompletion(self, message: jmspy.Message) -> None:
            completions.append("completed")
            done.set()

        def onException(self, message: jmspy.Message, exception: Exception) -> None:
            completions.append(f"failed: {exception}")
            done.set()

    producer.send(session.createTextMessage("async"), Listener())
    with pytest.raises(jmspy.JMSException, match="outcome is unknown"):
        producer.send(session.createTextMessage("sync"))  # persistent: waits for the outcome
    assert done.wait(10.0)
    assert len(completions) == 1 and "outcome is unknown" in completions[0], completions
