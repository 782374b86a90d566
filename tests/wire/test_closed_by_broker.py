"""A consumer or producer the broker closes while the connection lives on: the
ConnectionListener's onConsumerClosed / onProducerClosed (Qpid JMS's JmsConnectionListener
has them) tell the application, since a MessageListener on such a consumer simply gets no
more messages. A close by the application, and the loss of the whole connection, are not
reported there."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from proton import Message as AmqpMessage

import jmspy

from .client_support import FAST_OPTIONS, Clients, clients_fixture, wait_until, wire_barrier
from .peer import AttachRecord, LinkScript, ScriptedPeer


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


class Heard:
    """A ConnectionListener that records what it is told, and on which thread."""

    def __init__(self) -> None:
        self.closed: list[tuple[str, Any, jmspy.JMSException, str]] = []
        self.failures: list[jmspy.JMSException] = []
        self.event = threading.Event()
        self.restored = threading.Event()

    def onConsumerClosed(self, consumer: Any, exception: jmspy.JMSException) -> None:
        self.closed.append(("consumer", consumer, exception, threading.current_thread().name))
        self.event.set()

    def onProducerClosed(self, producer: Any, exception: jmspy.JMSException) -> None:
        self.closed.append(("producer", producer, exception, threading.current_thread().name))
        self.event.set()

    def onConnectionRestored(self, uri: str) -> None:
        self.restored.set()

    def onConnectionFailure(self, exception: jmspy.JMSException) -> None:
        self.failures.append(exception)
        self.event.set()

    def wait(self) -> None:
        assert self.event.wait(10), "the ConnectionListener heard nothing"
        self.event.clear()


def _listened(clients: Clients, peer: ScriptedPeer, start: bool = False) -> tuple[Any, Heard, Any]:
    """A connection to ``peer`` with a Heard listener, and a session on it."""
    connection = clients.connect(peer, start=start)
    heard = Heard()
    connection.setConnectionListener(heard)
    return connection, heard, connection.createSession()


def _listener_threads_done() -> None:
    """Join the threads that call the ConnectionListener, so that nothing is still on its
    way when a test asserts what was (not) heard."""
    for thread in threading.enumerate():
        if thread.name == "jmspy-connection-listener":
            thread.join(10)
            assert not thread.is_alive()


def test_a_consumer_the_broker_closes_is_reported_and_the_connection_works_on(
    peer: ScriptedPeer, clients: Clients
) -> None:
    connection, heard, session = _listened(clients, peer, start=True)
    consumer = session.createConsumer(session.createQueue("orders"))
    consumer.setMessageListener(lambda message: None)
    attach = peer.wait_for_attach("orders", role="receiver")

    peer.close_link(attach.name, "amqp:resource-deleted", "queue orders deleted")

    heard.wait()
    kind, which, exception, thread = heard.closed[0]
    assert kind == "consumer" and which is consumer
    assert "amqp:resource-deleted" in str(exception) and "queue orders deleted" in str(exception)
    assert thread == "jmspy-connection-listener"  # not the engine thread
    with pytest.raises(jmspy.IllegalStateException, match="queue orders deleted"):
        consumer.getMessageListener()
    # One consumer gone, the connection and session carry on.
    again = session.createConsumer(session.createQueue("orders"))
    producer = session.createProducer(session.createQueue("orders"))
    producer.send(session.createTextMessage("still here"))
    again.close()
    connection.close()  # a close by the application is no failure
    _listener_threads_done()
    assert len(heard.closed) == 1 and heard.failures == []


def test_a_producer_the_broker_closes_is_reported_and_cannot_send(
    peer: ScriptedPeer, clients: Clients
) -> None:
    _, heard, session = _listened(clients, peer)
    producer = session.createProducer(session.createQueue("prices"))
    attach = peer.wait_for_attach("prices", role="sender")

    peer.close_link(attach.name, "amqp:unauthorized-access", "no longer allowed")

    heard.wait()
    kind, which, exception, _ = heard.closed[0]
    assert kind == "producer" and which is producer
    assert "no longer allowed" in str(exception)
    with pytest.raises(jmspy.JMSException):
        producer.send(session.createTextMessage("refused"))


def test_closes_by_the_application_and_a_lost_connection_are_not_reported_there(
    peer: ScriptedPeer, clients: Clients
) -> None:
    connection, heard, session = _listened(clients, peer, start=True)
    closed_here = session.createConsumer(session.createQueue("a"))
    producer = session.createProducer(session.createQueue("b"))
    kept = session.createConsumer(session.createQueue("c"))
    kept.setMessageListener(lambda message: None)
    closed_here.close()
    producer.close()
    wire_barrier(connection)

    peer.drop()

    heard.wait()
    assert len(heard.failures) == 1
    _listener_threads_done()
    assert heard.closed == []


def _gone_after_reconnect(
    make_peer: Any, clients: Clients, script: LinkScript
) -> tuple[ScriptedPeer, Any, Heard]:
    """A peer that answers every re-attach to queue 'gone' with ``script`` (the first connect
    is answered normally), and a failover connection to it (failover.maxRecoveryRefusals=2)
    whose connection listener is the returned Heard."""

    def scripts(attach: AttachRecord) -> LinkScript | None:
        if attach.conn > 0 and attach.address == "gone":
            return script
        return None

    peer = make_peer(links=scripts)
    url = (
        f"failover:({peer.url})?failover.reconnectDelay=20&failover.maxReconnectDelay=100"
        "&failover.maxRecoveryRefusals=2"
    )
    connection = clients.track(clients.factory(url).createConnection())
    heard = Heard()
    connection.setConnectionListener(heard)
    return peer, connection, heard


def test_a_consumer_failover_cannot_re_create_is_reported_and_the_rest_is_restored(
    make_peer: Any, clients: Clients
) -> None:
    """After the reconnect the peer refuses the consumer's queue (a node that came back
    without it): that consumer is reported closed; the connection and the other consumer
    are restored."""

    peer, connection, heard = _gone_after_reconnect(
        make_peer, clients, LinkScript(refuse=("amqp:not-found", "no queue 'gone'"))
    )
    session = connection.createSession()
    lost = session.createConsumer(session.createQueue("gone"))
    kept = session.createConsumer(session.createQueue("kept"))
    lost.setMessageListener(lambda message: None)
    kept.setMessageListener(lambda message: None)
    first = peer.connections[0]
    wire_barrier(connection)
    assert len(first.attaches) == 2

    peer.drop(reset=True)

    heard.wait()
    assert heard.restored.wait(10)
    kind, which, exception, _ = heard.closed[0]
    assert kind == "consumer" and which is lost
    assert "no queue 'gone'" in str(exception)
    _listener_threads_done()
    assert len(heard.closed) == 1 and heard.failures == []
    assert kept.getMessageListener() is not None  # still open
    # Refused twice more (failover.maxRecoveryRefusals=2) before the third refusal is taken
    # as the broker's answer: the first connection, three reconnects, nothing after.
    assert len(peer.connections) == 4
    assert [len(c.attaches) for c in peer.connections] == [2, 2, 2, 2]
    wire_barrier(connection)
    assert len(peer.connections) == 4


def _refusing_after_reconnect(
    make_peer: Any, condition: str, refusing: Callable[[int], bool]
) -> ScriptedPeer:
    """A peer that refuses the re-attach of queue 'q' (``condition``) on the connections
    ``refusing`` picks by number (0 is the first connect, which is never refused)."""

    def scripts(attach: AttachRecord) -> LinkScript | None:
        if attach.conn > 0 and attach.address == "q" and refusing(attach.conn):
            return LinkScript(refuse=(condition, "no queue 'q' yet"))
        return None

    return make_peer(links=scripts)


def _failover_consumer(
    clients: Clients, peer: ScriptedPeer, options: str = "", **factory_options: Any
) -> tuple[Any, Heard, list[str]]:
    url = f"failover:({peer.url})?failover.reconnectDelay=20&failover.maxReconnectDelay=100"
    connection = clients.track(clients.factory(url + options, **factory_options).createConnection())
    heard = Heard()
    connection.setConnectionListener(heard)
    session = connection.createSession()
    got: list[str] = []
    arrived = threading.Event()

    def on_message(message: Any) -> None:
        got.append(message.getBody(str))
        arrived.set()

    consumer = session.createConsumer(session.createQueue("q"))
    consumer.setMessageListener(on_message)
    connection.start()
    wire_barrier(connection)
    return consumer, heard, got


def _drop_and_hear_only_the_consumer_closed(
    peer: ScriptedPeer, heard: Heard, consumer: Any
) -> None:
    """Drop the connection; the connection is restored and only ``consumer`` is reported
    closed."""
    peer.drop(reset=True)

    heard.wait()
    assert heard.restored.wait(10)
    _listener_threads_done()
    assert [(kind, which) for kind, which, _, _ in heard.closed] == [("consumer", consumer)]


def test_a_consumer_refused_after_a_reconnect_is_re_created_on_the_next_one(
    make_peer: Any, clients: Clients
) -> None:
    """A node back before its durable queue is refuses the consumer's re-attach
    (amqp:not-found): as Qpid JMS, failover reconnects again instead of failing the consumer
    for good, and the consumer goes on receiving."""
    peer = _refusing_after_reconnect(make_peer, "amqp:not-found", lambda conn: conn == 1)
    consumer, heard, got = _failover_consumer(clients, peer)

    peer.drop(reset=True)

    assert heard.restored.wait(10), "not restored"
    assert len(peer.connections) == 3  # the refused recovery was dropped and redone
    peer.enqueue("q", AmqpMessage(body="after the refusal"))
    wait_until(lambda: got == ["after the refusal"], what="the message after the refusal")
    _listener_threads_done()
    assert heard.closed == [] and heard.failures == []
    assert consumer.getMessageListener() is not None


def test_a_security_refusal_after_a_reconnect_is_not_retried(
    make_peer: Any, clients: Clients
) -> None:
    """A re-attach refused for want of permission is the broker's answer: the consumer is
    reported closed at once, and failover does not reconnect again for it."""
    peer = _refusing_after_reconnect(make_peer, "amqp:unauthorized-access", lambda conn: True)
    consumer, heard, _ = _failover_consumer(clients, peer)

    _drop_and_hear_only_the_consumer_closed(peer, heard, consumer)
    assert isinstance(heard.closed[0][2], jmspy.JMSSecurityException)
    assert len(peer.connections) == 2


def test_the_last_reconnect_attempt_restores_the_connection_without_the_refused_link(
    make_peer: Any, clients: Clients
) -> None:
    """Refused recoveries count as failed attempts, but the last attempt that
    failover.maxReconnectAttempts allows restores the connection without the refused link
    rather than failing the whole connection for one missing queue."""
    peer = _refusing_after_reconnect(make_peer, "amqp:not-found", lambda conn: True)
    consumer, heard, _ = _failover_consumer(clients, peer, "&failover.maxReconnectAttempts=2")

    _drop_and_hear_only_the_consumer_closed(peer, heard, consumer)
    assert heard.failures == []
    assert len(peer.connections) == 3


def test_max_recovery_refusals_zero_fails_the_refused_link_at_once(
    make_peer: Any, clients: Clients
) -> None:
    """failover.maxRecoveryRefusals=0: a refused re-attach is taken as the broker's answer
    on the first reconnect (no reconnect again)."""
    peer = _refusing_after_reconnect(make_peer, "amqp:not-found", lambda conn: True)
    consumer, heard, _ = _failover_consumer(clients, peer, "&failover.maxRecoveryRefusals=0")

    _drop_and_hear_only_the_consumer_closed(peer, heard, consumer)
    assert len(peer.connections) == 2


def test_a_re_attach_left_unanswered_after_a_reconnect_is_redone_on_the_next_one(
    make_peer: Any, clients: Clients
) -> None:
    """A server that never answers a re-attach (a queue still recovering) holds the recovery
    only jms.requestTimeout: that transport is dropped and the next reconnect re-creates the
    consumer, which goes on receiving; nothing is reported closed."""

    def scripts(attach: AttachRecord) -> LinkScript | None:
        if attach.conn == 1 and attach.address == "q":
            return LinkScript(hang=True)
        return None

    peer = make_peer(links=scripts)
    consumer, heard, got = _failover_consumer(clients, peer, request_timeout=1000)

    peer.drop(reset=True)

    assert heard.restored.wait(20), "not restored"
    assert len(peer.connections) == 3
    assert [a.address for a in peer.connections[2].attaches] == ["q"]
    peer.enqueue("q", AmqpMessage(body="after the silence"))
    wait_until(lambda: got == ["after the silence"], what="the message after the silence")
    _listener_threads_done()
    assert heard.closed == [] and heard.failures == []


def test_a_session_the_peer_ends_on_a_re_attach_is_recovered_on_the_next_reconnect(
    make_peer: Any, clients: Clients
) -> None:
    """RabbitMQ 3.x's AMQP 1.0 plugin answers an attach to a queue that is not back yet by
    ending the whole session (amqp:not-found). During a recovery that is a refusal like a
    detached link: the transport is dropped and the next reconnect re-creates the session with
    every link of it, the producer that had re-attached fine included; nothing is reported
    closed."""

    def scripts(attach: AttachRecord) -> LinkScript | None:
        if attach.conn == 1 and attach.address == "q":
            return LinkScript(end_session=("amqp:not-found", "NOT_FOUND - no queue 'q'"))
        return None

    peer = make_peer(links=scripts)
    url = f"failover:({peer.url})?failover.reconnectDelay=20&failover.maxReconnectDelay=100"
    connection = clients.track(clients.factory(url).createConnection())
    heard = Heard()
    connection.setConnectionListener(heard)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("out"))
    got: list[str] = []
    consumer = session.createConsumer(session.createQueue("q"))
    consumer.setMessageListener(lambda message: got.append(message.getBody(str)))
    connection.start()
    wire_barrier(connection)

    peer.drop(reset=True)

    assert heard.restored.wait(10), "not restored"
    assert len(peer.connections) == 3  # the recovery whose session was ended was redone
    peer.enqueue("q", AmqpMessage(body="after the ended session"))
    wait_until(lambda: got == ["after the ended session"], what="the message after it")
    producer.send(session.createTextMessage("sent after it"))
    assert [t.conn for t in peer.wait_for_transfers(1)] == [2]
    _listener_threads_done()
    assert heard.closed == [] and heard.failures == []


def test_a_session_ended_on_every_re_attach_fails_its_links_after_the_bound(
    make_peer: Any, clients: Clients
) -> None:
    """The session ended on every reconnect: after failover.maxRecoveryRefusals further
    reconnects the end is taken as the broker's answer, and every link of that session (the
    producer the peer had re-attached too: its session is gone) is reported closed; another
    session's consumer is restored."""

    peer, connection, heard = _gone_after_reconnect(
        make_peer,
        clients,
        LinkScript(end_session=("amqp:not-found", "NOT_FOUND - no queue 'gone'")),
    )
    ended = connection.createSession()
    producer = ended.createProducer(ended.createQueue("out"))
    lost = ended.createConsumer(ended.createQueue("gone"))
    lost.setMessageListener(lambda message: None)
    other = connection.createSession()
    kept = other.createConsumer(other.createQueue("kept"))
    got: list[str] = []
    kept.setMessageListener(lambda message: got.append(message.getBody(str)))
    connection.start()
    wire_barrier(connection)

    peer.drop(reset=True)

    assert heard.restored.wait(10), "not restored"
    wait_until(lambda: len(heard.closed) == 2, what="both links of the ended session closed")
    assert {(kind, id(which)) for kind, which, _, _ in heard.closed} == {
        ("consumer", id(lost)),
        ("producer", id(producer)),
    }
    assert all("no queue 'gone'" in str(exception) for _, _, exception, _ in heard.closed)
    # Ended twice more (the bound) before the third end is the broker's answer.
    assert len(peer.connections) == 4
    peer.enqueue("kept", AmqpMessage(body="still here"))
    wait_until(lambda: got == ["still here"], what="the other session's consumer")
    with pytest.raises(jmspy.JMSException):
        producer.send(ended.createTextMessage("nowhere"))
    _listener_threads_done()
    assert heard.failures == []


@pytest.mark.parametrize("listener", [False, True], ids=["receive", "listener"])
def test_messages_prefetched_on_a_link_the_broker_closed_are_not_handed_out(
    peer: ScriptedPeer, clients: Clients, listener: bool
) -> None:
    # The broker takes back what it sent on a link it detaches (it redelivers it elsewhere):
    # handing those messages out, and acknowledging them on a link that no longer exists,
    # would deliver them twice. Qpid JMS drops them and fails the consumer.
    connection, heard, session = _listened(clients, peer)  # not started: they stay buffered
    consumer = session.createConsumer(session.createQueue("orders"))
    got: list[Any] = []
    if listener:
        consumer.setMessageListener(got.append)
    attach = peer.wait_for_attach("orders", role="receiver")
    for i in range(3):
        peer.enqueue("orders", AmqpMessage(body=f"m{i}"))
    wait_until(lambda: consumer.getPrefetchedCount() == 3, what="three prefetched messages")

    peer.close_link(attach.name, "amqp:resource-deleted", "queue orders deleted")
    heard.wait()
    connection.start()

    assert consumer.getPrefetchedCount() == 0
    if not listener:
        with pytest.raises(jmspy.IllegalStateException, match="queue orders deleted"):
            consumer.receive(1000)
    wire_barrier(connection)
    assert got == []
    assert [d for d in peer.dispositions if d.role == "receiver"] == []


def test_presettled_messages_on_a_link_the_broker_closed_are_still_received(
    peer: ScriptedPeer, clients: Clients
) -> None:
    # A NO_ACKNOWLEDGE consumer's messages were settled by the broker as it sent them: it will
    # not send them again, so dropping them with the link would lose them. receive() hands
    # them out, then reports the closed link.
    connection = clients.connect(peer)
    heard = Heard()
    connection.setConnectionListener(heard)
    session = connection.createSession(257)  # NO_ACKNOWLEDGE: a presettled link (JMS-68)
    consumer = session.createConsumer(session.createQueue("orders"))
    attach = peer.wait_for_attach("orders", role="receiver")
    for i in range(2):
        peer.enqueue("orders", AmqpMessage(body=f"m{i}"), settled=True)
    wait_until(lambda: consumer.getPrefetchedCount() == 2, what="two prefetched messages")
    peer.close_link(attach.name, "amqp:resource-deleted", "queue orders deleted")
    heard.wait()
    connection.start()

    assert [consumer.receive(1000).getText() for _ in range(2)] == ["m0", "m1"]
    with pytest.raises(jmspy.JMSException, match="queue orders deleted"):
        consumer.receive(1000)
    with pytest.raises(jmspy.IllegalStateException, match="queue orders deleted"):
        consumer.receive(1000)


def test_presettled_messages_on_a_closed_link_reach_an_asyncio_receive_too(
    peer: ScriptedPeer,
) -> None:
    import asyncio

    from jmspy import aio

    async def main() -> tuple[list[str], BaseException]:
        connection = await aio.connect(peer.url, **FAST_OPTIONS)
        try:
            session = await connection.create_session(257)  # NO_ACKNOWLEDGE
            consumer = await session.create_consumer(session.create_queue("orders"))
            loop = asyncio.get_running_loop()
            attach = await loop.run_in_executor(
                None, lambda: peer.wait_for_attach("orders", role="receiver")
            )
            for i in range(2):
                peer.enqueue("orders", AmqpMessage(body=f"m{i}"), settled=True)
            held = consumer._consumer  # the classic consumer it wraps: its buffer
            await loop.run_in_executor(
                None, lambda: wait_until(lambda: held.getPrefetchedCount() == 2, what="prefetch")
            )
            peer.close_link(attach.name, "amqp:resource-deleted", "queue orders deleted")

            def link_failed() -> bool:
                try:
                    held.getMessageListener()  # raises once the consumer knows of the close
                except jmspy.IllegalStateException:
                    return True
                return False

            await loop.run_in_executor(
                None, lambda: wait_until(link_failed, what="the consumer failed by the close")
            )
            await connection.start()
            got = []
            for _ in range(2):
                message = await consumer.receive(5000)
                assert message is not None
                got.append(message.get_text())
            try:
                await consumer.receive(1000)
            except jmspy.JMSException as exc:
                return got, exc
            raise AssertionError("receive() after the last message did not fail")
        finally:
            await connection.close()

    got, failure = asyncio.run(main())
    assert got == ["m0", "m1"]
    assert "queue orders deleted" in str(failure)
