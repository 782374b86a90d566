"""Local transactions of a transacted session (SESSION_TRANSACTED): declared on first use,
committed or rolled back over the AMQP coordinator, and what a reconnect does to them (the broker
drops the transaction: rolled back for certain, or in doubt when a discharge got no answer).

A mixin of :class:`jmspy.session.Session`, which holds the state it reads and writes.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from ._modes import SESSION_TRANSACTED
from .errors import (
    IllegalStateException,
    JMSException,
    TransactionInDoubtException,
    TransactionRolledBackException,
)

if TYPE_CHECKING:
    from ._amqp.completion import WaitScope
    from ._ports import ConnectionPort, ConsumerHooks
    from ._provider import Provider, ProviderSession
    from .connection import Connection
    from .consumer import MessageConsumer
    from .producer import MessageProducer

__all__ = ["SessionTransactions"]


log = logging.getLogger("jmspy.session")

# A listener delivery that could not declare its transaction is tried again after this pause,
# doubled at each further failure up to the cap: a broker that keeps refusing declares (or
# never answers them) is asked a few times a second at first, then every few seconds, instead
# of once for every message the consumer holds.
DECLARE_RETRY_FIRST_S = 0.1
DECLARE_RETRY_MAX_S = 5.0


class SessionTransactions:
    """commit(), rollback() and the transaction state of a session."""

    _amqp_connection: Provider
    _amqp: ProviderSession
    _connection: Connection
    _mode: int
    _txn_id: bytes | None
    _txn_epoch: int
    _txn_has_work: bool
    _txn_failure: JMSException | None
    _committing_txn: bytes | None
    _producers: list[MessageProducer]
    _consumer_hooks: dict[MessageConsumer, ConsumerHooks]
    _delivery_lock: Any
    _closing: bool
    _api_waits: WaitScope
    _connection_port: ConnectionPort
    _batch_deadlines: dict[MessageConsumer, float]
    _declare_retry_at: float
    _declare_retry_s: float

    if TYPE_CHECKING:

        def _check_closed(self) -> None: ...

        def _signal_ready(self, consumer: MessageConsumer, count: int = 1) -> None: ...

        def _is_dispatch_thread(self, thread: threading.Thread) -> bool: ...

        def _check_not_completion_thread(self, what: str) -> None: ...

        def _wait_completions(
            self, producer: MessageProducer | None = None, limit_s: float | None = None
        ) -> None: ...

    def _on_txn_failure(self, error: JMSException) -> None:
        """Engine thread: a transactional send was refused; the commit must roll back."""
        if self._txn_failure is None:
            self._txn_failure = error

    def _current_txn(self) -> bytes:
        """The id of the current transaction, declared on first use (again after a reconnect,
        which loses the transaction the broker had: its work is then rolled back)."""
        amqp = self._amqp_connection
        if self._txn_id is not None and self._txn_epoch != amqp.epoch:
            self._txn_lost()
        if self._txn_id is None:
            for attempt in (1, 2):
                epoch = amqp.epoch
                try:
                    self._txn_id = self._amqp.coordinator().declare()
                except JMSException:
                    # A declare lost to a reconnect is simply made again on the new transport.
                    if attempt == 2 or amqp.epoch == epoch or amqp.failure is not None:
                        raise
                    continue
                self._txn_epoch = epoch
                break
        assert self._txn_id is not None
        return self._txn_id

    def _txn_needs_declare(self) -> bool:
        """Whether the next transactional work declares a transaction first (a broker round
        trip): none is declared, or the one declared was lost with its transport."""
        return self._mode == SESSION_TRANSACTED and (
            self._txn_id is None or self._txn_epoch != self._amqp_connection.epoch
        )

    def _txn_for_work(self) -> tuple[bytes, int]:
        """The transaction a send or an acknowledgement joins, and its connection epoch."""
        txn_id = self._current_txn()
        self._txn_has_work = True
        return txn_id, self._txn_epoch

    def _txn_for_listener(self) -> bytes | None:
        """Session dispatch thread: the transaction a listener delivery joins, or None when
        there is none to join now (a declare the broker refused or did not answer, now or
        less than a backoff pause ago). The caller then keeps its messages, in front and in
        order, and ends its run; :meth:`_signal_ready_or_hold` gives the consumer its next
        turn once the pause is over. Nothing is lost and nothing overtakes them."""
        if self._txn_needs_declare() and time.monotonic() < self._declare_retry_at:
            return None
        try:
            txn_id = self._txn_for_work()[0]
        except JMSException as exc:
            pause = min(DECLARE_RETRY_MAX_S, max(DECLARE_RETRY_FIRST_S, 2 * self._declare_retry_s))
            self._declare_retry_s = pause
            self._declare_retry_at = time.monotonic() + pause
            amqp = self._amqp_connection
            if not self._closing and amqp.failure is None:
                # Only the ExceptionListener can tell the application that its listener gets
                # nothing for now (the delivery happens on the dispatch thread).
                self._connection_port.notify_exception_listener(
                    JMSException(
                        "a message listener delivery could not start a transaction "
                        f"({exc.reason}); its messages are kept and delivered again in "
                        f"{int(pause * 1000)} ms at the earliest",
                        linked=exc,
                    )
                )
            return None
        # A transaction again: nothing is held back any more, and the next failure starts
        # with the shortest pause.
        self._declare_retry_s = self._declare_retry_at = 0.0
        return txn_id

    def _listener_held_until(self) -> float | None:
        """When listener deliveries held back by a failed declare are tried again, or None
        when none are held back."""
        retry_at = self._declare_retry_at
        return retry_at if time.monotonic() < retry_at else None

    def _signal_ready_or_hold(self, consumer: MessageConsumer, count: int = 1) -> None:
        """SessionPort.signal_ready: a consumer's request for a dispatch turn. On the dispatch
        thread while listener deliveries are held back (a failed declare), the turn is
        queued for the end of the pause instead of now: the run that just ended asks for its
        next turn at once, and granting it would declare again at once, in a loop."""
        retry_at = self._listener_held_until() if self._mode == SESSION_TRANSACTED else None
        if retry_at is not None and self._is_dispatch_thread(threading.current_thread()):
            # Only the dispatch thread touches the deadlines, and it reads them again before
            # it next waits (a turn of the shared pool returns the earliest as its timer).
            due = self._batch_deadlines.get(consumer)
            self._batch_deadlines[consumer] = retry_at if due is None else min(due, retry_at)
            return
        self._signal_ready(consumer, count)

    def _txn_lost(self) -> None:
        """The transport that carried the transaction was lost: the broker rolled it back."""
        if self._txn_has_work and self._txn_failure is None:
            self._txn_failure = TransactionRolledBackException(
                "the connection to the broker was interrupted during the transaction; the broker "
                "rolled it back (messages received in it are redelivered, sends were discarded)"
            )
        self._txn_id = None

    def _end_transaction(self, declare_next: bool = True) -> None:
        self._txn_id = None
        self._txn_has_work = False
        self._txn_failure = None
        if declare_next:
            try:
                self._current_txn()
            except JMSException as exc:  # declared again on first use
                log.debug("declaring the next transaction: %s", exc)

    def commit(self) -> None:
        """Commit every send and acknowledgement of the current transaction.

        Raises TransactionRolledBackException when the transaction was certainly rolled back
        (refused by the broker, or lost with a connection that failover replaced), and
        TransactionInDoubtException when the commit was sent but its outcome never came back:
        the broker may have committed."""
        self._check_closed()
        if self._mode != SESSION_TRANSACTED:
            raise IllegalStateException(
                "commit() needs a transacted session: Not a transacted session"
            )
        self._check_not_completion_thread("commit()")
        self._wait_completions()
        with self._api_waits.entered():
            self._commit()

    def _commit(self) -> None:
        amqp = self._amqp_connection
        if self._txn_id is not None and self._txn_epoch != amqp.epoch:
            self._txn_lost()
        unsettled = False
        if self._txn_failure is None and not amqp.interrupted:
            unsettled = self._wait_transactional_sends()
        failure = self._txn_failure or amqp.failure
        if failure is not None:
            self._discard_transaction(in_doubt_if_unanswered=unsettled)
            raise TransactionRolledBackException(
                f"the transaction was rolled back: {failure.reason}", linked=failure
            )
        txn_id = self._txn_id
        if txn_id is None:
            self._end_transaction()  # nothing was done in it: nothing to commit
            return
        # Noted before it goes out: a close cutting the commit short must not discharge the
        # same transaction again (its outcome is the commit's, in doubt).
        self._committing_txn = txn_id
        try:
            self._amqp.coordinator().discharge(txn_id, fail=False, epoch=self._txn_epoch)
        except (TransactionRolledBackException, TransactionInDoubtException):
            self._end_transaction()
            raise
        self._end_transaction()

    def _wait_transactional_sends(self) -> bool:
        """Wait, within jms.sendTimeout, until the broker settled every send of the
        transaction. When it did not (no link credit, or no outcome), the sends never written
        are withdrawn, so they are not written after the transaction ends, and the transaction
        is failed: a commit must not count sends whose outcome nobody knows. Returns whether
        that happened."""
        send_timeout = self._connection.options.send_timeout
        deadline = time.monotonic() + send_timeout / 1000.0
        links = [
            link
            # Reach-in kept: the session owns its producers' links for the transaction.
            for producer in list(self._producers)
            for link in producer._links.values()
        ]
        late = [
            link for link in links if not link.wait_settled(max(0.0, deadline - time.monotonic()))
        ]
        txn_id = self._txn_id
        if not late or txn_id is None:
            return False
        withdrawn_error = TransactionRolledBackException(
            f"transactional send was not written within {send_timeout} ms (jms.sendTimeout: "
            "the broker gave no credit); it is withdrawn and the transaction rolled back"
        )
        withdrawn = sum(link.withdraw_transactional(txn_id, withdrawn_error) for link in late)
        addresses = ", ".join(repr(link.spec.address) for link in late)
        if self._txn_failure is None:
            self._txn_failure = TransactionRolledBackException(
                f"sends of the transaction to {addresses} were not settled by the broker within "
                f"{send_timeout} ms (jms.sendTimeout), {withdrawn} of them never written (no "
                "link credit): a commit cannot count sends whose outcome is unknown, so the "
                "unwritten ones were withdrawn and the transaction is rolled back"
            )
        return True

    def rollback(self) -> None:
        """Undo the current transaction: sends are discarded and received messages go back to
        the broker, which redelivers them with JMSRedelivered set."""
        self._check_closed()
        if self._mode != SESSION_TRANSACTED:
            raise IllegalStateException(
                "rollback() needs a transacted session: Not a transacted session"
            )
        self._check_not_completion_thread("rollback()")
        self._wait_completions()
        # The delivery lock keeps listener deliveries out until the rollback is done; a close
        # from another thread ends the waits below instead of waiting behind them.
        with self._delivery_lock, self._api_waits.entered():
            self._rollback()

    def _rollback(self) -> None:
        amqp = self._amqp_connection
        # Prefetched messages that were never delivered go back first, so the broker can
        # redeliver the rolled-back ones in order before them.
        for hooks in list(self._consumer_hooks.values()):
            hooks.release_prefetch()
        txn_id, epoch = self._txn_id, self._txn_epoch
        if txn_id is not None and epoch == amqp.epoch:
            try:
                self._amqp.coordinator().discharge(txn_id, fail=True, epoch=epoch)
            except TransactionRolledBackException:
                pass  # rolled back either way
            except TransactionInDoubtException:
                # Lost with the connection: the broker rolls back what it loses. Cut short by
                # a close: the discharge can only roll back, and so does the end of the
                # session, which follows at once.
                if self._closing:
                    log.debug("rollback ended by the session's close: rolled back by its end")
                elif amqp.epoch == epoch and amqp.failure is None:
                    self._end_transaction(declare_next=False)
                    # The session and its consumers live on: the credit stopped above is
                    # granted again, or their listeners would never get another message.
                    self._restore_consumer_credit()
                    raise
        if self._closing:
            # Nothing more for a session that is closing: no next transaction, no credit.
            self._end_transaction(declare_next=False)
            return
        self._end_transaction()
        self._restore_consumer_credit()

    def _restore_consumer_credit(self) -> None:
        """After a rollback gave the prefetched messages back: credit for every consumer."""
        for hooks in list(self._consumer_hooks.values()):
            hooks.receiver.restore_credit()

    def _discard_transaction(self, in_doubt_if_unanswered: bool = False) -> None:
        """Roll back what the broker may still hold of the current transaction, then start
        over (errors are logged: the caller reports the rollback). With
        ``in_doubt_if_unanswered`` a rollback that gets no answer raises
        TransactionInDoubtException: the broker may still hold sends of the transaction
        whose outcome was unknown."""
        txn_id, epoch = self._txn_id, self._txn_epoch
        amqp = self._amqp_connection
        if txn_id is not None and epoch == amqp.epoch and amqp.failure is None:
            try:
                self._amqp.coordinator().discharge(txn_id, fail=True, epoch=epoch)
            except TransactionInDoubtException as exc:
                if in_doubt_if_unanswered and amqp.epoch == epoch and amqp.failure is None:
                    why = self._txn_failure.reason if self._txn_failure else "sends unsettled"
                    self._end_transaction(declare_next=False)
                    raise TransactionInDoubtException(
                        f"the transaction had to be rolled back ({why}), but the rollback got "
                        f"no answer from the broker ({exc.reason}): its outcome is unknown",
                        linked=exc,
                    ) from exc
                log.debug("rolling back a failed transaction: %s", exc)
            except JMSException as exc:
                log.debug("rolling back a failed transaction: %s", exc)
        self._end_transaction(declare_next=amqp.failure is None)
