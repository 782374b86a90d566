"""What a connection that lives for days must not pile up: work the engine keeps doing for a
producer long closed, threads, link names and bookkeeping that only grow. Each test drives the
real client against the scripted peer and looks at what is left once the work is done."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest

import jmspy
from jmspy import DeliveryMode

from .client_support import Clients, clients_fixture, wait_until, wire_barrier
from .peer import (
    AMQP_VALUE,
    AttachRecord,
    BeginRecord,
    EndRecord,
    LinkScript,
    Outcome,
    ScriptedPeer,
    TransferRecord,
)


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _settle_polls(connection: jmspy.Connection) -> int:
    """How many engine timers are polls of a producer waiting for its sends to be settled.

    Read on the engine thread itself, so a poll being run at that moment (off the timer heap
    while it runs) cannot be missed."""
    engine: Any = connection._amqp.engine  # type: ignore[union-attr]

    def look(completion: Any) -> None:
        completion.succeed(
            sum(
                1
                for _due, _seq, work in engine._timers
                if "wait_settled" in getattr(work, "__qualname__", "")
            )
        )

    count: int = engine.call(look, 30.0, "reading the engine's timers", jmspy.JMSException)
    return count


def test_a_producer_close_that_times_out_leaves_no_poll_on_the_engine(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """The peer grants credit but never settles: the producer's close waits for the settlement
    until jms.closeTimeout, then closes the link anyway. The engine must stop polling for that
    settlement then, not every 5 ms for the rest of the connection's life."""
    peer.script("silent", outcome=None)
    connection = clients.connect(peer, close_timeout=4000)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("silent"))
    producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)  # asynchronous: send() returns
    producer.send(session.createTextMessage("never settled"))
    peer.wait_for_transfers(1, timeout=20)

    closing = threading.Thread(target=producer.close, name="test-producer-close")
    closing.start()
    # While the close waits, the poll is there (so the probe below does find such a timer).
    wait_until(lambda: _settle_polls(connection) == 1, 20, "the close to poll for settlement")
    closing.join(60)
    assert not closing.is_alive(), "the producer close did not end within its close timeout"
    peer.wait_for_detach(timeout=20)

    wait_until(lambda: _settle_polls(connection) == 0, 20, "the settlement poll to stop")

    # The connection still works.
    other = session.createProducer(session.createQueue("accepting"))
    other.send(session.createTextMessage("settled"))
    assert _settle_polls(connection) == 0


def _refuse_naming_the_body(transfer: TransferRecord) -> Outcome:
    return Outcome.rejected("amqp:internal-error", f"refused {transfer.section(AMQP_VALUE)}")


def _refused_body(error: BaseException) -> str:
    """The body the peer named in its refusal: "... (refused m7)" gives "m7"."""
    found = re.search(r"refused (\w+)", str(error))
    assert found is not None, str(error)
    return found.group(1)


def _exception_listener_threads() -> list[threading.Thread]:
    return [
        t for t in threading.enumerate() if t.name == "jmspy-exception-listener" and t.is_alive()
    ]


def test_a_slow_exception_listener_gets_every_refused_send_in_order_on_one_thread(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """Asynchronous sends the broker refuses faster than the ExceptionListener handles them:
    the reports wait in a queue for the one listener thread, in order, instead of a thread
    each waiting for the listener's lock."""
    peer.script("refusing", outcome=_refuse_naming_the_body)
    connection = clients.connect(peer)
    heard: list[str] = []
    released = threading.Event()
    all_heard = threading.Event()
    count = 200

    def on_exception(error: jmspy.JMSException) -> None:
        released.wait(60)  # slow: nothing is handled until every refusal has arrived
        heard.append(_refused_body(error))
        if len(heard) == count:
            all_heard.set()

    connection.setExceptionListener(on_exception)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("refusing"))
    producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)  # asynchronous: send() returns
    try:
        for i in range(count):
            producer.send(session.createTextMessage(f"m{i}"))
        peer.wait_for_transfers(count, timeout=60)
        # Every refusal the peer sent before answering this begin has been handled by now.
        wire_barrier(connection)
        assert len(_exception_listener_threads()) == 1
    finally:
        released.set()
    assert all_heard.wait(60), f"the ExceptionListener heard {len(heard)} of {count}"
    assert heard == [f"m{i}" for i in range(count)]
    wait_until(lambda: not _exception_listener_threads(), 20, "the listener thread to end")


def test_no_thread_for_the_exception_listener_does_not_end_the_connection(
    peer: ScriptedPeer, clients: Clients, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thread cannot be started (a process at its thread limit): the refusal waits for the
    next one, and the engine thread, which reported it, carries on."""
    peer.script("refusing", outcome=_refuse_naming_the_body)
    connection = clients.connect(peer)
    heard: list[str] = []
    both = threading.Event()

    def on_exception(error: jmspy.JMSException) -> None:
        heard.append(_refused_body(error))
        if len(heard) == 2:
            both.set()

    connection.setExceptionListener(on_exception)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("refusing"))
    producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)
    start = threading.Thread.start

    def no_listener_thread(thread: threading.Thread) -> None:
        if thread.name == "jmspy-exception-listener":
            raise RuntimeError("can't start new thread")
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", no_listener_thread)
    producer.send(session.createTextMessage("first"))
    peer.wait_for_transfers(1, timeout=20)
    wire_barrier(connection)
    monkeypatch.setattr(threading.Thread, "start", start)

    # The connection lives on, and the next refusal brings the first one with it.
    session.createProducer(session.createQueue("accepting")).send(
        session.createTextMessage("settled")
    )
    producer.send(session.createTextMessage("second"))
    assert both.wait(30), f"the ExceptionListener heard {heard}"
    assert heard == ["first", "second"]


def test_a_temporary_made_after_a_delete_does_not_take_a_live_ones_link_name(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """Brokers that steal a link by its name (Qpid Broker-J) would detach a live temporary
    destination's link, and delete its node, for a new temporary that reused the name."""
    connection = clients.connect(peer)
    session = connection.createSession()
    first = session.createTemporaryQueue()
    session.createTemporaryQueue()
    first.delete()
    session.createTemporaryQueue()

    creators = [a for a in peer.attaches if a.target is not None and a.target.dynamic]
    assert len(creators) == 3
    assert [d.link_name for d in peer.detaches] == [creators[0].name]
    live = [a.name for a in creators[1:]]
    assert live[0] != live[1], f"two live temporaries share the link name {live[0]!r}"


def test_shared_subscription_links_are_numbered_as_qpid_jms_numbers_them(
    make_peer: Any, clients: Clients
) -> None:
    """Qpid JMS (AmqpSubscriptionTracker) numbers a shared subscription's links in the order
    they are made while one of its consumers is open, without reusing a number, and forgets
    the subscription once its last consumer closed or failed to open: its next link is the
    first again. The connection keeps nothing for a subscription it no longer uses."""
    refused_once: list[str] = []

    def scripts(attach: AttachRecord) -> LinkScript | None:
        if attach.name == "d|global" and not refused_once:
            refused_once.append(attach.name)
            return LinkScript(refuse=("amqp:unauthorized-access", "not now"))
        return None

    peer = make_peer(links=scripts)
    connection = clients.connect(peer)
    session = connection.createSession()
    topic = session.createTopic("t")

    first = session.createSharedConsumer(topic, "v")
    second = session.createSharedConsumer(topic, "v")
    first.close()
    third = session.createSharedConsumer(topic, "v")  # 1 is free, but numbers go on
    second.close()
    third.close()
    again = session.createSharedConsumer(topic, "v")  # the last one closed: 1 again
    again.close()
    with pytest.raises(jmspy.JMSException, match="not now"):
        session.createSharedDurableConsumer(topic, "d")
    durable = session.createSharedDurableConsumer(topic, "d")  # the refused one is forgotten
    durable.close()

    names = [a.name for a in peer.attaches if a.role == "receiver"]
    assert names == [
        "v|global-volatile1",
        "v|global-volatile2",
        "v|global-volatile3",
        "v|global-volatile1",
        "d|global",
        "d|global",
    ]
    assert len(connection._subscriptions) == 0  # type: ignore[attr-defined]


def test_settled_asyncio_sends_are_not_kept_for_the_send_timeout(peer: ScriptedPeer) -> None:
    """jmspy.aio bounds each send by jms.sendTimeout; a send the peer settled (accepted or
    refused) is no longer waited for, so nothing of it is kept until its timeout."""
    peer.script("refusing", outcome=_refuse_naming_the_body)

    async def main() -> tuple[int, list[BaseException | None]]:
        from jmspy import aio

        async with aio.connect(peer.url, connect_timeout=20000, send_timeout=600000) as connection:
            session = await connection.create_session()
            accepting = await session.create_producer(session.create_queue("accepting"))
            refusing = await session.create_producer(session.create_queue("refusing"))
            sends = [accepting.send(session.create_text_message(f"m{i}")) for i in range(2000)]
            sends += [refusing.send(session.create_text_message(f"r{i}")) for i in range(10)]
            outcomes = await asyncio.wait_for(asyncio.gather(*sends, return_exceptions=True), 120)
            # Each outcome is handed to its future by the call that stops waiting for it.
            return len(session.control._sends), outcomes

    left, outcomes = asyncio.run(main())
    refused = [o for o in outcomes if o is not None]
    assert len(refused) == 10 and all(isinstance(o, jmspy.JMSException) for o in refused)
    assert left == 0, f"{left} settled sends still kept until their send timeout"


def test_a_transacted_session_whose_coordinator_is_refused_ends_its_amqp_session(
    make_peer: Any, clients: Clients
) -> None:
    """The session is begun before its transaction is declared; when the broker refuses the
    coordinator, createSession raises and the session it began is ended, not left open on
    the connection for as long as it lives."""

    def scripts(attach: AttachRecord) -> LinkScript | None:
        if attach.target is not None and attach.target.coordinator:
            return LinkScript(refuse=("amqp:not-implemented", "no transactions here"))
        return None

    peer = make_peer(links=scripts)
    connection = clients.connect(peer)
    with pytest.raises(jmspy.JMSException, match="no transactions here"):
        connection.createSession(True, jmspy.Session.SESSION_TRANSACTED)
    coordinator = peer.wait_for_attach(role="sender", timeout=20)
    assert coordinator.target is not None and coordinator.target.coordinator
    begun = [b for b in peer.records() if isinstance(b, BeginRecord)]
    assert [b.channel for b in begun] == [coordinator.channel]
    end = peer.wait_for_records(EndRecord, timeout=20)[0]
    assert end.channel == coordinator.channel and end.error is None
    # The connection goes on.
    session = connection.createSession()
    session.createProducer(session.createQueue("accepting")).send(session.createTextMessage("x"))
