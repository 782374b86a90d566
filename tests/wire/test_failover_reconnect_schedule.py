"""Failover's reconnect attempts and delays against Qpid JMS's ``FailoverProvider``
(``ReconnectControls``): the waits between attempts on a first connect and after a drop, and
``failover.maxReconnectAttempts=0``, which allows no attempt after a drop."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

import jmspy
from jmspy._amqp.failover import Reconnector

from .client_support import Clients, clients_fixture, refusing_reconnects
from .peer import ScriptedPeer


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


@pytest.fixture
def waits_ms(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every wait the reconnect loop asks for, in milliseconds (the waits still happen)."""
    waits: list[float] = []
    real_sleep = Reconnector._sleep

    def recording(self: Reconnector, seconds: float) -> None:
        waits.append(round(seconds * 1000, 6))
        real_sleep(self, seconds)

    monkeypatch.setattr(Reconnector, "_sleep", recording)
    return waits


def test_first_connect_with_an_initial_delay_backs_off_from_the_third_attempt(
    peer: ScriptedPeer, clients: Clients, waits_ms: list[float]
) -> None:
    """Qpid JMS multiplies the delay once its attempt count is above 1, whether or not the
    second attempt waited initialReconnectDelay: with 30/10/x2 the first connect waits 30, 20,
    40 ms. jmspy counted back-off steps instead and waited 30, 10, 20."""
    url = (
        f"failover:({peer.url})?failover.startupMaxReconnectAttempts=4"
        "&failover.initialReconnectDelay=30&failover.reconnectDelay=10"
    )
    connection = clients.track(clients.factory(url).createConnection())
    with refusing_reconnects(peer), pytest.raises(jmspy.JMSException):
        connection.createSession()  # the first connect
    assert len(peer.connections) == 4
    assert waits_ms == [30.0, 20.0, 40.0]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        # Qpid JMS keeps the delay in a long: each product is truncated (15, 22.5 -> 22).
        ("failover.reconnectDelay=10&failover.reconnectBackOffMultiplier=1.5", [0, 10, 15, 22]),
        # Only a multiplied delay is capped: without back-off, reconnectDelay is used as is.
        (
            "failover.reconnectDelay=40&failover.maxReconnectDelay=25"
            "&failover.useReconnectBackOff=false",
            [0, 40, 40, 40],
        ),
    ],
)
def test_delays_after_a_drop_are_qpid_jms_milliseconds(
    peer: ScriptedPeer,
    clients: Clients,
    waits_ms: list[float],
    options: str,
    expected: list[float],
) -> None:
    url = f"failover:({peer.url})?failover.maxReconnectAttempts=4&{options}"
    connection = clients.track(clients.factory(url).createConnection())
    failed = threading.Event()
    connection.setExceptionListener(lambda error: failed.set())
    connection.createSession()
    with refusing_reconnects(peer):
        peer.drop(reset=True)
        assert failed.wait(30), "failover never gave up"
    assert len(peer.connections) == 5, "not four attempts after the first connection"
    assert waits_ms == expected


def test_max_reconnect_attempts_zero_does_not_reconnect_after_a_drop(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """failover.maxReconnectAttempts=0: Qpid JMS checks the limit before the first reconnect
    and fails the connection (onConnectionFailure, then the ExceptionListener) without an
    attempt or an onConnectionInterrupted. jmspy made one attempt, which restored the
    connection, so it never failed."""
    url = f"failover:({peer.url})?failover.maxReconnectAttempts=0"
    connection = clients.track(clients.factory(url).createConnection())
    heard: list[str] = []
    failed = threading.Event()

    class Listener:
        def onConnectionInterrupted(self, uri: str) -> None:
            heard.append("interrupted")

        def onConnectionRestored(self, uri: str) -> None:
            heard.append("restored")

        def onConnectionFailure(self, error: jmspy.JMSException) -> None:
            heard.append("failure")

    connection.setConnectionListener(Listener())
    connection.setExceptionListener(lambda error: failed.set())
    session = connection.createSession()
    peer.drop(reset=True)
    assert failed.wait(10), "the connection was not failed"
    assert len(peer.connections) == 1, "failover reconnected"
    assert "interrupted" not in heard and "restored" not in heard, heard
    with pytest.raises(jmspy.JMSException):
        session.createProducer(session.createQueue("q"))
