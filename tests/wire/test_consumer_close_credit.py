"""Closing a consumer that has messages to settle: the link's credit is stopped (a drain)
before the settlements, so a broker that redelivers a settled message at once to a link with
credit (ActiveMQ Classic does, after modified(delivery-failed)) cannot send it back on the
closing link, where it would be lost to the close. A consumer with nothing to settle closes
without the extra round trip."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from proton import Message as AmqpMessage

from jmspy import AUTO_ACKNOWLEDGE, CLIENT_ACKNOWLEDGE

from .client_support import Clients, clients_fixture, wait_for_disposition, wire_barrier
from .peer import DetachRecord, DispositionRecord, FlowRecord, ScriptedPeer

RECEIVE_MS = 2000


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _drains(records: list[object], link: str) -> list[int]:
    return [
        i
        for i, r in enumerate(records)
        if isinstance(r, FlowRecord) and r.link_name == link and r.drain
    ]


def test_client_ack_close_drains_before_modified(peer: ScriptedPeer, clients: Clients) -> None:
    peer.enqueue("q", AmqpMessage(body="x"), tag=b"m1")
    connection = clients.connect(peer, start=True)
    consumer = connection.createSession(CLIENT_ACKNOWLEDGE).createConsumer(
        connection.createSession().createQueue("q")
    )
    attach = peer.wait_for_attach("q", role="receiver")
    assert consumer.receive(RECEIVE_MS) is not None

    consumer.close()

    modified = wait_for_disposition(peer, b"m1")
    assert modified.kind == "modified"
    assert modified.outcome is not None and modified.outcome.delivery_failed is True
    detach = peer.wait_for_detach(attach.name)
    records = peer.records()
    drains = _drains(records, attach.name)
    assert drains, "no drain before the settlement"
    assert drains[0] < records.index(modified) < records.index(detach)


def test_close_with_nothing_to_settle_sends_no_drain(peer: ScriptedPeer, clients: Clients) -> None:
    connection = clients.connect(peer, start=True)
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("q"))
    attach = peer.wait_for_attach("q", role="receiver")
    wire_barrier(connection)

    consumer.close()

    detach = peer.wait_for_detach(attach.name)
    records = peer.records()
    assert not _drains(records, attach.name)
    assert isinstance(detach, DetachRecord)
    assert not [r for r in records if isinstance(r, DispositionRecord)]
