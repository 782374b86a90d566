"""The broker may send transfers, detach a link or drop the connection as soon as it answers
the link's attach, before createConsumer or createProducer returns: every hook the engine
thread calls on a link is set before the attach is written."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message as AmqpMessage

from jmspy import AUTO_ACKNOWLEDGE
from jmspy._amqp.receiver import AmqpReceiver
from jmspy._amqp.sender import AmqpSender

from .client_support import Clients, clients_fixture
from .peer import ScriptedPeer


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _record_at_attach(
    monkeypatch: pytest.MonkeyPatch, link_class: type, fields: tuple[str, ...]
) -> list[dict[str, Any]]:
    """The given attributes of each link of ``link_class`` as its attach is written."""
    seen: list[dict[str, Any]] = []
    attach = link_class._do_attach

    def recording_attach(link: Any, completion: Any) -> None:
        seen.append({field: getattr(link, field) for field in fields})
        attach(link, completion)

    monkeypatch.setattr(link_class, "_do_attach", recording_attach)
    return seen


def test_a_consumer_hooks_its_link_before_the_attach(
    peer: ScriptedPeer, clients: Clients, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _record_at_attach(
        monkeypatch,
        AmqpReceiver,
        ("on_messages", "on_interrupted", "on_ended", "buffered_count"),
    )
    for i in range(3):
        peer.enqueue("q", AmqpMessage(body=f"q:{i}"))
    connection = clients.connect(peer, start=True)
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("q"))

    assert seen == [
        {
            "on_messages": consumer._on_inbound_many,
            "on_interrupted": consumer._on_interrupted,
            "on_ended": consumer._on_ended_by_broker,
            "buffered_count": consumer._buffered_count,
        }
    ]
    texts = [consumer.receive(10_000).getText() for _ in range(3)]
    assert texts == ["q:0", "q:1", "q:2"]


def test_a_producer_hooks_its_link_before_the_attach(
    peer: ScriptedPeer, clients: Clients, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _record_at_attach(monkeypatch, AmqpSender, ("on_ended", "async_failure_handler"))
    connection = clients.connect(peer)
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    producer = session.createProducer(session.createQueue("q"))

    assert len(seen) == 1
    assert seen[0]["on_ended"] == producer._on_ended_by_broker
    assert seen[0]["async_failure_handler"] is not None
    producer.send(session.createTextMessage("sent"))
    assert peer.wait_for_transfers(1)
