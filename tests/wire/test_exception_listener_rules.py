"""JMS-14: the ExceptionListener hears only about problems with nowhere else to go (an
asynchronous send refused after send() returned), never about exceptions an API call raised,
and its invocations are serialized."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

import jmspy
from jmspy import DeliveryMode

from .client_support import Clients, clients_fixture
from .peer import LinkScript, Outcome


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def test_jms14_listener_gets_async_failures_only_and_serialized(
    make_peer: Any, clients: Clients
) -> None:
    peer = make_peer(
        links={"refusing": LinkScript(outcome=Outcome.rejected("amqp:internal-error", "nope"))}
    )
    connection = clients.connect(peer)
    heard: list[jmspy.JMSException] = []
    running = 0
    overlapped = threading.Event()
    done = threading.Event()
    guard = threading.Lock()

    def on_exception(error: jmspy.JMSException) -> None:
        nonlocal running
        with guard:
            running += 1
            if running > 1:
                overlapped.set()
        heard.append(error)
        threading.Event().wait(0.05)  # stay inside long enough for an overlap to show
        with guard:
            running -= 1
        if len(heard) == 3:
            done.set()

    connection.setExceptionListener(on_exception)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("refusing"))
    # A synchronous (persistent) send raises to its caller and is not reported again.
    with pytest.raises(jmspy.JMSException):
        producer.send(session.createTextMessage("sync"))
    # Asynchronous (non-persistent) sends return at once; their refusal has nowhere else to go.
    producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)
    for i in range(3):
        producer.send(session.createTextMessage(f"async {i}"))
    assert done.wait(5)
    assert len(heard) == 3
    assert all("refusing" in str(error) for error in heard)
    assert not overlapped.is_set(), "ExceptionListener invocations overlapped"
