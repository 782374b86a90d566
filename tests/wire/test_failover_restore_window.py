"""Failover's reconnect thread at its edges: a transport lost after the recovery succeeded but
before the connection was OPEN again, and a ConnectionListener that raises SystemExit."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest

import jmspy
from jmspy._amqp import failover

from .client_support import Clients, clients_fixture, wait_until
from .peer import ScriptedPeer


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _failover(peer: ScriptedPeer) -> str:
    return f"failover:({peer.url})?failover.reconnectDelay=20&failover.maxReconnectDelay=100"


class _Events:
    """A ConnectionListener recording what it hears."""

    def __init__(self) -> None:
        self.heard: list[str] = []
        self.restored = threading.Event()

    def onConnectionInterrupted(self, uri: str) -> None:
        self.heard.append("interrupted")

    def onConnectionRestored(self, uri: str) -> None:
        self.heard.append("restored")
        self.restored.set()


def test_a_transport_lost_between_recovery_and_restore_is_reconnected(
    peer: ScriptedPeer, clients: Clients, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The peer drops the new transport after it answered every re-attach, while the
    reconnect thread has not yet set the connection OPEN again (held there until the client's
    engine has ended). The connection reconnects once more instead of staying OPEN over a dead
    engine: a session can be created afterwards, on a third transport."""
    connection = clients.track(clients.factory(_failover(peer)).createConnection())
    events = _Events()
    connection.setConnectionListener(events)
    session = connection.createSession()
    session.createProducer(session.createQueue("q"))
    amqp = connection._amqp
    assert amqp is not None
    real_merge = failover.merge_server_list
    engines_ended: list[bool] = []

    def lose_it_in_the_window(*args: Any) -> Any:
        # Called by the reconnect thread after recover() succeeded, before restored().
        if len(peer.connections) == 2 and not engines_ended:
            engine = amqp.engine
            peer.drop(reset=True)
            engines_ended.append(engine.join(20))
        return real_merge(*args)

    monkeypatch.setattr(failover, "merge_server_list", lose_it_in_the_window)
    peer.drop(reset=True)
    assert events.restored.wait(30), f"not restored: {events.heard}"
    assert engines_ended == [True], "the window was not reached"
    connection.createSession().close()
    assert len(peer.connections) == 3
    assert len(peer.connections[2].attaches) >= 1, "the producer was not re-attached"
    assert events.heard == ["interrupted", "restored"]


def test_a_connection_listener_raising_system_exit_does_not_stop_the_reconnect(
    peer: ScriptedPeer, clients: Clients, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="jmspy")
    connection = clients.track(clients.factory(_failover(peer)).createConnection())
    restored = threading.Event()

    class Exiting:
        def onConnectionInterrupted(self, uri: str) -> None:
            raise SystemExit("listener exits")

        def onConnectionRestored(self, uri: str) -> None:
            restored.set()

    connection.setConnectionListener(Exiting())
    connection.createSession()
    peer.drop(reset=True)
    assert restored.wait(30), "the reconnect thread did not restore the connection"
    connection.createSession().close()
    assert any(
        r.exc_info is not None and isinstance(r.exc_info[1], SystemExit) for r in caplog.records
    ), "the listener's SystemExit was not logged"
    assert isinstance(connection, jmspy.Connection)


def test_losses_while_restoring_count_against_max_reconnect_attempts(
    peer: ScriptedPeer, clients: Clients, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every new transport is lost after its recovery, before the connection is OPEN again.
    With failover.maxReconnectAttempts=3 the connection gives up after three such attempts
    (each loss used to start a fresh count: it reconnected for ever) and says so to its
    ExceptionListener."""
    url = _failover(peer) + "&failover.maxReconnectAttempts=3"
    connection = clients.track(clients.factory(url).createConnection())
    failed = threading.Event()
    errors: list[jmspy.JMSException] = []

    def on_exception(error: jmspy.JMSException) -> None:
        errors.append(error)
        failed.set()

    connection.setExceptionListener(on_exception)
    connection.createSession()
    amqp = connection._amqp
    assert amqp is not None
    real_merge = failover.merge_server_list

    def lose_every_one(*args: Any) -> Any:
        engine = amqp.engine
        peer.drop(reset=True)
        assert engine.join(20), "the lost transport's engine did not end"
        return real_merge(*args)

    monkeypatch.setattr(failover, "merge_server_list", lose_every_one)
    peer.drop(reset=True)
    assert failed.wait(30), "failover never gave up"
    assert len(peer.connections) == 4, "not three attempts after the first connection"
    assert "after 3 attempt(s)" in str(errors[0]), errors[0]


def test_a_close_while_the_reconnect_thread_starts_joins_it(
    peer: ScriptedPeer, clients: Clients, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Connection.close() cancels the reconnect while the engine thread is still starting the
    reconnect thread. The close must neither raise (joining a thread not yet started raised
    RuntimeError out of close, seen under load) nor leave the reconnect thread running."""
    connection = clients.track(clients.factory(_failover(peer)).createConnection())
    connection.createSession()
    amqp = connection._amqp
    assert amqp is not None
    reconnector = amqp.reconnector
    assert reconnector is not None
    cancel_errors: list[BaseException] = []
    started: list[threading.Thread] = []

    def cancel() -> None:
        try:
            reconnector.cancel(10.0)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            cancel_errors.append(exc)

    class CancelledWhileStarting(threading.Thread):
        def start(self) -> None:
            canceller = threading.Thread(target=cancel, daemon=True)
            canceller.start()
            canceller.join(0.5)  # with the fix it waits for this start: either way is fine
            super().start()
            started.append(canceller)

    namespace = type("threading", (), {})()
    for name in ("Event", "Lock", "current_thread"):
        setattr(namespace, name, getattr(threading, name))
    namespace.Thread = CancelledWhileStarting  # type: ignore[attr-defined]
    monkeypatch.setattr(failover, "threading", namespace)
    peer.drop(reset=True)
    wait_until(lambda: bool(started), timeout=20, what="the reconnect thread started")
    started[0].join(20)
    assert not started[0].is_alive(), "cancel() did not return"
    assert cancel_errors == [], cancel_errors
    # cancel() joined the reconnect thread (it may have connected once before it saw the
    # cancel; it then stops that transport and ends).
    thread = reconnector._thread
    assert thread is not None and not thread.is_alive(), "the reconnect thread still runs"
    connection.close()
    wait_until(
        lambda: all(view.disconnected for view in peer.connections),
        timeout=20,
        what="every transport of the connection closed",
    )
