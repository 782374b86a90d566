"""Failover on the wire: after the peer drops the connection, jmspy opens a new one with the
same container id and re-attaches every link with the same name, terminus and capabilities;
a send the old connection never settled is sent again on the new one."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message as AmqpMessage

import jmspy

from .client_support import Clients, clients_fixture, refusing_reconnects, sections_of, wait_until
from .conftest import PeerFactory
from .peer import AttachRecord, LinkScript, ScriptedPeer


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _failover(peer: ScriptedPeer) -> str:
    return f"failover:({peer.url})?failover.reconnectDelay=20&failover.maxReconnectDelay=100"


class _Restores:
    """A ConnectionListener counting restores; ``wait_for(n)`` waits for the n-th."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.count = 0

    def onConnectionInterrupted(self, uri: str) -> None:
        pass

    def onConnectionRestored(self, uri: str) -> None:
        with self._cond:
            self.count += 1
            self._cond.notify_all()

    def wait_for(self, count: int, timeout: float = 30.0) -> None:
        with self._cond:
            done = self._cond.wait_for(lambda: self.count >= count, timeout)
        assert done, f"restored {self.count} times, waited for {count}"


def _shape(attach: AttachRecord) -> dict[str, Any]:
    """Everything of an attach that must be the same after a reconnect."""
    source, target = attach.source, attach.target
    return {
        "role": attach.role,
        "snd_settle_mode": attach.snd_settle_mode,
        "rcv_settle_mode": attach.rcv_settle_mode,
        "desired_capabilities": attach.desired_capabilities,
        "source": None
        if source is None
        else {
            "address": source.address,
            "durable": source.durable,
            "expiry_policy": source.expiry_policy,
            "distribution_mode": source.distribution_mode,
            "filter": sorted(source.filter),
            "default_outcome": source.default_outcome,
            "outcomes": source.outcomes,
            "capabilities": source.capabilities,
            "dynamic": source.dynamic,
        },
        "target": None
        if target is None
        else {"address": target.address, "capabilities": target.capabilities},
    }


def test_reattach_frames_after_a_reconnect_are_the_same(
    peer: ScriptedPeer, clients: Clients
) -> None:
    connection = clients.track(clients.factory(_failover(peer), client_id="cid").createConnection())
    events: list[str] = []
    restored = threading.Event()

    class Listener:
        def onConnectionInterrupted(self, uri: str) -> None:
            events.append("interrupted")

        def onConnectionRestored(self, uri: str) -> None:
            events.append("restored")
            restored.set()

    connection.setConnectionListener(Listener())
    session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
    queue = session.createQueue("orders")
    topic = session.createTopic("news")
    session.createProducer(queue)
    session.createConsumer(queue, "colour = 'red'")
    session.createDurableConsumer(topic, "sub", None, True)
    session.createSharedConsumer(topic, "shared")
    connection.createSession().createProducer(topic)
    before = peer.connections[0]
    wait_until(lambda: len(before.attaches) >= 5, what="five attaches on the first connection")
    first = {a.name: _shape(a) for a in before.attaches}

    peer.drop(reset=True)
    assert restored.wait(10), f"not restored: {events}"
    after = peer.connections[1]
    wait_until(lambda: len(after.attaches) >= len(first), what="the re-attaches")
    second = {a.name: _shape(a) for a in after.attaches}
    assert second == first
    assert [o.container_id for o in after.opens] == ["cid"]
    assert len(after.begins) == len(before.begins)
    assert events == ["interrupted", "restored"]
    # The consumers get their credit again on the new link.
    consumer_links = {a.name for a in after.attaches if a.role == "receiver" and a.source}
    wait_until(
        lambda: consumer_links <= {f.link_name for f in after.flows if f.link_credit},
        what="credit for every re-attached consumer",
    )


def test_unsettled_send_is_sent_again_after_the_reconnect(
    make_peer: PeerFactory, clients: Clients
) -> None:
    # The first connection never settles the transfer; the second accepts everything.
    peer = make_peer(
        links=lambda attach: LinkScript(outcome=None) if attach.conn == 0 else LinkScript()
    )
    connection = clients.track(
        clients.factory(_failover(peer), send_timeout=20000).createConnection()
    )
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("q"))
    done = threading.Event()
    errors: list[BaseException] = []

    def send() -> None:
        try:
            producer.send(session.createTextMessage("only once"))
        except BaseException as exc:  # noqa: BLE001 - checked below
            errors.append(exc)
        done.set()

    sender = threading.Thread(target=send)
    sender.start()
    wait_until(lambda: peer.connections[0].transfers, what="the first transfer")
    assert not done.is_set(), "the send returned before any outcome"
    peer.drop(reset=True)
    assert done.wait(15), "the send did not complete after the reconnect"
    sender.join()
    assert not errors, errors
    first = peer.connections[0].transfers
    again = peer.connections[1].transfers
    assert len(first) == 1 and len(again) == 1
    assert sections_of(again[0]) == sections_of(first[0]), "not the same message"


def test_ids_remembered_across_reconnects_are_let_go_of_after_a_window(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """At each reconnect a consumer remembers the ids it handed over lately, to flag one the
    broker sends again JMSRedelivered; once the deliveries such a message could come back
    among have passed, it forgets them, so a long-lived consumer does not keep an id set that
    grows at every reconnect."""
    prefetch = 10
    connection = clients.track(
        clients.factory(_failover(peer), queue_prefetch=prefetch).createConnection()
    )
    restores = _Restores()
    connection.setConnectionListener(restores)
    session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("q"))
    connection.start()
    serial = itertools.count()

    def deliver(count: int) -> list[str]:
        """Queue ``count`` new messages and receive them all; their AMQP message ids."""
        ids = [f"m-{next(serial)}" for _ in range(count)]
        for message_id in ids:
            peer.enqueue("q", AmqpMessage(id=message_id, body=message_id))
        for message_id in ids:
            message = consumer.receive(20000)
            assert message is not None, f"{message_id} did not arrive"
            assert message.getBody(str) == message_id
            assert message.getJMSRedelivered() is False
        return ids

    handed = deliver(5 * prefetch)
    for cut in range(1, 4):
        peer.drop(reset=True)
        restores.wait_for(cut)
        suspects = len(consumer._failover_ids.suspects)
        assert 0 < suspects <= (consumer._failover_ids.recent.maxlen or 0)
        # The last message handed over before the loss comes again with its delivery count
        # unchanged, as Artemis sends what a dropped connection held: it is flagged.
        peer.enqueue("q", AmqpMessage(id=handed[-1], body="again"))
        again = consumer.receive(20000)
        assert again is not None and again.getBody(str) == "again"
        assert again.getJMSRedelivered() is True
        # Past every delivery a remembered message could come back among, nothing is kept.
        handed = deliver(suspects + prefetch)
        assert len(consumer._failover_ids.suspects) == 0, f"after reconnect {cut}"


def test_polling_while_reconnecting_holds_no_work_per_call(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """receiveNoWait() during an outage returns null at once without leaving work held for
    the restore at each call (a credit restore per call once did), and the consumer receives
    again once the connection is restored."""
    connection = clients.track(clients.factory(_failover(peer)).createConnection())
    restores = _Restores()
    connection.setConnectionListener(restores)
    session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("q"))
    connection.start()
    amqp = consumer._receiver.connection
    with refusing_reconnects(peer):
        peer.drop(reset=True)
        wait_until(lambda: amqp.interrupted, timeout=20, what="the interruption")
        for _ in range(2000):
            assert consumer.receiveNoWait() is None
        assert amqp.interrupted, "restored while the peer refused"
        assert len(amqp._held) <= 2, f"{len(amqp._held)} items held"
    restores.wait_for(1)
    peer.enqueue("q", AmqpMessage(body="after the outage"))
    message = consumer.receive(20000)
    assert message is not None and message.getBody(str) == "after the outage"


def test_calls_that_time_out_while_reconnecting_leave_nothing_for_the_restore(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """A createSession() that times out during an outage is not held for the restore: it
    would begin there a session nobody has, and every retry would hold one more."""
    connection = clients.track(
        clients.factory(_failover(peer), request_timeout=1500).createConnection()
    )
    restores = _Restores()
    connection.setConnectionListener(restores)
    connection.createSession()
    amqp = connection._amqp
    assert amqp is not None
    with refusing_reconnects(peer):
        peer.drop(reset=True)
        wait_until(lambda: amqp.interrupted, timeout=20, what="the interruption")
        for _ in range(3):
            with pytest.raises(jmspy.JMSException, match="did not complete"):
                connection.createSession()
        assert amqp.interrupted, "restored while the peer refused"
        assert len(amqp._held) == 0, f"{len(amqp._held)} items held"
    restores.wait_for(1)
    connection.createSession()  # a barrier: a begin the peer answers after the restore
    restored = peer.connections[-1]
    wait_until(lambda: len(restored.begins) >= 2, what="the begins after the restore")
    assert len(restored.begins) == 2, "a session begun that the application never got"
