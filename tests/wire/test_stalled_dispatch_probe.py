"""ActiveMQ Classic stops dispatching to a consumer that holds unacknowledged messages until
something wakes its queue, although the link has credit (jmspy/_amqp/dispatch_probe.py). With
its profile (a peer announcing product "ActiveMQ") a consumer link that has credit, holds
unsettled deliveries and has had no transfer for the probe interval is drained, and the drain's
answer restores the window. Credit the application frees while that drain is unanswered is
held back until the answer: granted during the drain, it would not be covered by the answer
and the drain would never end."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from proton import Message as AmqpMessage

from jmspy import AUTO_ACKNOWLEDGE, CLIENT_ACKNOWLEDGE

from .client_support import Clients, clients_fixture, wire_barrier
from .peer import FlowRecord, LinkScript, ScriptedPeer

RECEIVE_MS = 5000
# The ActiveMQ profile's probe interval is 500 ms: a drain comes within two of them.
DRAIN_WITHIN_S = 10.0

# The profile's queue prefix (the peer announces none, so the profile's applies).
HELD = "queue://held"
ACTIVEMQ = {"properties": {"product": "ActiveMQ"}, "offered_capabilities": ()}


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _flows(peer: ScriptedPeer, link: str) -> list[FlowRecord]:
    return [r for r in peer.records() if isinstance(r, FlowRecord) and r.link_name == link]


def _drains(peer: ScriptedPeer, link: str) -> list[FlowRecord]:
    return [r for r in _flows(peer, link) if r.drain]


def _wait_for_drains(peer: ScriptedPeer, link: str, count: int) -> list[FlowRecord]:
    return peer.wait_for_records(
        FlowRecord, lambda r: r.link_name == link and r.drain, count=count, timeout=DRAIN_WITHIN_S
    )


def test_a_link_holding_unacknowledged_messages_is_drained_when_nothing_comes(
    make_peer: Callable[..., ScriptedPeer], clients: Clients
) -> None:
    peer = make_peer(**ACTIVEMQ)
    peer.enqueue(HELD, AmqpMessage(body="first"), tag=b"m1")
    connection = clients.connect(peer, start=True)
    # An idle consumer holding nothing, on the same connection: never drained.
    idle = connection.createSession(AUTO_ACKNOWLEDGE)
    idle.createConsumer(idle.createQueue("idle"))
    idle_attach = peer.wait_for_attach("queue://idle", role="receiver")
    session = connection.createSession(CLIENT_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("held"))
    attach = peer.wait_for_attach(HELD, role="receiver")
    first = consumer.receive(RECEIVE_MS)
    assert first is not None and first.getBody(str) == "first"

    drain = _wait_for_drains(peer, attach.name, 1)[0]
    assert drain.link_credit and drain.link_credit > 0
    # The peer answers the drain (the well-mannered default); the window comes back.
    restored = peer.wait_for_records(
        FlowRecord,
        lambda r: (
            r.link_name == attach.name
            and not r.drain
            and (r.link_credit or 0) > 0
            and peer.records().index(r) > peer.records().index(drain)
        ),
        timeout=DRAIN_WITHIN_S,
    )
    assert restored
    peer.enqueue(HELD, AmqpMessage(body="second"), tag=b"m2")
    second = consumer.receive(RECEIVE_MS)
    assert second is not None and second.getBody(str) == "second"

    # Still holding both and nothing arriving: drained again; the idle link, whose checks run
    # as often, never was.
    _wait_for_drains(peer, attach.name, 2)
    assert not _drains(peer, idle_attach.name)


def test_credit_freed_while_the_probe_drain_is_unanswered_waits_for_the_answer(
    make_peer: Callable[..., ScriptedPeer], clients: Clients
) -> None:
    peer = make_peer(**ACTIVEMQ, links={HELD: LinkScript(answer_drain=False)})
    peer.enqueue(HELD, AmqpMessage(body="first"), tag=b"m1")
    connection = clients.connect(peer, start=True, **{"jms.prefetchPolicy.all": 2})
    session = connection.createSession(CLIENT_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("held"))
    attach = peer.wait_for_attach(HELD, role="receiver")
    assert consumer.receive(RECEIVE_MS) is not None  # credit for it is returned at once
    drain = _wait_for_drains(peer, attach.name, 1)[0]

    # The peer sends one more on the drained link but never answers the drain; taking it
    # frees its credit, which must wait for the answer.
    peer.enqueue(HELD, AmqpMessage(body="second"), tag=b"m2")
    second = consumer.receive(RECEIVE_MS)
    assert second is not None and second.getBody(str) == "second"
    wire_barrier(connection)  # anything the client sent for it has reached the peer
    records = peer.records()
    later = [r for r in _flows(peer, attach.name) if records.index(r) > records.index(drain)]
    assert later == [], later
