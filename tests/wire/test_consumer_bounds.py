"""Closes that wait for a peer stay within jms.closeTimeout, however many links they close.

A closing consumer holding prefetched messages stops its credit with a drain before releasing
them; a peer that never answers the drain must cost what is left of the close deadline (one
jms.closeTimeout shared by the whole connection or session close), not a full
amqp.drainTimeout for each consumer."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from proton import Message as AmqpMessage
from support_proxy import StallingProxy

from jmspy import AUTO_ACKNOWLEDGE

from .client_support import Clients, clients_fixture, wait_until
from .peer import LinkScript, ScriptedPeer

CLOSE_TIMEOUT_MS = 2000
DRAIN_TIMEOUT_MS = 60_000
# Far below the 3 x amqp.drainTimeout a close took when each drain waited in full, and
# generous for a busy machine: the close deadline is 2 s.
CLOSE_BOUND_S = 15.0


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _close_within(close: object, bound_s: float) -> float:
    """Run ``close`` on a thread; its duration, or fail once ``bound_s`` passed without it
    returning (the thread ends when the peer goes away at teardown)."""
    assert callable(close)
    took: list[float] = []
    errors: list[BaseException] = []

    def run() -> None:
        started = time.monotonic()
        try:
            close()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        took.append(time.monotonic() - started)

    closer = threading.Thread(target=run, daemon=True)
    closer.start()
    closer.join(bound_s)
    assert not closer.is_alive(), f"close() still running after {bound_s} s"
    assert not errors, errors
    return took[0]


def test_connection_close_shares_one_deadline_across_unanswered_drains(
    peer: ScriptedPeer, clients: Clients
) -> None:
    queues = [f"q{i}" for i in range(3)]
    for queue in queues:
        peer.script(queue, LinkScript(answer_drain=False))
        for n in range(2):
            peer.enqueue(queue, AmqpMessage(body=f"{queue}-{n}"))
    connection = clients.connect(
        peer, start=True, close_timeout=CLOSE_TIMEOUT_MS, drain_timeout=DRAIN_TIMEOUT_MS
    )
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    consumers = [session.createConsumer(session.createQueue(q)) for q in queues]
    for consumer in consumers:
        wait_until(lambda c=consumer: c.getPrefetchedCount() == 2, what="prefetched messages")

    took = _close_within(connection.close, CLOSE_BOUND_S)

    assert took < CLOSE_BOUND_S
    # Each consumer did stop its credit before giving its messages back.
    drained = {f.link_name for f in peer.flows if f.drain}
    assert len(drained) == len(queues), drained


def test_browser_close_shares_one_deadline_across_its_enumerations(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """Ten open enumerations and a connection that goes silent (a proxy in front of the peer
    holds every byte): each link's detach goes unanswered, and browser.close() returns after
    about one jms.closeTimeout, not one per enumeration (10 x 2 s)."""
    with StallingProxy(peer.host, peer.port) as proxy:
        connection = clients.connect(proxy.url, start=True, close_timeout=CLOSE_TIMEOUT_MS)
        session = connection.createSession(AUTO_ACKNOWLEDGE)
        browser = session.createBrowser(session.createQueue("q"))
        # Held on to: an enumeration collected early would close its own link first.
        open_enumerations = [browser.getEnumeration() for _ in range(10)]
        proxy.stall()

        took = _close_within(browser.close, CLOSE_BOUND_S)

        assert took < CLOSE_BOUND_S
        assert len(open_enumerations) == 10
