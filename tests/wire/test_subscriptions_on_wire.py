"""Subscriptions, temporary destinations and browsers on the wire: link names, source
capabilities and terminus settings follow Qpid JMS so Java and Python share subscriptions."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import jmspy

from .client_support import Clients, clients_fixture, wire_barrier
from .peer import ScriptedPeer

UNSETTLED_STATE = 2


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def test_durable_subscriber_link_and_detach_on_close(peer: ScriptedPeer, clients: Clients) -> None:
    connection = clients.connect(peer, client_id="cid")
    session = connection.createSession()
    subscriber = session.createDurableSubscriber(session.createTopic("news"), "mysub", "a = 1")
    attach = peer.wait_for_attach(name="mysub")
    assert attach.role == "receiver"
    assert attach.source.address == "news"
    assert attach.source.capabilities == ["topic"]
    assert attach.source.durable == UNSETTLED_STATE
    assert attach.source.expiry_policy == "never"
    assert attach.source.distribution_mode == "copy"
    assert "jms-selector" in attach.source.filter
    subscriber.close()
    detach = peer.wait_for_detach("mysub")
    assert detach.closed is False, "closing a durable subscriber must not delete it"


def test_unsubscribe_looks_up_by_name(peer: ScriptedPeer, clients: Clients) -> None:
    """The lookup attach carries the subscription's link name and a null source. (This peer
    answers a null source with a null source, which is "not found"; the rest of unsubscribe is
    shown against Artemis in tests/broker/test_jms_surface.py.)"""
    connection = clients.connect(peer, client_id="cid", request_timeout=500)
    session = connection.createSession()
    with pytest.raises(jmspy.JMSException):
        session.unsubscribe("oldsub")
    attach = peer.wait_for_attach(name="oldsub")
    assert attach.role == "receiver"
    assert attach.source is None, "the lookup attach carries a null source"
    assert attach.desired_capabilities == [], "with a client id nothing is desired"


def test_unsubscribe_without_client_id_desires_shared_global(
    peer: ScriptedPeer, clients: Clients
) -> None:
    connection = clients.connect(peer, request_timeout=500)
    with pytest.raises(jmspy.JMSException):
        connection.createSession().unsubscribe("g")
    attach = peer.wait_for_attach(name="g|global")
    assert attach.desired_capabilities == ["shared", "global"]
    assert attach.source is None


def test_shared_durable_link_names_with_and_without_client_id(
    make_peer: object, clients: Clients
) -> None:
    peer = make_peer()  # type: ignore[operator]
    with_id = clients.connect(peer, client_id="cid").createSession()
    topic = with_id.createTopic("t")
    with_id.createSharedDurableConsumer(topic, "s")
    with_id.createSharedDurableConsumer(topic, "s")
    without_id = clients.connect(peer).createSession()
    without_id.createSharedDurableConsumer(without_id.createTopic("t"), "g")
    without_id.createSharedConsumer(without_id.createTopic("t"), "v")
    first = peer.wait_for_attach(name="s")
    second = peer.wait_for_attach(name="s|2")
    global_ = peer.wait_for_attach(name="g|global")
    volatile = peer.wait_for_attach(name="v|global-volatile1")
    assert first.source.capabilities == ["topic", "shared"]
    assert second.source.capabilities == ["topic", "shared"]
    assert global_.source.capabilities == ["topic", "shared", "global"]
    assert global_.source.durable == UNSETTLED_STATE
    assert volatile.source.capabilities == ["topic", "shared", "global"]
    assert volatile.source.durable == 0


def test_subscription_name_rules(peer: ScriptedPeer, clients: Clients) -> None:
    session = clients.connect(peer, client_id="cid").createSession()
    with pytest.raises(jmspy.JMSException):
        session.createDurableSubscriber(session.createTopic("t"), "a|b")
    with pytest.raises(jmspy.InvalidDestinationException):
        session.createDurableSubscriber(session.createQueue("q"), "s")  # type: ignore[arg-type]


def test_temporary_queue_is_a_dynamic_node(peer: ScriptedPeer, clients: Clients) -> None:
    connection = clients.connect(peer)
    session = connection.createSession()
    temp = session.createTemporaryQueue()
    attach = next(a for a in peer.attaches if a.target is not None and a.target.dynamic)
    assert attach.role == "sender"
    assert attach.target.capabilities == ["temporary-queue"]
    assert attach.target.expiry_policy == "link-detach"
    assert temp.getQueueName() and temp.getQueueName() == temp.address
    temp.delete()
    assert peer.wait_for_detach(attach.name).closed is True


def test_browser_link_copies_and_is_presettled(peer: ScriptedPeer, clients: Clients) -> None:
    connection = clients.connect(peer)
    session = connection.createSession()
    browser = session.createBrowser(session.createQueue("q"))
    assert list(browser.getEnumeration()) == []
    attach = peer.wait_for_attach("q", role="receiver")
    assert attach.source.distribution_mode == "copy"
    assert attach.snd_settle_mode == 1  # settled
    wire_barrier(connection)
    assert any(f.drain for f in peer.flows), "an empty drain ends the enumeration"
