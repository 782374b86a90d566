"""A producer link: sends queued in an outbox, written as credit allows, kept until the peer
settles them (and resent after a reconnect). A presettled send (Qpid JMS's presettle policy,
rule WM-17) is settled as it is written and done then: at most once."""
# Shares underscore members with the other modules of one provider (see jmspy/_amqp/__init__.py).

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from proton import (
    Delivery,
    Link,
    Terminus,
    symbol,
)

from ..errors import (
    IllegalStateException,
    JMSException,
    TransactionRolledBackException,
)
from .completion import Completion
from .engine_errors import EngineStopped
from .links import _LinkBase
from .proton_internals import (
    DeliveryRef,
    LinkRef,
    delivery_ref,
    delivery_settled,
    link_credit,
    link_ref,
    outcome_of,
    settle_ref,
    start_transfer,
    wrap_delivery,
)
from .repeated_warning import RepeatedWarning
from .terms import (
    OUTCOMES,
    REJECTED_CODE,
    TRANSACTIONAL_STATE,
    LinkSpec,
    _put_symbols,
    _symbols_of,
    _transactional_outcome,
    error_for_condition,
)

if TYPE_CHECKING:
    from .session import AmqpSession

log = logging.getLogger("jmspy.provider")

# How often a retiring link looks whether its queued sends have all gone out (its settled
# ones are noticed as they are settled).
_RETIRE_POLL_S = 0.005


@dataclass(slots=True, eq=False)
class PendingSend:
    """One transfer from send() until the peer settles it (kept for resending after a
    reconnect). ``txn_epoch`` is set for transactional sends. ``written``: it went out at
    least once, so a broker may have it even when it is back in the outbox for a resend."""

    payload: bytes
    completion: Completion[None] | None
    txn_id: bytes | None
    txn_epoch: int | None
    written: bool = False
    # Sent settled: complete once written, never resent (the broker sends no outcome).
    presettled: bool = False


class AmqpSender(_LinkBase):
    """A producer link. Sends are queued in the outbox and written as credit allows."""

    def __init__(self, session: AmqpSession, spec: LinkSpec, max_in_flight: int) -> None:
        super().__init__(session, spec)
        self._outbox: list[PendingSend] = []
        self._outbox_lock = threading.Lock()
        self._flush_scheduled = False
        self._tags = itertools.count(1)
        # Written, not yet settled by the peer, in send order (resent after a reconnect),
        # keyed by the delivery's C pointer (never dereferenced once the entry is gone).
        self._unsettled: dict[DeliveryRef, PendingSend] = {}
        self._in_flight = threading.BoundedSemaphore(max_in_flight)
        self.async_failure_handler: Callable[[JMSException], None] | None = None
        self.txn_failure_handler: Callable[[JMSException], None] | None = None
        # Some brokers (Qpid Broker-J) offer DELAYED_DELIVERY per link, in the target's
        # capabilities; proton-c cannot read link-level offered capabilities.
        self.target_capabilities: set[str] = set()
        # Why the application closed the link (set by close(), before ``closed``): what the
        # sends still waiting on it end with.
        self._close_reason: JMSException | None = None
        # Monotonic deadline of a retiring link (see retire()), None otherwise.
        self._retire_by: float | None = None
        # Set on the engine thread once the close has ended every send waiting on the link.
        self._sends_ended = False
        # Refused asynchronous sends: one WARNING a minute, not one per message.
        self._refusals = RepeatedWarning(log)

    @property
    def _shown_target(self) -> str:
        """The link's target as errors show it: the quoted address, or the anonymous relay
        (whose link has none; the producer adds the destination, see producer.py)."""
        address = self.spec.address
        return repr(address) if address is not None else "the anonymous relay"

    def _remote_terminus(self) -> Any:
        return self.link.remote_target

    def _on_remote_open(self) -> None:
        target = self.link.remote_target
        if target is not None:
            try:
                data = target.capabilities
                data.rewind()
                self.target_capabilities = _symbols_of(data.get_object() if data.next() else None)
            except Exception:  # an odd capabilities encoding must not fail the attach
                self.target_capabilities = set()
        super()._on_remote_open()

    def _do_attach(self, completion: Completion[None]) -> None:
        self._attach = completion
        link = self.session._proton.sender(self.spec.name)
        self._register(link)
        target = link.target
        if self.spec.address is not None:
            target.address = self.spec.address
        if self.spec.dynamic:
            # A temporary destination: the broker names the node and deletes it when this link
            # is closed (delete-on-close, expiry link-detach), as Qpid JMS asks.
            target.dynamic = True
            target.expiry_policy = Terminus.EXPIRE_WITH_LINK
            props = target.properties
            props.put_map()
            props.enter()
            props.put_symbol(symbol("lifetime-policy"))
            props.put_described()
            props.enter()
            props.put_symbol(symbol("amqp:delete-on-close:list"))
            props.put_list()
            props.exit()
            props.exit()
        if self.spec.capabilities:
            _put_symbols(target.capabilities, self.spec.capabilities)
        source = link.source
        source.address = None
        _put_symbols(source.outcomes, OUTCOMES)
        # A presettled producer's link says so; an anonymous one whose sends are presettled
        # by destination stays unsettled and sends those settled, as Qpid JMS does.
        link.snd_settle_mode = Link.SND_SETTLED if self.spec.presettled else Link.SND_UNSETTLED
        link.rcv_settle_mode = Link.RCV_FIRST
        link.open()

    @property
    def remote_address(self) -> str | None:
        target = self.link.remote_target
        return target.address if target is not None else None

    def send(
        self,
        payload: bytes,
        sync: bool,
        timeout_ms: int,
        txn_id: bytes | None = None,
        track: Completion[None] | None = None,
        epoch: int | None = None,
        presettled: bool | None = None,
    ) -> None:
        """Queue a transfer. A sync send waits for the peer's outcome; an async one does not
        but is bounded by the in-flight limit, so a slow peer slows the producer down.

        ``epoch`` (transactional sends): the connection epoch the transaction was declared in;
        a send of a transaction that a reconnect has lost is dropped with it. ``presettled``
        (default: the link's): sent settled, done (a sync send returns) once it is written."""
        if self.failure is not None:
            raise IllegalStateException(
                f"the producer link to {self._shown_target} has failed: {self.failure.reason}",
                linked=self.failure,
            )
        self._check_not_closed()
        timeout_s = timeout_ms / 1000.0
        # One jms.sendTimeout for the whole send: the wait for an in-flight slot and the wait
        # for the outcome share it.
        deadline = time.monotonic() + timeout_s
        if not self._in_flight.acquire(timeout=timeout_s):
            raise self.slot_timeout(timeout_ms)
        if self.closed:
            # Closed while this send waited for a slot (the close freed it).
            self._in_flight.release()
            self._check_not_closed()
        completion: Completion[None] | None = Completion() if sync else track
        pending = PendingSend(payload, completion, txn_id, epoch)
        pending.presettled = self.spec.presettled if presettled is None else presettled
        with self._outbox_lock:
            self._outbox.append(pending)
            schedule = not self._flush_scheduled
            self._flush_scheduled = True
        if schedule:
            try:
                self.connection.submit(self._do_flush)
            except JMSException:
                with self._outbox_lock:
                    self._flush_scheduled = False
                    if pending in self._outbox:
                        self._outbox.remove(pending)
                self._in_flight.release()
                raise
        if self.closed:
            # The close may have ended the queued sends before this one was queued: end it
            # here, so it is neither written nor left waiting.
            self._end_queued(self._closed_error())
        if sync and completion is not None:
            try:
                completion.wait(
                    max(0.0, deadline - time.monotonic()),
                    lambda: self._send_timed_out(pending, timeout_ms),
                )
            except EngineStopped as exc:
                raise self.connection._failure_or(exc) from None

    def _closed_error(self) -> JMSException:
        reason = self._close_reason
        if reason is None:
            reason = IllegalStateException(f"the producer link to {self._shown_target} was closed")
        return reason

    def _check_not_closed(self) -> None:
        if self.closed:
            error = self._closed_error()
            raise IllegalStateException(
                f"send to {self._shown_target} was not sent: {error.reason}", linked=error
            )

    def _send_timed_out(self, pending: PendingSend, timeout_ms: int) -> JMSException:
        """A sync send got no outcome in time. If it never left the client it is withdrawn
        (certainly not sent); if it was written, its outcome is unknown and said so. One that
        was written and is queued again for a reconnect is withdrawn too (not sent again after
        the caller was told), but its outcome is unknown: the broker may have stored it before
        the connection dropped."""
        with self._outbox_lock:
            queued = pending in self._outbox
            if queued:
                self._outbox.remove(pending)
                self._in_flight.release()
        if queued and not pending.written:
            return JMSException(
                f"send to {self._shown_target} timed out after {timeout_ms} ms "
                "(jms.sendTimeout) before it could be written; the message was not sent"
                + (" (the connection is reconnecting)" if self.connection.interrupted else "")
            )
        if queued:
            return JMSException(
                f"send to {self._shown_target} was written but not settled before the "
                f"connection was interrupted, and not resent within {timeout_ms} ms "
                "(jms.sendTimeout): its outcome is unknown, the broker may or may not have the "
                "message (it will not be resent)"
            )
        return JMSException(
            f"send to {self._shown_target} was not settled by the peer within {timeout_ms} ms "
            "(jms.sendTimeout): its outcome is unknown, the broker may or may not have the message"
        )

    def withdraw(self, completion: object) -> PendingSend | None:
        """Take the queued send that reports to ``completion`` out of the outbox (an
        asynchronous send that timed out), so it is never written after its caller was told.
        Returns it, or None when it is not queued (written and unsettled, or done). A
        transactional one fails its transaction: a commit must not go ahead without it."""
        with self._outbox_lock:
            for index, pending in enumerate(self._outbox):
                if pending.completion is completion:
                    del self._outbox[index]
                    break
            else:
                return None
        self._in_flight.release()
        if pending.txn_id is not None and self.txn_failure_handler is not None:
            self.txn_failure_handler(
                TransactionRolledBackException(
                    f"a transactional send to {self._shown_target} timed out before it was "
                    "written (jms.sendTimeout) and was withdrawn; the transaction will roll back"
                )
            )
        return pending

    def _do_flush(self) -> None:
        link = self.link
        # What is written leaves the outbox under the lock, before it is written: a send
        # withdrawn from the outbox (a commit that rolls back, a send that timed out) is then
        # either already on its way or never written, never put back and written later.
        with self._outbox_lock:
            self._flush_scheduled = False
            if not self._outbox:
                return
            failure = self.failure
            if failure is None and self.closed:
                # Closed by the application: nothing queued is written after the close.
                failure = self._closed_error()
            failed: list[PendingSend] = []
            if failure is not None:
                failed, self._outbox = self._outbox, []
            elif self.connection._live_gen < 0 or not link.state & Link.LOCAL_ACTIVE:
                return  # between transports (failover): kept for the re-attached link
            else:
                epoch = self.connection.epoch
                ref = link_ref(link)
                credit = link_credit(ref)
                outbox = self._outbox
                dropped: list[PendingSend] = []
                ready: list[PendingSend] = []
                taken = 0
                for pending in outbox:
                    if pending.txn_epoch is not None and pending.txn_epoch != epoch:
                        dropped.append(pending)
                    elif len(ready) < credit:
                        ready.append(pending)
                    else:
                        break
                    taken += 1
                del outbox[:taken]
        if failure is not None:
            for pending in failed:
                self._in_flight.release()
                if pending.completion is not None:
                    pending.completion.fail(self._lost(pending, failure))
            return
        for pending in dropped:
            self._drop_lost_transactional(pending)
        unsettled = self._unsettled
        tags = self._tags
        for pending in ready:
            pending.written = True
            # Presettled transfers get a tag too: Qpid JMS's are empty, but proton-c writes an
            # empty tag as null, which brokers refuse (Artemis fails the connection).
            tag = str(next(tags)).encode()
            if pending.txn_id is not None:
                # The transfer carries transactional-state(txn-id): it counts at commit only.
                delivery = link.delivery(tag)
                delivery.local.data = [pending.txn_id]
                delivery.update(TRANSACTIONAL_STATE)
                link.stream(pending.payload)
                link.advance()
                sent = delivery_ref(delivery)
            else:
                sent = start_transfer(ref, tag, pending.payload)
            if not pending.presettled:
                unsettled[sent] = pending
                continue
            # Settled before the transfer frame is written, so the frame says settled; the
            # send is done (the broker answers nothing), and proton frees the delivery.
            settle_ref(sent)
            self._in_flight.release()
            if pending.completion is not None:
                pending.completion.succeed(None)

    def withdraw_transactional(self, txn_id: bytes, error: JMSException) -> int:
        """Take the sends of transaction ``txn_id`` that were never written out of the outbox,
        so they are not written after the transaction ends; each fails with ``error``. Returns
        how many there were."""
        with self._outbox_lock:
            withdrawn = [p for p in self._outbox if p.txn_id == txn_id]
            if withdrawn:
                self._outbox = [p for p in self._outbox if p.txn_id != txn_id]
        for pending in withdrawn:
            self._in_flight.release()
            if pending.completion is not None:
                pending.completion.fail(error)
        return len(withdrawn)

    def _drop_lost_transactional(self, pending: PendingSend) -> None:
        """A send of a transaction that the broker dropped with the old transport."""
        self._in_flight.release()
        if pending.completion is not None:
            pending.completion.fail(
                TransactionRolledBackException(
                    f"transactional send to {self._shown_target} was lost with the connection "
                    "to the broker; the transaction is rolled back"
                )
            )

    def _on_interrupted(self, error: JMSException) -> None:
        """Engine thread: the transport is lost. Sends the peer has not settled go back to the
        head of the outbox, in order, and are resent on the re-attached link (at-least-once;
        with duplicate detection the broker drops the copies it already had)."""
        super()._on_interrupted(error)
        unsettled = list(self._unsettled.values())
        self._unsettled.clear()
        with self._outbox_lock:
            self._outbox[:0] = unsettled
            self._flush_scheduled = False

    def _on_flow(self) -> None:
        if self._outbox and self.link.credit > 0:
            self._do_flush()

    def _on_delivery(self, delivery: Delivery) -> None:
        self._on_delivery_ref(delivery_ref(delivery), link_ref(self.link))

    def _on_delivery_ref(self, ref: DeliveryRef, link: LinkRef) -> None:
        state = outcome_of(ref)
        if state is None:
            return
        if state == Delivery.RECEIVED and not delivery_settled(ref):
            return  # not an outcome (AMQP 3.4.1): the broker's decision is still to come
        pending = self._unsettled.pop(ref, None)
        if state == Delivery.ACCEPTED:
            settle_ref(ref)
            if pending is not None:
                self._after_earlier_transfers()
                self._in_flight.release()
                if pending.completion is not None:
                    pending.completion.succeed(None)
            if self._retire_by is not None and not self._unsettled and not self._outbox:
                self._retire_if_done()  # the last send of a retiring link: close it now
            return
        if self._retire_by is not None and not self._unsettled and not self._outbox:
            # Closed after the outcome below is handed over (a retiring link's last send).
            self.connection.engine.schedule(0.0, self._retire_if_done)
        delivery = wrap_delivery(ref)
        delivery.settle()
        if pending is None:
            return
        self._after_earlier_transfers()
        completion = pending.completion
        self._in_flight.release()
        error: JMSException | None = None
        if state == TRANSACTIONAL_STATE:
            if _transactional_outcome(delivery.remote.data) == REJECTED_CODE:
                error = TransactionRolledBackException(
                    f"transactional send to {self._shown_target} was rejected; the transaction "
                    "will roll back"
                )
                if self.txn_failure_handler is not None:
                    self.txn_failure_handler(error)
        elif state == Delivery.REJECTED:
            error = error_for_condition(
                delivery.remote.condition, JMSException, f"send to {self._shown_target} rejected"
            )
        elif state == Delivery.RELEASED:
            error = JMSException(f"send to {self._shown_target} failed: released by the peer")
        elif state == Delivery.MODIFIED:
            error = JMSException(f"send to {self._shown_target} failed: modified by the peer")
        else:
            # Settled with no outcome (or one this link never offered): the broker may or may
            # not have taken the message, so it is reported as unknown, never as sent.
            error = JMSException(
                f"send to {self._shown_target}: the peer settled it without an outcome "
                f"(state {state:#x}): its outcome is unknown, the message may or may not have "
                "been delivered"
            )
        if completion is not None:
            if error is None:
                completion.succeed(None)
            else:
                completion.fail(error)
        elif error is not None:
            self._refusals.warn("asynchronous send failed: %s", error.reason)
            if self.async_failure_handler is not None:
                self.async_failure_handler(error)

    def _end_for_good(self, error: JMSException) -> None:
        """The peer closed the link (the connection lives on). Asynchronous sends without a
        CompletionListener that it never settled are told to the ExceptionListener, as Qpid JMS
        reports each one as a non-fatal exception; here one report per link says how many were
        written (outcome unknown) and how many never were (not sent)."""
        written = unwritten = 0
        if self.async_failure_handler is not None:
            with self._outbox_lock:
                queued = list(self._outbox)
            for pending in [*self._unsettled.values(), *queued]:
                # Transactional ones roll their transaction back (txn_failure_handler).
                if pending.completion is None and pending.txn_id is None:
                    if pending.written:
                        written += 1
                    else:
                        unwritten += 1
        super()._end_for_good(error)
        if not (written or unwritten) or self.async_failure_handler is None:
            return
        parts = []
        if written:
            parts.append(
                f"{written} written, whose outcome is unknown (the broker may or may not have them)"
            )
        if unwritten:
            parts.append(f"{unwritten} never written (not sent)")
        report = JMSException(
            f"{written + unwritten} asynchronous send(s) to {self._shown_target} had no outcome "
            f"when the link ended ({error.reason}): {'; '.join(parts)}",
            linked=error,
        )
        log.warning("%s", report.reason)
        self.async_failure_handler(report)

    def _on_failed(self, error: JMSException) -> None:
        super()._on_failed(error)
        self._end_unsettled(error, "the link failed")
        self._do_flush()

    def _end_unsettled(self, error: JMSException, why: str) -> None:
        """End every send written and not settled by the peer: its outcome is unknown
        (``_lost``). A transactional one fails its transaction: the broker may or may not hold
        it, and the transaction must not be committed with it in an unknown state.

        The engine thread's, or any thread's once the engine has stopped: the table is taken
        whole (one assignment), so two callers never end the same send twice."""
        taken, self._unsettled = self._unsettled, {}
        self._end_taken(list(taken.values()), error, why)

    def _end_queued(self, error: JMSException) -> None:
        """Any thread: end every send still in the outbox (never written: not sent; written
        before a reconnect and queued to be resent: outcome unknown). They leave the outbox
        under its lock, so none is written afterwards."""
        with self._outbox_lock:
            taken, self._outbox = self._outbox, []
        self._end_taken(taken, error, "the link was closed")

    def _end_taken(self, taken: list[PendingSend], error: JMSException, why: str) -> None:
        lost_transactional = False
        untracked = 0
        for pending in taken:
            self._in_flight.release()
            lost_transactional = lost_transactional or pending.txn_id is not None
            if pending.completion is not None:
                pending.completion.fail(self._lost(pending, error))
            elif pending.txn_id is None:
                untracked += 1
        if untracked:
            # Asynchronous sends without a CompletionListener: nobody waits for them, and a
            # close by the application is no failure to report to its ExceptionListener.
            log.debug(
                "%d asynchronous send(s) to %r had no outcome when %s",
                untracked,
                self.spec.address,
                why,
            )
        if lost_transactional and self.txn_failure_handler is not None:
            self.txn_failure_handler(
                TransactionRolledBackException(
                    f"transactional sends to {self._shown_target} were not settled before "
                    f"{why} ({error.reason}); the transaction will roll back",
                    linked=error,
                )
            )

    def retire(self, within_s: float, reason: JMSException) -> None:
        """Close the link once every send on it is settled, with no thread waiting for that
        (an anonymous producer's link cache evicting it in the middle of a send). Past
        ``within_s`` it is closed anyway, and what is left ends as a close ends it
        (``reason``). Any thread."""

        def start() -> None:
            if self.closed or self.failure is not None:
                return
            self._close_reason = reason
            self._retire_by = time.monotonic() + within_s
            self._retire_if_done()

        try:
            self.connection.submit(start)
        except JMSException as exc:
            log.debug("retiring the link to %r: %s", self.spec.address, exc.reason)

    def _retire_if_done(self) -> None:
        """Engine thread: close a retiring link once nothing is in flight on it (or its time
        is up); until then look again shortly."""
        deadline = self._retire_by
        if deadline is None or self.closed or self.failure is not None:
            return
        if (self._unsettled or self._outbox) and time.monotonic() < deadline:
            self.connection.engine.schedule(_RETIRE_POLL_S, self._retire_if_done)
            return
        self._retire_by = None
        self.closed = True
        self._before_close()
        if self.link.state & Link.LOCAL_ACTIVE:
            self.link.close()
        if self.link.state & Link.REMOTE_CLOSED:
            self._unregister()

    def slot_timeout(self, timeout_ms: int) -> JMSException:
        """What a send that got no in-flight slot within jms.sendTimeout fails with (the
        blocking send's, and an asyncio send's that waited in its queue)."""
        return JMSException(
            f"send to {self._shown_target} timed out after {timeout_ms} ms waiting for the "
            "peer to settle earlier sends (jms.sendTimeout)"
        )

    def close(self, detach_only: bool = False, reason: JMSException | None = None) -> None:
        """Close (or only detach) the link. Every send still waiting on it ends now rather
        than at its jms.sendTimeout (JMS 2.0: closing a producer, its session or connection
        from another thread ends the calls blocked in it): one never written fails with
        ``reason`` (not sent), one written and not settled is reported as of unknown outcome.
        Nothing queued is written after the close."""
        if self.closed:
            return
        # Before ``closed``: a flush that sees the link closed fails what it holds with it.
        self._close_reason = reason or IllegalStateException(
            f"the producer link to {self._shown_target} was closed"
        )
        super().close(detach_only)
        if self.failure is not None:
            return  # _on_failed has ended every send already
        error = self._closed_error()
        # The engine ends them in _before_close; whatever it has not reached yet (its close
        # ran out of time, or there is no engine) ends here.
        self._end_queued(error)
        engine = self.connection.engine
        if engine is None or not engine.running:
            self._end_unsettled(error, "the link was closed")
            return
        if self._sends_ended:
            return
        # The close's link work did not run within the close timeout (the engine thread is
        # busy): it is still queued and ends the sends when it runs; this asks for that too
        # without waiting, so the close keeps to its timeout and no send waits its whole
        # jms.sendTimeout for an outcome that cannot come.

        def end() -> None:
            if not self._sends_ended:
                self._end_unsettled(error, "the link was closed")
                self._sends_ended = True

        try:
            self.connection.submit(end)
        except JMSException as exc:
            log.debug("ending the sends of a closed link: %s", exc.reason)

    def _before_close(self) -> None:
        """Engine thread, as the link is closed: end the sends still waiting on it."""
        error = self._closed_error()
        self._end_unsettled(error, "the link was closed")
        self._end_queued(error)
        # Every send is told by now: the closing thread need not wait for the engine again.
        self._sends_ended = True

    def _lost(self, pending: PendingSend, error: JMSException) -> JMSException:
        """What a send fails with when its link or connection is gone for good: one that was
        written may have reached the broker (its outcome is unknown), one that never was was
        certainly not sent. The link's error stays linked."""
        address = self.spec.address
        if pending.written:
            return JMSException(
                f"send to {address!r} was written but its link or connection ended before "
                f"the peer settled it ({error.reason}): its outcome is unknown, the broker may "
                "or may not have the message",
                linked=error,
            )
        return type(error)(
            f"send to {address!r} was not sent: {error.reason}",
            error_code=error.error_code,
            linked=error,
        )

    def wait_settled(self, timeout_s: float) -> bool:
        """Wait until every queued send is settled (used by close and commit). Returns whether
        they all were: False when some are still queued or unsettled at the deadline, or when
        the connection is reconnecting."""
        if not self._unsettled and not self._outbox:
            return (
                True  # nothing in flight: no round trip to the engine (the close may have no time)
            )
        done: Completion[bool] = Completion()

        def check() -> None:
            if done.done():
                # The waiter gave up (its close timeout ran out): a peer that never settles
                # would otherwise keep this poll, and the sends it holds, for the connection's
                # life.
                return
            if not self._unsettled and not self._outbox:
                done.succeed(True)
            elif self.failure is not None or self.closed:
                # A closed link's sends can no longer be settled: nothing left to wait for.
                done.succeed(False)
            else:
                self.connection.engine.schedule(0.005, check)

        def gave_up() -> JMSException:
            error = JMSException("outstanding sends were not settled")
            done.fail(error)  # seen by the next check(), which then stops polling
            return error

        if self.connection.interrupted:
            # Reconnecting: what is still unsettled is resent later or fails with its own
            # completion; a close does not wait for the reconnect.
            return False
        try:
            self.connection.submit(check)
            return done.wait(timeout_s, gave_up) is True
        except JMSException as exc:
            log.warning("sends to %r not settled in time: %s", self.spec.address, exc.reason)
            return False
