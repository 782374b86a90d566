"""What a connection that lives for months must not keep per consumer, browser or receive: each
test repeats the work N times, then N times more, and looks at what the client still holds
(proton's links of the session, the work held for a reconnect). It must be no more after 2N
than after N."""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message as AmqpMessage

import jmspy

from .client_support import Clients, clients_fixture, refusing_reconnects, wait_until
from .peer import DetachRecord, DispositionRecord, LinkScript, Outcome, ScriptedPeer

ROUNDS = 12


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _on_engine(connection: jmspy.Connection, look: Any) -> Any:
    engine: Any = connection._amqp.engine  # type: ignore[union-attr]

    def run(completion: Any) -> None:
        completion.succeed(look(engine))

    return engine.call(run, 20.0, "looking at the engine", jmspy.JMSException)


def _proton_links(connection: jmspy.Connection) -> int:
    """The links proton still has on the connection, once the engine freed what it could."""

    def nothing_left_to_free(engine: Any) -> bool:
        return not engine.freed

    def settled() -> bool:
        gc.collect()  # closed consumers and browsers hold their link until they are collected
        return bool(_on_engine(connection, nothing_left_to_free))

    wait_until(settled, 20, "the engine to free the closed links")

    def count(engine: Any) -> int:
        links = 0
        link = engine.connection.link_head(0)
        while link is not None:
            links += 1
            link = link.next(0)
        return links

    links: int = _on_engine(connection, count)
    return links


def _drains(peer: ScriptedPeer) -> int:
    return sum(1 for f in peer.flows if f.drain)


def test_a_consumer_closed_while_the_broker_answers_its_drain_leaves_no_link_behind(
    make_peer: Any, clients: Clients
) -> None:
    """Closing a consumer with an unacknowledged message drains its credit first; a broker
    answers the drain with the messages it has (Artemis does), and they reach a consumer that
    is already closed. Settled with the link's default outcome before the detach, they no
    longer keep proton's link on the session once it is closed at both ends."""
    # The peer answers a drain only with messages: those the test queues while the close
    # waits, which use the credit up, as a broker's answer does.
    peer = make_peer(links={"q": LinkScript(answer_drain=False)})
    connection = clients.connect(peer, query="jms.prefetchPolicy.all=10", start=True)
    session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
    queue = session.createQueue("q")
    late_tags: list[tuple[bytes, str]] = []

    def close_while_the_drain_is_answered(rounds: int) -> None:
        for _ in range(rounds):
            consumer = session.createConsumer(queue)
            peer.enqueue("q", AmqpMessage(body="seen"))
            assert consumer.receive(5000) is not None  # not acknowledged: the close drains
            drains = _drains(peer)
            closing = threading.Thread(target=consumer.close, name="test-consumer-close")
            closing.start()
            wait_until(lambda: _drains(peer) > drains, 20, "the close to drain")  # noqa: B023
            link_name = peer.attaches[-1].name
            for _ in range(9):  # the rest of the credit
                tag = f"late-{len(late_tags)}".encode()
                late_tags.append((tag, link_name))
                peer.enqueue("q", AmqpMessage(body="late"), tag=tag)
            closing.join(20)
            assert not closing.is_alive(), "the consumer close did not end"

    close_while_the_drain_is_answered(ROUNDS)
    after_n = _proton_links(connection)
    close_while_the_drain_is_answered(ROUNDS)
    after_2n = _proton_links(connection)
    assert after_2n == after_n, (
        f"{after_2n - after_n} more proton links after {ROUNDS} more consumer closes"
    )

    # The late messages were settled with the default outcome the link asked for,
    # modified(delivery-failed), before its detach.
    records = peer.records()
    detached = {
        r.link_name: i for i, r in enumerate(records) if isinstance(r, DetachRecord) and r.closed
    }
    late = {tag: link_name for tag, link_name in late_tags}
    assert len(late) == 2 * ROUNDS * 9
    for i, record in enumerate(records):
        if isinstance(record, DispositionRecord):
            for tag in record.delivery_tags:
                if tag in late:
                    outcome = record.outcome
                    assert record.settled and outcome is not None, record
                    assert outcome.kind == "modified" and outcome.delivery_failed, record
                    assert i < detached[late.pop(tag)], "settled after the detach"
    assert not late, f"{len(late)} late messages never settled"


def test_a_browser_enumeration_ended_early_leaves_no_link_behind(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """A browser prefetches; an enumeration closed after its first message leaves the rest
    of what the broker sent (presettled) unread. Settled locally at the close (no frame: the
    broker settled them), they no longer keep proton's link on the session."""
    connection = clients.connect(peer, start=True)
    session = connection.createSession()
    queue = session.createQueue("browsed")

    def browse_one(rounds: int) -> None:
        for _ in range(rounds):
            for i in range(5):
                peer.enqueue("browsed", AmqpMessage(body=f"m{i}"))
            browser = session.createBrowser(queue)
            enumeration = browser.getEnumeration()
            assert enumeration.hasMoreElements()
            enumeration.nextElement()
            wait_until(lambda: len(peer.transfers) % 5 == 0, 20, "the whole prefetch")
            browser.close()

    browse_one(ROUNDS)
    after_n = _proton_links(connection)
    browse_one(ROUNDS)
    after_2n = _proton_links(connection)
    assert after_2n == after_n, (
        f"{after_2n - after_n} more proton links after {ROUNDS} more browser enumerations"
    )
    assert not peer.dispositions, "presettled messages need no disposition"


def test_receives_without_prefetch_during_a_reconnect_hold_one_pull(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """A consumer without prefetch asks for one message per receive(). While failover
    reconnects, what a call queues for the engine is held until the connection is back:
    receives polling through an outage hold one such request, not one per call, and the
    consumer still gets its credit once the connection is restored."""
    url = (
        f"failover:({peer.url})?failover.reconnectDelay=20&failover.maxReconnectDelay=50"
        "&jms.prefetchPolicy.all=0"
    )
    connection = clients.track(clients.factory(url).createConnection())
    restored = threading.Event()

    class Listener:
        def onConnectionInterrupted(self, uri: str) -> None:
            pass

        def onConnectionRestored(self, uri: str) -> None:
            restored.set()

    connection.setConnectionListener(Listener())
    session = connection.createSession()
    consumer = session.createConsumer(session.createQueue("pulled"))
    connection.start()
    amqp: Any = connection._amqp  # type: ignore[attr-defined]

    with refusing_reconnects(peer):
        peer.drop()
        wait_until(lambda: amqp.interrupted, 20, "the connection to be interrupted")

        def poll(calls: int) -> None:
            for _ in range(calls):
                assert consumer.receive(1) is None

        poll(100)
        after_n = len(amqp._held)
        poll(100)
        after_2n = len(amqp._held)
    assert after_2n == after_n <= 1, f"held work grew from {after_n} to {after_2n}"

    assert restored.wait(20), "the connection was not restored"
    peer.enqueue("pulled", AmqpMessage(body="after the outage"))
    message = consumer.receive(10000)
    assert message is not None and message.getBody(str) == "after the outage"
    credit = [f.link_credit for f in peer.flows if f.link_name and f.link_credit]
    assert credit and max(credit) == 1, f"a consumer without prefetch asked for {credit}"


def _warnings(caplog: pytest.LogCaptureFixture, text: str) -> int:
    return sum(1 for r in caplog.records if r.levelno >= logging.WARNING and text in r.message)


def test_asynchronous_sends_a_broker_refuses_do_not_log_a_warning_each(
    peer: ScriptedPeer, clients: Clients, caplog: pytest.LogCaptureFixture
) -> None:
    """A broker refusing every asynchronous send (an address that is full, say) is a WARNING
    now and then, not one line per message for as long as it lasts; the ExceptionListener
    still hears of each."""
    caplog.set_level(logging.DEBUG, logger="jmspy.provider")
    peer.script("refusing", outcome=Outcome.rejected("amqp:resource-limit-exceeded", "full"))
    connection = clients.connect(peer)
    heard: list[jmspy.JMSException] = []
    connection.setExceptionListener(heard.append)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("refusing"))
    producer.setDeliveryMode(jmspy.DeliveryMode.NON_PERSISTENT)  # asynchronous

    def send(count: int) -> None:
        sent = len(peer.transfers)
        for i in range(count):
            producer.send(session.createTextMessage(f"m{i}"))
        peer.wait_for_transfers(sent + count, timeout=20)
        wait_until(lambda: len(heard) == sent + count, 20, "every refusal to be heard")  # noqa: B023

    send(100)
    after_n = _warnings(caplog, "asynchronous send failed")
    send(100)
    after_2n = _warnings(caplog, "asynchronous send failed")
    assert after_2n == after_n == 1, f"WARNING lines: {after_n}, then {after_2n}"


def test_undecodable_messages_do_not_log_a_warning_each(
    peer: ScriptedPeer, clients: Clients, caplog: pytest.LogCaptureFixture
) -> None:
    """A queue full of messages the client cannot read: each is settled modified
    (undeliverable-here), with a WARNING now and then rather than one per message."""
    caplog.set_level(logging.DEBUG, logger="jmspy.provider")
    connection = clients.connect(peer, start=True)
    session = connection.createSession()
    consumer = session.createConsumer(session.createQueue("unreadable"))
    # application-properties holding a string, not a map
    bad = b"\x00\x53\x74\xa1\x02hi" + b"\x00\x53\x77\xa1\x01x"

    def deliver(count: int) -> None:
        for _ in range(count):
            peer.enqueue("unreadable", bad)
        peer.enqueue("unreadable", AmqpMessage(body="readable"))
        received = consumer.receive(10000)
        assert received is not None and received.getBody(str) == "readable"

    deliver(100)
    after_n = _warnings(caplog, "could not decode")
    deliver(100)
    after_2n = _warnings(caplog, "could not decode")
    assert after_2n == after_n == 1, f"WARNING lines: {after_n}, then {after_2n}"
    assert sum(1 for r in caplog.records if "could not decode" in r.message) == 200
