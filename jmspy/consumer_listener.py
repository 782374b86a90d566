"""A MessageListener's delivery, one message at a time on the session's dispatch thread: the
message acknowledged per the session mode around onMessage, a listener that raises logged with
what becomes of its message, and a recover() from inside onMessage honoured. A mixin of
:class:`jmspy.consumer.MessageConsumer`, which holds the state it reads; the redelivery of a
failed delivery is :mod:`jmspy.consumer_redelivery`, the batch listener :mod:`jmspy.batch`."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._amqp.provider import AmqpReceiver, InboundDelivery
from ._modes import (
    ACKNOWLEDGED_BY_APPLICATION,
    ARTEMIS_PRE_ACKNOWLEDGE,
    AUTO_ACKNOWLEDGE,
    CLIENT_ACKNOWLEDGE,
    DUPS_OK_ACKNOWLEDGE,
    INDIVIDUAL_ACKNOWLEDGE,
    NO_ACKNOWLEDGE,
    NOT_ACKNOWLEDGED,
    SESSION_TRANSACTED,
)
from .errors import JMSException

if TYPE_CHECKING:
    from ._ports import SessionPort
    from .consumer import ListenerLike
    from .destination import Destination
    from .tracing import ConsumerTracing

__all__ = ["ListenerDelivery"]

log = logging.getLogger("jmspy.consumer")

# What becomes of a message whose listener raised, by session mode (logged with the error).
_REDELIVERED = "redelivered under the redelivery policy"
_UNACKNOWLEDGED = "left unacknowledged: recover() or closing the session delivers it again"
_AFTER_LISTENER_FAILURE = {
    AUTO_ACKNOWLEDGE: _REDELIVERED,
    DUPS_OK_ACKNOWLEDGE: _REDELIVERED,
    CLIENT_ACKNOWLEDGE: _UNACKNOWLEDGED,
    INDIVIDUAL_ACKNOWLEDGE: _UNACKNOWLEDGED,
    SESSION_TRANSACTED: "part of the transaction: commit() or rollback() decides its fate",
    ARTEMIS_PRE_ACKNOWLEDGE: "consumed already (no-acknowledge mode): it does not come again",
    NO_ACKNOWLEDGE: "consumed already (no-acknowledge mode): it does not come again",
}


class ListenerDelivery:
    """``_deliver_one`` and ``_listener_failed`` of a consumer."""

    if TYPE_CHECKING:
        _port: SessionPort
        _receiver: AmqpReceiver
        _cv: threading.Condition
        _run: list[InboundDelivery]
        _destination: Destination
        _closed: bool
        _tracing: ConsumerTracing | None
        _listener_thread: threading.Thread | None

        def _redeliver_locally(self, inbounds: list[InboundDelivery]) -> None: ...

        def _failed_delivery(self, inbound: InboundDelivery) -> None: ...

        def _return_run(self) -> None: ...

    def _listener_failed(self, exc: BaseException, what: str) -> None:
        """A listener raised: logged with what becomes of the message in this mode. Anything,
        SystemExit included, is caught so the session's dispatch thread carries on; a
        KeyboardInterrupt, which the application cannot see on this thread otherwise, also
        goes to the ExceptionListener."""
        log.error("%s; %s", what, _AFTER_LISTENER_FAILURE[self._port.mode], exc_info=exc)
        if isinstance(exc, KeyboardInterrupt):
            self._port.connection_port.notify_exception_listener(
                JMSException(f"{what}; the delivery counts as failed", linked=exc)
            )

    def _run_listener(
        self,
        call: Callable[[Any], object],
        argument: object,
        first: InboundDelivery,
        batch_size: int | None,
    ) -> bool:
        """Session dispatch thread: ``call(argument)`` (onMessage with the message, or
        onMessages with the batch, whose first delivery is ``first``), the session tracking a
        recover() from inside it. Returns whether the listener raised; anything it raises,
        SystemExit included, is logged here and ends no more than this call."""
        session = self._port
        session.begin_listener_delivery(first)
        self._listener_thread = threading.current_thread()
        try:
            call(argument)
        except BaseException as exc:  # noqa: BLE001 - SystemExit etc. must not end dispatch
            raised = type(exc).__name__
            if batch_size is None:
                what = (
                    f"MessageListener raised {raised} on message "
                    f"{first.message.getJMSMessageID()} from {self._destination}"
                )
            else:
                what = (
                    f"BatchMessageListener raised {raised} on a batch of {batch_size} "
                    f"from {self._destination}"
                )
            self._listener_failed(exc, what)
            return True
        finally:
            session.end_listener_delivery()
            self._listener_thread = None
        return False

    def _deliver_one(self, listener: ListenerLike, inbound: InboundDelivery) -> None:
        """Session dispatch thread: deliver one message to the listener (BufferedDelivery
        takes it from the buffer)."""
        listener = self._tracing.process_listener(listener) if self._tracing else listener
        session = self._port
        mode = session.mode
        message = inbound.message
        if mode in ACKNOWLEDGED_BY_APPLICATION:
            session.track_unacked(inbound)
        elif mode == SESSION_TRANSACTED:
            txn_id = self._port.txn_for_listener()
            if txn_id is None:
                # No transaction to accept it in (a declare refused or unanswered): it goes
                # back in front of the rest of the run, which goes back to the buffer now, in
                # order and with its credit; the run ends here (nothing is left in it), and the
                # session gives the consumer its next turn after a backoff pause.
                with self._cv:
                    self._run.append(inbound)  # the run is reversed: its end is its front
                    self._return_run()
                return
            self._receiver.settle(inbound, "accepted", txn_id=txn_id)
        elif mode in NOT_ACKNOWLEDGED:
            # Consumed as it is handed over, as Qpid JMS does (JMS-68): a listener that raises
            # gets nothing again. The link is presettled: only local state is freed.
            self._receiver.settle(inbound, "accepted")
        call = listener.onMessage if hasattr(listener, "onMessage") else listener
        failed = self._run_listener(call, message, inbound, None)
        if mode in (AUTO_ACKNOWLEDGE, DUPS_OK_ACKNOWLEDGE):
            if not self._closed and session.take_recover_request():
                self._redeliver_locally([inbound])
            elif failed:
                # A failed delivery: counted and redelivered under the redelivery policy.
                self._failed_delivery(inbound)
            else:
                self._receiver.settle(inbound, "accepted")
