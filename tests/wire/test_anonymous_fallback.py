"""An anonymous producer on a broker without the anonymous relay (RabbitMQ 3.x): a link per
destination, at most ``amqp.anonymousFallbackCacheSize`` of them open, the least recently used
closed first, and one unused for ``amqp.anonymousFallbackCacheTimeout`` closed at the next
send (Qpid JMS's options, same defaults: 1 and 30 s)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from .client_support import Clients, clients_fixture, wire_barrier
from .peer import LinkScript, ScriptedPeer

# No ANONYMOUS-RELAY offered.
NO_RELAY_CAPS = ("sole-connection-for-container", "DELAYED_DELIVERY", "SHARED-SUBS")


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _sender_links(peer: ScriptedPeer) -> tuple[list[str], list[str]]:
    """Addresses of the sender links attached, and of those detached, in order."""
    attached = {a.name: a.target.address for a in peer.attaches if a.role == "sender" and a.target}
    detached = [attached[d.link_name] for d in peer.detaches if d.link_name in attached]
    order = [a.target.address for a in peer.attaches if a.role == "sender" and a.target]
    return order, detached


def _open_links(peer: ScriptedPeer) -> list[str]:
    order, detached = _sender_links(peer)
    still = list(order)
    for address in detached:
        still.remove(address)
    return still


def _send_to(session: Any, producer: Any, names: list[str]) -> None:
    for name in names:
        producer.send(session.createQueue(name), session.createTextMessage(name))


def test_default_keeps_one_link_and_loses_no_send(make_peer: Any, clients: Clients) -> None:
    """A producer sending to 50 destinations keeps one link open, not 50; every message is
    sent, each on the link of its own destination."""
    peer = make_peer(offered_capabilities=NO_RELAY_CAPS)
    connection = clients.connect(peer)
    session = connection.createSession()
    producer = session.createProducer(None)
    names = [f"q{i}" for i in range(50)]
    _send_to(session, producer, names)
    wire_barrier(connection)
    assert _open_links(peer) == ["q49"]
    order, _ = _sender_links(peer)
    assert order == names  # one attach per destination, each once
    bodies = [(t.link_name, t.payload) for t in peer.transfers]
    assert len(bodies) == 50
    assert all(name.endswith(f":q{i}") for i, (name, _) in enumerate(bodies))


def test_least_recently_used_goes_first(make_peer: Any, clients: Clients) -> None:
    peer = make_peer(offered_capabilities=NO_RELAY_CAPS)
    connection = clients.connect(peer, **{"amqp.anonymousFallbackCacheSize": 3})
    session = connection.createSession()
    producer = session.createProducer(None)
    _send_to(session, producer, ["a", "b", "c", "a"])  # "a" used again: no new link
    wire_barrier(connection)
    assert _sender_links(peer)[0] == ["a", "b", "c"]
    _send_to(session, producer, ["d"])  # the least recently used, "b", makes room
    wire_barrier(connection)
    assert sorted(_open_links(peer)) == ["a", "c", "d"]
    assert _sender_links(peer)[1] == ["b"]
    assert len(peer.transfers) == 5


def test_size_zero_makes_a_link_per_send(make_peer: Any, clients: Clients) -> None:
    peer = make_peer(offered_capabilities=NO_RELAY_CAPS)
    connection = clients.connect(peer, **{"amqp.anonymousFallbackCacheSize": 0})
    session = connection.createSession()
    producer = session.createProducer(None)
    _send_to(session, producer, ["a", "a", "b"])
    wire_barrier(connection)
    assert _sender_links(peer) == (["a", "a", "b"], ["a", "a", "b"])
    assert len(peer.transfers) == 3


def test_idle_link_closed_at_next_send(make_peer: Any, clients: Clients) -> None:
    """With room for both, the link unused for longer than the timeout is closed when the
    producer next sends elsewhere; the one just used stays."""
    peer = make_peer(offered_capabilities=NO_RELAY_CAPS)
    connection = clients.connect(
        peer,
        **{"amqp.anonymousFallbackCacheSize": 5, "amqp.anonymousFallbackCacheTimeout": 1},
    )
    session = connection.createSession()
    producer = session.createProducer(None)
    _send_to(session, producer, ["a"])
    wire_barrier(connection)
    # The link to "a" must have been unused for longer than the 1 ms timeout: a round trip on
    # the loopback can be shorter, so wait on the clock itself.
    unused_since = time.monotonic()
    while time.monotonic() - unused_since < 0.005:
        time.sleep(0.001)
    _send_to(session, producer, ["b"])
    wire_barrier(connection)
    assert _open_links(peer) == ["b"]
    assert _sender_links(peer)[1] == ["a"]


def test_no_timeout_keeps_links_until_the_cache_is_full(make_peer: Any, clients: Clients) -> None:
    peer = make_peer(offered_capabilities=NO_RELAY_CAPS)
    connection = clients.connect(
        peer,
        **{"amqp.anonymousFallbackCacheSize": 5, "amqp.anonymousFallbackCacheTimeout": 0},
    )
    session = connection.createSession()
    producer = session.createProducer(None)
    _send_to(session, producer, ["a", "b"])
    wire_barrier(connection)
    assert sorted(_open_links(peer)) == ["a", "b"]
    producer.close()
    wire_barrier(connection)
    assert _open_links(peer) == []


@pytest.mark.parametrize("value", [-1, "x"])
def test_bad_cache_size_names_the_option(make_peer: Any, clients: Clients, value: Any) -> None:
    import jmspy

    peer = make_peer(offered_capabilities=NO_RELAY_CAPS)
    with pytest.raises(jmspy.IllegalArgumentException) as info:
        clients.connect(peer, **{"amqp.anonymousFallbackCacheSize": value})
    assert "amqp.anonymousFallbackCacheSize" in str(info.value)


def test_evicting_a_link_does_not_make_the_send_wait_for_its_outcomes(
    make_peer: Any, clients: Clients
) -> None:
    """The cache holds one link; the broker never settles the send to 'held'. The send to
    'next' evicts that link and used to wait up to jms.closeTimeout for its outcome (past its
    own jms.sendTimeout); now the evicted link closes by itself once settled, or at the
    producer's close, which reports the held send's outcome as unknown, once."""
    peer = make_peer(
        offered_capabilities=NO_RELAY_CAPS,
        links=lambda a: LinkScript(outcome=None) if a.address == "held" else None,
        strict=False,
    )
    connection = clients.connect(peer, send_timeout=30000, close_timeout=6000)
    session = connection.createSession()
    producer = session.createProducer(None)
    outcomes: list[str] = []
    told = threading.Event()

    class Listener:
        def onCompletion(self, message: Any) -> None:
            outcomes.append("completed")
            told.set()

        def onException(self, message: Any, exception: Exception) -> None:
            outcomes.append(str(exception))
            told.set()

    producer.send(session.createQueue("held"), session.createTextMessage("held"), Listener())
    began = time.monotonic()
    producer.send(session.createQueue("next"), session.createTextMessage("next"))  # synchronous
    assert time.monotonic() - began < 4.0, "the send waited for the evicted link's outcomes"
    assert outcomes == []
    producer.close()
    assert told.wait(10.0)
    assert len(outcomes) == 1 and "outcome is unknown" in outcomes[0], outcomes
