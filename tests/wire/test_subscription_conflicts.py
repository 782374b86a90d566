"""Durable subscriptions that cannot be active twice on one connection are refused by the
client before anything is sent, as Qpid JMS's AmqpConsumerBuilder refuses them (JMS 2.0
sections 8.3.3 and 8.3.4): the attach would reuse the link name of a live link, which the
broker never answers, so the call waited out jms.requestTimeout. A shared non-durable
subscription is another subscription than the durable one of the same name: it does not stop
``unsubscribe``."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

import jmspy

from .client_support import Clients, clients_fixture, wire_barrier
from .peer import ScriptedPeer

# Long enough that a refusal that waited for the broker cannot pass for a prompt one.
REQUEST_TIMEOUT_MS = 4000


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _receiver_attaches(peer: ScriptedPeer, name: str) -> int:
    return sum(1 for a in peer.attaches if a.role == "receiver" and a.name == name)


def _refused_at_once(call: object, match: str) -> None:
    started = time.monotonic()
    with pytest.raises(jmspy.JMSException, match=match):
        call()  # type: ignore[operator]
    assert time.monotonic() - started < REQUEST_TIMEOUT_MS / 2000, "refused by the broker's silence"


def test_a_second_consumer_of_an_unshared_durable_subscription_is_refused_at_once(
    peer: ScriptedPeer, clients: Clients
) -> None:
    connection = clients.connect(peer, client_id="cid", request_timeout=REQUEST_TIMEOUT_MS)
    session = connection.createSession()
    other_session = connection.createSession()
    topic = session.createTopic("news")
    first = session.createDurableConsumer(topic, "sub")
    peer.wait_for_attach(name="sub")

    _refused_at_once(
        lambda: session.createDurableConsumer(topic, "sub"), "non-shared durable.*'sub'"
    )
    _refused_at_once(
        lambda: other_session.createDurableSubscriber(topic, "sub"), "non-shared durable.*'sub'"
    )
    _refused_at_once(
        lambda: session.createSharedDurableConsumer(topic, "sub"), "non-shared durable.*'sub'"
    )
    wire_barrier(connection)
    assert _receiver_attaches(peer, "sub") == 1, "nothing is sent for a refused consumer"

    # The first one is untouched by the refusals, and once closed the name is free again.
    first.close()
    peer.wait_for_detach("sub")
    again = session.createDurableConsumer(topic, "sub")
    wire_barrier(connection)
    assert _receiver_attaches(peer, "sub") == 2
    again.close()


def test_an_unshared_durable_consumer_is_refused_while_a_shared_one_is_active(
    peer: ScriptedPeer, clients: Clients
) -> None:
    connection = clients.connect(peer, client_id="cid", request_timeout=REQUEST_TIMEOUT_MS)
    session = connection.createSession()
    topic = session.createTopic("news")
    shared = session.createSharedDurableConsumer(topic, "sub")
    peer.wait_for_attach(name="sub")

    _refused_at_once(lambda: session.createDurableConsumer(topic, "sub"), "shared durable.*'sub'")
    # A shared non-durable subscription of that name is another subscription.
    session.createSharedConsumer(topic, "sub").close()
    shared.close()
    session.createDurableConsumer(topic, "sub").close()
    wire_barrier(connection)
    assert _receiver_attaches(peer, "sub") == 2  # the shared one's and the last one's


def test_unsubscribe_is_not_stopped_by_a_shared_non_durable_consumer_of_that_name(
    peer: ScriptedPeer, clients: Clients
) -> None:
    connection = clients.connect(peer, client_id="cid", request_timeout=500)
    session = connection.createSession()
    topic = session.createTopic("news")
    volatile = session.createSharedConsumer(topic, "sub")
    peer.wait_for_attach(name="sub|volatile1")

    # This peer finds no durable subscription "sub": the lookup is refused by the peer,
    # not by the client's check for active durable consumers.
    with pytest.raises(jmspy.JMSException) as refused:
        session.unsubscribe("sub")
    assert not isinstance(refused.value, jmspy.IllegalStateException), refused.value
    lookup = peer.wait_for_attach(name="sub")
    assert lookup.source is None
    volatile.close()

    # A durable consumer of that name still stops it.
    durable = session.createSharedDurableConsumer(topic, "sub")
    with pytest.raises(jmspy.IllegalStateException, match="still active"):
        session.unsubscribe("sub")
    durable.close()
