"""transport.sharedEventLoopThreads: many connections served by a few shared engine threads
and a shared listener dispatch pool, with every connection behaving as with its own thread
(deliveries, refused connects, idle-timeout detection, listener rules, close)."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message

import jmspy
from jmspy._amqp import event_loop
from jmspy.errors import IllegalArgumentException, IllegalStateException, JMSException

from .client_support import Clients, clients_fixture, wait_until
from .peer import ScriptedPeer


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _threads(prefix: str) -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(prefix)]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_many_connections_share_one_engine_and_one_dispatch_thread(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """Eight connections with a listener each, shared group of 1: every listener gets its
    message, and there is one loop thread and one dispatch thread, no thread per connection
    or per session."""
    received: dict[int, list[str]] = {i: [] for i in range(8)}
    arrived = threading.Semaphore(0)
    for i in range(8):
        peer.enqueue(f"q{i}", Message(body=f"m{i}"))
    for i in range(8):
        connection = clients.connect(peer, shared_event_loop_threads=1)
        session = connection.createSession()
        consumer = session.createConsumer(session.createQueue(f"q{i}"))

        def on_message(message: jmspy.Message, i: int = i) -> None:
            received[i].append(str(message.getBody(str)))
            arrived.release()

        consumer.setMessageListener(on_message)
        connection.start()
    for _ in range(8):
        assert arrived.acquire(timeout=30), f"not every listener was called: {received}"
    assert received == {i: [f"m{i}"] for i in range(8)}
    # The short-lived connect threads end once their engine joined the loop.
    wait_until(lambda: not _threads("jmspy-engine"), timeout=30, what="connect threads to end")
    assert len(_threads("jmspy-shared-loop-1-")) == 1
    assert len(_threads("jmspy-shared-dispatch-1-")) == 1
    assert not _threads("jmspy-session-")


def test_loop_threads_end_with_the_last_connection(peer: ScriptedPeer, clients: Clients) -> None:
    connections = [clients.connect(peer, shared_event_loop_threads=3) for _ in range(4)]
    for connection in connections:
        connection.createSession().close()
    assert 1 <= len(_threads("jmspy-shared-loop-3-")) <= 3
    for connection in connections:
        connection.close()
    wait_until(lambda: not _threads("jmspy-shared-loop-3-"), timeout=30, what="loops to end")


def test_refused_connect_does_not_disturb_the_connections_sharing_the_loop(
    peer: ScriptedPeer, clients: Clients
) -> None:
    live = clients.connect(peer, shared_event_loop_threads=1)
    refused = clients.connect(f"amqp://127.0.0.1:{_closed_port()}", shared_event_loop_threads=1)
    with pytest.raises(JMSException, match="could not connect|refused"):
        refused.createSession()  # the connection opens on first use
    live.createSession().close()


def test_idle_timeout_is_detected_on_the_shared_loop(clients: Clients) -> None:
    """A silent peer is detected by amqp.idleTimeout on the shared loop as on an engine thread
    of its own; a healthy connection on the same loop carries on."""
    failures: list[JMSException] = []
    failed = threading.Event()

    def on_exception(exc: JMSException) -> None:
        failures.append(exc)
        failed.set()

    with ScriptedPeer(heartbeats=False) as silent, ScriptedPeer() as healthy:
        good = clients.connect(healthy, shared_event_loop_threads=1)
        doomed = clients.connect(silent, shared_event_loop_threads=1, idle_timeout=1000)
        doomed.setExceptionListener(on_exception)
        good.createSession()
        doomed.createSession()  # both open now, on the same loop thread
        assert failed.wait(30), "the silent peer was not detected"
        assert "idle" in str(failures[0]).lower()
        good.createSession().close()


def test_listener_closing_its_own_session_is_refused_on_the_shared_pool(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """The pool thread running a session's listener is that session's dispatch thread: the
    JMS rule that a listener must not close its own session still applies."""
    peer.enqueue("q", Message(body="x"))
    connection = clients.connect(peer, shared_event_loop_threads=1)
    session = connection.createSession()
    outcome: list[BaseException | None] = []
    done = threading.Event()

    def on_message(message: jmspy.Message) -> None:
        try:
            session.close()
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - checked below
            outcome.append(exc)
        done.set()

    session.createConsumer(session.createQueue("q")).setMessageListener(on_message)
    connection.start()
    assert done.wait(30), "the listener was not called"
    assert isinstance(outcome[0], IllegalStateException), repr(outcome[0])


@pytest.mark.parametrize("value", ["-2", "257", "many"])
def test_bad_shared_event_loop_threads_is_refused(value: str) -> None:
    with pytest.raises(IllegalArgumentException, match="transport.sharedEventLoopThreads"):
        jmspy.ConnectionFactory(f"amqp://127.0.0.1:5672?transport.sharedEventLoopThreads={value}")


def test_a_failing_poller_fails_its_connections_and_the_next_connection_gets_a_new_loop(
    peer: ScriptedPeer, clients: Clients, caplog: pytest.LogCaptureFixture, monkeypatch: Any
) -> None:
    """An error of the loop itself (its poller, not an engine's step) is logged, fails the
    connections it served as a lost transport would (the ExceptionListener hears it), and a
    connection made afterwards gets a new loop thread that works."""
    caplog.set_level(logging.ERROR, logger="jmspy.engine")
    failures: list[JMSException] = []
    failed = threading.Event()

    def on_exception(exc: JMSException) -> None:
        failures.append(exc)
        failed.set()

    doomed = clients.connect(peer, shared_event_loop_threads=1)
    doomed.setExceptionListener(on_exception)
    doomed.createSession()
    loop = event_loop.shared_loop(1)
    assert loop is not None
    armed = threading.Event()
    real_poll = event_loop._Poller.poll

    def poll(self: event_loop._Poller, timeout_s: float) -> list[tuple[int, int]]:
        if armed.is_set() and threading.current_thread().name == loop.name:
            armed.clear()
            raise RuntimeError("injected poller fault")
        return real_poll(self, timeout_s)

    monkeypatch.setattr(event_loop._Poller, "poll", poll)
    armed.set()
    # The begin wakes the loop, which polls again after sending it.
    with pytest.raises(JMSException, match="injected poller fault"):
        doomed.createSession()
    assert failed.wait(30), "the connection served by the broken loop never failed"
    assert "injected poller fault" in str(failures[0])
    logged = [r for r in caplog.records if r.levelno >= logging.ERROR and r.exc_info]
    assert any("injected poller fault" in str(r.exc_info[1]) for r in logged if r.exc_info)
    fresh = clients.connect(peer, shared_event_loop_threads=1)
    fresh.createSession().close()
    assert not armed.is_set()
