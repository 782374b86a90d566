"""jmspy.aio sends when every in-flight slot (jms.maxAsyncSendsInFlight) is taken, and
transacted receives that must declare a transaction first: the event loop never waits for a
slot or for the broker, a send that times out before it was written is withdrawn from its
link (never written later, its slot freed), and the sends of one producer reach the link in
the order ``send()`` was called, whichever task called it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from proton import Message as AmqpMessage

from jmspy.errors import JMSException, JMSRuntimeException

from .client_support import FAST_OPTIONS, grant_credit, no_credit_on
from .conftest import PeerFactory
from .peer import LinkScript
from .peer_coordinator import Coordinator

AMQP_VALUE = 0x77


async def _longest_stall_while(work: Awaitable[Any]) -> tuple[float, Any]:
    """Run ``work`` while a 10 ms ticker task measures the longest gap between its ticks."""
    loop = asyncio.get_running_loop()
    ticks: list[float] = []

    async def ticker() -> None:
        while True:
            ticks.append(loop.time())
            await asyncio.sleep(0.01)

    task = asyncio.create_task(ticker())
    try:
        result = await work
    finally:
        task.cancel()
    ticks.append(loop.time())
    return max(b - a for a, b in zip(ticks, ticks[1:], strict=False)), result


def _options(send_timeout: int) -> dict[str, Any]:
    return {**FAST_OPTIONS, "send_timeout": send_timeout, "jms.maxAsyncSendsInFlight": 2}


def test_sends_without_a_free_slot_do_not_stall_the_event_loop(make_peer: PeerFactory) -> None:
    """The broker gives no credit: two sends take the two slots, four more wait for one. None
    of them holds the event loop (each used to wait there for up to jms.sendTimeout); those
    that never got a slot fail at jms.sendTimeout with the blocking send's exception, the two
    queued on the link are reported as not sent."""
    peer = make_peer(links=no_credit_on("q"))

    async def main() -> tuple[float, list[Any]]:
        from jmspy import aio

        connection = await aio.connect(peer.url, **_options(3000))
        try:
            session = await connection.create_session()
            producer = await session.create_producer(session.create_queue("q"))

            async def sends() -> list[Any]:
                futures = [producer.send(session.create_text_message(f"m{i}")) for i in range(6)]
                return await asyncio.gather(*futures, return_exceptions=True)

            return await _longest_stall_while(sends())
        finally:
            await connection.close()

    stall, outcomes = asyncio.run(main())
    assert stall < 0.5, f"the event loop stalled for {stall:.3f} s"
    assert all(isinstance(o, JMSException) for o in outcomes), outcomes
    texts = [str(o) for o in outcomes]
    assert all("the message was not sent" in t for t in texts[:2]), texts
    # One that got a slot freed by an expired send just before its own deadline reached the
    # link and was withdrawn from there: not sent either.
    assert all(
        "waiting for the peer to settle earlier sends" in t or "the message was not sent" in t
        for t in texts[2:]
    ), texts
    assert any("waiting for the peer to settle earlier sends" in t for t in texts[2:]), texts
    assert peer.transfers == []


def test_a_context_send_without_a_free_slot_does_not_stall_the_event_loop(
    make_peer: PeerFactory,
) -> None:
    """The same through the JMS 2.0 context's producer (its anonymous producer, whose link
    has no address when the broker offers the anonymous relay)."""
    peer = make_peer(links=lambda attach: LinkScript(credit=0))

    async def main() -> tuple[float, list[Any]]:
        from jmspy import aio

        factory = aio.ConnectionFactory(peer.url, **_options(3000))
        context = await factory.create_context()
        try:
            producer = await context.create_producer()
            queue = context.create_queue("q")

            async def sends() -> list[Any]:
                futures = [producer.send(queue, f"m{i}") for i in range(4)]
                return await asyncio.gather(*futures, return_exceptions=True)

            return await _longest_stall_while(sends())
        finally:
            await context.close()

    stall, outcomes = asyncio.run(main())
    assert stall < 0.5, f"the event loop stalled for {stall:.3f} s"
    assert all(isinstance(o, JMSRuntimeException) for o in outcomes), outcomes
    assert peer.transfers == []


def test_an_expired_unwritten_send_is_withdrawn_and_frees_its_slot(
    make_peer: PeerFactory,
) -> None:
    """Sends queued on the link for credit time out: they are reported as not sent, taken off
    the link (not written when the broker grants credit later), and their in-flight slots are
    free again: a later send goes out at once and is the only one written."""
    peer = make_peer(links=no_credit_on("q"), strict=False)

    async def main() -> tuple[list[Any], None]:
        from jmspy import aio

        connection = await aio.connect(peer.url, **_options(1000))
        try:
            session = await connection.create_session()
            producer = await session.create_producer(session.create_queue("q"))
            timed_out = await asyncio.gather(
                *[producer.send(session.create_text_message(f"old{i}")) for i in range(2)],
                return_exceptions=True,
            )
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, grant_credit, peer, "q", 10)
            # Both slots free: the send is not queued behind anything (it would time out).
            settled = await producer.send(session.create_text_message("new"))
            return timed_out, settled
        finally:
            await connection.close()

    timed_out, settled = asyncio.run(main())
    assert settled is None
    texts = [str(o) for o in timed_out]
    assert all(isinstance(o, JMSException) for o in timed_out), timed_out
    assert all("it was withdrawn, the message was not sent" in t for t in texts), texts
    bodies = [t.section(AMQP_VALUE) for t in peer.transfers]
    assert bodies == ["new"], f"a send reported as not sent was written: {bodies}"


def test_sends_of_several_tasks_reach_the_link_in_send_order(make_peer: PeerFactory) -> None:
    """Three tasks send on one producer, taking turns, while only two sends fit in flight and
    the broker has not granted credit yet: most sends wait for a slot. Once credit comes,
    every message is written in the order its send() was called, and each send is settled."""
    peer = make_peer(links=no_credit_on("q"), strict=False)

    async def main() -> tuple[list[str], list[Any]]:
        from jmspy import aio

        connection = await aio.connect(peer.url, **_options(20000))
        try:
            session = await connection.create_session()
            producer = await session.create_producer(session.create_queue("q"))
            called: list[str] = []
            futures: list[asyncio.Future[None]] = []

            async def sender(name: str) -> None:
                for i in range(5):
                    body = f"{name}{i}"
                    futures.append(producer.send(session.create_text_message(body)))
                    called.append(body)
                    await asyncio.sleep(0)  # lets the other tasks send in between

            await asyncio.gather(*(sender(name) for name in "abc"))
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, grant_credit, peer, "q", 100)
            outcomes = await asyncio.wait_for(asyncio.gather(*futures, return_exceptions=True), 15)
            return called, outcomes
        finally:
            await connection.close()

    called, outcomes = asyncio.run(main())
    assert outcomes == [None] * 15, outcomes
    assert len(set(called[:6])) == 6 and called[:3] != ["a0", "a1", "a2"]  # interleaved
    assert [t.section(AMQP_VALUE) for t in peer.transfers] == called


def test_a_producer_close_waits_for_sends_waiting_for_a_slot(make_peer: PeerFactory) -> None:
    """A send waiting for a slot when its producer is closed is given to the link before the
    close (as a blocking close comes after every send that returned): it is written and
    settled once credit comes, not lost to the closed link."""
    peer = make_peer(links=no_credit_on("q"), strict=False)

    async def main() -> list[Any]:
        from jmspy import aio

        connection = await aio.connect(peer.url, **_options(20000))
        try:
            session = await connection.create_session()
            producer = await session.create_producer(session.create_queue("q"))
            futures = [producer.send(session.create_text_message(f"m{i}")) for i in range(3)]
            closing = asyncio.create_task(producer.close())
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, grant_credit, peer, "q", 10)
            await asyncio.wait_for(closing, 15)
            return await asyncio.gather(*futures, return_exceptions=True)
        finally:
            await connection.close()

    assert asyncio.run(main()) == [None, None, None]
    assert [t.section(AMQP_VALUE) for t in peer.transfers] == ["m0", "m1", "m2"]


def test_a_commit_includes_the_sends_still_waiting_for_a_slot(
    make_peer: PeerFactory, coordinator: Coordinator
) -> None:
    """Two sends in a transaction with one in-flight slot and no credit yet: the second waits
    for the slot when commit() is called. The commit waits for it (the blocking commit waits
    for every send that returned, and the slot queue hands it to its link meanwhile), so both
    are in the transaction and neither fails as not sent."""
    peer = make_peer(links=no_credit_on("q"))

    async def main() -> list[Any]:
        from jmspy import SESSION_TRANSACTED, aio

        options = {**FAST_OPTIONS, "send_timeout": 20000, "jms.maxAsyncSendsInFlight": 1}
        connection = await aio.connect(peer.url, **options)
        try:
            session = await connection.create_session(SESSION_TRANSACTED)
            producer = await session.create_producer(session.create_queue("q"))
            sends = [producer.send(session.create_text_message(f"m{i}")) for i in range(2)]
            commit = asyncio.create_task(session.commit())
            # Not a synchronisation: time for a commit that would not wait for the second send
            # to go ahead first (the test would then fail); one that waits is only delayed.
            await asyncio.sleep(0.3)
            grant_credit(peer, "q", 10)
            await asyncio.wait_for(commit, 30)
            return list(await asyncio.gather(*sends, return_exceptions=True))
        finally:
            await connection.close()

    outcomes = asyncio.run(main())
    assert [o for o in outcomes if isinstance(o, BaseException)] == [], outcomes
    # The commit first; the close then rolls back the next, empty, transaction.
    assert [fail for _txn, fail in coordinator.discharges][:1] == [False]
    assert len([t for t in peer.transfers if t.link_name and "q" in t.link_name]) == 2


def test_a_transacted_receive_that_must_declare_does_not_stall_the_event_loop(
    make_peer: PeerFactory, coordinator: Coordinator
) -> None:
    """A transacted session whose next transaction is not declared yet (the declare after
    the last commit got no answer; a reconnect does the same) declares it when a message is
    handed over. An aio receive handed the prefetched message over on the event loop, which
    waited there for the declare, up to jms.requestTimeout (2 s here)."""
    coordinator.answer_declares = 1  # the session's first transaction, then no answer
    peer = make_peer()
    peer.enqueue("q", AmqpMessage(body="in the first transaction"))

    async def main() -> tuple[float, Any]:
        from jmspy import SESSION_TRANSACTED, aio

        connection = await aio.connect(peer.url, **{**FAST_OPTIONS, "request_timeout": 2000})
        try:
            session = await connection.create_session(SESSION_TRANSACTED)
            consumer = await session.create_consumer(session.create_queue("q"))
            await connection.start()
            assert await consumer.receive(5000) is not None
            await session.commit()  # its declare of the next transaction times out
            peer.enqueue("q", AmqpMessage(body="needs a new transaction"))

            async def receive() -> Any:
                try:
                    return await consumer.receive(5000)
                except JMSException as exc:
                    return exc

            return await _longest_stall_while(receive())
        finally:
            await connection.close()

    stall, outcome = asyncio.run(main())
    assert stall < 0.5, f"the event loop stalled for {stall:.3f} s"
    assert isinstance(outcome, JMSException), outcome
    assert "did not complete within 2 s" in str(outcome), outcome
