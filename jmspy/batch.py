"""Batch delivery to a BatchMessageListener (JMS_SPEC-36) on the session's dispatch thread:
when a batch is due, handing it over under the session's acknowledgement mode, and the lazy
acknowledgement of DUPS_OK batches.

:class:`BatchDelivery` is mixed into :class:`~jmspy.consumer.MessageConsumer`; its methods work
on the consumer's own buffer, lock and link, described by :class:`_Consumer`.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol, cast

from ._amqp.provider import AmqpReceiver, InboundDelivery
from ._modes import (
    ACKNOWLEDGED_BY_APPLICATION,
    AUTO_ACKNOWLEDGE,
    DUPS_OK_ACKNOWLEDGE,
    NOT_ACKNOWLEDGED,
    SESSION_TRANSACTED,
)
from .destination import Destination
from .prefetch import PriorityBuffer

if TYPE_CHECKING:
    from ._ports import SessionPort
    from .consumer import BatchListenerLike, MessageConsumer
    from .session import Session

__all__ = ["LAZY_ACK_THRESHOLD", "BatchDelivery"]


# DUPS_OK batches: acknowledge once this many messages are pending (or when idle or closing).
LAZY_ACK_THRESHOLD = 256


class _Consumer(Protocol):
    """The part of the consumer that batch delivery reads and drives."""

    _session: Session
    _port: SessionPort
    _receiver: AmqpReceiver
    _destination: Destination
    _cv: threading.Condition
    _buffer: collections.deque[InboundDelivery] | PriorityBuffer
    _batch_listener: BatchListenerLike | None
    _batch_size: int
    _batch_timeout_s: float
    _closed: bool
    _deferred_close: bool
    _close_requested: bool
    _listener_thread: threading.Thread | None
    _lazy_acks: list[InboundDelivery]

    def _take(self) -> InboundDelivery | None: ...

    def _close_internal(self) -> None: ...

    def _run_listener(
        self,
        call: Callable[[Any], object],
        argument: object,
        first: InboundDelivery,
        batch_size: int | None,
    ) -> bool: ...

    def _failed_deliveries(self, inbounds: list[InboundDelivery]) -> None: ...

    def _redeliver_locally(self, inbounds: list[InboundDelivery]) -> None: ...

    def _deliver_batch(self, listener: BatchListenerLike, batch: list[InboundDelivery]) -> None: ...

    def _flush_lazy_acks(self) -> None: ...


class BatchDelivery:
    """The batch-listener dispatch of a MessageConsumer (mixed in)."""

    # Assigned in _flush_lazy_acks; declared so the type checker does not take that assignment
    # for the attribute's definition (the consumer creates it).
    _lazy_acks: list[InboundDelivery]
    _listener_thread: threading.Thread | None

    def _dispatch_batch(self: _Consumer) -> float | None:
        """Session dispatch thread: deliver one batch if it is due. Returns the monotonic
        deadline at which the pending (incomplete) batch becomes due, or None."""
        listener = self._batch_listener
        if listener is None or self._closed or self._close_requested:
            return None  # a close() waiting for the dispatch must not wait behind more batches
        size = self._batch_size
        with self._cv:
            available = len(self._buffer)
            if available == 0:
                self._flush_lazy_acks()
                return None
            if available < size and self._batch_timeout_s > 0:
                due_at = _oldest_arrival(self._buffer) + self._batch_timeout_s
                if time.monotonic() < due_at:
                    return due_at
            batch: list[InboundDelivery] = []
            while len(batch) < size:
                inbound = self._take()
                if inbound is None:
                    break
                batch.append(inbound)
        if batch:
            self._deliver_batch(listener, batch)
        if self._deferred_close:
            self._close_internal()
            return None
        held_until = self._port.listener_held_until()
        if held_until is not None and self._port.mode == SESSION_TRANSACTED:
            # A failed declare holds the session's deliveries back (the batch went back to
            # the buffer): the next turn is at the end of the pause, not now.
            return held_until
        with self._cv:
            remaining = len(self._buffer)
        if remaining and not self._close_requested:
            # The mixin's self is always the consumer it is mixed into.
            self._port.signal_ready(cast("MessageConsumer", self))
        elif not remaining:
            # Idle: DUPS_OK batches are acknowledged now ("lazily but surely", BL-10), not
            # at a later turn that may never come.
            self._flush_lazy_acks()
        return None

    def _deliver_batch(
        self: _Consumer, listener: BatchListenerLike, batch: list[InboundDelivery]
    ) -> None:
        session = self._port
        mode = session.mode
        messages = [inbound.message for inbound in batch]
        if mode in ACKNOWLEDGED_BY_APPLICATION:
            for inbound in batch:
                session.track_unacked(inbound)
        elif mode == SESSION_TRANSACTED:
            txn_id = self._port.txn_for_listener()
            if txn_id is None:
                # No transaction to accept it in (a declare refused or unanswered): the batch
                # goes back in front of the buffer, in order, with the credit its messages
                # used; the session tries again after a backoff pause (_dispatch_batch).
                epoch = self._receiver.connection.epoch
                with self._cv:
                    for inbound in batch:
                        if inbound.epoch == epoch:
                            self._receiver.credit_unconsumed()
                    self._buffer.extendleft(reversed(batch))
                return
            self._receiver.settle_many(batch, "accepted", txn_id=txn_id)
        elif mode in NOT_ACKNOWLEDGED:
            # Consumed as handed over (JMS-68); the link is presettled, nothing goes on the wire.
            self._receiver.settle_many(batch, "accepted")
        # A recover() from onMessages asks for the batch again in AUTO and DUPS_OK mode, as
        # from onMessage (the session tracks the call through the batch's first message).
        call = listener.onMessages if hasattr(listener, "onMessages") else listener
        failed = self._run_listener(call, messages, batch[0], len(batch))
        if (
            mode in (AUTO_ACKNOWLEDGE, DUPS_OK_ACKNOWLEDGE)
            and not self._closed
            and session.take_recover_request()
        ):
            self._redeliver_locally(batch)
            return
        if mode == AUTO_ACKNOWLEDGE:
            if failed:
                self._failed_deliveries(batch)
            else:
                self._receiver.settle_many(batch, "accepted")
        elif mode == DUPS_OK_ACKNOWLEDGE:
            if failed:
                self._failed_deliveries(batch)
            else:
                self._lazy_acks.extend(batch)
                if len(self._lazy_acks) >= LAZY_ACK_THRESHOLD:
                    self._flush_lazy_acks()

    def _flush_lazy_acks(self: _Consumer) -> None:
        if self._lazy_acks:
            pending, self._lazy_acks = self._lazy_acks, []
            self._receiver.settle_many(pending, "accepted")


def _oldest_arrival(buffer: Iterable[InboundDelivery]) -> float:
    """When the oldest buffered message arrived (the FIFO head, or the earliest lane head)."""
    if isinstance(buffer, collections.deque):
        arrived: float = buffer[0].arrived
        return arrived
    return min(inbound.arrived for inbound in buffer)
