"""What senders, receivers and the coordinator share: attach and detach handling, the way a
link is re-created after a reconnect, and the attach-size check against the peer's max frame
size."""
# Shares underscore members with the other modules of one provider (see jmspy/_amqp/__init__.py).

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from proton import (
    Connection,
    Delivery,
    Link,
    Terminus,
    Transport,
)

from ..errors import (
    IllegalStateException,
    InvalidDestinationException,
    JMSException,
)
from .completion import Completion
from .proton_internals import DeliveryRef, LinkRef, wrap_delivery
from .terms import (
    LinkSpec,
    error_for_condition,
)

if TYPE_CHECKING:
    from .provider import AmqpConnection
    from .session import AmqpSession

log = logging.getLogger("jmspy.provider")


def _context_of(link: Link | None) -> _LinkBase | None:
    # proton keeps attributes set on its wrappers in the C object's record, so every wrapper
    # of the same link sees the context.
    if link is None:
        return None
    return getattr(link, "jmspy_ctx", None)


def _session_context(session: Any) -> AmqpSession | None:
    if session is None:
        return None
    return getattr(session, "jmspy_ctx", None)


def release_contexts(conn: Connection) -> None:
    """Drop what jmspy hung on the proton objects of one connection whose engine stopped.

    proton keeps attributes set on its wrappers (jmspy_ctx, the frame tracer) in the C
    objects' records, out of the Python collector's sight: left in place they would keep the
    jmspy objects, and through them the proton connection and transport, alive for ever. Safe
    once the engine thread has stopped using them (on the engine thread after its loop, or
    any thread after join)."""
    session = conn.session_head(0)
    while session is not None:
        session.jmspy_ctx = None
        session = session.next(0)
    link = conn.link_head(0)
    while link is not None:
        link.jmspy_ctx = None
        link = link.next(0)
    transport = conn.transport
    if transport is not None and transport.tracer is not None:
        transport.tracer = _no_trace


def _no_trace(_transport: Transport, _message: str) -> None:
    return None


def _chain(waiting: Completion[None] | None, new: Completion[None]) -> None:
    """Complete an API thread's pending begin/attach with the one redone after a reconnect."""
    if waiting is None or waiting.done():
        return

    def forward(done: Completion[None]) -> None:
        if done.error is not None:
            waiting.fail(done.error)
        else:
            waiting.succeed(None)

    new.add_callback(forward)


# Everything of an attach frame but its strings (performative, terminus fields, outcomes,
# the amended default outcome, settle modes, frame header): measured at about 225 bytes for a
# durable, filtered consumer link; 288 keeps a margin and still fits AMQP's smallest
# max-frame-size (512) for ordinary names.
_ATTACH_OVERHEAD = 288


def _attach_size_estimate(spec: LinkSpec) -> int:
    """An upper estimate of the encoded attach frame for a link (strings are UTF-8 and may
    appear once each, the link name usually repeating the address)."""
    strings = [spec.name, spec.address or "", spec.selector or "", *spec.capabilities]
    return _ATTACH_OVERHEAD + sum(len(s.encode()) + 5 for s in strings)


def _shortened(value: str | None, limit: int = 60) -> str:
    if value is None:
        return "None"
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}... ({len(value)} characters)"


class _LinkBase:
    """Shared attach/detach handling for senders and receivers."""

    link: Any

    def __init__(self, session: AmqpSession, spec: LinkSpec) -> None:
        self.session = session
        self.connection: AmqpConnection = session.connection
        self.spec = spec
        self._attach: Completion[None] | None = None
        self._detach: Completion[None] | None = None
        self.failure: JMSException | None = None
        self.closed = False
        # Once the peer accepted it: the application holds the consumer or producer, so a
        # reconnect that the peer refuses to re-create it on may be retried (see failover).
        self.ever_attached = False
        # Told when the link ends for good while its connection lives on: the peer closed it,
        # or a reconnect could not re-create it (the consumer or producer it carries is gone).
        self.on_ended: Callable[[JMSException], None] | None = None

    def _register(self, link: Any) -> None:
        self.link = link
        # This object may go on any thread; proton's wrapper goes on the engine's.
        self.connection.engine.held_wrappers.hold(link)
        link.jmspy_ctx = self
        self.connection.forget_link_contexts()
        self.session._links.add(self)

    def _on_interrupted(self, error: JMSException) -> None:
        """Engine thread: the transport is lost; the link is re-attached by the recovery."""
        if self._detach is not None:
            self._detach.succeed(None)

    def _do_attach(self, completion: Completion[None]) -> None:
        raise NotImplementedError

    def _lost_with_connection(self) -> JMSException | None:
        """Why this link cannot be re-created on a new transport, or None when it can.

        Temporary destinations live as long as the connection to the broker that made them:
        after a reconnect they are gone, and so are links to them."""
        spec = self.spec
        if spec.dynamic or any(c.startswith("temporary-") for c in spec.capabilities):
            return IllegalStateException(
                f"the temporary destination {spec.address!r} was lost with the connection to "
                "the broker (failover re-creates queues and topics, not temporary destinations)"
            )
        if spec.lookup:
            return JMSException("the connection to the broker was interrupted during unsubscribe")
        return None

    def _unregister(self) -> None:
        """Engine thread: the link is done with. Proton keeps a link it was never asked to free
        as long as its session, and with it what jmspy hung on it: clear that, and free a link
        closed at both ends, so a session that opens and closes consumers for months does not
        keep every one of them (see FreedEndpoints; proton settles what a link still has when
        freeing it, so one with unsettled deliveries stays until its session goes)."""
        self.session._links.discard(self)
        link = self.link
        if getattr(link, "jmspy_ctx", None) is self:
            link.jmspy_ctx = None
            self.connection.forget_link_contexts()
        closed = Link.LOCAL_CLOSED | Link.REMOTE_CLOSED
        if link.state & closed == closed:
            engine = self.connection.engine
            if engine.on_engine_thread():
                engine.freed.free_link(link)

    def _remote_terminus(self) -> Any:
        raise NotImplementedError

    def _on_remote_open(self) -> None:
        if self._attach is None or self._attach.done():
            return
        terminus = self._remote_terminus()
        # A peer refusing a link answers with a null terminus and then detaches with the reason.
        if terminus is None or (terminus.type == Terminus.UNSPECIFIED):
            return
        self.ever_attached = True
        self._attach.succeed(None)

    def _on_remote_close(self, closed: bool) -> None:
        cond = self.link.remote_condition
        what = f"link to {self.spec.address!r}"
        if self._attach is not None and not self._attach.done():
            error = error_for_condition(cond, InvalidDestinationException, f"cannot attach {what}")
            if cond is None:
                error = InvalidDestinationException(f"cannot attach {what}: link refused by peer")
            self._attach.fail(error)
            self._close_local(closed)
            return
        if self.closed:
            if self._detach is not None:
                self._detach.succeed(None)
            self._unregister()
            return
        error = error_for_condition(cond, JMSException, f"{what} closed by the peer")
        self._close_local(closed)
        log.warning("the peer closed the %s: %s", what, error.reason)
        self._end_for_good(error)

    def fail_pending_attach(self, error: JMSException) -> None:
        """Engine thread: the attach in flight fails (its session ended during a recovery);
        the link itself is not failed, a reconnect may re-create it."""
        attach = self._attach
        if attach is not None and not attach.done():
            attach.fail(error)

    def _end_for_good(self, error: JMSException) -> None:
        """Engine thread: the link is gone for good while the connection lives on (the peer
        closed it, or a reconnect could not re-create it); fail it, then tell whoever carries
        it (``on_ended``)."""
        self._on_failed(error)
        handler = self.on_ended
        if handler is not None:
            try:
                handler(error)
            except Exception:  # a listener's trouble must never stop the engine
                log.exception("handling the end of the %s raised", f"link to {self.spec.address!r}")

    def _close_local(self, closed: bool) -> None:
        if self.link.state & Link.LOCAL_ACTIVE:
            if closed:
                self.link.close()
            else:
                self.link.detach()
        self._unregister()

    def _on_failed(self, error: JMSException) -> None:
        self.failure = error
        if self._attach is not None:
            self._attach.fail(error)
        if self._detach is not None:
            self._detach.succeed(None)

    def abandon(self) -> None:
        """The attach was given up: close the link without waiting for the peer (any thread).
        A refused attach is closed already; one never answered is closed here, and the
        peer's answer to the close (or its late attach, then that answer) unregisters it."""
        if self.closed:
            return
        self.closed = True

        def do_close() -> None:
            link = getattr(self, "link", None)
            if link is not None and link.state & Link.LOCAL_ACTIVE:
                link.close()

        try:
            self.connection.submit(do_close)
        except JMSException as exc:
            log.debug("giving up an attach: %s", exc)

    def close(self, detach_only: bool = False) -> None:
        """Close (or only detach) the link and wait for the peer, within the close timeout."""
        if self.closed:
            return
        self.closed = True
        if self.failure is not None or not self.connection.engine.running:
            return

        def do_close(completion: Completion[None]) -> None:
            self._detach = completion
            self._before_close()
            if not self.link.state & Link.LOCAL_ACTIVE:
                completion.succeed(None)
                return
            if detach_only:
                self.link.detach()
            else:
                self.link.close()
            if self.link.state & Link.REMOTE_CLOSED:
                completion.succeed(None)
                self._unregister()

        # Within the enclosing close's deadline; with none left the detach is still queued
        # (it goes out if the peer reads again) but not waited for.
        timeout_ms = max(1, int(self.connection.close_remaining_s() * 1000))
        try:
            self.connection.run(do_close, f"closing link to {self.spec.address!r}", timeout_ms)
        except JMSException as exc:
            log.debug("link close: %s", exc)

    def _before_close(self) -> None:
        pass

    def _on_delivery(self, delivery: Delivery) -> None:
        pass

    def _on_delivery_ref(self, ref: DeliveryRef, link: LinkRef) -> None:
        """A delivery event, as the C pointers of the delivery and of this link (the engine's
        shortcut); links without a faster path take proton's wrapper."""
        self._on_delivery(wrap_delivery(ref))

    def _after_earlier_transfers(self) -> None:
        """Hand the consumers the transfers received earlier in this engine pass (they are
        handed over at its end) before an outcome here wakes a waiting thread."""
        self.connection.engine.flush_after_dispatch()

    def _on_flow(self) -> None:
        pass
