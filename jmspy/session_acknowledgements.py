"""What the application acknowledges itself: CLIENT_ACKNOWLEDGE and INDIVIDUAL_ACKNOWLEDGE.

The session keeps every message it handed to the application and that is not yet
acknowledged, in delivery order, across its consumers. ``Message.acknowledge()`` settles all
of them in CLIENT_ACKNOWLEDGE (JMS 2.0 section 6.2.10) and only the message it is called on in
INDIVIDUAL_ACKNOWLEDGE (Qpid JMS's session mode 101, rule JMS-67). The outcome is the one the
message's ``JMS_AMQP_ACK_TYPE`` property names, accepted by default, as in Qpid JMS (rule
WM-16). ``recover()`` hands back what is left; closing a consumer fails what is left of its
messages (the consumer does that, with what :meth:`_forget_unacked` gives it).

A mixin of :class:`jmspy.session.Session`, which holds the state it reads and writes.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ._modes import CLIENT_ACKNOWLEDGE, INDIVIDUAL_ACKNOWLEDGE
from .errors import IllegalStateException

if TYPE_CHECKING:
    from ._amqp.provider import InboundDelivery
    from ._ports import ConsumerHooks
    from ._provider import Provider
    from .consumer import MessageConsumer

__all__ = ["SessionAcknowledgements", "settle_grouped", "ACK_TYPE_OUTCOMES"]

# JMS_AMQP_ACK_TYPE (1..5, as Qpid JMS numbers them) → (outcome, delivery-failed,
# undeliverable-here) of the disposition that settles the message.
ACK_TYPE_OUTCOMES: dict[int, tuple[str, bool, bool]] = {
    1: ("accepted", False, False),
    2: ("rejected", False, False),
    3: ("released", False, False),
    4: ("modified", True, False),
    5: ("modified", True, True),
}
ACCEPTED = 1


class SessionAcknowledgements:
    """The session's unacknowledged messages and the acknowledgements that settle them."""

    _mode: int
    _closed: bool
    _amqp_connection: Provider
    _consumer_hooks: dict[MessageConsumer, ConsumerHooks]
    # Every message handed to the application and not yet acknowledged, in delivery order (a
    # dict as an ordered set: INDIVIDUAL_ACKNOWLEDGE takes one out from anywhere).
    _unacked: dict[InboundDelivery, None]
    _unacked_lock: threading.Lock

    def _track_unacked(self, inbound: InboundDelivery) -> None:
        """The message reaches the application: keep it until acknowledged, and point its
        acknowledge() at the session (all of them) or at itself (INDIVIDUAL)."""
        with self._unacked_lock:
            self._unacked[inbound] = None
        callback: Callable[[int], None]
        if self._mode == INDIVIDUAL_ACKNOWLEDGE:
            callback = functools.partial(self._acknowledge_one, inbound)
        else:
            callback = self._acknowledge
        inbound.message.set_acknowledge_callback(callback)

    def _check_acknowledge_allowed(self) -> None:
        if self._closed:
            raise IllegalStateException(
                "cannot acknowledge: the session that received the message is closed"
            )

    def _acknowledge(self, ack_type: int = ACCEPTED) -> None:
        """Message.acknowledge() in CLIENT_ACKNOWLEDGE mode, and JMSContext.acknowledge():
        every message delivered so far. A no-op in the other modes."""
        self._check_acknowledge_allowed()
        if self._mode != CLIENT_ACKNOWLEDGE:
            return
        with self._unacked_lock:
            pending = list(self._unacked)
            self._unacked.clear()
        self._settle_acknowledged(pending, ack_type)

    def _acknowledge_one(self, inbound: InboundDelivery, ack_type: int = ACCEPTED) -> None:
        """Message.acknowledge() in INDIVIDUAL_ACKNOWLEDGE mode: that message only. Again, or
        after recover() took it back, it does nothing."""
        self._check_acknowledge_allowed()
        with self._unacked_lock:
            if inbound not in self._unacked:
                return
            del self._unacked[inbound]
        self._settle_acknowledged([inbound], ack_type)

    def _settle_acknowledged(self, pending: list[InboundDelivery], ack_type: int) -> None:
        amqp = self._amqp_connection
        epoch = amqp.epoch
        # A presettled consumer's message (rule WM-17) was settled by the broker when it was
        # sent: acknowledging it only frees local state, and none is lost with a connection.
        current = [d for d in pending if d.epoch == epoch or d.receiver.spec.presettled]
        if amqp.failure is not None:
            current, lost = [], [d for d in pending if not d.receiver.spec.presettled]
        else:
            lost = (
                [d for d in pending if d.epoch != epoch and not d.receiver.spec.presettled]
                if len(current) != len(pending)
                else []
            )
        outcome, failed, undeliverable = ACK_TYPE_OUTCOMES[ack_type]
        settle_grouped(current, outcome, failed, undeliverable)
        if lost:
            why = (
                f"the connection has failed ({amqp.failure.reason})"
                if amqp.failure is not None
                else "they were delivered before the connection to the broker was interrupted"
            )
            raise IllegalStateException(
                f"acknowledge(): {len(lost)} message(s) could not be acknowledged because {why}; "
                "the acknowledgement did not reach the broker, which will redeliver them "
                "(JMSRedelivered=true)"
            )

    def _take_unacked(self) -> list[InboundDelivery]:
        """recover(): every unacknowledged message, in delivery order, no longer tracked."""
        with self._unacked_lock:
            pending = list(self._unacked)
            self._unacked.clear()
        return pending

    def _forget_unacked(self, consumer: MessageConsumer) -> list[InboundDelivery]:
        """A consumer closes: its unacknowledged messages, no longer tracked."""
        with self._unacked_lock:
            hooks = self._consumer_hooks.get(consumer)
            if hooks is None:
                return []
            receiver = hooks.receiver
            mine = [d for d in self._unacked if d.receiver is receiver]
            for inbound in mine:
                del self._unacked[inbound]
        return mine


def settle_grouped(
    inbounds: list[InboundDelivery], outcome: str, failed: bool = True, undeliverable: bool = False
) -> None:
    """Settle deliveries with one hand-over per link rather than one per message."""
    by_receiver: dict[int, list[InboundDelivery]] = {}
    for inbound in inbounds:
        by_receiver.setdefault(id(inbound.receiver), []).append(inbound)
    for group in by_receiver.values():
        group[0].receiver.settle_many(group, outcome, failed, undeliverable)
