"""The AMQP provider: connection, sessions and links over the engine thread.

The JMS layer (``jmspy.connection`` and friends) talks to this module only through
:class:`AmqpConnection`, :class:`AmqpSession`, :class:`AmqpSender` and :class:`AmqpReceiver`.
Their public methods may be called from any thread; everything that touches proton runs on
the engine thread (methods whose names start with ``_on`` or ``_do``).
"""

from __future__ import annotations

import itertools
import logging
import platform
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from cproton import pn_delivery_link
from proton import SSL as ProtonSSL
from proton import (
    Condition,
    Connection,
    Data,
    Delivery,
    Described,
    Event,
    Link,
    SSLDomain,
    Terminus,
    Transport,
    symbol,
    ulong,
)
from proton._data import Array

from .. import __version__
from .._limits import MIN_REMOTE_IDLE_TIMEOUT_MS
from ..errors import (
    IllegalStateException,
    InvalidClientIDException,
    InvalidDestinationException,
    JMSException,
    JMSSecurityException,
    ResourceAllocationException,
    TransactionRolledBackException,
)
from ..options import ConnectionOptions, Endpoint
from .attach_amender import Amendment
from .engine import Completion, Engine, EngineStopped

log = logging.getLogger("jmspy.provider")

# Connection capabilities (Qpid JMS asks for the same four).
SOLE_CONNECTION = "sole-connection-for-container"
DELAYED_DELIVERY = "DELAYED_DELIVERY"
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


class AmqpConnection:
    """One AMQP connection and its engine thread."""

    def __init__(
        self,
        endpoint: Endpoint,
        options: ConnectionOptions,
        container_id: str,
        on_failure: Callable[[JMSException], None],
    ) -> None:
        self.endpoint = endpoint
        self.options = options
        self.container_id = container_id
        self._on_failure = on_failure
        self.remote_offered_capabilities: set[str] = set()
        self.remote_properties: dict[str, Any] = {}
        self.remote_container_id: str | None = None
        self.failure: JMSException | None = None
        self._closing = False
        self._open_completion: Completion[None] = Completion()
        self._close_completion: Completion[None] = Completion()
        self._sessions: set[AmqpSession] = set()
        self._link_seq = itertools.count(1)
        self._lock = threading.Lock()
        conn = Connection()
        conn.container = container_id
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
        sasl = transport.sasl()
        sasl.allow_insecure_mechs = True
        if options.username is not None:
            conn.user = options.username
            if options.password is not None:
                conn.password = options.password.get_secret_value()
        mechanisms = options.sasl_mechanisms or ("PLAIN" if options.username else "ANONYMOUS")
        sasl.allowed_mechs(mechanisms.replace(",", " "))
        if endpoint.tls:
            self._ssl = ProtonSSL(transport, self._ssl_domain())
            self._ssl.peer_hostname = endpoint.host
        transport.bind(conn)
        self._proton = conn
        self.engine = Engine(
            host=endpoint.host,
            port=endpoint.port,
            connection=conn,
            transport=transport,
            handler=self,
            connect_timeout_s=options.connect_timeout / 1000.0,
            tcp_no_delay=options.tcp_no_delay,
            tcp_keep_alive=options.tcp_keep_alive,
            send_buffer_size=options.send_buffer_size,
            receive_buffer_size=options.receive_buffer_size,
            name=f"jmspy-engine-{endpoint.host}:{endpoint.port}",
            tls=endpoint.tls,
        )
        if options.trace_frames:
            self.engine.enable_frame_trace()

    def _ssl_domain(self) -> SSLDomain:
        opts = self.options
        domain = SSLDomain(SSLDomain.MODE_CLIENT)
        if opts.trust_store_location:
            domain.set_trusted_ca_db(opts.trust_store_location)
        if opts.key_store_location:
            password = (
                opts.key_store_password.get_secret_value() if opts.key_store_password else None
            )
            domain.set_credentials(opts.key_store_location, opts.key_store_location, password)
        if opts.trust_all:
            domain.set_peer_authentication(SSLDomain.ANONYMOUS_PEER)
        elif opts.verify_host:
            domain.set_peer_authentication(SSLDomain.VERIFY_PEER_NAME, opts.trust_store_location)
        else:
            domain.set_peer_authentication(SSLDomain.VERIFY_PEER, opts.trust_store_location)
        return domain

    # ---- API side -------------------------------------------------------------------------

    def timeout_s(self, which: str) -> float:
        return float(getattr(self.options, which)) / 1000.0

    def open(self) -> None:
        """Connect, authenticate and exchange open frames; raise the mapped error on failure."""
        # Queue the open before starting the thread: a connect that fails at once (refused)
        # stops the engine, and a later submit would raise EngineStopped instead of the reason.
        self.engine.submit(self._proton.open)
        self.engine.start()
        timeout = self.timeout_s("connect_timeout")
        try:
            self._open_completion.wait(
                timeout,
                lambda: JMSException(
                    f"could not connect to {self.endpoint.display()} within "
                    f"{self.options.connect_timeout} ms (jms.connectTimeout)"
                ),
            )
        except BaseException:
            self.engine.stop()
            self.engine.join(2.0)
            raise

    def check_usable(self) -> None:
        if self.failure is not None:
            raise IllegalStateException(
                f"the connection to {self.endpoint.display()} has failed: {self.failure}",
                linked=self.failure,
            )

    def run(
        self, work: Callable[[Completion[Any]], None], what: str, timeout_ms: int | None = None
    ) -> Any:
        """Run work on the engine thread and wait, mapping engine death to a JMSException."""
        self.check_usable()
        timeout_s = (timeout_ms or self.options.request_timeout) / 1000.0
        try:
            return self.engine.call(work, timeout_s, what, JMSException)
        except EngineStopped as exc:
            raise self._failure_or(exc) from None

    def submit(self, work: Callable[[], None]) -> None:
        try:
            self.engine.submit(work)
        except EngineStopped as exc:
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

    def close(self) -> None:
        """Close the connection; returns when the peer answered or the close timeout passed."""
        if self._closing:
            return
        self._closing = True
        if not self.engine.running:
            return

        def do_close() -> None:
            self._proton.close()

        try:
            self.engine.submit(do_close)
            self._close_completion.wait(self.timeout_s("close_timeout"), lambda: TimeoutError())
        except (EngineStopped, TimeoutError, JMSException):
            pass
        finally:
            self.engine.stop()
            self.engine.join(self.timeout_s("close_timeout"))

    # ---- engine thread ------------------------------------------------------------------

    def on_delivery_fast(self, delivery: Delivery) -> None:
        """The engine's shortcut for delivery events (see Engine._dispatch_events)."""
        ctx = _context_of(Link.wrap(pn_delivery_link(delivery._impl)))
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
        """Fail the connection once: every waiter and every open resource hears about it."""
        if self._closing:
            self._close_completion.succeed(None)
            self._open_completion.fail(error)
            self._fail_children(error)
            return
        if self.failure is not None:
            return
        if not self._open_completion.done():
            self._open_completion.fail(error)
            self.failure = error
            self._fail_children(error)
            return
        self.failure = error
        log.warning("connection to %s failed: %s", self.endpoint.display(), error.reason)
        self._fail_children(error)
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
        elif isinstance(error, OSError):
            jms_error = JMSException(self._io_failure_text(error), linked=error)
        else:
            jms_error = JMSException(
                f"connection to {self.endpoint.display()} ended: {error}", linked=error
            )
        self._fail(jms_error)
        self._close_completion.succeed(None)


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

    def create_sender(self, spec: LinkSpec, max_in_flight: int) -> AmqpSender:
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

        try:
            self.connection.run(
                do_close,
                f"closing link to {self.spec.address!r}",
                self.connection.options.close_timeout,
            )
        except JMSException as exc:
            log.debug("link close: %s", exc)

    def _before_close(self) -> None:
        pass

    def _on_delivery(self, delivery: Delivery) -> None:
        pass

    def _on_flow(self) -> None:
        pass


class AmqpSender(_LinkBase):
    """A producer link. Sends are queued in the outbox and written as credit allows."""

    def __init__(self, session: AmqpSession, spec: LinkSpec, max_in_flight: int) -> None:
        super().__init__(session, spec)
        self._outbox: list[tuple[bytes, Completion[None] | None, bytes | None]] = []
        self._outbox_lock = threading.Lock()
        self._flush_scheduled = False
        self._tags = itertools.count(1)
        self._unsettled: dict[Any, Completion[None] | None] = {}
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
    ) -> None:
        """Queue a transfer. A sync send waits for the peer's outcome; an async one does not
        but is bounded by the in-flight limit, so a slow peer slows the producer down."""
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
        with self._outbox_lock:
            self._outbox.append((payload, completion, txn_id))
            schedule = not self._flush_scheduled
            self._flush_scheduled = True
        if schedule:
            try:
                self.connection.submit(self._do_flush)
            except JMSException:
                self._in_flight.release()
                raise
        if sync and completion is not None:
            try:
                completion.wait(
                    timeout_s,
                    lambda: JMSException(
                        f"send to {self.spec.address!r} was not settled by the peer within "
                        f"{timeout_ms} ms (jms.sendTimeout)"
                    ),
                )
            except EngineStopped as exc:
                raise self.connection._failure_or(exc) from None

    def _do_flush(self) -> None:
        with self._outbox_lock:
            self._flush_scheduled = False
            if not self._outbox:
                return
            outbox = self._outbox
            self._outbox = []
        link = self.link
        if self.failure is not None:
            for _, completion, _txn in outbox:
                self._in_flight.release()
                if completion is not None:
                    completion.fail(self.failure)
            return
        remaining = []
        for index, (payload, completion, txn_id) in enumerate(outbox):
            if link.credit <= 0:
                remaining = outbox[index:]
                break
            tag = str(next(self._tags)).encode()
            delivery = link.delivery(tag)
            if txn_id is not None:
                # The transfer carries transactional-state(txn-id): it counts at commit only.
                delivery.local.data = [txn_id]
                delivery.update(TRANSACTIONAL_STATE)
            link.stream(payload)
            link.advance()
            self._unsettled[delivery.tag] = completion
        if remaining:
            with self._outbox_lock:
                self._outbox[:0] = remaining

    def _on_flow(self) -> None:
        if self._outbox and self.link.credit > 0:
            self._do_flush()

    def _on_delivery(self, delivery: Delivery) -> None:
        if not delivery.updated and not delivery.remote_state:
            return
        state = delivery.remote_state
        if state == 0 and not delivery.settled:
            return
        completion = self._unsettled.pop(delivery.tag, None)
        delivery.settle()
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
        for completion in self._unsettled.values():
            self._in_flight.release()
            if completion is not None:
                completion.fail(error)
        self._unsettled.clear()
        self._do_flush()

    def wait_settled(self, timeout_s: float) -> None:
        """Wait until every queued send is settled (used by close)."""
        done: Completion[None] = Completion()

        def check() -> None:
            if (not self._unsettled and not self._outbox) or self.failure is not None:
                done.succeed(None)
            else:
                self.connection.engine.schedule(0.005, check)

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
        self.open_deliveries: set[InboundDelivery] = set()
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

    @property
    def remote_address(self) -> str | None:
        source = self.link.remote_source
        return source.address if source is not None else None

    def _on_remote_open(self) -> None:
        super()._on_remote_open()

    def _on_flow(self) -> None:
        drain = self._drain
        if drain is not None and self.link.credit == 0:
            self._drain = None
            drain.succeed(None)

    def _on_delivery(self, delivery: Delivery) -> None:
        if not delivery.readable or delivery.partial:
            return
        link = self.link
        payload = link.recv(delivery.pending)
        link.advance()
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
        inbound = InboundDelivery(delivery, message, self, False, time.monotonic())
        self.open_deliveries.add(inbound)
        self._on_message(inbound)
        # A drain also ends when the transfers use up the credit: the peer then owes no flow
        # frame, so waiting for one would wait for the drain timeout.
        if self._drain is not None and link.credit == 0:
            drain, self._drain = self._drain, None
            drain.succeed(None)

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

        def do_flow() -> None:
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
            if self.link.credit <= 0:
                self.link.flow(1)

        self.connection.submit(do_flow)

    def drain(self, timeout_ms: int, pull_one: bool = True) -> None:
        if not self.drain_supported:
            return  # the broker cannot drain: only what already arrived counts
        """Ask the peer to use up or return the outstanding credit now, and wait for it.

        Used by receiveNoWait/receive(timeout) so that messages sitting on the broker are
        fetched before the call returns null, then the credit window is restored."""

        def do_drain(completion: Completion[None]) -> None:
            link = self.link
            if self.failure is not None:
                completion.fail(self.failure)
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

        self.connection.run(do_drain, f"draining consumer link {self.spec.address!r}", timeout_ms)

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
        def do_flow() -> None:
            link = self.link
            if self.prefetch > 0 and not self.closed and link.state & Link.LOCAL_ACTIVE:
                want = self.prefetch - link.credit - link.queued
                with self._credit_lock:
                    want -= self._credit_to_return
                # Messages already in the local buffer still count against the window.
                want -= self.buffered_count()
                if want > 0:
                    link.flow(want)

        try:
            self.connection.submit(do_flow)
        except JMSException:
            pass

    buffered_count: Callable[[], int] = staticmethod(lambda: 0)

    def stop_credit(self, timeout_ms: int) -> None:
        """Drain the link so the peer sends nothing more (used by close and rollback)."""
        try:
            self.drain(timeout_ms, pull_one=False)
        except JMSException as exc:
            log.debug("drain before close failed: %s", exc)

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
    inbound.receiver.open_deliveries.discard(inbound)
    delivery = inbound.delivery
    if inbound.receiver.failure is not None:
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

    def _control(self, kind: str, payload: bytes, completion: Completion[Any]) -> None:
        if self.failure is not None:
            completion.fail(self.failure)
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

    def discharge(self, txn_id: bytes, fail: bool) -> None:
        def work(completion: Completion[None]) -> None:
            self._control("discharge", _control_payload(DISCHARGE, [txn_id, fail]), completion)

        self.connection.run(work, "rolling back" if fail else "committing the transaction")

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

    def _on_failed(self, error: JMSException) -> None:
        super()._on_failed(error)
        for _kind, completion in self._pending.values():
            completion.fail(error)
        self._pending.clear()
