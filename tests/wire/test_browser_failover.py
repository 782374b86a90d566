"""A QueueBrowser whose connection fails over mid-enumeration starts again (docs/failover.md):
the new copy link browses the queue from its head, so what the old link had buffered and not
yet handed out comes again from the new one. Handed out as well, those messages appeared once
more than the restart implies (and taking each returned credit the new link never granted)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message as AmqpMessage

from .client_support import Clients, FirstRestore, clients_fixture, wire_barrier
from .peer import ScriptedPeer

PREFETCH = 4


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def test_an_enumeration_interrupted_by_failover_starts_again_without_the_old_buffer(
    peer: ScriptedPeer, clients: Clients
) -> None:
    url = (
        f"failover:({peer.url})?failover.reconnectDelay=20&failover.maxReconnectDelay=100"
        f"&jms.prefetchPolicy.queueBrowserPrefetch={PREFETCH}"
    )
    connection: Any = clients.track(clients.factory(url).createConnection())
    restores = FirstRestore()
    connection.setConnectionListener(restores)
    session = connection.createSession()
    queue = session.createQueue("q")
    for i in range(PREFETCH):
        peer.enqueue("q", AmqpMessage(body=f"m{i}"))
    enumeration = session.createBrowser(queue).getEnumeration()
    seen = [enumeration.nextElement().getBody(str)]
    wire_barrier(connection)  # the rest of the prefetch has arrived, buffered
    peer.drop(reset=True)
    assert restores.restored.wait(30), "not restored"
    for i in range(PREFETCH):  # the broker browses the queue from its head again
        peer.enqueue("q", AmqpMessage(body=f"m{i}"))
    while enumeration.hasMoreElements():
        seen.append(enumeration.nextElement().getBody(str))
    assert seen == ["m0", "m0", "m1", "m2", "m3"]
