"""jmspy.aio receives at their edges, each as the blocking receive behaves: a consumer without
prefetch asks for the message it waits for, a receive on a closed consumer raises, a
receiveNoWait honours jms.receiveNoWaitLocalOnly, and a transacted receive cancelled while its
transaction is declared leaves the message for the next receive."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from proton import Delivery
from proton import Message as AmqpMessage

from jmspy.errors import IllegalStateException

from .client_support import FAST_OPTIONS
from .conftest import PeerFactory
from .peer import ScriptedPeer
from .peer_coordinator import Coordinator
from .peer_engine import _PeerConnection

# Generous: only a broken client gets near it, so a busy machine does not fail the test.
BOUND_S = 30.0


def test_a_receive_without_prefetch_asks_for_the_message(peer: ScriptedPeer) -> None:
    """jms.prefetchPolicy.all=0: the link holds no credit until a receive asks for one message,
    as the blocking receive does. The asyncio receive never granted it, so a receive without
    a timeout waited for ever with the message on the broker."""
    peer.enqueue("q", AmqpMessage(body="waiting on the broker"))

    async def main() -> Any:
        from jmspy import aio

        url = f"{peer.url}?jms.prefetchPolicy.all=0"
        async with aio.connect(url, **FAST_OPTIONS) as connection:
            session = await connection.create_session()
            consumer = await session.create_consumer(session.create_queue("q"))
            try:
                message = await asyncio.wait_for(consumer.receive(), BOUND_S)
            except TimeoutError:
                return "no message"
            return message.getBody(str)

    assert asyncio.run(main()) == "waiting on the broker"


def test_receives_on_a_closed_consumer_raise_as_the_blocking_ones(peer: ScriptedPeer) -> None:
    """After ``await consumer.close()``, ``receive_no_wait()`` raised nothing and returned None,
    where the blocking ``receiveNoWait()`` raises IllegalStateException."""

    async def main() -> list[BaseException | None]:
        from jmspy import aio

        async with aio.connect(peer.url, **FAST_OPTIONS) as connection:
            session = await connection.create_session()
            consumer = await session.create_consumer(session.create_queue("q"))
            await consumer.close()
            outcomes: list[BaseException | None] = []
            for receive in (consumer.receive_no_wait, lambda: consumer.receive(10)):
                try:
                    await receive()
                    outcomes.append(None)
                except IllegalStateException as exc:
                    outcomes.append(exc)
            with pytest.raises(IllegalStateException):
                consumer.sync.receiveNoWait()
            return outcomes

    outcomes = asyncio.run(main())
    assert all(isinstance(o, IllegalStateException) for o in outcomes), outcomes


@pytest.mark.parametrize(
    ("option", "drains"),
    [("jms.receiveNoWaitLocalOnly", False), ("jms.receiveLocalOnly", True)],
)
def test_receive_no_wait_honours_its_own_local_only_option(
    peer: ScriptedPeer, option: str, drains: bool
) -> None:
    """``receive_no_wait()`` on an empty consumer drains the link unless
    jms.receiveNoWaitLocalOnly is set, as ``receiveNoWait()`` does; jms.receiveLocalOnly is
    the option of timed receives. The asyncio one read jms.receiveLocalOnly instead."""

    async def main() -> Any:
        from jmspy import aio

        async with aio.connect(peer.url, **{**FAST_OPTIONS, option: True}) as connection:
            session = await connection.create_session()
            consumer = await session.create_consumer(session.create_queue("q"))
            message = await consumer.receive_no_wait()
            # Answered after anything the client sent before: the drain, if any, is recorded.
            await connection.create_session()
            return message

    assert asyncio.run(main()) is None
    drained = [f for f in peer.flows if f.drain and f.link_name is not None]
    assert bool(drained) == drains, drained


def test_a_transacted_receive_cancelled_while_declaring_leaves_the_message(
    make_peer: PeerFactory, coordinator: Coordinator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The declare of the transaction after a commit is refused, so the next receive declares
    one before it hands a message over; the peer holds its answer to that declare until the
    awaiting receive is cancelled. The receive had taken the message first: once declared, it
    was accepted in the transaction and returned to nobody (a commit would consume it unseen),
    and the next receive got the message after it. Now the message stays for the next
    receive."""
    hold = threading.Event()
    asked = threading.Event()
    answer = threading.Event()
    answering = _PeerConnection._on_delivery  # the coordinator's

    def held_declare(self: _PeerConnection, delivery: Delivery) -> None:
        link = delivery.link
        script = self.links.get((False, link.name)) if link.is_receiver else None
        target = script.attach.target if script is not None and script.attach else None
        if target is not None and target.coordinator and delivery.readable:
            if not delivery.partial and hold.is_set() and not asked.is_set():
                # The peer thread: the client's declare waits for this answer.
                asked.set()
                answer.wait(BOUND_S)
        answering(self, delivery)

    monkeypatch.setattr(_PeerConnection, "_on_delivery", held_declare)
    peer = make_peer()
    for body in ("zero", "first", "second"):
        peer.enqueue("q", AmqpMessage(body=body))

    async def main() -> list[str]:
        from jmspy import SESSION_TRANSACTED, aio

        options = {**FAST_OPTIONS, "request_timeout": int(BOUND_S * 1000)}
        loop = asyncio.get_running_loop()
        async with aio.connect(peer.url, **options) as connection:
            session = await connection.create_session(SESSION_TRANSACTED)
            consumer = await session.create_consumer(session.create_queue("q"))
            bodies = []
            message = await consumer.receive(int(BOUND_S * 1000))
            assert message is not None
            bodies.append(message.getBody(str))
            coordinator.reject_declares = 1  # the session's first declare was answered
            await session.commit()
            hold.set()
            receiving = asyncio.create_task(consumer.receive(int(BOUND_S * 1000)))
            if not await loop.run_in_executor(None, asked.wait, BOUND_S):
                receiving.cancel()
                raise AssertionError("no declare")
            receiving.cancel()
            with pytest.raises(asyncio.CancelledError):
                await receiving
            answer.set()
            for _ in range(2):
                message = await consumer.receive(int(BOUND_S * 1000))
                assert message is not None
                bodies.append(message.getBody(str))
            await session.commit()
            return bodies

    assert asyncio.run(main()) == ["zero", "first", "second"]
    assert coordinator.rejected == 1
    assert [fail for _txn, fail in coordinator.discharges][:2] == [False, False]
