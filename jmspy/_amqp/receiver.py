"""A consumer link: attaching it, taking its transfers, the credit window (prefetch) and
drains. Settling what it received, with the outcome the JMS layer chose, is the mixin
:class:`~.settlement.ReceiverSettlement`."""
# Shares underscore members with the other modules of one provider (see jmspy/_amqp/__init__.py).

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from proton import (
    Delivery,
    Link,
    Terminus,
    symbol,
    ulong,
)

from ..errors import (
    JMSException,
)
from .attach_amender import Amendment
from .completion import Completion
from .dispatch_probe import PROBE_MS_KEY, StalledDispatchProbe
from .links import _LinkBase
from .proton_internals import (
    DeliveryHandle,
    DeliveryRef,
    LinkRef,
    delivery_aborted,
    delivery_ref,
    link_ref,
    read_transfer,
    settle_ref,
    wrap_delivery,
)
from .repeated_warning import RepeatedWarning
from .settlement import ReceiverSettlement, _EngineBatch, _settle_now
from .terms import (
    JMS_SELECTOR_CODE,
    JMS_SELECTOR_KEY,
    NO_LOCAL_CODE,
    NO_LOCAL_KEY,
    OUTCOMES,
    InboundDelivery,
    LinkSpec,
    _put_symbols,
)

if TYPE_CHECKING:
    from .session import AmqpSession

log = logging.getLogger("jmspy.provider")

T = TypeVar("T")


class AmqpReceiver(ReceiverSettlement, _LinkBase):
    """A consumer link with a credit window (the prefetch)."""

    def __init__(
        self,
        session: AmqpSession,
        spec: LinkSpec,
        prefetch: int,
        decode: Callable[[bytes | bytearray], Any],
        on_message: Callable[[InboundDelivery], None],
        on_closed: Callable[[JMSException], None],
    ) -> None:
        super().__init__(session, spec)
        self.prefetch = prefetch
        self._decode = decode
        self._on_message = on_message
        self._on_closed = on_closed
        self._credit_to_return = 0
        self._credit_lock = threading.Lock()
        self._drain: Completion[None] | None = None
        self._pulling = False
        # A pull() queued for the engine and not yet run (under _credit_lock): the next one
        # joins it (see pull).
        self._pull_queued = False
        # A drain whose caller gave up before the peer answered (engine thread only).
        self._drain_abandoned = False
        self.open_deliveries: set[InboundDelivery] = set()
        # Undecodable transfers: one WARNING a minute, not one per message.
        self._unreadable = RepeatedWarning(log)
        # Set by the consumer: called on the engine thread when the transport is lost.
        self.on_interrupted: Callable[[JMSException], None] | None = None
        # From the broker profile (link_profile): whether modified and drain may be used.
        self.modified_outcome = bool(spec.extra.get("modified_outcome", True))
        self.drain_supported = bool(spec.extra.get("drain", True))
        # Set by the consumer: takes all the transfers of one engine pass at once (one lock,
        # one wake-up of the waiting thread), where on_message takes one at a time.
        self.on_messages: Callable[[list[InboundDelivery]], None] | None = None
        # Transfers of the current engine pass not yet handed over (engine thread only).
        self._arrived: list[InboundDelivery] = []
        # Plain acceptances (AUTO_ACKNOWLEDGE, DUPS_OK) waiting for the engine thread: settled
        # together by one piece of engine work, so consecutive ones leave as one disposition
        # range instead of a work item (and a frame) each.
        self._accepts: _EngineBatch[InboundDelivery] = _EngineBatch(self._settle_accepts)
        # Acceptances within a transaction (SESSION_TRANSACTED), queued the same way: a
        # transacted receive() loop otherwise submits a work item per message. Each entry
        # keeps its transaction id; the encoded transactional state of the last id is kept.
        self._txn_accepts: _EngineBatch[tuple[InboundDelivery, bytes]] = _EngineBatch(
            self._settle_txn_accepts
        )
        self._txn_state: tuple[bytes, bytes] | None = None  # (txn id, encoded state fields)
        # Engine passes that handed transfers over (engine thread only; the probe compares).
        self.arrivals = 0
        probe_ms = int(spec.extra.get(PROBE_MS_KEY, 0))
        self._probe = (
            StalledDispatchProbe(self, probe_ms)
            if probe_ms > 0 and prefetch > 0 and self.drain_supported
            else None
        )

    def _remote_terminus(self) -> Any:
        return self.link.remote_source

    def _do_attach(self, completion: Completion[None]) -> None:
        self._attach = completion
        link = self.session._proton.receiver(self.spec.name)
        self._register(link)
        source = link.source
        spec = self.spec
        amender = self.connection.engine.amender
        if spec.lookup:
            source.type = Terminus.UNSPECIFIED  # encoded as a null source
            if spec.extra.get("desired_capabilities"):
                amender.register(
                    spec.name,
                    Amendment(desired_capabilities=tuple(spec.extra["desired_capabilities"])),
                )
            link.target.address = None
            link.snd_settle_mode = Link.SND_UNSETTLED
            link.rcv_settle_mode = Link.RCV_FIRST
            link.open()
            return
        if spec.address is not None:
            source.address = spec.address
        if spec.dynamic:
            source.dynamic = True
        if spec.capabilities:
            _put_symbols(source.capabilities, spec.capabilities)
        _put_symbols(source.outcomes, OUTCOMES)
        if spec.durable:
            source.durability = Terminus.DELIVERIES
            source.expiry_policy = Terminus.EXPIRE_NEVER
        else:
            source.durability = Terminus.NONDURABLE
            source.expiry_policy = Terminus.EXPIRE_WITH_LINK
        if spec.distribution_copy:
            source.distribution_mode = Terminus.DIST_MODE_COPY
        if spec.selector or spec.no_local:
            filters = source.filter
            filters.put_map()
            filters.enter()
            if spec.selector:
                filters.put_symbol(symbol(JMS_SELECTOR_KEY))
                filters.put_described()
                filters.enter()
                filters.put_ulong(ulong(JMS_SELECTOR_CODE))
                filters.put_string(spec.selector)
                filters.exit()
            if spec.no_local:
                filters.put_symbol(symbol(NO_LOCAL_KEY))
                filters.put_described()
                filters.enter()
                filters.put_ulong(ulong(NO_LOCAL_CODE))
                filters.put_string("NoLocalFilter{}")
                filters.exit()
            filters.exit()
        link.target.address = None
        # As Qpid JMS: an unsettled delivery the link leaves behind counts as a failed attempt.
        amender.register(spec.name, Amendment(default_outcome_modified_failed=True))
        link.snd_settle_mode = Link.SND_SETTLED if spec.presettled else Link.SND_UNSETTLED
        link.rcv_settle_mode = Link.RCV_FIRST
        link.open()
        if self.prefetch > 0:
            link.flow(self.prefetch)
        elif self._pulling:
            link.flow(1)  # a receive was waiting when the link was re-created

    @property
    def remote_address(self) -> str | None:
        source = self.link.remote_source
        return source.address if source is not None else None

    def _on_remote_open(self) -> None:
        attach = self._attach
        attaching = attach is not None and not attach.done()
        super()._on_remote_open()
        if self._probe is not None and attaching and attach is not None and attach.done():
            self._probe.arm()  # attached (again, after a reconnect)

    def _on_flow(self) -> None:
        if self._drain is not None and self.link.credit == 0:
            self._end_drain()

    def _on_remote_close(self, closed: bool) -> None:
        self._hand_over_arrived()  # what came before the detach is delivered before it
        super()._on_remote_close(closed)

    def _end_drain(self) -> None:
        """The peer answered the drain (flow with no credit left, or transfers using it up)."""
        # The transfers the drain brought are buffered before its waiter wakes up.
        self._hand_over_arrived()
        drain, self._drain = self._drain, None
        if self._drain_abandoned:
            # The caller stopped waiting (receive timeout): nobody restores the window, and a
            # link left without credit would starve every later receive.
            self._drain_abandoned = False
            self._do_restore_credit()
        if drain is not None:
            drain.succeed(None)

    def _on_delivery(self, delivery: Delivery) -> None:
        self._on_delivery_ref(delivery_ref(delivery), link_ref(self.link))

    def _on_delivery_ref(self, ref: DeliveryRef, link_ref: LinkRef) -> None:
        payload = read_transfer(ref, link_ref)
        if payload is None:
            return
        self._pulling = False
        if delivery_aborted(ref):
            settle_ref(ref)
            return
        try:
            message = self._decode(payload)
        except Exception as exc:  # an undecodable transfer must never stop the engine
            self._unreadable.warn(
                "could not decode a message on %r, settling it modified(delivery-failed, "
                "undeliverable-here): %s",
                self.spec.address,
                exc,
            )
            delivery = wrap_delivery(ref)
            delivery.local.failed = True
            delivery.local.undeliverable = True
            delivery.update(Delivery.MODIFIED)
            delivery.settle()
            self._return_credit_now(1)
            return
        inbound = InboundDelivery(
            DeliveryHandle(ref, self.connection.engine.orphans),
            message,
            self,
            False,
            time.monotonic(),
            self.connection.epoch,
        )
        self.open_deliveries.add(inbound)
        arrived = self._arrived
        arrived.append(inbound)
        if len(arrived) == 1:
            self.connection.engine.after_dispatch(self._hand_over_arrived)
        # A drain also ends when the transfers use up the credit: the peer then owes no flow
        # frame, so waiting for one would wait for the drain timeout.
        if self._drain is not None and self.link.credit == 0:
            self._end_drain()

    def _hand_over_arrived(self) -> None:
        """Engine thread: hand the transfers received so far to the consumer, in order."""
        arrived = self._arrived
        if not arrived:
            return
        self._arrived = []
        self.arrivals += 1
        on_messages = self.on_messages
        if on_messages is not None:
            on_messages(arrived)
            return
        for inbound in arrived:
            self._on_message(inbound)

    def _return_credit_now(self, count: int) -> None:
        if self.prefetch > 0 and not self.closed and self.link.state & Link.LOCAL_ACTIVE:
            self.link.flow(count)

    # ---- API side: settlement and credit ------------------------------------------------

    def credit_consumed(self, count: int = 1) -> None:
        """Called when the application took messages out of the local buffer; credit is
        returned in batches of half the prefetch to avoid a flow frame per message."""
        if self.prefetch <= 0:
            return
        with self._credit_lock:
            self._credit_to_return += count
            if self._credit_to_return < max(1, self.prefetch // 2):
                return
            amount = self._credit_to_return
            self._credit_to_return = 0
        epoch = self.connection.epoch

        def do_flow() -> None:
            # Credit counted before a reconnect is void: the re-attach grants a full window.
            if epoch != self.connection.epoch:
                return
            if self._drain is not None:
                # Credit granted while a drain is unanswered is not covered by its answer:
                # the drain would stay open with that credit left. The window restored after
                # the answer includes it.
                with self._credit_lock:
                    self._credit_to_return += amount
                return
            if not self.closed and self.failure is None and self.link.state & Link.LOCAL_ACTIVE:
                self.link.flow(amount)

        try:
            self.connection.submit(do_flow)
        except JMSException:
            pass

    def credit_unconsumed(self) -> None:
        """A message taken out of the local buffer went back in (a transacted receive that could
        not join a transaction): its credit was counted when it was taken and is counted again
        when it is taken next, so take it back here (else the window grows by one)."""
        if self.prefetch <= 0:
            return
        with self._credit_lock:
            self._credit_to_return -= 1

    def pull(self) -> None:
        """Grant one credit (prefetch 0 consumers) unless the link holds some; a receive
        with a timeout drains it at the end (see drain).

        At most one pull waits for the engine at a time: the one queued grants the credit a
        later one would, and while failover reconnects, queued work is held until the
        connection is restored, so a consumer polling receive(timeout) through a long outage
        would otherwise hold one more each call."""
        with self._credit_lock:
            if self._pull_queued:
                return
            self._pull_queued = True

        def do_flow() -> None:
            with self._credit_lock:
                self._pull_queued = False
            if self.closed or self.failure is not None:
                return  # closed meanwhile: its link may be freed already
            self._pulling = True
            if self.link.credit <= 0:
                self.link.flow(1)

        try:
            self.connection.submit(do_flow)
        except BaseException:
            with self._credit_lock:
                self._pull_queued = False
            raise

    def drain(self, timeout_ms: int, pull_one: bool = True, quiet_timeout: bool = False) -> None:
        """Ask the peer to use up or return the outstanding credit now, and wait for it.

        Used by receiveNoWait/receive(timeout) so that messages sitting on the broker are
        fetched before the call returns null, then the credit window is restored. With
        ``quiet_timeout`` a peer that does not answer within ``timeout_ms`` ends the wait
        without an error (receive returns null); the late answer still restores the window."""
        if not self.drain_supported:
            return  # the broker cannot drain: only what already arrived counts
        if self.connection.interrupted:
            return  # failover is reconnecting: there is no broker to ask right now

        def do_drain(completion: Completion[None]) -> None:
            link = self.link
            if self.failure is not None:
                completion.fail(self.failure)
                return
            if self.closed:
                completion.succeed(None)  # closed meanwhile: its link may be freed already
                return
            if self._drain is not None:
                # An earlier drain is still unanswered: its answer ends this wait too; a second
                # drain request would make that answer ambiguous.
                self._drain.succeed(None)
                self._drain = completion
                self._drain_abandoned = False
                return
            if link.credit == 0:
                if not pull_one:
                    completion.succeed(None)
                    return
                link.flow(1)
            self._drain = completion
            link.drain(0)
            if link.credit == 0:
                self._drain = None
                completion.succeed(None)

        def abandon() -> None:
            if self._drain is not None:
                self._drain_abandoned = True

        try:
            self.connection.run(
                do_drain, f"draining consumer link {self.spec.address!r}", timeout_ms
            )
        except JMSException:
            connection = self.connection
            if self.failure is not None or (
                not connection.engine.running and not connection.interrupted
            ):
                raise
            try:
                self.connection.submit(abandon)
            except JMSException:
                pass
            if not quiet_timeout or self.connection.failure is not None:
                raise
            log.debug("no drain answer on %r within %s ms", self.spec.address, timeout_ms)

    def ensure_window(self, minimum: int) -> None:
        """Grow the credit window to at least ``minimum`` (a batch listener needs room for
        full batches whatever the prefetch)."""
        if self.prefetch >= minimum:
            return
        extra = minimum - self.prefetch
        self.prefetch = minimum

        def do_flow() -> None:
            if not self.closed and self.failure is None and self.link.state & Link.LOCAL_ACTIVE:
                self.link.flow(extra)

        self.connection.submit(do_flow)

    def restore_credit(self) -> None:
        """Top the credit window up again after a drain (any thread)."""
        connection = self.connection
        if connection.interrupted or not connection.engine.running:
            # No transport to flow on. While failover reconnects, work is held until the
            # connection is restored, and drain() returns at once, so a consumer polling
            # receiveNoWait() through a long outage would hold one restore per call. None is
            # needed: the re-attach grants the whole window (_do_attach flows the prefetch on
            # the new link, and the loss emptied the buffer and the credit to return).
            return
        try:
            self.connection.submit(self._do_restore_credit)
        except JMSException:
            pass

    buffered_count: Callable[[], int] = staticmethod(lambda: 0)

    def _do_restore_credit(self) -> None:
        link = self.link
        if self._drain is not None:
            return  # the drain's answer would cancel the credit; restored when it comes
        if self.prefetch > 0 and not self.closed and link.state & Link.LOCAL_ACTIVE:
            want = self.prefetch - link.credit - link.queued
            with self._credit_lock:
                # Credit the application freed and not yet returned (held back while the drain
                # was unanswered, or below the batching threshold) is part of the window
                # restored now: kept owed, it could leave the link without any credit.
                self._credit_to_return = 0
            # Messages already in the local buffer still count against the window.
            want -= self.buffered_count()
            if want > 0:
                link.flow(want)

    def drain_if_stalled(self) -> bool:
        """Engine thread (StalledDispatchProbe): drain the link if it has credit, holds
        unsettled deliveries and nothing is buffered or being drained; True if it did. The
        answer restores the window (the drain counts as abandoned: nobody waits for it)."""
        link = self.link
        if (
            self._drain is not None
            or self.closed
            or self.connection.interrupted
            or not link.state & Link.LOCAL_ACTIVE
            or link.credit <= 0
            or not self.open_deliveries
            or self.buffered_count() > 0
        ):
            return False
        log.debug(
            "no transfer on %r for a while with %d credit left and %d messages unsettled: "
            "draining to wake the broker's dispatch",
            self.spec.address,
            link.credit,
            len(self.open_deliveries),
        )
        self._drain = Completion()
        self._drain_abandoned = True
        link.drain(0)
        if link.credit == 0:
            self._drain = None
        return True

    def begin_stop_credit(self) -> None:
        """Ask the peer to use up or return the outstanding credit, without waiting: a session
        or connection close asks every consumer at once, then each consumer's close waits for
        its answer (``stop_credit`` takes the request over) within the close's one deadline.
        Asked one after another, a peer slow to answer the first would leave the later
        consumers no time even to ask."""
        if not self.drain_supported or self.connection.interrupted:
            return

        def do_begin() -> None:
            if self.failure is not None or self._drain is not None or self.closed:
                return
            if not self.link.state & Link.LOCAL_ACTIVE or self.link.credit == 0:
                return
            self._drain = Completion()  # nobody waits on it until stop_credit takes it over
            self._drain_abandoned = False
            self.link.drain(0)
            if self.link.credit == 0:
                self._drain = None

        try:
            self.connection.submit(do_begin)
        except JMSException as exc:
            log.debug("asking for the credit back before a close failed: %s", exc)

    def _before_close(self) -> None:
        """Engine thread, as jmspy detaches the link: settle every delivery still open on it.

        The broker gives each of them the link's default outcome, modified(delivery-failed),
        once it has the detach; settled here with that same outcome, in the frame before it,
        they are done with on this side too. Left unsettled (transfers that answered the
        close's drain and reached a consumer already closed, messages a browser had buffered
        when its enumeration ended), they kept proton's link, with them, from being freed
        (FreedEndpoints frees no link with unsettled deliveries): a session that opens and
        closes consumers for months kept one per close. A later settlement of one of them
        (an acknowledgement racing the close) finds it settled and does nothing, as it found
        the link closed before."""
        for inbound in list(self.open_deliveries):
            _settle_now(inbound, "modified", True, False)

    def stop_credit(self, timeout_ms: int) -> None:
        """Drain the link so the peer sends nothing more (used by close and rollback)."""
        try:
            self.drain(timeout_ms, pull_one=False)
        except JMSException as exc:
            log.debug("drain before close failed: %s", exc)

    def settle_on_close(
        self, undelivered: list[InboundDelivery], unacked: list[InboundDelivery], timeout_ms: int
    ) -> None:
        """A closing consumer gives back what it holds: ``undelivered`` released, ``unacked``
        modified(delivery-failed). The credit is stopped first when there is anything to
        settle: a broker may send a settled message again at once on a link that still has
        credit (ActiveMQ Classic does after modified), and that copy would be lost to the
        close. Nothing to settle: no drain, no extra round trip.

        The drain waits at most ``timeout_ms`` (amqp.drainTimeout) and never past the
        enclosing close's deadline: a connection or session close shares one
        jms.closeTimeout among all its consumers, and a peer that never answers must not cost
        each of them a full drain timeout."""
        if undelivered or unacked:
            remaining_ms = max(1, int(self.connection.close_remaining_s() * 1000))
            self.stop_credit(min(timeout_ms, remaining_ms))
        self.settle_many(undelivered, "released")
        self.settle_many(unacked, "modified", failed=True)

    def _on_interrupted(self, error: JMSException) -> None:
        """Engine thread: the transport is lost. Unsettled deliveries go back to the broker
        with it (it redelivers them); a drain in progress has nothing left to wait for."""
        self._hand_over_arrived()
        super()._on_interrupted(error)
        self.open_deliveries.clear()
        with self._credit_lock:
            self._credit_to_return = 0
        if self._drain is not None:
            self._drain.succeed(None)
            self._drain = None
        if self.on_interrupted is not None:
            try:
                self.on_interrupted(error)
            except Exception:
                log.exception("consumer interruption callback raised")

    def _on_failed(self, error: JMSException) -> None:
        self._hand_over_arrived()
        super()._on_failed(error)
        if self._drain is not None:
            self._drain.fail(error)
            self._drain = None
        try:
            self._on_closed(error)
        except Exception:
            log.exception("consumer close callback raised")
