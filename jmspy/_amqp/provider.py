"""The AMQP provider: connection, sessions and links over the engine thread.

The JMS layer (``jmspy.connection`` and friends) talks to this module only through
:class:`AmqpConnection`, :class:`AmqpSession`, :class:`AmqpSender` and :class:`AmqpReceiver`.
Their public methods may be called from any thread; everything that touches proton runs on
the engine thread (methods whose names start with ``_on`` or ``_do``).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import platform
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, cast

from proton import (
    Array,
    Condition,
    Connection,
    Data,
    Delivery,
    Described,
    Event,
    Link,
    Terminus,
    Transport,
    symbol,
    ulong,
)

from .. import __version__
from .._limits import MIN_REMOTE_IDLE_TIMEOUT_MS
from ..adapters.base import DELAYED_DELIVERY
from ..errors import (
    IllegalStateException,
    InvalidClientIDException,
    InvalidDestinationException,
    InvalidSelectorException,
    JMSException,
    JMSSecurityException,
    ResourceAllocationException,
    TransactionInDoubtException,
    TransactionRolledBackException,
)
from ..options import ConnectionOptions, Endpoint
from . import sasl
from .attach_amender import Amendment
from .engine import Completion, Engine, EngineStopped, IdleTimeoutExpired
from .proton_internals import delivery_link
from .tls import client_context

log = logging.getLogger("jmspy.provider")

# Connection capabilities (Qpid JMS asks for the same four).
SOLE_CONNECTION = "sole-connection-for-container"
# DELAYED_DELIVERY is imported: defined once, with the broker profiles that also look for it.
ANONYMOUS_RELAY = "ANONYMOUS-RELAY"
SHARED_SUBS = "SHARED-SUBS"
DESIRED_CAPABILITIES = (SOLE_CONNECTION, DELAYED_DELIVERY, ANONYMOUS_RELAY, SHARED_SUBS)

# Source filters in the form Qpid JMS sends them (Artemis also accepts the symbolic descriptors).
JMS_SELECTOR_KEY = "jms-selector"
JMS_SELECTOR_CODE = 0x0000468C00000004
NO_LOCAL_KEY = "no-local"
NO_LOCAL_CODE = 0x0000468C00000003

# Transactions (AMQP 1.0 part 4): descriptor codes of the control messages and states.
TRANSACTIONAL_STATE = 0x34
DECLARED_CODE = 0x33
ACCEPTED_CODE = 0x24
REJECTED_CODE = 0x25
DECLARE = symbol("amqp:declare:list")
DISCHARGE = symbol("amqp:discharge:list")
LOCAL_TRANSACTIONS = "amqp:local-transactions"


def _transactional_outcome(data: Any) -> int | None:
    """The outcome code inside a remote transactional-state [txn-id, outcome]."""
    try:
        outcome = data[1]
        return int(outcome.descriptor)
    except (TypeError, IndexError, AttributeError, ValueError):
        return None


OUTCOMES = ("amqp:accepted:list", "amqp:rejected:list", "amqp:released:list", "amqp:modified:list")

CONNECTION_ESTABLISHMENT_FAILED = "amqp:connection-establishment-failed"
INVALID_FIELD = "invalid-field"


def error_for_condition(
    condition: Condition | None, default: type[JMSException], context: str
) -> JMSException:
    """Map an AMQP error condition to the JMS exception Qpid JMS raises for it."""
    if condition is None:
        return default(f"{context}: closed by the remote peer without an error")
    name = str(condition.name)
    description = condition.description or ""
    text = f"{context}: {name}" + (f" ({description})" if description else "")
    exc_type: type[JMSException] = default
    if name == "amqp:unauthorized-access":
        exc_type = JMSSecurityException
    elif name == "amqp:resource-limit-exceeded":
        exc_type = ResourceAllocationException
    elif name == "amqp:not-found":
        exc_type = InvalidDestinationException
    elif name == "amqp:transaction:rollback":
        exc_type = TransactionRolledBackException
    elif name == "amqp:invalid-field":
        info: Any = condition.info or {}
        if str(info.get(symbol(INVALID_FIELD), info.get(INVALID_FIELD, ""))) == "container-id":
            exc_type = InvalidClientIDException
    return exc_type(text, name)


def _symbol_array(values: list[str] | tuple[str, ...]) -> Array:
    return Array(Data.NULL, Data.SYMBOL, *[symbol(v) for v in values])


def _put_symbols(data: Data, values: list[str] | tuple[str, ...]) -> None:
    data.put_array(False, Data.SYMBOL)
    data.enter()
    for value in values:
        data.put_symbol(symbol(value))
    data.exit()


def _symbols_of(value: Any) -> set[str]:
    if not value:
        return set()
    if isinstance(value, str):
        return {str(value)}
    return {str(v) for v in value}


@dataclass(slots=True, eq=False)
class InboundDelivery:
    """A transfer received on a consumer link, handed to the JMS layer with its decoded message.

    ``delivery`` is a proton object: only the engine thread may touch it.
    """

    delivery: Delivery
    message: Any
    receiver: AmqpReceiver
    settled: bool = False
    # time.monotonic() when the transfer arrived (batch listeners time their batches from it).
    arrived: float = 0.0
    # The connection epoch it arrived in: after a reconnect it can no longer be settled.
    epoch: int = 0


@dataclass
class LinkSpec:
    """What the JMS layer asks for when it opens a link."""

    name: str
    address: str | None
    capabilities: tuple[str, ...] = ()
    selector: str | None = None
    no_local: bool = False
    durable: bool = False
    distribution_copy: bool = False
    dynamic: bool = False
    # Attach with a null source: look up an existing durable subscription by link name (used
    # to unsubscribe), as Qpid JMS does.
    lookup: bool = False
    # Presettled deliveries (queue browsers: nothing to acknowledge).
    presettled: bool = False
    # A non-durable link that must survive a detach (durable subscriptions are detached on
    # close, never closed, so the broker keeps them).
    extra: dict[str, Any] = field(default_factory=dict)


class _TransportEvents:
    """The engine handler of one transport (one TCP connection) of an :class:`AmqpConnection`.

    A connection that fails over outlives its transports: events of a transport that has been
    declared lost (or replaced) are dropped here, so a dying engine thread can never touch the
    links and sessions that a newer transport now serves.
    """

    __slots__ = ("conn", "gen", "proton", "on_delivery_fast")

    def __init__(self, conn: AmqpConnection, gen: int, proton: Connection) -> None:
        self.conn = conn
        self.gen = gen
        self.proton = proton
        self.on_delivery_fast = self._delivery

    def _delivery(self, delivery: Delivery) -> None:
        if self.conn._live_gen == self.gen:
            self.conn.on_delivery_fast(delivery)

    def on_proton_event(self, event: Event) -> None:
        if self.conn._live_gen == self.gen:
            self.conn.on_proton_event(event)

    def on_engine_failed(self, error: BaseException) -> None:
        if self.conn._live_gen == self.gen:
            self.conn.on_engine_failed(error)
        else:
            # A transport failover already replaced: only its proton objects to let go.
            self.conn._release_proton(self.proton)

    def take_leftover_work(self, work: Any) -> bool:
        return self.conn._take_leftover_work(self.gen, work)


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
        # The deadline of the close in progress on each thread (see close_scope).
        self._close_local = threading.local()
        if failover is not None:
            from .failover import Reconnector

            self.reconnector = Reconnector(self, failover)

    # ---- transports -------------------------------------------------------------------------

    def _new_transport(self, endpoint: Endpoint, options: ConnectionOptions) -> None:
        """Build a proton Connection, Transport and engine for one server (not started)."""
        conn = Connection()
        conn.container = self.container_id
        conn.hostname = options.vhost or endpoint.host
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
            handler=_TransportEvents(self, self._gen, conn),
            connect_timeout_s=options.connect_timeout / 1000.0,
            tcp_no_delay=options.tcp_no_delay,
            tcp_keep_alive=options.tcp_keep_alive,
            send_buffer_size=options.send_buffer_size,
            receive_buffer_size=options.receive_buffer_size,
            name=f"jmspy-engine-{endpoint.host}:{endpoint.port}",
            tls=tls_context,
            sasl=sasl_client,
        )
        if options.trace_frames:
            self.engine.enable_frame_trace()

    def connect_transport(self, endpoint: Endpoint, options: ConnectionOptions) -> None:
        """Open a transport to one server: TCP, SASL and the open frames, within
        ``jms.connectTimeout``; raise the mapped JMSException when that fails."""
        self._new_transport(endpoint, options)
        engine = self.engine
        # Queue the open before starting the thread: a connect that fails at once (refused)
        # stops the engine, and a later submit would raise EngineStopped instead of the reason.
        engine.submit(self._proton.open)
        engine.start()
        timeout = options.connect_timeout / 1000.0
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
            engine.join(2.0)
            raise

    # ---- API side -------------------------------------------------------------------------

    def timeout_s(self, which: str) -> float:
        return float(getattr(self.options, which)) / 1000.0

    @property
    def interrupted(self) -> bool:
        """True while failover is reconnecting (work is held, not failed)."""
        return self._state == INTERRUPTED

    def open(self) -> None:
        """Connect, authenticate and exchange open frames; raise the mapped error on failure."""
        if self.reconnector is not None:
            self.reconnector.connect_first()
        else:
            endpoint, options = self.servers[0]
            self.connect_transport(endpoint, options)
        self._state = OPEN
        self.notify("established", self.endpoint.display())

    def notify(self, kind: str, arg: Any) -> None:
        """Tell the JMS connection about a connection event (never on the engine thread)."""
        if self._on_event is not None:
            try:
                self._on_event(kind, arg)
            except Exception:
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
        bounded by the same timeout either way."""
        self.check_usable()
        timeout_s = (timeout_ms or self.options.request_timeout) / 1000.0
        completion: Completion[Any] = Completion()

        def run() -> None:
            try:
                work(completion)
            except BaseException as exc:  # noqa: BLE001 - handed to the waiter
                completion.fail(exc)

        self._waiters.add(completion)
        try:
            self.submit(run)
            return completion.wait(
                timeout_s,
                lambda: JMSException(f"{what} did not complete within {timeout_s:g} s"),
            )
        except EngineStopped as exc:
            raise self._failure_or(exc) from None
        finally:
            self._waiters.discard(completion)

    def submit(self, work: Callable[[], None]) -> None:
        if self.reconnector is not None:
            with self._held_lock:
                if self._state == INTERRUPTED:
                    self._held.append(work)
                    return
        try:
            self.engine.submit(work)
        except EngineStopped as exc:
            if self.reconnector is not None and self.failure is None and not self._closing:
                # The transport died and the interruption is being declared: hold the work.
                with self._held_lock:
                    self._held.append(work)
                return
            raise self._failure_or(exc) from None

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
        local = self._close_local
        outer = getattr(local, "deadline", None)
        if outer is None:
            local.deadline = time.monotonic() + self.timeout_s("close_timeout")
        try:
            yield
        finally:
            if outer is None:
                local.deadline = None

    def close_remaining_s(self) -> float:
        """What is left of the current close's deadline (a full close timeout outside one)."""
        deadline = getattr(self._close_local, "deadline", None)
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
        self._lost_gen = self._live_gen
        self._live_gen = -1
        self.epoch += 1
        self.engine.stop()
        for session in list(self._sessions):
            session._on_interrupted(error)

    def recover(self, timeout_s: float) -> list[tuple[_LinkBase, BaseException]]:
        """Re-create every open session and link on the new transport and wait for the peer.

        Returns the links the peer refused (the caller fails them); raises when the transport
        is lost again or the peer does not answer within ``timeout_s``."""
        done: Completion[list[tuple[_LinkBase, BaseException]]] = Completion()
        self._recovery = done

        def work() -> None:
            pending: list[tuple[_LinkBase | None, Completion[None]]] = []
            for session in list(self._sessions):
                if session.closed:
                    self._sessions.discard(session)
                    continue
                session._do_recover(pending)
            refused: list[tuple[_LinkBase, BaseException]] = []
            remaining = [len(pending)]

            def one_done(link: _LinkBase | None, completion: Completion[None]) -> None:
                if completion.error is not None and link is not None:
                    refused.append((link, completion.error))
                remaining[0] -= 1
                if remaining[0] == 0:
                    done.succeed(refused)

            if not pending:
                done.succeed(refused)
            for link, completion in pending:
                completion.add_callback(partial(one_done, link))

        self.engine.submit(work)
        try:
            return done.wait(
                timeout_s,
                lambda: JMSException(
                    f"{self.endpoint.display()} did not re-create the sessions and links within "
                    f"{timeout_s:g} s"
                ),
            )
        finally:
            self._recovery = None

    def restored(self) -> None:
        """The new transport serves everything again: run the held work, in order."""
        with self._held_lock:
            held, self._held = self._held, []
            for work in held:
                self.engine.submit(work)
            self._state = OPEN

    def interrupt_state(self) -> None:
        self._state = INTERRUPTED

    def fail_permanently(self, error: JMSException) -> None:
        """Failover gave up (attempts exhausted, or a security error): fail for good."""
        if self.failure is not None or self._closing:
            return
        self._state = FAILED
        self._fail_for_good(error)

    # ---- engine thread ------------------------------------------------------------------

    def on_delivery_fast(self, delivery: Delivery) -> None:
        """The engine's shortcut for delivery events (see Engine._dispatch_events)."""
        ctx = _context_of(delivery_link(delivery))
        if ctx is not None:
            ctx._on_delivery(delivery)

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
            self._fail(self._transport_error(cond))
            return
        if kind == Event.TRANSPORT_CLOSED:
            self._fail(JMSException(f"connection to {self.endpoint.display()} was closed"))
            return

    def _io_failure_text(self, detail: object) -> str:
        # A socket error before the open completed means the connect failed; after it, an
        # established connection was lost (a reset mid-stream is not a failure to connect).
        if self._open_completion.done() and self._open_completion.error is None:
            return f"connection to {self.endpoint.display()} was lost: {detail}"
        return f"could not connect to {self.endpoint.display()}: {detail}"

    def _transport_error(self, cond: Condition | None) -> JMSException:
        if cond is not None and str(cond.name) in (
            "amqp:unauthorized-access",
            "amqp:sasl:auth",
            "proton:io",
        ):
            if str(cond.name) == "proton:io":
                return JMSException(self._io_failure_text(cond.description), str(cond.name))
            return JMSSecurityException(
                f"authentication failed for {self.endpoint.display()}: {cond.description}",
                str(cond.name),
            )
        return error_for_condition(cond, JMSException, f"connection to {self.endpoint.display()}")

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
            self.remote_properties.get("product", "unknown product"),
            self.remote_properties.get("version", ""),
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
            self._lose_transport(error)
            recovery = self._recovery
            if self._state == OPEN:
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
        if isinstance(error, JMSException):
            jms_error = error
        elif isinstance(error, IdleTimeoutExpired):
            jms_error = JMSException(
                f"connection to {self.endpoint.display()}: {error}", linked=error
            )
        elif isinstance(error, OSError):
            jms_error = JMSException(self._io_failure_text(error), linked=error)
        else:
            jms_error = JMSException(
                f"connection to {self.endpoint.display()} ended: {error}", linked=error
            )
        self._fail(jms_error)
        self._close_completion.succeed(None)
        self._release_proton(self._proton)

    def _release_proton(self, conn: Connection) -> None:
        """Drop what jmspy hung on the proton objects of one connection whose engine stopped.

        proton keeps attributes set on its wrappers (jmspy_ctx, the frame tracer) in the C
        objects' records, out of the Python collector's sight: left in place they would keep
        the jmspy objects, and through them the proton connection and transport, alive for
        ever. Safe once the engine thread has stopped using them (on the engine thread after
        its loop, or any thread after join)."""
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


def link_profile(profile: Any) -> dict[str, Any]:
    """The broker-profile facts a consumer link needs (LinkSpec.extra)."""
    return {"modified_outcome": profile.modified_outcome, "drain": profile.drain}


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


class AmqpSession:
    def __init__(self, connection: AmqpConnection) -> None:
        self.connection = connection
        self._proton: Any = None
        self._begin: Completion[None] | None = None
        self._links: set[_LinkBase] = set()
        self._coordinator: AmqpCoordinator | None = None
        self.closed = False

    def _do_begin(self, completion: Completion[None]) -> None:
        session = self.connection._proton.session()
        self._proton = session
        session.jmspy_ctx = self
        self.connection._sessions.add(self)
        self._begin = completion
        session.open()

    def _on_remote_open(self) -> None:
        if self._begin is not None:
            self._begin.succeed(None)

    def _on_remote_close(self) -> None:
        error = error_for_condition(self._proton.remote_condition, JMSException, "session ended")
        self._on_connection_failed(error)

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
        self._proton = session
        session.jmspy_ctx = self
        session.open()
        pending.append((None, begun))
        for link in list(self._links):
            if link.closed or link.failure is not None:
                self._links.discard(link)
                continue
            lost = link._lost_with_connection()
            if lost is not None:
                self._links.discard(link)
                link._on_failed(lost)
                continue
            attached: Completion[None] = Completion()
            _chain(link._attach, attached)
            old_link = getattr(link, "link", None)
            if old_link is not None:
                old_link.jmspy_ctx = None
            link._do_attach(attached)
            pending.append((link, attached))

    def create_sender(self, spec: LinkSpec, max_in_flight: int) -> AmqpSender:
        self._check_attach_size(spec)
        sender = AmqpSender(self, spec, max_in_flight)
        self.connection.run(sender._do_attach, f"attaching producer link to {spec.address!r}")
        return sender

    def coordinator(self) -> AmqpCoordinator:
        """The session's transaction coordinator link, attached on first use."""
        if self._coordinator is None:
            coordinator = AmqpCoordinator(self)
            self.connection.run(coordinator._do_attach, "attaching the transaction coordinator")
            self._coordinator = coordinator
        return self._coordinator

    def create_receiver(
        self,
        spec: LinkSpec,
        prefetch: int,
        decode: Callable[[bytes], Any],
        on_message: Callable[[InboundDelivery], None],
        on_closed: Callable[[JMSException], None],
    ) -> AmqpReceiver:
        self._check_attach_size(spec)
        receiver = AmqpReceiver(self, spec, prefetch, decode, on_message, on_closed)
        self.connection.run(receiver._do_attach, f"attaching consumer link to {spec.address!r}")
        return receiver

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self._proton is None or not self.connection.engine.running:
            return

        def do_close() -> None:
            self.connection._sessions.discard(self)
            self._proton.close()

        try:
            self.connection.submit(do_close)
        except JMSException:
            pass


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
        self.connection = session.connection
        self.spec = spec
        self._attach: Completion[None] | None = None
        self._detach: Completion[None] | None = None
        self.failure: JMSException | None = None
        self.closed = False

    def _register(self, link: Any) -> None:
        self.link = link
        link.jmspy_ctx = self
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
        self.session._links.discard(self)

    def _remote_terminus(self) -> Any:
        raise NotImplementedError

    def _on_remote_open(self) -> None:
        if self._attach is None or self._attach.done():
            return
        terminus = self._remote_terminus()
        # A peer refusing a link answers with a null terminus and then detaches with the reason.
        if terminus is None or (terminus.type == Terminus.UNSPECIFIED):
            return
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
        self._on_failed(error)

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

    def _on_flow(self) -> None:
        pass


@dataclass(slots=True, eq=False)
class PendingSend:
    """One transfer from send() until the peer settles it (kept for resending after a
    reconnect). ``txn_epoch`` is set for transactional sends."""

    payload: bytes
    completion: Completion[None] | None
    txn_id: bytes | None
    txn_epoch: int | None
    withdrawn: bool = False


class AmqpSender(_LinkBase):
    """A producer link. Sends are queued in the outbox and written as credit allows."""

    def __init__(self, session: AmqpSession, spec: LinkSpec, max_in_flight: int) -> None:
        super().__init__(session, spec)
        self._outbox: list[PendingSend] = []
        self._outbox_lock = threading.Lock()
        self._flush_scheduled = False
        self._tags = itertools.count(1)
        # Written, not yet settled by the peer, in send order (resent after a reconnect).
        self._unsettled: dict[Any, PendingSend] = {}
        self._in_flight = threading.BoundedSemaphore(max_in_flight)
        self.async_failure_handler: Callable[[JMSException], None] | None = None
        self.txn_failure_handler: Callable[[JMSException], None] | None = None
        # Some brokers (Qpid Broker-J) offer DELAYED_DELIVERY per link, in the target's
        # capabilities; proton-c cannot read link-level offered capabilities.
        self.target_capabilities: set[str] = set()

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
        link.snd_settle_mode = Link.SND_UNSETTLED
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
    ) -> None:
        """Queue a transfer. A sync send waits for the peer's outcome; an async one does not
        but is bounded by the in-flight limit, so a slow peer slows the producer down.

        ``epoch`` (transactional sends): the connection epoch the transaction was declared in;
        a send of a transaction that a reconnect has lost is dropped with it."""
        if self.failure is not None:
            raise IllegalStateException(
                f"the producer link to {self.spec.address!r} has failed: {self.failure.reason}",
                linked=self.failure,
            )
        timeout_s = timeout_ms / 1000.0
        if not self._in_flight.acquire(timeout=timeout_s):
            raise JMSException(
                f"send to {self.spec.address!r} timed out after {timeout_ms} ms waiting for the "
                "peer to settle earlier sends (jms.sendTimeout)"
            )
        completion: Completion[None] | None = Completion() if sync else track
        pending = PendingSend(payload, completion, txn_id, epoch)
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
        if sync and completion is not None:
            try:
                completion.wait(timeout_s, lambda: self._send_timed_out(pending, timeout_ms))
            except EngineStopped as exc:
                raise self.connection._failure_or(exc) from None

    def _send_timed_out(self, pending: PendingSend, timeout_ms: int) -> JMSException:
        """A sync send got no outcome in time. If it never left the client it is withdrawn
        (certainly not sent); if it was written, its outcome is unknown and said so."""
        with self._outbox_lock:
            if pending in self._outbox:
                self._outbox.remove(pending)
                pending.withdrawn = True
                self._in_flight.release()
                return JMSException(
                    f"send to {self.spec.address!r} timed out after {timeout_ms} ms "
                    "(jms.sendTimeout) before it could be written; the message was not sent"
                    + (" (the connection is reconnecting)" if self.connection.interrupted else "")
                )
        return JMSException(
            f"send to {self.spec.address!r} was not settled by the peer within {timeout_ms} ms "
            "(jms.sendTimeout): its outcome is unknown, the broker may or may not have the message"
        )

    def _do_flush(self) -> None:
        with self._outbox_lock:
            self._flush_scheduled = False
            if not self._outbox:
                return
            outbox = self._outbox
            self._outbox = []
        link = self.link
        if self.failure is not None:
            for pending in outbox:
                self._in_flight.release()
                if pending.completion is not None:
                    pending.completion.fail(self.failure)
            return
        if self.connection._live_gen < 0 or not link.state & Link.LOCAL_ACTIVE:
            # Between transports (failover): keep everything for the re-attached link.
            with self._outbox_lock:
                self._outbox[:0] = outbox
            return
        epoch = self.connection.epoch
        remaining: list[PendingSend] = []
        for index, pending in enumerate(outbox):
            if pending.txn_epoch is not None and pending.txn_epoch != epoch:
                self._drop_lost_transactional(pending)
                continue
            if link.credit <= 0:
                remaining = outbox[index:]
                break
            tag = str(next(self._tags)).encode()
            delivery = link.delivery(tag)
            if pending.txn_id is not None:
                # The transfer carries transactional-state(txn-id): it counts at commit only.
                delivery.local.data = [pending.txn_id]
                delivery.update(TRANSACTIONAL_STATE)
            link.stream(pending.payload)
            link.advance()
            self._unsettled[delivery.tag] = pending
        if remaining:
            with self._outbox_lock:
                self._outbox[:0] = remaining

    def _drop_lost_transactional(self, pending: PendingSend) -> None:
        """A send of a transaction that the broker dropped with the old transport."""
        self._in_flight.release()
        if pending.completion is not None:
            pending.completion.fail(
                TransactionRolledBackException(
                    f"transactional send to {self.spec.address!r} was lost with the connection "
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
        if not delivery.updated and not delivery.remote_state:
            return
        state = delivery.remote_state
        if state == 0 and not delivery.settled:
            return
        pending = self._unsettled.pop(delivery.tag, None)
        delivery.settle()
        if pending is None:
            return
        completion = pending.completion
        self._in_flight.release()
        error: JMSException | None = None
        if state == TRANSACTIONAL_STATE:
            if _transactional_outcome(delivery.remote.data) == REJECTED_CODE:
                error = TransactionRolledBackException(
                    f"transactional send to {self.spec.address!r} was rejected; the transaction "
                    "will roll back"
                )
                if self.txn_failure_handler is not None:
                    self.txn_failure_handler(error)
        elif state == Delivery.ACCEPTED:
            pass
        elif state == Delivery.REJECTED:
            error = error_for_condition(
                delivery.remote.condition, JMSException, f"send to {self.spec.address!r} rejected"
            )
        elif state == Delivery.RELEASED:
            error = JMSException(f"send to {self.spec.address!r} failed: released by the peer")
        elif state == Delivery.MODIFIED:
            error = JMSException(f"send to {self.spec.address!r} failed: modified by the peer")
        if completion is not None:
            if error is None:
                completion.succeed(None)
            else:
                completion.fail(error)
        elif error is not None:
            log.warning("asynchronous send failed: %s", error.reason)
            if self.async_failure_handler is not None:
                self.async_failure_handler(error)

    def _on_failed(self, error: JMSException) -> None:
        super()._on_failed(error)
        for pending in self._unsettled.values():
            self._in_flight.release()
            if pending.completion is not None:
                pending.completion.fail(error)
        self._unsettled.clear()
        self._do_flush()

    def wait_settled(self, timeout_s: float) -> None:
        """Wait until every queued send is settled (used by close)."""
        if not self._unsettled and not self._outbox:
            return  # nothing in flight: no round trip to the engine (the close may have no time)
        done: Completion[None] = Completion()

        def check() -> None:
            if (not self._unsettled and not self._outbox) or self.failure is not None:
                done.succeed(None)
            else:
                self.connection.engine.schedule(0.005, check)

        if self.connection.interrupted:
            # Reconnecting: what is still unsettled is resent later or fails with its own
            # completion; a close does not wait for the reconnect.
            return
        try:
            self.connection.submit(check)
            done.wait(timeout_s, lambda: JMSException("outstanding sends were not settled"))
        except JMSException as exc:
            log.warning("closing producer with unsettled sends: %s", exc.reason)


class AmqpReceiver(_LinkBase):
    """A consumer link with a credit window (the prefetch)."""

    def __init__(
        self,
        session: AmqpSession,
        spec: LinkSpec,
        prefetch: int,
        decode: Callable[[bytes], Any],
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
        # A drain whose caller gave up before the peer answered (engine thread only).
        self._drain_abandoned = False
        self.open_deliveries: set[InboundDelivery] = set()
        # Set by the consumer: called on the engine thread when the transport is lost.
        self.on_interrupted: Callable[[JMSException], None] | None = None
        # From the broker profile (link_profile): whether modified and drain may be used.
        self.modified_outcome = bool(spec.extra.get("modified_outcome", True))
        self.drain_supported = bool(spec.extra.get("drain", True))

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
        super()._on_remote_open()

    def _on_flow(self) -> None:
        if self._drain is not None and self.link.credit == 0:
            self._end_drain()

    def _end_drain(self) -> None:
        """The peer answered the drain (flow with no credit left, or transfers using it up)."""
        drain, self._drain = self._drain, None
        if self._drain_abandoned:
            # The caller stopped waiting (receive timeout): nobody restores the window, and a
            # link left without credit would starve every later receive.
            self._drain_abandoned = False
            self._do_restore_credit()
        if drain is not None:
            drain.succeed(None)

    def _on_delivery(self, delivery: Delivery) -> None:
        if not delivery.readable or delivery.partial:
            return
        link = self.link
        payload = link.recv(delivery.pending)
        link.advance()
        self._pulling = False
        if delivery.aborted:
            delivery.settle()
            return
        try:
            message = self._decode(payload)
        except Exception as exc:  # an undecodable transfer must never stop the engine
            log.warning(
                "could not decode a message on %r, settling it modified(delivery-failed, "
                "undeliverable-here): %s",
                self.spec.address,
                exc,
            )
            delivery.local.failed = True
            delivery.local.undeliverable = True
            delivery.update(Delivery.MODIFIED)
            delivery.settle()
            self._return_credit_now(1)
            return
        inbound = InboundDelivery(
            delivery, message, self, False, time.monotonic(), self.connection.epoch
        )
        self.open_deliveries.add(inbound)
        self._on_message(inbound)
        # A drain also ends when the transfers use up the credit: the peer then owes no flow
        # frame, so waiting for one would wait for the drain timeout.
        if self._drain is not None and link.credit == 0:
            self._end_drain()

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
            if not self.closed and self.failure is None and self.link.state & Link.LOCAL_ACTIVE:
                self.link.flow(amount)

        try:
            self.connection.submit(do_flow)
        except JMSException:
            pass

    def settle(
        self,
        inbound: InboundDelivery,
        outcome: str,
        failed: bool = True,
        undeliverable: bool = False,
        txn_id: bytes | None = None,
    ) -> None:
        """Settle a delivery with accepted / released / rejected / modified (any thread)."""

        def do_settle() -> None:
            _settle_now(inbound, outcome, failed, undeliverable, txn_id)

        try:
            self.connection.submit(do_settle)
        except JMSException:
            pass

    def settle_later(
        self,
        inbound: InboundDelivery,
        delay_ms: int,
        outcome: str,
        failed: bool = True,
        undeliverable: bool = False,
    ) -> None:
        """Settle after a delay (a client-side redelivery delay on top of the broker's)."""
        self.run_later(delay_ms, lambda: _settle_now(inbound, outcome, failed, undeliverable))

    def run_later(self, delay_ms: int, work: Callable[[], None]) -> None:
        """Run work on the engine thread after ``delay_ms`` (0: as soon as possible)."""
        engine = self.connection.engine

        def schedule() -> None:
            engine.schedule(max(0, delay_ms) / 1000.0, work)

        try:
            self.connection.submit(schedule)
        except JMSException:
            pass

    def settle_many(
        self,
        inbounds: list[InboundDelivery],
        outcome: str,
        failed: bool = True,
        undeliverable: bool = False,
        txn_id: bytes | None = None,
    ) -> None:
        if not inbounds:
            return

        def do_settle() -> None:
            for inbound in inbounds:
                _settle_now(inbound, outcome, failed, undeliverable, txn_id)

        try:
            self.connection.submit(do_settle)
        except JMSException:
            pass

    def pull(self, timeout_ms: int | None) -> None:
        """Grant one credit (prefetch 0 consumers) and, with a timeout, drain after it."""

        def do_flow() -> None:
            self._pulling = True
            if self.link.credit <= 0:
                self.link.flow(1)

        self.connection.submit(do_flow)

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
                want -= self._credit_to_return
            # Messages already in the local buffer still count against the window.
            want -= self.buffered_count()
            if want > 0:
                link.flow(want)

    def stop_credit(self, timeout_ms: int) -> None:
        """Drain the link so the peer sends nothing more (used by close and rollback)."""
        try:
            self.drain(timeout_ms, pull_one=False)
        except JMSException as exc:
            log.debug("drain before close failed: %s", exc)

    def _on_interrupted(self, error: JMSException) -> None:
        """Engine thread: the transport is lost. Unsettled deliveries go back to the broker
        with it (it redelivers them); a drain in progress has nothing left to wait for."""
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
        super()._on_failed(error)
        if self._drain is not None:
            self._drain.fail(error)
            self._drain = None
        try:
            self._on_closed(error)
        except Exception:
            log.exception("consumer close callback raised")


def _settle_now(
    inbound: InboundDelivery,
    outcome: str,
    failed: bool,
    undeliverable: bool,
    txn_id: bytes | None = None,
) -> None:
    if inbound.settled:
        return
    inbound.settled = True
    receiver = inbound.receiver
    receiver.open_deliveries.discard(inbound)
    delivery = inbound.delivery
    if receiver.failure is not None or inbound.epoch != receiver.connection.epoch:
        # Failed link, or a delivery of a transport failover has replaced: nothing to settle
        # (the broker puts the message back and redelivers it).
        return
    if outcome == "modified" and not inbound.receiver.modified_outcome:
        # The broker does not know the modified outcome: the nearest it understands.
        outcome = "rejected" if undeliverable else "released"
    if txn_id is not None and outcome == "accepted":
        # transactional-state(txn-id, accepted): the acknowledgement takes effect at commit.
        delivery.local.data = cast(Any, [txn_id, Described(ulong(ACCEPTED_CODE), [])])
        delivery.update(TRANSACTIONAL_STATE)
    elif outcome == "accepted":
        delivery.update(Delivery.ACCEPTED)
    elif outcome == "released":
        delivery.update(Delivery.RELEASED)
    elif outcome == "rejected":
        delivery.update(Delivery.REJECTED)
    else:
        delivery.local.failed = failed
        delivery.local.undeliverable = undeliverable
        delivery.update(Delivery.MODIFIED)
    delivery.settle()


def _control_payload(descriptor: symbol, fields: list[Any]) -> bytes:
    """An amqp-value section holding a transaction control (declare / discharge)."""
    data = Data()
    data.put_described()
    data.enter()
    data.put_ulong(ulong(0x77))
    data.put_described()
    data.enter()
    data.put_symbol(descriptor)
    data.put_list()
    data.enter()
    for field_value in fields:
        data.put_object(field_value)
    data.exit()
    data.exit()
    data.exit()
    return bytes(data.encode())


class AmqpCoordinator(_LinkBase):
    """The session's link to the broker's transaction coordinator (AMQP 1.0 part 4)."""

    def __init__(self, session: AmqpSession) -> None:
        super().__init__(session, LinkSpec(name=f"jmspy:coordinator:{id(session)}", address=None))
        self._pending: dict[Any, tuple[str, Completion[Any]]] = {}
        self._tags = itertools.count(1)

    def _remote_terminus(self) -> Any:
        return self.link.remote_target

    def _on_remote_open(self) -> None:
        if self._attach is not None and not self._attach.done():
            if self.link.remote_target is None:
                return
            self._attach.succeed(None)

    def _do_attach(self, completion: Completion[None]) -> None:
        self._attach = completion
        link = self.session._proton.sender(self.spec.name)
        self._register(link)
        link.target.type = Terminus.COORDINATOR
        _put_symbols(link.target.capabilities, (LOCAL_TRANSACTIONS,))
        _put_symbols(link.source.outcomes, ("amqp:accepted:list", "amqp:rejected:list"))
        link.snd_settle_mode = Link.SND_UNSETTLED
        link.rcv_settle_mode = Link.RCV_FIRST
        link.open()

    def _control(
        self, kind: str, payload: bytes, completion: Completion[Any], epoch: int | None = None
    ) -> None:
        if self.failure is not None:
            completion.fail(self.failure)
            return
        if epoch is not None and epoch != self.connection.epoch:
            # The transaction belonged to a transport that failover replaced: the broker
            # dropped it with that connection, and nothing is sent.
            completion.fail(
                TransactionRolledBackException(
                    "the connection to the broker was interrupted during the transaction; the "
                    "broker rolled it back"
                )
            )
            return
        tag = f"txn-{next(self._tags)}".encode()
        delivery = self.link.delivery(tag)
        self.link.stream(payload)
        self.link.advance()
        self._pending[delivery.tag] = (kind, completion)

    def declare(self) -> bytes:
        def work(completion: Completion[bytes]) -> None:
            self._control("declare", _control_payload(DECLARE, []), completion)

        txn_id: bytes = self.connection.run(work, "declaring a transaction")
        return txn_id

    def discharge(
        self,
        txn_id: bytes,
        fail: bool,
        epoch: int | None = None,
        timeout_ms: int | None = None,
    ) -> None:
        """Commit (``fail=False``) or roll back. Raises TransactionRolledBackException when the
        broker refused or certainly dropped the transaction, TransactionInDoubtException when
        the discharge was sent and its outcome never came back."""

        def work(completion: Completion[None]) -> None:
            self._control(
                "discharge", _control_payload(DISCHARGE, [txn_id, fail]), completion, epoch
            )

        what = "rolling back" if fail else "committing the transaction"
        failure = self.connection.failure
        if failure is not None:
            raise TransactionRolledBackException(
                f"{what}: the connection has failed ({failure.reason}); the broker rolled the "
                "transaction back",
                linked=failure,
            )
        try:
            self.connection.run(work, what, timeout_ms)
        except (TransactionRolledBackException, TransactionInDoubtException):
            raise
        except JMSException as exc:
            raise TransactionInDoubtException(
                f"{what}: no outcome came back from the broker ({exc.reason}); the transaction "
                "may or may not have been " + ("rolled back" if fail else "committed"),
                linked=exc,
            ) from exc

    def _on_flow(self) -> None:
        pass

    def _on_delivery(self, delivery: Delivery) -> None:
        state = delivery.remote_state
        if not state:
            return
        pending = self._pending.pop(delivery.tag, None)
        delivery.settle()
        if pending is None:
            return
        kind, completion = pending
        if state == DECLARED_CODE and kind == "declare":
            data = delivery.remote.data
            completion.succeed(bytes(data[0]) if data else b"")
        elif state == Delivery.ACCEPTED and kind == "discharge":
            completion.succeed(None)
        elif state == Delivery.REJECTED:
            default = TransactionRolledBackException if kind == "discharge" else JMSException
            completion.fail(
                error_for_condition(
                    delivery.remote.condition, default, f"transaction {kind} refused"
                )
            )
        else:
            completion.fail(JMSException(f"unexpected outcome {state} for transaction {kind}"))

    def _on_interrupted(self, error: JMSException) -> None:
        super()._on_interrupted(error)
        self._fail_pending(error)

    def _on_failed(self, error: JMSException) -> None:
        super()._on_failed(error)
        self._fail_pending(error)

    def _fail_pending(self, error: JMSException) -> None:
        """The transport is gone with controls in flight: a discharge's outcome is unknown; a
        declare is simply lost (the session declares again when it next needs one)."""
        for kind, completion in self._pending.values():
            if kind == "discharge":
                completion.fail(
                    TransactionInDoubtException(
                        "the connection to the broker was lost while the transaction was being "
                        f"discharged: its outcome is unknown ({error.reason})",
                        linked=error,
                    )
                )
            else:
                completion.fail(error)
        self._pending.clear()
