"""The AMQP provider: the connection over the engine thread (one transport at a time), and the
public face of the provider package: sessions (``session``), links (``links``, ``sender``,
``receiver``, ``transactions``) and the AMQP vocabulary (``terms``) are re-exported here.

The JMS layer (``jmspy.connection`` and friends) talks to this module only through
:class:`AmqpConnection`, :class:`AmqpSession`, :class:`AmqpSender` and :class:`AmqpReceiver`.
Their public methods may be called from any thread; everything that touches proton runs on
the engine thread (methods whose names start with ``_on`` or ``_do``).
"""
# Shares underscore members with the other modules of one provider (see jmspy/_amqp/__init__.py).

from __future__ import annotations

import contextlib
import itertools
import logging
import platform
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, cast

from proton import (
    Condition,
    Connection,
    Event,
    Transport,
    symbol,
)

from .._limits import MIN_REMOTE_IDLE_TIMEOUT_MS
from .._version import __version__
from ..errors import (
    IllegalStateException,
    JMSException,
)
from ..options import ConnectionOptions, Endpoint
from . import sasl
from .completion import Completion, current_wait_scope
from .connection_errors import engine_failure, transport_error
from .engine import Engine
from .engine_errors import EngineStopped
from .event_loop import shared_loop
from .links import _context_of, _LinkBase, release_contexts  # noqa: F401 - re-exported
from .proton_internals import DeliveryRef, LinkRef, delivery_link_ref, wrap_link
from .receiver import AmqpReceiver as AmqpReceiver  # re-exported
from .redact import peer_text
from .sender import AmqpSender as AmqpSender  # re-exported
from .sender import PendingSend  # noqa: F401 - re-exported
from .session import AmqpSession, _session_context
from .terms import (  # noqa: F401 - re-exported
    ACCEPTED_CODE,
    CONNECTION_ESTABLISHMENT_FAILED,
    DECLARE,
    DECLARED_CODE,
    DESIRED_CAPABILITIES,
    DISCHARGE,
    INVALID_FIELD,
    JMS_SELECTOR_CODE,
    JMS_SELECTOR_KEY,
    LOCAL_TRANSACTIONS,
    NO_LOCAL_CODE,
    NO_LOCAL_KEY,
    OUTCOMES,
    REJECTED_CODE,
    SHARED_SUBS,
    SOLE_CONNECTION,
    TRANSACTIONAL_STATE,
    _put_symbols,
    _symbol_array,
    _symbols_of,
    _transactional_outcome,
    error_for_condition,
)
from .terms import ANONYMOUS_RELAY as ANONYMOUS_RELAY  # re-exported
from .terms import InboundDelivery as InboundDelivery  # re-exported
from .terms import LinkSpec as LinkSpec  # re-exported
from .terms import link_profile as link_profile  # re-exported
from .tls import client_context
from .transactions import AmqpCoordinator  # noqa: F401 - re-exported
from .transport_events import TransportEvents

log = logging.getLogger("jmspy.provider")


# AmqpConnection states.
CONNECTING = "connecting"
OPEN = "open"
INTERRUPTED = "interrupted"  # failover: the transport was lost, reconnecting
FAILED = "failed"


class AmqpConnection:
    """One AMQP connection: the handle the JMS layer holds, over one transport at a time.

    Without failover the connection has exactly one transport (TCP connection, proton
    Connection/Transport and engine thread) and fails with it. With failover (``failover``
    given) a lost transport *interrupts* the connection: sessions and links keep their identity,
    work submitted meanwhile is held, and :class:`~jmspy._amqp.failover.Reconnector` opens a new
    transport to one of ``servers`` and re-creates every session and link on it (same names,
    same terminus), after which held work runs. ``epoch`` counts lost transports: a delivery
    received under an older epoch can no longer be settled (the broker redelivers it).
    """

    def __init__(
        self,
        endpoint: Endpoint,
        options: ConnectionOptions,
        container_id: str,
        on_failure: Callable[[JMSException], None],
        *,
        servers: list[tuple[Endpoint, ConnectionOptions]] | None = None,
        failover: Any = None,
        on_event: Callable[[str, Any], None] | None = None,
    ) -> None:
        self.servers = servers or [(endpoint, options)]
        self.endpoint = endpoint
        self.options = options
        self.container_id = container_id
        self._on_failure = on_failure
        self._on_event = on_event
        self.remote_offered_capabilities: set[str] = set()
        self.remote_properties: dict[str, Any] = {}
        self.remote_container_id: str | None = None
        # The largest frame the peer accepts (its open frame; 0: no limit known).
        self.remote_max_frame_size = 0
        self.failure: JMSException | None = None
        self._closing = False
        self._state = CONNECTING
        # The transport was lost between the open frames and OPEN (see open, announce_open).
        self._lost_while_opening = False
        # Engine thread: the link context of each link pointer that had a delivery event, so
        # a transfer finds its consumer without building a proton wrapper. Emptied whenever
        # a link is created (a new link may take a freed link's address) and on release.
        self._ctx_by_link: dict[LinkRef, _LinkBase | None] = {}
        self.epoch = 0
        self._gen = 0
        self._live_gen = -1
        self._lost_gen = -1
        self._open_completion: Completion[None] = Completion()
        self._close_completion: Completion[None] = Completion()
        self._recovery: Completion[Any] | None = None
        self._sessions: set[AmqpSession] = set()
        self._link_seq = itertools.count(1)
        self._lock = threading.Lock()
        # Work submitted while the transport is down, run in order once it is back.
        self._held: list[Callable[[], None]] = []
        self._held_lock = threading.Lock()
        # Completions API threads wait on: failed at once when the connection fails for good.
        self._waiters: set[Completion[Any]] = set()
        self._proton: Connection = cast(Connection, None)
        self.engine: Engine = cast(Engine, None)
        self.reconnector: Any = None
        # The deadline of the close in progress on each thread, by thread id (see close_scope).
        # Not a threading.local: on CPython 3.11 collecting one takes the interpreter's thread
        # list lock, and a collection that starts inside sys._current_frames() (which holds
        # that lock) then deadlocks the whole process (python/cpython#106883, not fixed in
        # 3.11); a provider is collected whenever a connection goes, so jmspy must not own one.
        self._close_deadlines: dict[int, float] = {}
        if failover is not None:
            from .failover import Reconnector

            self.reconnector = Reconnector(self, failover)

    # ---- transports -------------------------------------------------------------------------

    def _new_transport(
        self, endpoint: Endpoint, options: ConnectionOptions, connect_timeout_s: float
    ) -> None:
        """Build a proton Connection, Transport and engine for one server (not started)."""
        conn = Connection()
        conn.container = self.container_id
        # proton types it str, and takes None as "no hostname".
        conn.hostname = sasl.open_hostname(options.vhost, endpoint.host)  # type: ignore[assignment]
        conn.desired_capabilities = _symbol_array(DESIRED_CAPABILITIES)
        conn.properties = {
            symbol("product"): "jmspy",
            symbol("version"): __version__,
            symbol("platform"): f"Python {platform.python_version()} ({platform.system()})",
        }
        transport = Transport(Transport.CLIENT)
        transport.idle_timeout = options.idle_timeout / 1000.0
        transport.max_frame_size = options.max_frame_size
        # TLS and SASL run in the engine, not in proton (see tls.py and sasl.py).
        tls_context = client_context(options) if endpoint.tls else None
        sasl_client = sasl.client_for(options, endpoint)
        transport.bind(conn)
        self._gen += 1
        self._live_gen = self._gen
        self.endpoint = endpoint
        self.options = options
        self._proton = conn
        self._open_completion = Completion()
        self._close_completion = Completion()
        self.engine = Engine(
            host=endpoint.host,
            port=endpoint.port,
            connection=conn,
            transport=transport,
            handler=TransportEvents(self, self._gen, conn),
            connect_timeout_s=connect_timeout_s,
            tcp_no_delay=options.tcp_no_delay,
            tcp_keep_alive=options.tcp_keep_alive,
            send_buffer_size=options.send_buffer_size,
            receive_buffer_size=options.receive_buffer_size,
            name=f"jmspy-engine-{endpoint.host}:{endpoint.port}",
            tls=tls_context,
            sasl=sasl_client,
            shared_loop=shared_loop(options.shared_event_loop_threads),
        )
        if options.trace_frames:
            self.engine.enable_frame_trace()

    def connect_transport(
        self, endpoint: Endpoint, options: ConnectionOptions, within_s: float | None = None
    ) -> None:
        """Open a transport to one server: TCP, SASL and the open frames, within
        ``jms.connectTimeout`` (or ``within_s``, what is left of it); raise the mapped
        JMSException when that fails."""
        timeout = options.connect_timeout / 1000.0
        if within_s is not None:
            timeout = max(0.05, min(timeout, within_s))
        self._new_transport(endpoint, options, timeout)
        engine = self.engine
        # Queue the open before starting the thread: a connect that fails at once (refused)
        # stops the engine, and a later submit would raise EngineStopped instead of the reason.
        engine.submit(self._proton.open)
        engine.start()
        if self._closing:
            # A close that began meanwhile (it sets _closing before cancelling the reconnect
            # thread, which stops the engine it finds) may have stopped the previous engine,
            # not this one: stop this one too, so the wait below ends at once.
            engine.stop()
        try:
            self._open_completion.wait(
                timeout,
                lambda: JMSException(
                    f"could not connect to {endpoint.display()} within "
                    f"{options.connect_timeout} ms (jms.connectTimeout)"
                ),
            )
        except BaseException:
            self._live_gen = -1
            engine.stop()
            # The engine gives up by its own deadline (a moment before this wait's): the join
            # is short, and never longer than the connect timeout it is part of.
            engine.join(min(2.0, timeout))
            raise

    # ---- API side -------------------------------------------------------------------------

    def timeout_s(self, which: str) -> float:
        return float(getattr(self.options, which)) / 1000.0

    @property
    def interrupted(self) -> bool:
        """True while failover is reconnecting (work is held, not failed)."""
        return self._state == INTERRUPTED

    def open(self, announce: bool = True) -> None:
        """Connect, authenticate and exchange open frames; raise the mapped error on failure.

        ``announce=False`` leaves the "established" event (and a reconnect the open already
        needs) to :meth:`announce_open`, for a caller that must first publish the connection:
        the listener told of it may use it at once."""
        usable = True
        if self.reconnector is not None:
            self.reconnector.connect_first()
            usable = self.restored()
        else:
            endpoint, options = self.servers[0]
            self.connect_transport(endpoint, options)
            self._state = OPEN
        self._lost_while_opening = not usable
        if announce:
            self.announce_open()

    def announce_open(self) -> None:
        """Report the open to the connection listener (on the calling thread), then start the
        reconnect when the transport was lost before the connection was OPEN."""
        self.notify("established", self.endpoint.display())
        if self._lost_while_opening and self.reconnector is not None:
            # Lost after its open frame, before the connection was OPEN: _fail left the
            # reconnect to us (see restored).
            self._lost_while_opening = False
            self.reconnector.start(JMSException(f"{self.endpoint.display()} was lost"))

    def notify(self, kind: str, arg: Any) -> None:
        """Tell the JMS connection about a connection event (never on the engine thread)."""
        if self._on_event is not None:
            try:
                self._on_event(kind, arg)
            except BaseException:  # noqa: BLE001 - a listener's SystemExit must not end the
                # reconnect thread (or the opener) it is called on
                log.exception("connection event handler raised")

    def check_usable(self) -> None:
        if self.failure is not None:
            raise IllegalStateException(
                f"the connection to {self.endpoint.display()} has failed: {self.failure}",
                linked=self.failure,
            )

    def run(
        self, work: Callable[[Completion[Any]], None], what: str, timeout_ms: int | None = None
    ) -> Any:
        """Run work on the engine thread and wait, mapping engine death to a JMSException.

        While failover reconnects, the work is held and runs on the new transport; the wait is
        bounded by the same timeout either way. A wait made inside a WaitScope (a session's
        commit or rollback) also ends when a close aborts that scope."""
        self.check_usable()
        timeout_s = (timeout_ms or self.options.request_timeout) / 1000.0
        completion: Completion[Any] = Completion()

        def run() -> None:
            try:
                work(completion)
            except BaseException as exc:  # noqa: BLE001 - handed to the waiter
                completion.fail(exc)

        self._waiters.add(completion)
        scope = current_wait_scope()
        if scope is not None:
            scope.add(completion)
        try:
            if not completion.done():  # failed already by a close that ended the scope
                self.submit(run)
            try:
                return completion.wait(
                    timeout_s,
                    lambda: JMSException(f"{what} did not complete within {timeout_s:g} s"),
                )
            except BaseException:
                # The caller was told the work did not complete: if it is still held for the
                # next transport, it must not run there (a session begun or a link attached
                # at the restore that nobody holds, kept for the connection's lifetime), and
                # a caller retrying through a long outage must not hold one more each time.
                self._unhold(run)
                raise
        except EngineStopped as exc:
            raise self._failure_or(exc) from None
        finally:
            self._waiters.discard(completion)
            if scope is not None:
                scope.discard(completion)

    def submit(self, work: Callable[[], None]) -> None:
        self._submit(work, lazy=False)

    def submit_lazy(self, work: Callable[[], None]) -> None:
        """Queue work that can wait for the engine's next turn (see Engine.submit_lazy)."""
        self._submit(work, lazy=True)

    def _submit(self, work: Callable[[], None], lazy: bool) -> None:
        if self.reconnector is not None:
            with self._held_lock:
                if self._state == INTERRUPTED:
                    self._held.append(work)
                    return
        try:
            if lazy:
                self.engine.submit_lazy(work)
            else:
                self.engine.submit(work)
        except EngineStopped as exc:
            if self.reconnector is not None and self.failure is None and not self._closing:
                # The transport died and the interruption is being declared: hold the work.
                with self._held_lock:
                    self._held.append(work)
                return
            raise self._failure_or(exc) from None

    def _unhold(self, work: Callable[[], None]) -> None:
        with self._held_lock:
            with contextlib.suppress(ValueError):  # not held: it ran, or is on the engine
                self._held.remove(work)

    def _failure_or(self, exc: BaseException) -> JMSException:
        if self.failure is not None:
            return IllegalStateException(
                f"the connection has failed: {self.failure.reason}", linked=self.failure
            )
        return JMSException(f"the connection is closed: {exc}")

    def create_session(self) -> AmqpSession:
        session = AmqpSession(self)
        self.run(session._do_begin, "session begin")
        return session

    def next_link_id(self) -> int:
        return next(self._link_seq)

    @contextlib.contextmanager
    def close_scope(self) -> Iterator[None]:
        """One jms.closeTimeout for a whole close: a connection, session, consumer or
        producer close and every step inside it (links, settlements, the connection's own
        close) share the deadline set by the outermost scope on this thread."""
        thread = threading.get_ident()
        outer = thread in self._close_deadlines
        if not outer:
            self._close_deadlines[thread] = time.monotonic() + self.timeout_s("close_timeout")
        try:
            yield
        finally:
            if not outer:
                self._close_deadlines.pop(thread, None)

    def close_remaining_s(self) -> float:
        """What is left of the current close's deadline (a full close timeout outside one)."""
        deadline = self._close_deadlines.get(threading.get_ident())
        if deadline is None:
            return self.timeout_s("close_timeout")
        return max(0.0, deadline - time.monotonic())

    def close(self) -> None:
        """Close the connection; returns when the peer answered or the close deadline passed,
        with the engine thread stopped and the socket closed either way."""
        if self._closing:
            return
        self._closing = True
        with self.close_scope():
            if self.reconnector is not None:
                self.reconnector.cancel(self.close_remaining_s())
            if self._state == INTERRUPTED or self.engine is None or not self.engine.running:
                self._release_waiters(JMSException("the connection was closed"))
                if self.engine is not None:
                    self.engine.stop()
                    if not self.engine.join(max(0.2, self.close_remaining_s())):
                        self.engine.abort()
                        self.engine.join(2.0)
                return

            def do_close() -> None:
                self._proton.close()

            try:
                self.engine.submit(do_close)
                self._close_completion.wait(self.close_remaining_s(), lambda: TimeoutError())
            except (EngineStopped, TimeoutError, JMSException):
                pass
            finally:
                self.engine.stop()
                # Flushing may hang on a peer that reads nothing: give it what is left of the
                # deadline (at least a moment), then stop without flushing.
                if not self.engine.join(max(0.2, self.close_remaining_s())):
                    self.engine.abort()
                    self.engine.join(2.0)
                self._release_waiters(JMSException("the connection was closed"))

    def _release_waiters(self, error: JMSException) -> None:
        with self._held_lock:
            self._held.clear()
        for completion in list(self._waiters):
            completion.fail(error)

    # ---- failover (called by the Reconnector) ---------------------------------------------

    def _take_leftover_work(self, gen: int, work: Any) -> bool:
        """A stopped engine hands over work it never ran: held for the next transport when
        that engine's transport was lost to failover, else run by the engine to fail it."""
        if gen != self._lost_gen or self._closing or self.failure is not None:
            return False
        with self._held_lock:
            self._held[:0] = list(work)
        work.clear()
        return True

    def _lose_transport(self, error: JMSException) -> None:
        """Engine thread: the live transport is gone; keep every session and link for the
        next one. Deliveries of this transport can no longer be settled (epoch moves on)."""
        self.epoch += 1
        self.engine.stop()
        for session in list(self._sessions):
            session._on_interrupted(error)

    def restored(self) -> bool:
        """The new transport serves everything again: run the held work, in order. False when
        that transport was lost before it did (INTERRUPTED, the work still held): _fail
        decides under the same lock, so either it finds OPEN and reconnects, or this does."""
        with self._held_lock:
            if self._live_gen != self._gen:
                self._state = INTERRUPTED
                return False
            # OPEN first: whatever the held work completes (a send returning, say) finds the
            # connection restored; submits wait on the lock, so they still come after it.
            self._state = OPEN
            held, self._held = self._held, []
            for index, work in enumerate(held):
                try:
                    self.engine.submit(work)
                except EngineStopped:
                    # The engine's leftover work goes back in front of these (_finish).
                    self._state = INTERRUPTED
                    self._held = held[index:]
                    return False
        return True

    def fail_permanently(self, error: JMSException) -> None:
        """Failover gave up (attempts exhausted, or a security error): fail for good."""
        if self.failure is not None or self._closing:
            return
        self._state = FAILED
        self._fail_for_good(error)

    # ---- engine thread ------------------------------------------------------------------

    def on_delivery_fast(self, ref: DeliveryRef) -> None:
        """The engine's shortcut for delivery events (see Engine._dispatch_events): the
        delivery's C pointer goes to its link's context."""
        link = delivery_link_ref(ref)
        by_link = self._ctx_by_link
        try:
            ctx = by_link[link]
        except KeyError:
            ctx = by_link[link] = _context_of(wrap_link(link))
        if ctx is not None:
            ctx._on_delivery_ref(ref, link)

    def forget_link_contexts(self) -> None:
        """Engine thread: a link was created or released; look contexts up afresh."""
        self._ctx_by_link.clear()

    def on_proton_event(self, event: Event) -> None:
        kind = event.type
        if kind == Event.DELIVERY:
            link = event.link
            ctx = _context_of(link)
            if ctx is not None and event.delivery is not None:
                ctx._on_delivery(event.delivery)
            return
        if kind == Event.LINK_FLOW:
            ctx = _context_of(event.link)
            if ctx is not None:
                ctx._on_flow()
            return
        if kind == Event.LINK_REMOTE_OPEN:
            ctx = _context_of(event.link)
            if ctx is not None:
                ctx._on_remote_open()
            return
        if kind in (Event.LINK_REMOTE_CLOSE, Event.LINK_REMOTE_DETACH):
            ctx = _context_of(event.link)
            if ctx is not None:
                ctx._on_remote_close(closed=kind == Event.LINK_REMOTE_CLOSE)
            return
        if kind == Event.SESSION_REMOTE_OPEN:
            sctx = _session_context(event.session)
            if sctx is not None:
                sctx._on_remote_open()
            return
        if kind == Event.SESSION_REMOTE_CLOSE:
            sctx = _session_context(event.session)
            if sctx is not None:
                sctx._on_remote_close()
            return
        if kind == Event.CONNECTION_REMOTE_OPEN:
            self._on_remote_open()
            return
        if kind == Event.CONNECTION_REMOTE_CLOSE:
            self._on_remote_close()
            return
        if kind == Event.TRANSPORT_ERROR:
            cond = event.transport.condition if event.transport is not None else None
            log.debug("transport error on %s: %s", self.endpoint.display(), cond)
            self._fail(transport_error(self.endpoint.display(), self._established(), cond))
            return
        if kind == Event.TRANSPORT_CLOSED:
            self._fail(JMSException(f"connection to {self.endpoint.display()} was closed"))
            return

    def _established(self) -> bool:
        return self._open_completion.done() and self._open_completion.error is None

    def _on_remote_open(self) -> None:
        conn = self._proton
        self.remote_offered_capabilities = _symbols_of(conn.remote_offered_capabilities)
        props = conn.remote_properties or {}
        self.remote_properties = {str(k): v for k, v in props.items()}
        self.remote_container_id = conn.remote_container
        transport = conn.transport
        self.remote_max_frame_size = int(transport.remote_max_frame_size or 0) if transport else 0
        if self._refuse_tiny_remote_idle_timeout():
            return
        if CONNECTION_ESTABLISHMENT_FAILED in self.remote_properties:
            # The peer will close right away with the reason (e.g. a wrong password on Artemis).
            return
        log.info(
            "connected to %s (%s %s), offered capabilities %s",
            self.endpoint.display(),
            # The broker chose these strings: escaped, they cannot forge a log line.
            peer_text(self.remote_properties.get("product", "unknown product")),
            peer_text(self.remote_properties.get("version", "")),
            sorted(self.remote_offered_capabilities),
        )
        # Succeed after the events already received: a peer refusing the connection may send
        # its open and a close with the reason together, and that close must fail the open.
        self.engine.schedule(0.0, lambda: self._open_completion.succeed(None))

    def _refuse_tiny_remote_idle_timeout(self) -> bool:
        remote_ms = int(self.engine.transport.remote_idle_timeout * 1000)
        if not 0 < remote_ms < MIN_REMOTE_IDLE_TIMEOUT_MS:
            return False
        error = JMSException(
            f"{self.endpoint.display()} asks for an idle-time-out of {remote_ms} ms (a heartbeat "
            f"every {remote_ms / 2:g} ms); the minimum is {MIN_REMOTE_IDLE_TIMEOUT_MS} ms, so the "
            "connection is refused"
        )
        self._proton.condition = Condition("amqp:not-allowed", error.reason)
        self._proton.close()
        self._fail(error)
        self.engine.stop()
        return True

    def _on_remote_close(self) -> None:
        conn = self._proton
        cond = conn.remote_condition
        if self._closing and cond is None:
            self._close_completion.succeed(None)
            self.engine.stop()
            return
        error = error_for_condition(cond, JMSException, f"connection to {self.endpoint.display()}")
        if conn.state & conn.LOCAL_ACTIVE:
            conn.close()
        self._fail(error)
        self._close_completion.succeed(None)
        self.engine.stop()

    def _fail(self, error: JMSException) -> None:
        """Engine thread: the transport failed. Without failover the connection fails once
        (every waiter and every open resource hears about it); with failover an open connection
        is interrupted and the reconnector takes over."""
        if self._closing:
            self._close_completion.succeed(None)
            self._open_completion.fail(error)
            self._fail_children(error)
            self._release_waiters(error)
            return
        if self.failure is not None:
            return
        if self.reconnector is not None:
            if not self._open_completion.done():
                # A connect attempt failed: the reconnector decides what comes next.
                self._live_gen = -1
                self._open_completion.fail(error)
                self.engine.stop()
                return
            with self._held_lock:
                # Under the lock restored() sets OPEN under: one of the two reconnects.
                was_open = self._state == OPEN
                self._lost_gen = self._live_gen
                self._live_gen = -1
            self._lose_transport(error)
            recovery = self._recovery
            if was_open:
                log.warning(
                    "connection to %s interrupted: %s; reconnecting",
                    self.endpoint.display(),
                    error.reason,
                )
                with self._held_lock:
                    self._state = INTERRUPTED
                self.reconnector.start(error)
            elif recovery is not None:
                recovery.fail(error)
            return
        if not self._open_completion.done():
            self._open_completion.fail(error)
            self.failure = error
            self._fail_children(error)
            self._release_waiters(error)
            return
        self._fail_for_good(error)

    def _fail_for_good(self, error: JMSException) -> None:
        """Fail every waiter and open resource, then tell the JMS connection."""
        self.failure = error
        log.warning("connection to %s failed: %s", self.endpoint.display(), error.reason)
        self._fail_children(error)
        self._release_waiters(error)
        try:
            self._on_failure(error)
        except Exception:
            log.exception("connection failure callback raised")

    def _fail_children(self, error: JMSException) -> None:
        for session in list(self._sessions):
            session._on_connection_failed(error)

    def on_engine_failed(self, error: BaseException) -> None:
        jms_error = engine_failure(self.endpoint.display(), self._established(), error)
        self._fail(jms_error)
        self._close_completion.succeed(None)
        self._release_proton(self._proton)

    def _release_proton(self, conn: Connection) -> None:
        """Drop what jmspy hung on the proton objects of one connection whose engine stopped
        (see release_contexts)."""
        self._ctx_by_link.clear()
        release_contexts(conn)
