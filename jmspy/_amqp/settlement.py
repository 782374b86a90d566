"""Settling received deliveries: one delivery with the outcome the JMS layer chose
(:func:`_settle_now`), the queue of settlements many threads hand to one piece of engine
work (:class:`_EngineBatch`), so that a burst of acknowledgements costs one engine turn, and
the settling half of a consumer link (:class:`ReceiverSettlement`, mixed into AmqpReceiver)."""
# Shares underscore members with the other modules of one provider (see jmspy/_amqp/__init__.py).

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from proton import Data, Delivery, Described, ulong

from ..errors import JMSException
from .proton_internals import (
    DeliveryHandle,
    accept_and_settle,
    accept_and_settle_all,
    settle_all_with_state,
)
from .terms import ACCEPTED_CODE, TRANSACTIONAL_STATE, InboundDelivery

if TYPE_CHECKING:
    from .provider import AmqpConnection

__all__: list[str] = []

T = TypeVar("T")


def _settle_now(
    inbound: InboundDelivery,
    outcome: str,
    failed: bool,
    undeliverable: bool,
    txn_id: bytes | None = None,
) -> None:
    if inbound.settled:
        return
    inbound.settled = True
    receiver = inbound.receiver
    receiver.open_deliveries.discard(inbound)
    handle = inbound.delivery
    if receiver.failure is not None or inbound.epoch != receiver.connection.epoch:
        # Failed link, or a delivery of a transport failover has replaced: nothing to settle
        # (the broker puts the message back and redelivers it).
        handle.release()
        return
    if outcome == "modified" and not inbound.receiver.modified_outcome:
        # The broker does not know the modified outcome: the nearest it understands.
        outcome = "rejected" if undeliverable else "released"
    if outcome == "accepted" and txn_id is None:
        accept_and_settle(handle)
        return
    delivery = handle.wrap()
    if txn_id is not None and outcome == "accepted":
        # transactional-state(txn-id, accepted): the acknowledgement takes effect at commit.
        delivery.local.data = cast(Any, [txn_id, Described(ulong(ACCEPTED_CODE), [])])
        delivery.update(TRANSACTIONAL_STATE)
    elif outcome == "released":
        delivery.update(Delivery.RELEASED)
    elif outcome == "rejected":
        delivery.update(Delivery.REJECTED)
    else:
        delivery.local.failed = failed
        delivery.local.undeliverable = undeliverable
        delivery.update(Delivery.MODIFIED)
    delivery.settle()
    handle.release()


class _EngineBatch(Generic[T]):
    """Items queued from any thread for one piece of engine work that takes them all: the
    first item since the engine last took the queue submits the work, later ones join it."""

    def __init__(self, settle: Callable[[collections.deque[T]], None]) -> None:
        self._items: collections.deque[T] = collections.deque()
        self._settle = settle
        self._lock = threading.Lock()
        self._submitted = False

    def add(self, items: Iterable[T], submit: Callable[[Callable[[], None]], None]) -> None:
        """Queue ``items``; ``submit`` hands work to the engine thread (the connection's)."""
        self._items.extend(items)
        if self._submitted:
            return
        with self._lock:
            if self._submitted:
                return
            self._submitted = True
        try:
            submit(self._run)
        except JMSException:
            with self._lock:
                self._submitted = False

    def _run(self) -> None:
        with self._lock:
            # Cleared before taking the queue: an item queued from here on submits anew.
            self._submitted = False
        self._settle(self._items)


class ReceiverSettlement:
    """How a consumer link settles what it received (any thread hands outcomes over; the
    engine thread puts them on the wire). A mixin of :class:`~.receiver.AmqpReceiver`, which
    holds the state it reads."""

    if TYPE_CHECKING:
        connection: AmqpConnection
        failure: JMSException | None
        open_deliveries: set[InboundDelivery]
        _accepts: _EngineBatch[InboundDelivery]
        _txn_accepts: _EngineBatch[tuple[InboundDelivery, bytes]]
        _txn_state: tuple[bytes, bytes] | None

    def settle(
        self,
        inbound: InboundDelivery,
        outcome: str,
        failed: bool = True,
        undeliverable: bool = False,
        txn_id: bytes | None = None,
    ) -> None:
        """Settle a delivery with accepted / released / rejected / modified (any thread)."""
        if outcome == "accepted":
            if txn_id is None:
                self._accept(inbound)
            else:
                self._accept_all_in_txn((inbound,), txn_id)
            return

        def do_settle() -> None:
            _settle_now(inbound, outcome, failed, undeliverable, txn_id)

        try:
            self.connection.submit(do_settle)
        except JMSException:
            pass

    def _accept(self, inbound: InboundDelivery) -> None:
        self._accept_all((inbound,))

    def _accept_all(self, inbounds: Iterable[InboundDelivery]) -> None:
        """Queue plain acceptances; the first since the engine last took the queue submits the
        work that settles them all. Work submitted later by the same thread runs after it, so
        an acceptance still precedes a later close, drain or commit."""
        self._accepts.add(inbounds, self.connection.submit_lazy)

    def _settle_accepts(self, accepts: collections.deque[InboundDelivery]) -> None:
        """Engine thread: settle every queued acceptance."""
        # _settle_now(inbound, "accepted") for each, in one loop: this runs for every message
        # a consumer acknowledges.
        handles = []
        discard = self.open_deliveries.discard
        epoch = self.connection.epoch
        while accepts:
            inbound = accepts.popleft()
            if inbound.settled:
                continue
            inbound.settled = True
            discard(inbound)
            if inbound.epoch == epoch:
                handles.append(inbound.delivery)
            else:
                inbound.delivery.release()  # nothing to settle (see _settle_now)
        if handles and self.failure is None:
            accept_and_settle_all(handles)
        else:
            for handle in handles:
                handle.release()

    def _accept_all_in_txn(self, inbounds: Iterable[InboundDelivery], txn_id: bytes) -> None:
        """Queue acceptances within transaction ``txn_id``, as :meth:`_accept_all` does plain
        ones: they still reach the engine before a commit or rollback submitted after them."""
        self._txn_accepts.add(((inbound, txn_id) for inbound in inbounds), self.connection.submit)

    def _settle_txn_accepts(self, queued: collections.deque[tuple[InboundDelivery, bytes]]) -> None:
        """Engine thread: settle every queued transactional acceptance, with
        transactional-state(txn-id, accepted), the acknowledgement taking effect at commit."""
        discard = self.open_deliveries.discard
        epoch = self.connection.epoch
        failed = self.failure is not None
        handles: list[DeliveryHandle] = []
        current: bytes | None = None
        while queued:
            inbound, txn_id = queued.popleft()
            if inbound.settled:
                continue
            inbound.settled = True
            discard(inbound)
            if failed or inbound.epoch != epoch:
                # Nothing to settle: the broker puts the message back (see _settle_now).
                inbound.delivery.release()
                continue
            if txn_id != current and handles:
                assert current is not None
                settle_all_with_state(
                    handles, TRANSACTIONAL_STATE, self._encoded_txn_state(current)
                )
                handles = []
            current = txn_id
            handles.append(inbound.delivery)
        if handles:
            assert current is not None
            settle_all_with_state(handles, TRANSACTIONAL_STATE, self._encoded_txn_state(current))

    def _encoded_txn_state(self, txn_id: bytes) -> bytes:
        """The fields of transactional-state(txn_id, accepted), AMQP-encoded."""
        cached = self._txn_state
        if cached is not None and cached[0] == txn_id:
            return cached[1]
        data = Data()
        data.put_object([txn_id, Described(ulong(ACCEPTED_CODE), [])])
        encoded = data.encode()
        self._txn_state = (txn_id, encoded)
        return encoded

    def settle_later(
        self,
        inbound: InboundDelivery,
        delay_ms: int,
        outcome: str,
        failed: bool = True,
        undeliverable: bool = False,
    ) -> None:
        """Settle after a delay (a client-side redelivery delay on top of the broker's)."""
        self.run_later(delay_ms, lambda: _settle_now(inbound, outcome, failed, undeliverable))

    def run_later(self, delay_ms: int, work: Callable[[], None]) -> None:
        """Run work on the engine thread after ``delay_ms`` (0: as soon as possible)."""
        engine = self.connection.engine

        def schedule() -> None:
            engine.schedule(max(0, delay_ms) / 1000.0, work)

        try:
            self.connection.submit(schedule)
        except JMSException:
            pass

    def settle_many(
        self,
        inbounds: list[InboundDelivery],
        outcome: str,
        failed: bool = True,
        undeliverable: bool = False,
        txn_id: bytes | None = None,
    ) -> None:
        if not inbounds:
            return

        if outcome == "accepted":
            if txn_id is None:
                self._accept_all(inbounds)
            else:
                self._accept_all_in_txn(inbounds, txn_id)
            return

        def do_settle() -> None:
            for inbound in inbounds:
                _settle_now(inbound, outcome, failed, undeliverable, txn_id)

        try:
            self.connection.submit(do_settle)
        except JMSException:
            pass
