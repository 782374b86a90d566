"""Asynchronous sends without a CompletionListener whose link the peer closes before settling
them: only the ExceptionListener can hear of them, and it does (Qpid JMS reports each as a
non-fatal exception; jmspy reports one per link, with the counts)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

import jmspy

from .client_support import Clients, clients_fixture
from .conftest import PeerFactory
from .peer import LinkScript


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def test_unsettled_async_sends_are_reported_when_the_peer_closes_the_link(
    make_peer: PeerFactory, clients: Clients
) -> None:
    peer = make_peer(links={"doomed": LinkScript(outcome=None)})  # never settles
    connection = clients.connect(peer)
    heard: list[jmspy.JMSException] = []
    reported = threading.Event()

    def on_exception(error: jmspy.JMSException) -> None:
        heard.append(error)
        reported.set()

    connection.setExceptionListener(on_exception)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("doomed"))
    producer.setDeliveryMode(jmspy.DeliveryMode.NON_PERSISTENT)  # sent asynchronously
    for number in range(3):
        producer.send(session.createTextMessage(f"m{number}"))
    peer.wait_for_transfers(3)
    link: Any = peer.wait_for_attach(role="sender").name
    peer.close_link(link, "amqp:resource-deleted", "the queue was deleted")
    assert reported.wait(10), "the ExceptionListener heard nothing of the three sends"
    (error,) = heard
    text = str(error)
    assert "3 asynchronous send(s) to 'doomed'" in text and "3 written" in text, text
    assert "outcome is unknown" in text and "the queue was deleted" in text, text
    # The connection lives on: a new producer sends.
    session.createProducer(session.createQueue("other")).send(session.createTextMessage("next"))
