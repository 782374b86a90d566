"""The consumer's redelivery handling: the redelivery policy in force, a failed delivery
redelivered under it (by the broker, or held and redelivered by the client where the broker
neither delays nor counts), and a message past its last attempt dead-lettered or discarded.

The policy itself (its settings and the delay computation) is :mod:`jmspy.redelivery`. A mixin of
:class:`jmspy.consumer.MessageConsumer`, which holds the state it reads and writes.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ._amqp.provider import AmqpReceiver, InboundDelivery
from ._twins.consumer_redelivery import RedeliveryHandlingTwins
from .dead_letter import start_forward
from .message import Message
from .prefetch import PriorityBuffer
from .redelivery import RedeliveryOutcome, RedeliveryPolicy, redelivery_delay

if TYPE_CHECKING:
    from ._ports import SessionPort
    from .connection import Connection
    from .consumer import BatchListenerLike, ListenerLike
    from .destination import Destination

__all__ = ["RedeliveryHandling", "FailoverRedeliveries"]

log = logging.getLogger("jmspy.consumer")

# Each of Qpid JMS's redelivery outcomes as a settlement: the outcome and undeliverable-here
# (delivery-failed is set on every modified, as MODIFIED_FAILED* say; the other outcomes do
# not carry it).
_GIVE_UP_SETTLEMENTS: dict[RedeliveryOutcome, tuple[str, bool]] = {
    "ACCEPTED": ("accepted", False),
    "REJECTED": ("rejected", False),
    "RELEASED": ("released", False),
    "MODIFIED_FAILED": ("modified", False),
    "MODIFIED_FAILED_UNDELIVERABLE": ("modified", True),
}


class RedeliveryHandling(RedeliveryHandlingTwins):
    """setRedeliveryPolicy/getRedeliveryPolicy and what a failed delivery becomes."""

    _connection: Connection
    _port: SessionPort
    _receiver: AmqpReceiver
    _destination: Destination
    _policy: RedeliveryPolicy
    _default_policy: RedeliveryPolicy
    _closed: bool
    _presettled: bool
    _cv: threading.Condition
    _buffer: collections.deque[InboundDelivery] | PriorityBuffer
    _listener: ListenerLike | None
    _batch_listener: BatchListenerLike | None
    _arrival_hook: Callable[[], None] | None

    if TYPE_CHECKING:

        def _check_closed(self) -> None: ...

        def _return_run(self) -> None: ...

    def setRedeliveryPolicy(self, policy: RedeliveryPolicy | None) -> None:
        """jmspy extension: this consumer's redelivery policy (None: the destination's or the
        factory's)."""
        self._check_closed()
        adapter = self._connection.adapter
        self._policy = adapter.bounded_policy(policy) if policy else self._default_policy

    def getRedeliveryPolicy(self) -> RedeliveryPolicy:
        """jmspy extension: the redelivery policy in force for this consumer."""
        return self._policy

    def _give_up(self, inbound: InboundDelivery, count: int) -> None:
        """The last allowed attempt failed: settle the message with the policy's outcome
        (jms.redeliveryPolicy.outcome) where it names one, else dead-letter it (the adapter's
        outcome) or discard it when the policy says so explicitly."""
        policy = self._policy
        message_id = inbound.message.getJMSMessageID()
        if policy.outcome is not None:
            self._settle_given_up(inbound, count, policy.outcome)
            return
        if policy.after_last_attempt == "discard":
            log.warning(
                "discarding message %s from %s after %s delivery attempts (policy: discard)",
                message_id,
                self._destination,
                count - 1,
            )
            self._receiver.settle(inbound, "accepted")
            return
        adapter = self._connection.adapter
        if policy.after_last_attempt == "dead-letter" and adapter.forward_dead_letters:
            queue = policy.dead_letter_queue or adapter.dead_letter_queue or "DLQ"
            start_forward(
                self._connection, self._receiver, inbound, queue, self._destination, count - 1
            )
            return
        outcome = adapter.dead_letter_outcome
        log.warning(
            "message %s from %s failed %s delivery attempts; dead-lettering it (%s)",
            message_id,
            self._destination,
            count - 1,
            outcome,
        )
        if outcome == "modified-failed-undeliverable":
            self._receiver.settle(inbound, "modified", failed=True, undeliverable=True)
        else:
            self._receiver.settle(inbound, "rejected")

    def _settle_given_up(
        self, inbound: InboundDelivery, count: int, outcome: RedeliveryOutcome
    ) -> None:
        """Settle a message past its last attempt with the outcome the application chose, as
        Qpid JMS does: the disposition goes to the broker as it is, with no dead-letter
        forward (on RabbitMQ 3.x the option is how a Java team's URL asks for exactly this
        outcome; leaving it unset keeps the forward). Where the broker does not know the
        modified outcome the settlement sends its nearest (released, or rejected when
        undeliverable-here)."""
        kind, undeliverable = _GIVE_UP_SETTLEMENTS[outcome]
        if outcome == "ACCEPTED":
            # As afterLastAttempt=discard: consumed, and the log is the only trace of it.
            log.warning(
                "discarding message %s from %s after %s delivery attempts (outcome ACCEPTED)",
                inbound.message.getJMSMessageID(),
                self._destination,
                count - 1,
            )
        else:
            log.warning(
                "message %s from %s failed %s delivery attempts; settling it %s",
                inbound.message.getJMSMessageID(),
                self._destination,
                count - 1,
                outcome,
            )
        self._receiver.settle(inbound, kind, failed=True, undeliverable=undeliverable)

    def _failed_delivery(self, inbound: InboundDelivery) -> None:
        self._failed_deliveries([inbound])

    def _failed_deliveries(self, inbounds: list[InboundDelivery]) -> None:
        """Deliveries the application could not process (a listener raised in AUTO/DUPS_OK;
        for a batch, all of it, kept in order).

        Brokers that count redeliveries themselves (Artemis, ActiveMQ, Broker-J, generic) get
        modified(delivery-failed); a client-side delay, when configured, is waited out first.
        Where the adapter says the broker neither delays nor counts (RabbitMQ, Service Bus)
        the client holds the message for the policy's delay and redelivers it to the
        application itself, counting the attempt, while other messages keep flowing."""
        policy = self._policy
        receiver = self._receiver
        # A presettled consumer's broker has settled the message already and cannot send it
        # again (rule WM-17): the client redelivers it itself, as for a broker that does not.
        client_side = self._connection.adapter.client_redelivery or self._presettled
        # Messages with the same attempt count wait the same delay: redeliver them together
        # so a failed batch comes back whole and in its order.
        waiting: dict[int, list[InboundDelivery]] = {}
        for inbound in inbounds:
            count = inbound.message.get_delivery_count() or 1
            if policy.limited and count >= policy.max_delivery_attempts:  # type: ignore[operator]
                self._give_up(inbound, count + 1)
                continue
            delay_ms = redelivery_delay(policy, count)
            if not client_side:
                if delay_ms <= 0:
                    receiver.settle(inbound, "modified", failed=True)
                else:
                    receiver.settle_later(inbound, delay_ms, "modified", failed=True)
                continue
            waiting.setdefault(delay_ms, []).append(inbound)
        for delay_ms, group in waiting.items():

            def redeliver(group: list[InboundDelivery] = group) -> None:
                if not self._closed and receiver.failure is None:
                    self._redeliver_locally(group)

            receiver.run_later(delay_ms, redeliver)

    def _redeliver_locally(self, inbounds: list[InboundDelivery]) -> None:
        """Session.recover(): put delivered-unacknowledged messages back at the front of the
        buffer, in their original order, counted as one more delivery attempt."""
        epoch = self._receiver.connection.epoch
        for inbound in inbounds:
            _mark_redelivered(inbound.message)
            if inbound.epoch == epoch:
                # Its credit was counted when it was taken and is counted again when it is
                # taken next (HandOver._take): else each recover widens the window by one.
                self._receiver.credit_unconsumed()
        with self._cv:
            self._return_run()  # recover() from the listener: before the rest of its run
            self._buffer.extendleft(reversed(inbounds))
            self._cv.notify()
        if self._arrival_hook is not None:
            self._arrival_hook()
        if self._listener is not None or self._batch_listener is not None:
            # One turn: a listener run takes up to LISTENER_RUN and asks for another while
            # messages remain.
            self._port.signal_ready(self)


def _mark_redelivered(message: Message) -> None:
    message.set_delivery_count((message.get_delivery_count() or 1) + 1)


class FailoverRedeliveries:
    """Failover: the ids of the messages a consumer handed over lately, so that after a
    reconnect one seen again is flagged JMSRedelivered (Artemis does not raise the delivery
    count of what a dropped connection held). Used under the consumer's lock."""

    __slots__ = ("recent", "suspects", "_countdown")

    def __init__(self, window: int) -> None:
        self.recent: collections.deque[str | None] = collections.deque(maxlen=window)
        # The ids of `recent` when the transport was last lost, until they are seen again or
        # the deliveries they could come back among have passed (see interrupted()).
        self.suspects: set[str | None] = set()
        self._countdown = 0

    def interrupted(self, prefetch: int) -> None:
        """The transport is lost: what was handed over lately may come back."""
        # Replaced, not added to: `recent` still holds every id handed over lately, those
        # handed over before an earlier loss included, so a suspect of an earlier loss that
        # can still come back is kept; one pushed out of `recent` is older than the memory the
        # detection has anyway. Added to, the set grew by up to a `recent` per reconnect for
        # the consumer's lifetime.
        suspects = set(self.recent)
        suspects.discard(None)
        self.suspects = suspects
        # What the lost link held unsettled goes back to the head of the queue in the order it
        # was first delivered, ahead of what this consumer has not had yet, so a suspect that
        # comes back does so among the first len(suspects) deliveries after the restore; a
        # prefetch window more allows for what may still come ahead of it (a higher priority,
        # a message already put back). After that many, none can still be on its way, and the
        # set is let go of.
        self._countdown = len(suspects) + prefetch

    def taken(self, message: Message) -> None:
        """A message is about to be handed over: flagged if it is one seen before the loss."""
        message_id = message.getJMSMessageID()
        if self.suspects:
            if message_id in self.suspects:
                self.suspects.discard(message_id)
                if (message.get_delivery_count() or 1) <= 1:
                    _mark_redelivered(message)
            self._countdown -= 1
            if self._countdown <= 0:
                self.suspects = set()  # past the window (see interrupted())
        self.recent.append(message_id)
