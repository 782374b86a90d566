"""What :mod:`jmspy.aio` needs from a MessageConsumer to receive without a blocked thread: a
hook on the delivery path that wakes a waiting future, and a receive step that never waits;
and the drains a receive makes before it returns null, the same for the blocking receive.

A mixin of :class:`jmspy.consumer.MessageConsumer`, which holds the state it reads.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._modes import SESSION_TRANSACTED
from .errors import IllegalStateException

if TYPE_CHECKING:
    from ._amqp.provider import AmqpReceiver, InboundDelivery
    from ._ports import SessionPort
    from .message import Message


__all__ = ["AsyncReceiveSupport", "FinalDrains"]


class FinalDrains:
    """The drains one receive makes once its time is up, before it returns null.

    The first fetches what the broker still holds. When a take after it found messages and
    skipped them all (expired, over the redelivery limit), the broker may hold more behind
    them: Qpid JMS (JmsMessageConsumer.dequeue) pulls again after such a message, so another
    drain follows, else receiveNoWait() would return null with messages on the broker, and a
    prefetch-0 consumer would keep the credit its take asked for (the next message would sit
    in the local buffer until a later receive or the close). All the drains of one receive
    share one jmspy.receiveDrainTimeout: a stream of skipped messages, or a stalled broker,
    cannot hold the caller longer."""

    def __init__(self, timeout_ms: int) -> None:
        self._timeout_ms = timeout_ms
        self._until: float | None = None  # time.monotonic() the drains end by
        # Set (under the consumer's _cv) by a take that found messages and skipped them all.
        self.skipped = False

    def next_timeout_ms(self) -> int | None:
        """The bound of the next drain, or None: no more drains, the receive returns null."""
        now = time.monotonic()
        skipped, self.skipped = self.skipped, False
        if self._until is None:
            # A skip before the first drain calls for no second one: the take pulled again
            # after it, and this drain fetches what that pull asked for.
            self._until = now + self._timeout_ms / 1000
            return self._timeout_ms
        left = math.ceil((self._until - now) * 1000)
        return left if skipped and left > 0 else None


class AsyncReceiveSupport:
    """``set_arrival_hook``, ``take_local`` and ``drain_remote`` of a consumer."""

    # Called whenever a waiting receive could make progress; None: nobody waits asynchronously.
    _arrival_hook: Callable[[], None] | None = None

    if TYPE_CHECKING:
        _port: SessionPort
        _cv: threading.Condition
        _receiver: AmqpReceiver
        _receive_local_only: bool
        _receive_no_wait_local_only: bool
        _drain_timeout: int
        _receive_drain_timeout: int
        _buffer: Any
        _closed: bool

        def _check_receivable(self) -> None: ...

        def _take(self) -> InboundDelivery | None: ...

        def _hand_over(self, inbound: InboundDelivery) -> Message: ...

        def _wakeup_deferred(self, key: object, wake: Callable[[], None]) -> bool: ...

        def _pull_if_no_prefetch(self) -> None: ...

    def set_arrival_hook(self, hook: Callable[[], None] | None) -> None:
        """``hook`` is called (on the engine thread, or on the thread that changed the
        consumer) whenever a waiting receive could make progress: a message arrived or came
        back, the connection started, the link failed or the consumer closed. It must not
        block: the asyncio consumer uses it to complete a waiting future."""
        self._arrival_hook = hook

    def after_engine_events(self, work: Callable[[], None]) -> None:
        """Run ``work`` when the engine thread is about to wait for input (see WakeupDeferral:
        at most 0.5 ms later, and at once when 64 messages are buffered), as a blocking
        receive's wake-up is run, so a waiting asyncio receive is woken once per burst of
        arrivals; at once when called from another thread or by an engine that is ending."""
        engine = self._receiver.connection.engine
        if not (engine.on_engine_thread() and self._wakeup_deferred(work, work)):
            # Not deferred: another thread, enough buffered, or an engine that is ending (a
            # timer of its would never run: the lost connection must still wake the waiter).
            work()

    def is_closed(self) -> bool:
        """Closed by the application (its own close, or its session's or connection's)."""
        return self._closed

    def hand_over_waits_for_broker(self) -> bool:
        """Whether ``take_local`` would wait for the broker before it hands a message over:
        it holds one, and a transacted session must declare its transaction first (after a
        reconnect lost the one it had, or a declare that failed), up to jms.requestTimeout.
        ``prepare_hand_over`` makes that wait without taking the message."""
        port = self._port
        return (
            port.mode == SESSION_TRANSACTED
            and bool(self._buffer)
            and port.connection_port.started()
            and port.txn_needs_declare()
        )

    def prepare_hand_over(self) -> None:
        """Blocks the caller (up to jms.requestTimeout): declare the transaction the next
        hand-over joins, taking no message, so that ``take_local`` then answers at once. A
        caller that gives up during the wait (a cancelled asyncio receive) has taken nothing:
        had the message been taken first, it would be handed over, accepted in the
        transaction, to nobody. Raises as ``receive()`` does when the declare fails."""
        self._check_receivable()
        if self.hand_over_waits_for_broker():
            self._port.txn_for_work()

    def pull_for_receive(self) -> bool:
        """What a receive that finds nothing held locally does once, as ``receive()`` does: a
        consumer without prefetch (jms.prefetchPolicy 0) holds no credit, so one credit is
        granted for the message it waits for (without it nothing ever arrives). False while
        the connection is stopped: nothing is asked for then, so ask again once started."""
        if not self._port.connection_port.started():
            return False
        self._pull_if_no_prefetch()
        return True

    def final_drains(self) -> FinalDrains:
        """The drains of one receive, for ``take_local`` and ``drain_remote``."""
        return FinalDrains(min(self._drain_timeout, self._receive_drain_timeout))

    def _take_noting_skips(self, drains: FinalDrains | None) -> InboundDelivery | None:
        """``_take`` (under ``_cv``), noting in ``drains`` a take that skipped all it found."""
        held = bool(self._buffer)
        inbound = self._take()
        if inbound is None and held and drains is not None:
            drains.skipped = True
        return inbound

    def take_local(self, drains: FinalDrains | None = None) -> Message | None:
        """The next message held locally, handed over (acknowledged per the session mode) as
        ``receive()`` hands it over, or None at once when there is none: no drain, no wait.
        Raises as ``receive()`` does on a failed link or a closed consumer. ``drains``: those
        of the calling receive, told when the messages found were all skipped."""
        self._check_receivable()
        port = self._port
        if port.has_listener():
            raise IllegalStateException(
                "Cannot synchronously receive a message when a MessageListener is set on this "
                "session"
            )
        if not self._buffer or not port.connection_port.started():
            return None
        with self._cv:
            inbound = self._take_noting_skips(drains)
        # Handed over without _cv: a transaction declared there waits for the engine thread,
        # which needs _cv to buffer arrivals.
        return None if inbound is None else self._hand_over(inbound)

    def drain_remote(self, no_wait: bool = False, drains: FinalDrains | None = None) -> bool:
        """What ``receive(timeout)`` (``no_wait``: ``receiveNoWait()``) does once its time is
        up, before it returns null: fetch what the broker still holds (a drain), then restore
        the credit window. Blocks the caller. ``drains``: those of the calling receive (see
        FinalDrains), None for a single one. True when it drained: the receive looks at its
        buffer again, then calls this once more. False (the receive returns null): no more
        drains are due, jmspy.receiveLocalOnly (jms.receiveNoWaitLocalOnly for ``no_wait``) is
        set, or the connection is stopped."""
        local_only = self._receive_no_wait_local_only if no_wait else self._receive_local_only
        if local_only or not self._port.connection_port.started():
            return False
        timeout_ms = (drains or self.final_drains()).next_timeout_ms()
        if timeout_ms is None:
            return False
        try:
            self._receiver.drain(timeout_ms, quiet_timeout=True)
        finally:
            self._receiver.restore_credit()
        return True
