"""Taking the next message from a consumer's local buffer (skipping what a lost transport,
local expiry or the redelivery limit rule out) and handing it over to the application under
the session's acknowledgement mode: the step every synchronous receive ends with.

A mixin of :class:`jmspy.consumer.MessageConsumer`, which holds the state it reads.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from typing import TYPE_CHECKING

from ._modes import (
    ACKNOWLEDGED_BY_APPLICATION,
    AUTO_ACKNOWLEDGE,
    DUPS_OK_ACKNOWLEDGE,
    NOT_ACKNOWLEDGED,
)

if TYPE_CHECKING:
    from ._amqp.provider import AmqpReceiver, InboundDelivery
    from ._ports import SessionPort
    from .consumer_redelivery import FailoverRedeliveries
    from .message import Message
    from .prefetch import PriorityBuffer
    from .redelivery import RedeliveryPolicy

__all__ = ["HandOver"]

log = logging.getLogger("jmspy.consumer")


class HandOver:
    """``_take`` and ``_hand_over`` of a consumer."""

    if TYPE_CHECKING:
        _port: SessionPort
        _cv: threading.Condition
        _receiver: AmqpReceiver
        _buffer: collections.deque[InboundDelivery] | PriorityBuffer
        _local_expiry: bool
        _presettled: bool
        _failover_ids: FailoverRedeliveries | None
        _policy: RedeliveryPolicy

        def _give_up(self, inbound: InboundDelivery, count: int) -> None: ...

        def _pull_if_no_prefetch(self) -> None: ...

    def _take(self) -> InboundDelivery | None:
        """Pop the next deliverable message; expired ones are settled and skipped."""
        connection = self._receiver.connection
        skipped = False
        while self._buffer:
            inbound = self._buffer.popleft()
            if inbound.epoch != connection.epoch:
                if not self._presettled:
                    # Its transport is gone (failover): it can no longer be acknowledged and
                    # the broker sends it again. The engine thread empties the buffer when it
                    # learns of the loss, but it needs this lock for that, and a receive()
                    # loop that keeps finding messages would otherwise hand out the whole
                    # prefetch first.
                    continue
                # Presettled: the broker will not send it again, so it is handed over; its
                # credit was the old link's (the new one granted a full window).
            else:
                self._receiver.credit_consumed()
            if self._local_expiry:
                expiration = inbound.message.getJMSExpiration()
                if expiration and expiration <= time.time_ns() // 1_000_000:
                    log.debug("dropping expired message %s", inbound.message.getJMSMessageID())
                    self._receiver.settle(inbound, "modified", failed=True, undeliverable=True)
                    skipped = True
                    continue
            policy = self._policy
            if policy.limited:
                count = inbound.message.get_delivery_count() or 1
                if policy.exceeded(count):
                    # A message over the attempt limit is never handed to the application.
                    self._give_up(inbound, count)
                    skipped = True
                    continue
            if self._failover_ids is not None:
                # After the limit: a message a dropped connection held comes back with its
                # count unchanged (a disconnect is not a failed attempt); the count this
                # raises for the JMSRedelivered flag must not push it over the limit.
                self._failover_ids.taken(inbound.message)
            return inbound
        if skipped:
            # Without prefetch the skipped message used the one credit the waiting receive
            # asked for: ask for the next one (as Qpid JMS pulls again after filtering an
            # expired or over-limit message), or receive() waits for nothing.
            self._pull_if_no_prefetch()
        return None

    def _hand_over(self, inbound: InboundDelivery) -> Message:
        """Acknowledge according to the session mode as the message reaches the application.

        Called without ``_cv``: a transacted session may first declare its transaction (after
        a reconnect lost the old one), a wait for the engine thread, which takes ``_cv`` to
        buffer arrivals and would never read the declare's answer."""
        message: Message = inbound.message
        mode = self._port.mode
        if mode in ACKNOWLEDGED_BY_APPLICATION:
            self._port.track_unacked(inbound)
        elif mode in (AUTO_ACKNOWLEDGE, DUPS_OK_ACKNOWLEDGE) or mode in NOT_ACKNOWLEDGED:
            # (No-acknowledgement modes, JMS-68: the link is presettled, so this only frees
            # the delivery's local state; nothing goes on the wire.)
            self._receiver.settle(inbound, "accepted")
        else:
            # SESSION_TRANSACTED: accepted within the transaction; commit or rollback decides.
            try:
                txn_id = self._port.txn_for_work()[0]
            except BaseException:
                # No transaction to accept it in: it goes back in front, for the next receive.
                with self._cv:
                    self._buffer.extendleft([inbound])
                    self._receiver.credit_unconsumed()
                    self._cv.notify()
                raise
            self._receiver.settle(inbound, "accepted", txn_id=txn_id)
        return message
