"""A send blocked on one thread ends when another thread closes its producer, session,
connection or JMSContext (JMS 2.0: a close ends the calls blocked in what it closes), not at
its jms.sendTimeout: one never written (no link credit) was not sent and says so with
IllegalStateException; one written that the broker never settled is of unknown outcome (a
plain JMSException, never success and never "not sent"). Nothing queued is written after the
close, and an asynchronous send gets exactly one CompletionListener callback."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

import jmspy

from .client_support import (
    Clients,
    clients_fixture,
    refusing_reconnects,
    wait_until,
    wire_barrier,
)
from .conftest import PeerFactory
from .peer import LinkScript, ScriptedPeer

# Far above the bound below: a send that ends only at its jms.sendTimeout fails the test.
SEND_TIMEOUT_MS = 30000
# Generous for a busy machine; jms.closeTimeout is 1 s here (FAST_OPTIONS).
ENDS_WITHIN_S = 8.0

NO_CREDIT = "no credit"
UNSETTLED = "never settled"


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _script(condition: str) -> LinkScript:
    return LinkScript(credit=0) if condition == NO_CREDIT else LinkScript(outcome=None)


def _blocked_in_send(thread: threading.Thread) -> bool:
    """Whether ``thread`` waits inside a producer link's send (for credit or an outcome)."""
    frame = sys._current_frames().get(thread.ident or -1)
    in_send = in_wait = False
    while frame is not None:
        code = frame.f_code
        if code.co_name == "send" and code.co_filename.endswith("sender.py"):
            in_send = True
        if code.co_name == "wait" and code.co_filename.endswith("completion.py"):
            in_wait = True
        frame = frame.f_back
    return in_send and in_wait


@dataclass
class _BlockedSend:
    """A send run on its own thread, and how it ended."""

    send: Callable[[], None]
    error: BaseException | None = None
    returned: bool = False
    ended_at: float = 0.0
    ended: threading.Event = field(default_factory=threading.Event)

    def start(self) -> threading.Thread:
        def run() -> None:
            try:
                self.send()
                self.returned = True
            except BaseException as exc:  # noqa: BLE001 - examined by the test
                self.error = exc
            finally:
                self.ended_at = time.monotonic()
                self.ended.set()

        thread = threading.Thread(target=run, name="blocked-send", daemon=True)
        thread.start()
        wait_until(lambda: _blocked_in_send(thread) or self.ended.is_set(), what="a blocked send")
        assert not self.ended.is_set(), f"the send did not block: {self.error!r}"
        return thread


def _assert_ended_by_close(
    blocked: _BlockedSend, closed_at: float, condition: str, closed: str
) -> None:
    assert blocked.ended.wait(ENDS_WITHIN_S), (
        f"the send still waits {ENDS_WITHIN_S} s after the {closed} close began "
        f"(jms.sendTimeout={SEND_TIMEOUT_MS} ms)"
    )
    assert blocked.ended_at - closed_at < ENDS_WITHIN_S
    assert not blocked.returned, "a send ended by a close must not report success"
    error = blocked.error
    text = str(error)
    assert f"the {closed} was closed" in text, text
    if condition == NO_CREDIT:
        assert isinstance(error, jmspy.IllegalStateException | jmspy.IllegalStateRuntimeException)
        assert "was not sent" in text, text
    else:
        assert isinstance(error, jmspy.JMSException | jmspy.JMSRuntimeException), repr(error)
        assert not isinstance(
            error, jmspy.IllegalStateException | jmspy.IllegalStateRuntimeException
        ), repr(error)
        assert "outcome is unknown" in text and "not sent" not in text, text


@pytest.mark.parametrize(
    ("anonymous", "condition", "closer"),
    [
        (False, NO_CREDIT, "producer"),
        (False, UNSETTLED, "producer"),
        (False, NO_CREDIT, "session"),
        (True, UNSETTLED, "session"),
        (True, NO_CREDIT, "connection"),
        (False, UNSETTLED, "connection"),
    ],
)
def test_a_close_on_another_thread_ends_a_blocked_send(
    make_peer: PeerFactory, clients: Clients, anonymous: bool, condition: str, closer: str
) -> None:
    peer = make_peer(links={None: _script(condition), "q": _script(condition)}, strict=False)
    connection = clients.connect(peer, send_timeout=SEND_TIMEOUT_MS)
    session = connection.createSession()
    queue = session.createQueue("q")
    producer = session.createProducer(None if anonymous else queue)
    message = session.createTextMessage("blocked")  # persistent: a synchronous send
    if anonymous:
        blocked = _BlockedSend(lambda: producer.send(queue, message))
    else:
        blocked = _BlockedSend(lambda: producer.send(message))
    blocked.start()
    if condition == UNSETTLED:
        peer.wait_for_transfers(1)
    written = len(peer.transfers)
    assert written == (0 if condition == NO_CREDIT else 1)
    closed_at = time.monotonic()
    {"producer": producer, "session": session, "connection": connection}[closer].close()
    _assert_ended_by_close(blocked, closed_at, condition, closer)
    if closer != "connection":
        wire_barrier(connection)  # whatever the client queued has reached the peer
    assert len(peer.transfers) == written, "a transfer was written after the close"


@pytest.mark.parametrize("condition", [NO_CREDIT, UNSETTLED])
def test_a_jms_context_close_ends_a_blocked_send(
    make_peer: PeerFactory, clients: Clients, condition: str
) -> None:
    peer = make_peer(links={None: _script(condition), "q": _script(condition)}, strict=False)
    context = clients.factory(peer, send_timeout=SEND_TIMEOUT_MS).createContext()
    queue = context.createQueue("q")
    producer = context.createProducer()
    blocked = _BlockedSend(lambda: producer.send(queue, "blocked"))
    blocked.start()
    if condition == UNSETTLED:
        peer.wait_for_transfers(1)
    written = len(peer.transfers)
    assert written == (0 if condition == NO_CREDIT else 1)
    closed_at = time.monotonic()
    context.close()
    # The context closes its session, then the connection; the session's close ends the send.
    _assert_ended_by_close(blocked, closed_at, condition, "session")
    assert len(peer.transfers) == written, "a transfer was written after the close"


class _Listener:
    def __init__(self) -> None:
        self.calls: list[tuple[str, BaseException | None]] = []
        self.called = threading.Event()

    def onCompletion(self, message: Any) -> None:
        self.calls.append(("completion", None))
        self.called.set()

    def onException(self, message: Any, exception: BaseException) -> None:
        self.calls.append(("exception", exception))
        self.called.set()


def _async_send(
    make_peer: PeerFactory, clients: Clients, condition: str, **options: Any
) -> tuple[Any, Any, Any, _Listener, ScriptedPeer]:
    """A connection, session and producer with one asynchronous send on "q", blocked in
    ``condition`` (written when UNSETTLED), and that send's listener."""
    peer = make_peer(links={"q": _script(condition)}, strict=False)
    connection = clients.connect(peer, send_timeout=SEND_TIMEOUT_MS, **options)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("q"))
    listener = _Listener()
    producer.send(session.createTextMessage("async"), listener)
    if condition == UNSETTLED:
        peer.wait_for_transfers(1)
    return connection, session, producer, listener, peer


@contextlib.contextmanager
def _busy_engine(connection: Any) -> Iterator[None]:
    """Inside, the connection's engine thread is stuck in one long piece of work."""
    engine_busy, release = threading.Event(), threading.Event()

    def busy() -> None:
        engine_busy.set()
        release.wait(30)

    connection._amqp.engine.submit(busy)
    try:
        assert engine_busy.wait(10), "the engine did not take the work"
        yield
    finally:
        release.set()


@pytest.mark.parametrize(("condition", "closer"), [(UNSETTLED, "producer"), (NO_CREDIT, "session")])
def test_a_close_gives_an_asynchronous_send_exactly_one_callback(
    make_peer: PeerFactory, clients: Clients, condition: str, closer: str
) -> None:
    connection, session, producer, listener, peer = _async_send(make_peer, clients, condition)
    written = len(peer.transfers)
    closed_at = time.monotonic()
    {"producer": producer, "session": session}[closer].close()
    assert listener.called.wait(ENDS_WITHIN_S), "no CompletionListener callback after the close"
    assert time.monotonic() - closed_at < ENDS_WITHIN_S
    # The session's completion thread ends once the session is closed: every callback it
    # was going to make has been made by then.
    session.close()
    completion_thread = session._completion_thread
    assert completion_thread is not None
    completion_thread.join(ENDS_WITHIN_S)
    assert not completion_thread.is_alive()
    ((kind, error),) = listener.calls
    assert kind == "exception", listener.calls
    text = str(error)
    assert f"the {closer} was closed" in text, text
    if condition == NO_CREDIT:
        assert isinstance(error, jmspy.IllegalStateException) and "was not sent" in text, text
    else:
        assert not isinstance(error, jmspy.IllegalStateException), repr(error)
        assert "outcome is unknown" in text, text
    wire_barrier(connection)
    assert len(peer.transfers) == written, "a transfer was written after the close"


def test_a_producer_close_while_reconnecting_keeps_to_the_close_timeout(
    make_peer: PeerFactory, clients: Clients
) -> None:
    """The connection is down and failover keeps reconnecting while a send waits for its
    outcome: the producer's close, whose link work is held for the next transport, returns at
    jms.closeTimeout (it waited a second more for the held work that ends the send), and the
    send ends as of unknown outcome once the connection is back, not at jms.sendTimeout."""
    peer = make_peer(links=lambda a: LinkScript(outcome=None) if a.address == "q" else None)
    close_timeout_s = 2.0
    url = f"failover:({peer.url})?failover.reconnectDelay=20&failover.maxReconnectDelay=100"
    factory = clients.factory(
        url, send_timeout=SEND_TIMEOUT_MS, close_timeout=int(close_timeout_s * 1000)
    )
    connection = clients.track(factory.createConnection())
    interrupted, restored = threading.Event(), threading.Event()

    class Listener:
        def onConnectionInterrupted(self, uri: str) -> None:
            interrupted.set()

        def onConnectionRestored(self, uri: str) -> None:
            restored.set()

    connection.setConnectionListener(Listener())
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("q"))
    blocked = _BlockedSend(lambda: producer.send(session.createTextMessage("stored?")))
    blocked.start()
    with refusing_reconnects(peer):
        peer.drop(reset=True)
        assert interrupted.wait(30), "the drop was not noticed"
        began = time.monotonic()
        producer.close()
        took = time.monotonic() - began
    # Far below the 1 s the close overran by; the close itself waits close_timeout_s.
    assert took < close_timeout_s + 0.6, f"producer.close() took {took:.2f} s"
    assert restored.wait(30), "not restored"
    _assert_ended_by_close(blocked, began, UNSETTLED, "producer")


def test_a_producer_close_behind_a_busy_engine_keeps_to_the_close_timeout(
    make_peer: PeerFactory, clients: Clients
) -> None:
    """The engine thread is busy (held here by one piece of work) while a send waits for its
    outcome: the producer's close gives up on its link work at jms.closeTimeout; it then
    waited up to a second more for the engine to end the send. Now it returns at the close
    timeout, and the send ends as soon as the engine gets to the close."""
    peer = make_peer(links=lambda a: LinkScript(outcome=None) if a.address == "q" else None)
    close_timeout_s = 2.0
    connection = clients.connect(
        peer, send_timeout=SEND_TIMEOUT_MS, close_timeout=int(close_timeout_s * 1000)
    )
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("q"))
    blocked = _BlockedSend(lambda: producer.send(session.createTextMessage("stored?")))
    blocked.start()
    with _busy_engine(connection):
        began = time.monotonic()
        producer.close()
        took = time.monotonic() - began
    # The close waits close_timeout_s for its link work; it overran that by a second.
    assert took < close_timeout_s + 0.6, f"producer.close() took {took:.2f} s"
    _assert_ended_by_close(blocked, began, UNSETTLED, "producer")


@pytest.mark.parametrize("condition", [UNSETTLED, NO_CREDIT])
def test_a_session_close_behind_a_busy_engine_gives_each_asynchronous_send_one_callback(
    make_peer: PeerFactory, clients: Clients, condition: str
) -> None:
    """The close's producer work cannot run (the engine thread is busy) by the time the
    session counts as closed: the completion thread dropped the callback of a send that had
    no outcome yet (its listener never heard of it). Now it reports it at once, as withdrawn
    (never written: not sent) or of unknown outcome, and only once, also after the engine
    gets to ending the send."""
    connection, session, _, listener, _ = _async_send(
        make_peer, clients, condition, close_timeout=1000
    )
    with _busy_engine(connection):
        session.close()
        assert listener.called.wait(ENDS_WITHIN_S), "the callback was dropped"
    wire_barrier(connection)  # the engine has ended the send by now: no second callback
    ((kind, error),) = listener.calls
    assert kind == "exception", listener.calls
    expected = "outcome is unknown" if condition == UNSETTLED else "was not sent"
    assert expected in str(error), error
