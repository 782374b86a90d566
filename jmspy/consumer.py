"""MessageConsumer (classic API): synchronous receive from a local prefetch buffer, or a
MessageListener on the session's dispatch thread."""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from . import tracing
from ._amqp.provider import AmqpReceiver, InboundDelivery
from ._async_receive import AsyncReceiveSupport
from ._limits import check_receive_timeout
from ._modes import (
    ACKNOWLEDGED_BY_APPLICATION,
    SESSION_TRANSACTED,
)
from ._ports import ConsumerHooks
from ._twins.consumer import MessageConsumerTwins
from .batch import BatchDelivery
from .consumer_handover import HandOver
from .consumer_link import plan_consumer_link
from .consumer_listener import ListenerDelivery
from .consumer_redelivery import FailoverRedeliveries, RedeliveryHandling
from .destination import Destination
from .errors import (
    IllegalArgumentException,
    IllegalStateException,
    JMSException,
    MessageFormatException,
)
from .message import BytesMessage, MapMessage, Message, ObjectMessage, TextMessage
from .prefetch import BufferedDelivery, PriorityBuffer

if TYPE_CHECKING:
    from ._ports import SessionPort
    from .session import Session
    from .subscription import Subscription

__all__ = [
    "MessageListener",
    "BatchMessageListener",
    "ListenerLike",
    "BatchListenerLike",
    "MessageConsumer",
]


log = logging.getLogger("jmspy.consumer")

# The message types JMSConsumer.receiveBody returns the body of (JMS 2.0, JMSConsumer).
_BODY_TYPES = (TextMessage, BytesMessage, MapMessage, ObjectMessage)


class MessageListener(Protocol):
    """Receives messages asynchronously (``jakarta.jms.MessageListener``).

    A plain callable taking the message works too.
    """

    def onMessage(self, message: Message) -> None:
        """Called with each message, one at a time, on the session's dispatch thread (rule JMS-65).

        An exception redelivers the message in AUTO_ACKNOWLEDGE and moves on in CLIENT (JMS-63).
        """


class BatchMessageListener(Protocol):
    """JMS_SPEC-36: receives messages in batches (a list, in delivery order)."""

    def onMessages(self, messages: list[Message]) -> None:
        """Called with each batch: at most ``batchSize`` messages, in delivery order (BL-1)."""


ListenerLike = MessageListener | Callable[[Message], Any]
BatchListenerLike = BatchMessageListener | Callable[[list[Message]], Any]


class MessageConsumer(
    BufferedDelivery,
    ListenerDelivery,
    BatchDelivery,
    RedeliveryHandling,
    HandOver,
    AsyncReceiveSupport,
    MessageConsumerTwins,
):
    """Receives messages from one destination."""

    def __init__(
        self,
        session: Session,
        port: SessionPort,
        destination: Destination,
        selector: str | None,
        no_local: bool,
        seq: int,
        *,
        subscription: Subscription | None = None,
    ) -> None:
        self._session = session
        self._port = port
        self._receiver: AmqpReceiver  # set by _hook_receiver, before the link is attached
        self._subscription = subscription
        self._connection = port.connection
        self._destination = destination
        self._selector = selector
        self._no_local = no_local
        self._consumer_id = f"{port.session_id}:{seq}"
        self._listener: ListenerLike | None = None
        self._batch_listener: BatchListenerLike | None = None
        self._batch_size = 1
        self._batch_timeout_s = 0.0
        # A listener run taken from the buffer and not yet delivered, reversed, and the
        # dispatch thread delivering it (see BufferedDelivery._dispatch_one).
        self._run: list[InboundDelivery] = []
        self._run_thread: threading.Thread | None = None
        # The thread running this consumer's listener now (close() from it is deferred).
        self._listener_thread: threading.Thread | None = None
        self._deferred_close = False
        self._link_closed = False
        # DUPS_OK_ACKNOWLEDGE batches are acknowledged lazily, several batches at once.
        self._lazy_acks: list[InboundDelivery] = []
        # DD-15: delivery sequence. "priority" reorders what is held locally (highest first,
        # FIFO within a priority), like Qpid JMS's jms.localMessagePriority.
        sequence = destination.options.delivery_sequence or (
            "priority" if port.connection.options.local_message_priority else "fifo"
        )
        self._delivery_sequence = sequence
        self._buffer: collections.deque[InboundDelivery] | PriorityBuffer = (
            PriorityBuffer() if sequence == "priority" else collections.deque()
        )
        self._cv = threading.Condition()
        self._closed = False
        self._failure: JMSException | None = None
        # receive() calls in progress (under _cv): the only waiters on _cv, so an arrival
        # notifies only when one is waiting.
        self._receiving = 0
        options = self._connection.options
        self._local_expiry = options.local_message_expiry
        self._receive_local_only = options.receive_local_only
        self._receive_no_wait_local_only = options.receive_no_wait_local_only
        self._drain_timeout = options.drain_timeout
        self._receive_drain_timeout = options.receive_drain_timeout
        self._default_policy = options.redelivery_policy()
        if destination.options.redelivery is not None:
            self._default_policy = destination.options.redelivery
        self._default_policy = self._connection.adapter.bounded_policy(self._default_policy)
        self._policy = self._default_policy
        link = plan_consumer_link(
            port, destination, selector, no_local, self._consumer_id, subscription
        )
        self._client_filter = link.client_filter
        self._presettled = link.presettled
        prefetch = link.prefetch
        wire = self._connection.wire
        decode = wire.decoder(destination)
        # Set before the attach, as the engine thread reads them once transfers arrive (see
        # _hook_receiver). Whether the session's dispatch thread has a turn queued for this
        # listener:
        self._dispatch_signalled = False
        self._close_requested = False
        # Failover: message ids handed over lately, flagged JMSRedelivered if seen again after a
        # reconnect.
        self._failover_ids = (
            FailoverRedeliveries(max(2 * prefetch, 4096)) if self._connection.isFailover() else None
        )
        # A broker that cannot drain (RabbitMQ 3.x) keeps released messages bound to the link
        # until its session ends, so such consumers get an AMQP session of their own, ended
        # when they close: everything unsettled then goes back to the queue.
        # Before the link exists: nothing of the consumer may be left on the wire if it fails.
        self._tracing = tracing.for_consumer(self._connection, destination)  # None: off
        if self._tracing is not None:  # receive and process spans (jmspy/tracing.py)
            traced = self._tracing.wrap(self._receive, self._deliver_batch)
            self._receive, self._deliver_batch = traced  # type: ignore[method-assign]
        self._own_amqp_session = (
            None if wire.adapter.drain else port.amqp_connection.create_session()
        )
        amqp_session = self._own_amqp_session or session._amqp
        try:
            amqp_session.create_receiver(
                link.spec,
                prefetch,
                decode,
                self._on_inbound,
                self._on_link_closed,
                before_attach=self._hook_receiver,
            )
        except BaseException:
            # Nobody else would end the session begun for this consumer: each refused attempt
            # (a missing queue, a refused attach) would keep its client objects and a broker
            # channel, and an application retrying would end at the broker's channel limit.
            if self._own_amqp_session is not None:
                self._own_amqp_session.close()
            raise
        port.consumer_opened(
            self,
            ConsumerHooks(
                receiver=self._receiver,
                destination=destination,
                is_open=lambda: not self._closed,
                has_listener=lambda: self._listener is not None,
                has_batch_listener=lambda: self._batch_listener is not None,
                dispatch_one=self._dispatch_one,
                dispatch_batch=self._dispatch_batch,
                on_connection_started=self._on_connection_started,
                on_link_closed=self._on_link_closed,
                redeliver_locally=self._redeliver_locally,
                release_prefetch=self._release_prefetch,
                begin_stop_credit=self._begin_stop_credit,
                close_internal=self._close_internal,
            ),
        )

    def __repr__(self) -> str:
        return f"MessageConsumer({self._destination!r}, selector={self._selector!r})"

    def _hook_receiver(self, receiver: AmqpReceiver) -> None:
        """Before the link is attached: the consumer's link and everything the engine thread
        calls on it. The broker may send transfers, detach the link or lose the connection as
        soon as the attach is answered, before create_receiver has returned."""
        self._receiver = receiver
        receiver.on_messages = self._on_inbound_many
        receiver.buffered_count = self._buffered_count
        receiver.on_ended = self._on_ended_by_broker
        receiver.on_interrupted = self._on_interrupted

    # ---- engine thread -----------------------------------------------------------------------

    def _on_inbound(self, inbound: InboundDelivery) -> None:
        if self._closed:
            # Sent again on the closing link (see settle_on_close): not released, which would
            # undo the failed attempt just counted; the link settles it modified(delivery-
            # failed), its default outcome, as it detaches (AmqpReceiver._before_close).
            return
        if self._client_filter is not None and not self._client_filter.matches(inbound.message):
            # The broker cannot filter: a topic subscriber drops what its selector rejects.
            self._receiver.settle(inbound, "accepted")
            self._receiver.credit_consumed()
            return
        signal = False
        with self._cv:
            self._buffer.append(inbound)
            if self._receiving:  # the only waiters on _cv are receive() calls
                self._cv.notify()
            buffered = len(self._buffer)
            # One queued turn at a time, as in _on_inbound_many: a turn per message would let
            # this listener take turn after turn while the session's other listeners wait.
            if self._listener is not None and not self._dispatch_signalled:
                self._dispatch_signalled = signal = True
        if self._arrival_hook is not None:
            self._arrival_hook()
        if signal:
            self._port.signal_ready(self)
        elif (
            self._listener is None
            and self._batch_listener is not None
            and (buffered == 1 or buffered % self._batch_size == 0)
        ):
            # A batch consumer needs waking only when a batch starts (to time it) or fills;
            # after each batch the dispatcher re-signals while messages remain.
            self._port.signal_ready(self)

    def _on_interrupted(self, error: JMSException) -> None:
        """Engine thread: the transport is lost. Prefetched messages the application never
        saw are dropped (the broker redelivers them); those it did see are remembered. A
        presettled consumer keeps its prefetched messages: the broker settled them when it
        sent them and will not send them again, so dropping them would lose them (Qpid JMS
        drops them; rules JMS-68, WM-17)."""
        with self._cv:
            if not self._presettled:
                self._buffer.clear()
            if self._failover_ids is not None:
                self._failover_ids.interrupted(self._receiver.prefetch)
            self._cv.notify_all()

    def _on_ended_by_broker(self, error: JMSException) -> None:
        """Engine thread: the link is gone for good while the connection lives on (after
        _on_link_closed); the ConnectionListener hears of it unless the consumer was closed."""
        if not self._closed:
            self._port.connection_port.notify_closed_by_broker("consumer", self, error)

    def _on_link_closed(self, error: JMSException) -> None:
        """Engine thread: the broker closed the link. What it sent on it and the application
        never saw goes back to the broker with the link (it redelivers it), so it is dropped
        here, as Qpid JMS does: handed out, it would be delivered twice, and its
        acknowledgement could not reach the broker. Presettled messages are kept, as in
        _on_interrupted: the broker will not send them again, so receive() still hands them
        out (Qpid JMS drops them too, and they are lost)."""
        with self._cv:
            if self._failure is None:
                self._failure = error
            if not self._presettled:
                self._buffer.clear()
            self._cv.notify_all()
        if self._arrival_hook is not None:
            self._arrival_hook()

    # ---- internal ----------------------------------------------------------------------------

    def _buffered_count(self) -> int:
        return len(self._buffer)

    def _on_connection_started(self) -> None:
        with self._cv:
            self._cv.notify_all()
            pending = len(self._buffer)
        if self._arrival_hook is not None:
            self._arrival_hook()
        if (self._listener is not None or self._batch_listener is not None) and pending:
            # One turn per consumer (a run asks for the next while messages remain), so the
            # consumers of a session take turns from the start.
            self._port.signal_ready(self)

    def _check_receivable(self) -> None:
        """_check_closed for a receive: a presettled consumer whose link failed still hands
        out what it holds first. The broker settled those messages as it sent them and will
        not send them again (_on_link_closed)."""
        if self._failure is not None and self._presettled and self._buffer and not self._closed:
            self._port.check_closed()
        else:
            self._check_closed()

    def _check_closed(self) -> None:
        if self._closed:
            raise IllegalStateException("The MessageConsumer is closed")
        if self._failure is not None:
            # As in Qpid JMS: a receive blocked when the link failed gets the failure itself;
            # any later call finds the consumer closed by that failure.
            raise IllegalStateException(
                "The MessageConsumer was closed due to an unrecoverable error: "
                f"{self._failure.reason}",
                linked=self._failure,
            )
        self._port.check_closed()

    # ---- JMS API -------------------------------------------------------------------------------

    def getMessageSelector(self) -> str | None:
        """The consumer's message selector, or None (IllegalStateException when closed)."""
        self._check_closed()
        return self._selector

    def getNoLocal(self) -> bool:
        """Whether messages published by this connection are skipped."""
        self._check_closed()
        return self._no_local

    def getDestination(self) -> Destination:
        """The destination this consumer receives from."""
        return self._destination

    # jmspy extensions for monitoring and tests: nothing on the wire shows either number.

    def getPrefetchedCount(self) -> int:
        """Messages held locally for this consumer and not yet given to the application
        (prefetched from the broker, or put back by a recover)."""
        return len(self._buffer)

    def getBlockedReceiveCount(self) -> int:
        """Threads waiting in receive() on this consumer right now."""
        return self._receiving

    def getMessageListener(self) -> ListenerLike | None:
        """The message listener, or None (IllegalStateException when closed)."""
        self._check_closed()
        return self._listener

    def setMessageListener(self, listener: ListenerLike | None) -> None:
        """Deliver messages to ``listener`` on the session's dispatch thread.

        None removes the listener (JMS-61). Raises IllegalStateException when closed or when a
        BatchMessageListener is set.
        """
        self._check_closed()
        if listener is not None and self._batch_listener is not None:
            raise IllegalStateException(
                "this consumer has a BatchMessageListener; remove it (setBatchMessageListener("
                "None, ...)) before setting a MessageListener"
            )
        self._listener = listener
        if listener is not None:
            self._port.ensure_dispatcher()
            with self._cv:
                pending = len(self._buffer)
                # Asked for below when messages wait, else by the next arrival. A flag left
                # set by a turn a batch listener took meanwhile would keep arrivals from asking.
                self._dispatch_signalled = bool(pending)
            if pending:
                self._port.signal_ready(self)  # a run asks for more turns while some remain
            else:
                self._pull_if_no_prefetch()

    def setBatchMessageListener(
        self, listener: BatchListenerLike | None, batchSize: int = 1, batchTimeout: int = 0
    ) -> None:
        """JMS_SPEC-36: deliver messages to ``listener.onMessages(list)`` in batches of at most
        ``batchSize``, as soon as that many are available or ``batchTimeout`` ms after the
        first message of the pending batch arrived (0: whatever is available, at once)."""
        self._check_closed()
        if listener is None:
            self._batch_listener = None
            return
        if isinstance(batchSize, bool) or not isinstance(batchSize, int) or batchSize < 1:
            raise IllegalArgumentException(f"batchSize must be an integer >= 1, got {batchSize!r}")
        if (
            isinstance(batchTimeout, bool)
            or not isinstance(batchTimeout, int | float)
            or batchTimeout < 0
        ):
            raise IllegalArgumentException(
                f"batchTimeout must be a number of milliseconds >= 0, got {batchTimeout!r}"
            )
        if self._listener is not None:
            raise IllegalStateException(
                "this consumer has a MessageListener; remove it (setMessageListener(None)) "
                "before setting a BatchMessageListener"
            )
        self._batch_size = batchSize
        self._batch_timeout_s = batchTimeout / 1000.0
        self._batch_listener = listener
        # Room for full batches whatever the prefetch.
        self._receiver.ensure_window(batchSize)
        self._port.ensure_dispatcher()
        with self._cv:
            # A run of the MessageListener this one replaces puts the messages it took back
            # as it ends, and asks no turn for a batch listener: this turn finds them then.
            pending = len(self._buffer) or self._run_thread is not None
        if pending:
            self._port.signal_ready(self)

    def getBatchMessageListener(self) -> BatchListenerLike | None:
        """The batch listener, or None (IllegalStateException when closed)."""
        self._check_closed()
        return self._batch_listener

    def receive(self, timeout: int | None = None) -> Message | None:
        """Wait for a message; ``timeout`` in ms (None or 0: wait until one arrives or the
        consumer is closed)."""
        return self._receive(check_receive_timeout(timeout), no_wait=False)

    def receiveNoWait(self) -> Message | None:
        """Return a message available now, or None.

        Before returning None it drains what the broker still holds (bounded by
        ``jmspy.receiveDrainTimeout``) unless ``jms.receiveNoWaitLocalOnly`` is set, and drains
        again while what a drain brought is skipped (expired, over the redelivery limit).
        Raises IllegalStateException with a listener on the session (JMS-21).
        """
        return self._receive(0.0, no_wait=True)

    def _receive_body(self, body_type: type, timeout_s: float | None, no_wait: bool) -> Any:
        """JMSConsumer.receiveBody: a message whose body is not assignable to ``body_type``
        raises MessageFormatException. In AUTO and DUPS_OK mode it is put back,
        unacknowledged, as if it had never been received; in CLIENT (INDIVIDUAL) mode and in a
        transaction it counts as delivered (JMS 2.0 section 8.6, rule JMS-64)."""
        mode = self._port.mode

        def accept(message: Message) -> bool:
            if _body_receivable(message, body_type):
                return True
            if mode in ACKNOWLEDGED_BY_APPLICATION or mode == SESSION_TRANSACTED:
                return True  # handed over (and joins the transaction); raised below
            raise _body_not_receivable(message, body_type)

        message = self._receive(timeout_s, no_wait, accept)
        if message is None:
            return None
        if not _body_receivable(message, body_type):
            raise _body_not_receivable(message, body_type)
        return message.getBody(body_type)

    def _receive(
        self,
        timeout_s: float | None,
        no_wait: bool,
        accept: Callable[[Message], bool] | None = None,
    ) -> Message | None:
        self._check_receivable()
        if self._port.has_listener():
            raise IllegalStateException(
                "Cannot synchronously receive a message when a MessageListener is set on this "
                "session"
            )
        inbound = self._wait_for_delivery(timeout_s, no_wait, accept)
        return None if inbound is None else self._hand_over(inbound)

    def _wait_for_delivery(
        self,
        timeout_s: float | None,
        no_wait: bool,
        accept: Callable[[Message], bool] | None,
    ) -> InboundDelivery | None:
        """The next message for receive(), taken from the buffer (None: none in time)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        drains = self.final_drains()
        # Without prefetch the link holds no credit: ask for one message (a receiveNoWait
        # asks with its drain below).
        pulled = no_wait
        connection = self._port.connection_port
        with self._cv:
            self._receiving += 1
            try:
                while True:
                    if self._closed:
                        return None
                    if connection.started():
                        inbound = self._take_noting_skips(drains)
                        if inbound is not None:
                            if accept is not None:
                                try:
                                    accept(inbound.message)
                                except JMSException:
                                    # Back in front, as if never taken: its credit too, or
                                    # each retry would widen the window by one.
                                    self._buffer.extendleft([inbound])
                                    self._receiver.credit_unconsumed()
                                    raise
                            return inbound
                        if not pulled:
                            pulled = True
                            self._pull_if_no_prefetch()
                    if self._failure is not None:
                        raise JMSException(
                            f"the consumer on {self._destination} can no longer receive: "
                            f"{self._failure.reason}",
                            linked=self._failure,
                        )
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        # Before returning null, fetch what the broker still has (drains
                        # bounded by jmspy.receiveDrainTimeout, not amqp.drainTimeout: a
                        # stalled broker must not hold the caller past its timeout), so
                        # receiveNoWait right after a send sees the message.
                        self._cv.release()
                        try:
                            drained = self.drain_remote(no_wait, drains)
                        finally:
                            self._cv.acquire()
                        if not drained:
                            return None
                        continue
                    self._cv.wait(remaining if remaining is not None else 1.0)
            finally:
                self._receiving -= 1

    def _pull_if_no_prefetch(self) -> None:
        """A consumer without prefetch (jms.prefetchPolicy 0) holds no credit: one credit is
        granted for each message a receive() or the listener waits for, as Qpid JMS pulls."""
        if self._receiver.prefetch == 0 and not self._closed and self._failure is None:
            self._receiver.pull()

    def _release_prefetch(self) -> None:
        """Stop the credit and give every buffered, undelivered message back to the broker
        (transaction rollback)."""
        if self._closed:
            return
        self._receiver.stop_credit(self._drain_timeout)
        with self._cv:
            self._return_run()  # a rollback from the listener: its run goes back as well
            undelivered = list(self._buffer)
            self._buffer.clear()
        self._receiver.settle_many(undelivered, "released")

    def close(self) -> None:
        """Close the consumer; a blocked receive returns None; idempotent (JMS-11, JMS-13).

        Prefetched messages are released; unacknowledged CLIENT_ and INDIVIDUAL_ACKNOWLEDGE
        messages are failed (RD-4). From its own onMessage the close completes after the call
        returns (JMS-62, BL-9); from any other thread it first waits for the onMessage in
        progress on its session, of any consumer, to return (JMS 2.0, as Connection.stop()
        does), a wait no timeout bounds, and for nothing after it; the rest is bounded by
        ``jms.closeTimeout``. A durable subscription survives (only
        unsubscribe removes it).
        """
        if self._closed:
            return
        if self._listener_thread is threading.current_thread():
            # close() from inside this consumer's own onMessage/onMessages: finish the call
            # (and its acknowledgement) first, then close; nothing more is delivered. From any
            # other thread, close() waits for the listener call in progress (JMS 2.0, 4.4.16).
            self._closed = True
            self._deferred_close = True
            return
        self._close_requested = True  # a listener run in progress stops after its message
        self._port.wait_for_listener()
        # One jms.closeTimeout for the whole close (see AmqpConnection.close_scope).
        with self._port.amqp_connection.close_scope():
            self._close_internal()

    def _begin_stop_credit(self) -> None:
        """The session or connection is closing: ask for the credit back now when the close
        will give prefetched messages back (see AmqpReceiver.begin_stop_credit). A consumer
        with nothing prefetched is not asked early: the drain could bring messages only to
        give them back."""
        if not self._link_closed and self._buffer:
            self._receiver.begin_stop_credit()

    def _close_internal(self) -> None:
        if self._link_closed:
            return
        self._link_closed = True
        self._flush_lazy_acks()
        with self._cv:
            self._closed = True
            undelivered = list(self._buffer)
            self._buffer.clear()
            self._cv.notify_all()
        if self._arrival_hook is not None:
            self._arrival_hook()
        port = self._port
        unacked = port.forget_unacked(self) if port.mode in ACKNOWLEDGED_BY_APPLICATION else []
        # Prefetched, never delivered: released. Delivered but not acknowledged (CLIENT_ and
        # INDIVIDUAL_ACKNOWLEDGE): a failed delivery the broker counts, modified(delivery-failed).
        self._receiver.settle_on_close(undelivered, unacked, self._drain_timeout)
        # A durable subscriber's link is detached, never closed: closing would delete the
        # subscription on the broker; only unsubscribe() removes it.
        durable = self._subscription is not None and self._subscription.durable
        self._receiver.close(detach_only=durable)
        if self._own_amqp_session is not None:
            self._own_amqp_session.close()
        self._port.connection_port.subscription_closed(self._subscription)
        self._port.consumer_closed(self)

    def __enter__(self) -> MessageConsumer:
        """Enter a ``with`` block; returns this consumer."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Leave a ``with`` block: :meth:`close` the consumer, whatever happened inside."""
        self.close()

    def __iter__(self) -> Iterator[Message]:
        """Iterate over messages until the consumer is closed (``for m in consumer``)."""
        while True:
            message = self.receive()
            if message is None:
                return
            yield message


def _body_receivable(message: Message, body_type: type) -> bool:
    """Whether receiveBody may return this message's body as ``body_type``. A plain Message
    is refused although its getBody returns None for any type: the JMSConsumer.receiveBody
    javadoc excludes Message and StreamMessage, and None would read as "no message"."""
    if not isinstance(message, _BODY_TYPES):
        return False
    return message.isBodyAssignableTo(body_type)


def _body_not_receivable(message: Message, body_type: type) -> MessageFormatException:
    return MessageFormatException(
        f"the body of message {message.getJMSMessageID()} "
        f"({type(message).__name__}) cannot be returned as {body_type.__name__}"
    )
