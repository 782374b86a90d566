"""An AMQP session: begins, creates the links of one JMS session, and begins again (with every
link re-attached) after a failover reconnect."""
# Shares underscore members with the other modules of one provider (see jmspy/_amqp/__init__.py).

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from proton import Endpoint

from ..errors import (
    InvalidDestinationException,
    InvalidSelectorException,
    JMSException,
    JMSSecurityException,
)
from .completion import Completion
from .links import _attach_size_estimate, _chain, _LinkBase, _shortened
from .receiver import AmqpReceiver
from .sender import AmqpSender
from .terms import (
    InboundDelivery,
    LinkSpec,
    error_for_condition,
)
from .transactions import AmqpCoordinator

if TYPE_CHECKING:
    from .provider import AmqpConnection

log = logging.getLogger("jmspy.provider")


def _session_context(session: Any) -> AmqpSession | None:
    if session is None:
        return None
    return getattr(session, "jmspy_ctx", None)


class AmqpSession:
    def __init__(self, connection: AmqpConnection) -> None:
        self.connection = connection
        self._proton: Any = None
        self._begin: Completion[None] | None = None
        self._links: set[_LinkBase] = set()
        self._coordinator: AmqpCoordinator | None = None
        self.closed = False
        self._released = False  # the current proton session let go of (see _release_if_ended)
        # Between _do_recover and the end of that recovery (failover.recover): a session the
        # peer ends meanwhile is a refused recovery, settled by the reconnector.
        self.recovering = False
        self.ended_in_recovery: JMSException | None = None

    def _hold(self, session: Any) -> None:
        """Engine thread: carry proton's ``session``; this object may go on any thread, the
        wrapper goes on the engine's (HeldWrappers)."""
        self._proton = session
        self.connection.engine.held_wrappers.hold(session)

    def _do_begin(self, completion: Completion[None]) -> None:
        session = self.connection._proton.session()
        self._hold(session)
        self._released = False
        session.jmspy_ctx = self
        self.connection._sessions.add(self)
        self._begin = completion
        session.open()

    def _on_remote_open(self) -> None:
        if self._begin is not None:
            self._begin.succeed(None)

    def _on_remote_close(self) -> None:
        error = error_for_condition(self._proton.remote_condition, JMSException, "session ended")
        if self.recovering and not isinstance(error, JMSSecurityException):
            # The peer ended the session while it was being re-created after a reconnect
            # (RabbitMQ 3.x ends the session when an attach names a queue not back yet): a
            # refusal of the recovery like a refused link. Only the pending begin and attaches
            # fail here; the reconnector reconnects again with every link of the session, or
            # fails them for good (failover.recover).
            self.ended_in_recovery = error
            if self._begin is not None:
                self._begin.fail(error)
            for link in list(self._links):
                link.fail_pending_attach(error)
            self._release_if_ended()
            return
        self._on_connection_failed(error)
        self._release_if_ended()

    def _release_if_ended(self) -> None:
        """Engine thread: once the session has ended at both ends, clear what jmspy hung on it.
        Proton keeps a session it was never asked to free as long as the connection, and with
        it this object: a connection that opens and closes sessions for months would keep
        every one."""
        session = self._proton
        ended = Endpoint.LOCAL_CLOSED | Endpoint.REMOTE_CLOSED
        if self._released or session is None or session.state & ended != ended:
            return
        self._released = True
        session.jmspy_ctx = None
        engine = self.connection.engine
        if engine.on_engine_thread():
            # Freed with the links proton still holds for it (see FreedEndpoints.free_session),
            # unless one has unsettled deliveries; what jmspy hung on those goes either way.
            link = session.connection.link_head(0)
            while link is not None:
                if link.session == session and getattr(link, "jmspy_ctx", None) is not None:
                    link.jmspy_ctx = None
                link = link.next(0)
            self.connection.forget_link_contexts()
            engine.freed.free_session(session)

    def _on_connection_failed(self, error: JMSException) -> None:
        if self._begin is not None:
            self._begin.fail(error)
        for link in list(self._links):
            link._on_failed(error)

    def _check_attach_size(self, spec: LinkSpec) -> None:
        """Refuse a link whose attach frame would exceed the peer's max frame size: the peer
        would end the whole connection with a framing error, killing every session."""
        limit = self.connection.remote_max_frame_size
        if limit <= 0 or limit >= 0xFFFFFFFF:
            return
        size = _attach_size_estimate(spec)
        if size <= limit:
            return
        selector_size = len(spec.selector.encode()) if spec.selector else 0
        rule = f"larger than the broker's max frame size of {limit} bytes"
        if selector_size and size - selector_size <= limit:
            raise InvalidSelectorException(
                f"invalid selector {_shortened(spec.selector)}: {selector_size} bytes make the "
                f"link's attach frame about {size} bytes, {rule}"
            )
        raise InvalidDestinationException(
            f"invalid destination {_shortened(spec.address)}: the link's attach frame would be "
            f"about {size} bytes, {rule}"
        )

    # ---- failover ----------------------------------------------------------------------------

    def _on_interrupted(self, error: JMSException) -> None:
        """Engine thread: the transport is lost; every link forgets what it cannot keep."""
        for link in list(self._links):
            if not link.closed and link.failure is None:
                link._on_interrupted(error)

    def _do_recover(self, pending: list[tuple[_LinkBase | None, Completion[None]]]) -> None:
        """Engine thread of the new transport: begin again and re-attach every open link.

        A begin or attach the application is still waiting for completes with the new one."""
        old = self._proton
        if old is not None:
            old.jmspy_ctx = None  # the old transport's objects must not keep the handle alive
        begun: Completion[None] = Completion()
        _chain(self._begin, begun)
        self._begin = begun
        session = self.connection._proton.session()
        self._hold(session)
        self._released = False
        session.jmspy_ctx = self
        session.open()
        self.recovering = True
        self.ended_in_recovery = None
        pending.append((None, begun))
        for link in list(self._links):
            if link.closed or link.failure is not None:
                self._links.discard(link)
                continue
            lost = link._lost_with_connection()
            if lost is not None:
                self._links.discard(link)
                link._end_for_good(lost)
                continue
            attached: Completion[None] = Completion()
            _chain(link._attach, attached)
            old_link = getattr(link, "link", None)
            if old_link is not None:
                old_link.jmspy_ctx = None
            link._do_attach(attached)
            pending.append((link, attached))

    def create_sender(
        self,
        spec: LinkSpec,
        max_in_flight: int,
        *,
        before_attach: Callable[[AmqpSender], None] | None = None,
    ) -> AmqpSender:
        self._check_attach_size(spec)
        sender = AmqpSender(self, spec, max_in_flight)
        if before_attach is not None:
            # Its hooks set before the attach: the peer may detach it as soon as it is answered.
            before_attach(sender)
        self._attach(sender, f"attaching producer link to {spec.address!r}")
        return sender

    def coordinator(self) -> AmqpCoordinator:
        """The session's transaction coordinator link, attached on first use."""
        if self._coordinator is None:
            coordinator = AmqpCoordinator(self)
            self._attach(coordinator, "attaching the transaction coordinator")
            self._coordinator = coordinator
        return self._coordinator

    def create_receiver(
        self,
        spec: LinkSpec,
        prefetch: int,
        decode: Callable[[bytes | bytearray], Any],
        on_message: Callable[[InboundDelivery], None],
        on_closed: Callable[[JMSException], None],
        *,
        before_attach: Callable[[AmqpReceiver], None] | None = None,
    ) -> AmqpReceiver:
        self._check_attach_size(spec)
        receiver = AmqpReceiver(self, spec, prefetch, decode, on_message, on_closed)
        if before_attach is not None:
            # Its hooks set before the attach: transfers may arrive as soon as it is answered.
            before_attach(receiver)
        self._attach(receiver, f"attaching consumer link to {spec.address!r}")
        return receiver

    def _attach(self, link: _LinkBase, what: str) -> None:
        """Attach ``link`` and wait for the peer's answer. An attach that fails without one (no
        answer within jms.requestTimeout, a close meanwhile) is given up: its detach is queued
        and not waited for, so a late answer from the broker leaves no link there (an orphan
        producer, browser or temporary queue) and none here."""
        try:
            self.connection.run(link._do_attach, what)
        except BaseException:
            link.abandon()
            raise

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self._proton is None or not self.connection.engine.running:
            return

        def do_close() -> None:
            self.connection._sessions.discard(self)
            session = self._proton
            coordinator = self._coordinator
            if coordinator is not None and coordinator.link.state & Endpoint.LOCAL_ACTIVE:
                # Detached before the end, so that the session's links are all closed at both
                # ends once it has ended, and proton may free them with it (FreedEndpoints).
                coordinator.closed = True  # the peer's detach answers this close
                coordinator.link.close()
            session.close()
            self._release_if_ended()  # the peer ended it first

        try:
            self.connection.submit(do_close)
        except JMSException:
            pass
