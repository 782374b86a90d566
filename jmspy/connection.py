"""ConnectionFactory, Connection and ConnectionMetaData (classic API)."""

from __future__ import annotations

import itertools
import logging
import threading
import uuid
from collections.abc import Callable
from typing import Any, overload

from ._amqp.provider import AmqpConnection, AmqpSender, LinkSpec
from ._modes import (  # noqa: F401 - DUPS_OK_ACKNOWLEDGE re-exported with the others
    ACKNOWLEDGE_MODES,
    ARTEMIS_PRE_ACKNOWLEDGE,
    AUTO_ACKNOWLEDGE,
    CLIENT_ACKNOWLEDGE,
    DUPS_OK_ACKNOWLEDGE,
    INDIVIDUAL_ACKNOWLEDGE,
    NO_ACKNOWLEDGE,
    SESSION_TRANSACTED,
    VALID_MODES_TEXT,
    is_session_mode,
)
from ._ports import ConnectionPort, SessionHooks
from ._provider import Provider, ProviderSession
from ._twins.connection import ConnectionMetaDataTwins, ConnectionTwins
from ._version import __version__
from ._wire import Wire
from .adapters import BrokerProfile, choose_profile
from .connection_listeners import (
    CLOSED_METHODS,
    LISTENER_METHODS,
    ConnectionListener,
    ExceptionListener,
    ListenerThread,
)
from .destination import Destination, TemporaryQueue, TemporaryTopic
from .enumeration import Enumeration
from .errors import (
    IllegalStateException,
    InvalidClientIDException,
    JMSException,
)
from .failover_options import FailoverOptions
from .options import ConnectionOptions, Endpoint
from .session import Session
from .subscription_tracker import SubscriptionTracker

__all__ = [
    "ACKNOWLEDGE_MODES",
    "AUTO_ACKNOWLEDGE",
    "CLIENT_ACKNOWLEDGE",
    "DUPS_OK_ACKNOWLEDGE",
    "INDIVIDUAL_ACKNOWLEDGE",
    "ARTEMIS_PRE_ACKNOWLEDGE",
    "NO_ACKNOWLEDGE",
    "SESSION_TRANSACTED",
    "ExceptionListener",
    "ConnectionListener",
    "ConnectionMetaData",
    "Connection",
]


log = logging.getLogger("jmspy.connection")


_connection_seq = itertools.count(1)


class ConnectionMetaData(ConnectionMetaDataTwins):
    """What the client and the broker are (``Connection.getMetaData()``)."""

    JMSX_PROPERTY_NAMES = ("JMSXUserID", "JMSXGroupID", "JMSXGroupSeq", "JMSXDeliveryCount")

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def getJMSVersion(self) -> str:
        """The JMS version implemented: ``"2.0"``."""
        return "2.0"

    def getJMSMajorVersion(self) -> int:
        """The JMS major version: 2."""
        return 2

    def getJMSMinorVersion(self) -> int:
        """The JMS minor version: 0."""
        return 0

    def getJMSProviderName(self) -> str:
        """The provider name: ``"jmspy"``."""
        return "jmspy"

    def getProviderVersion(self) -> str:
        """The jmspy version string."""
        return __version__

    def getProviderMajorVersion(self) -> int:
        """The major part of the jmspy version."""
        return int(__version__.split(".")[0])

    def getProviderMinorVersion(self) -> int:
        """The minor part of the jmspy version."""
        return int(__version__.split(".")[1])

    def getJMSXPropertyNames(self) -> Enumeration[str]:
        """The JMSX properties jmspy supports: JMSXUserID, JMSXGroupID, JMSXGroupSeq and
        JMSXDeliveryCount, as a list that is also a Java Enumeration."""
        return Enumeration(self.JMSX_PROPERTY_NAMES)

    # jmspy additions: what the broker said about itself in its open frame.
    def getBrokerProduct(self) -> str | None:
        """jmspy extension: the ``product`` the broker named in its open frame, or None."""
        props = self._connection.wire.remote_properties()
        product = props.get("product")
        return str(product) if product is not None else None

    def getBrokerVersion(self) -> str | None:
        """jmspy extension: the ``version`` the broker named in its open frame, or None."""
        version = self._connection.wire.remote_properties().get("version")
        return str(version) if version is not None else None

    def getOfferedCapabilities(self) -> frozenset[str]:
        """jmspy extension: the capabilities the broker offered in its open frame."""
        return self._connection.wire.offered_capabilities()

    def getAdapter(self) -> str:
        """The name of the broker profile in use (see jmspy.adapters)."""
        name: str = self._connection.adapter.name
        return name


class Connection(ConnectionTwins):
    """A JMS connection: one AMQP connection with its engine thread.

    Created stopped. The AMQP open is sent when the connection is first used (or at once when a
    client id was configured), because the client id travels in the open frame and
    ``setClientID`` may still be called right after creation.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        options: ConnectionOptions,
        servers: list[tuple[Endpoint, ConnectionOptions]] | None = None,
        failover: FailoverOptions | None = None,
    ) -> None:
        self._endpoint = endpoint
        self._options = options
        self._servers = servers or [(endpoint, options)]
        self._failover = failover
        self._connection_listener: Any = None
        self._event_lock = threading.Lock()
        self._client_id: str | None = options.client_id
        self._client_id_fixed = options.client_id is not None
        self._connection_id = (
            f"{options.connection_id_prefix}{uuid.uuid4()}:{next(_connection_seq)}"
        )
        self._amqp: Provider | None = None
        self._adapter: BrokerProfile | None = None
        self._open_lock = threading.RLock()
        self._state = threading.Condition()
        self._started = False
        self._closed = False
        self._closing = False
        self._used = False
        self._exception_listener: ExceptionListener | Callable[[JMSException], None] | None = None
        # ExceptionListener calls are serialized per connection (JMS 2.0 section 6.1.7), and
        # in order; ConnectionListener calls for engine-thread events have a thread of their
        # own (a slow ExceptionListener does not hold them up).
        self._exception_calls = ListenerThread("jmspy-exception-listener")
        self._listener_calls = ListenerThread("jmspy-connection-listener")
        self._sessions: list[Session] = []
        self._session_seq = itertools.count(1)
        self._dispatch_threads: set[threading.Thread] = set()
        self._wire: Wire | None = None
        # Temporary destinations: each one is a dynamic node held by a link of an internal
        # session; closing the link deletes the node.
        self._internal_session: ProviderSession | None = None
        self._temporaries: dict[Destination, AmqpSender] = {}
        self._temp_lock = threading.Lock()
        # Numbers the temporaries' link names and never goes back (as Qpid JMS numbers them):
        # brokers that steal a link by name (Qpid Broker-J) would detach a live temporary's
        # link, and delete its node, for a new one that reused its name.
        self._temporary_seq = itertools.count(1)
        self._subscriptions = SubscriptionTracker()
        # Each session's hooks (registered by the session as it is made).
        self._session_hooks: dict[Session, SessionHooks] = {}
        # What this connection's sessions may use of it.
        self._port = ConnectionPort(
            connection_id=self._connection_id,
            check_closed=self._check_closed,
            started=lambda: self._started,
            wait_started=self._wait_started,
            create_temporary=self._create_temporary,
            client_id_fixed=lambda: self._client_id_fixed,
            subscription_link_name=lambda name, durable, shared: self._subscriptions.link_name(
                name, durable, shared, global_allowed=not self._client_id_fixed
            ),
            subscription_opened=self._subscriptions.opened,
            subscription_closed=self._subscriptions.closed,
            active_subscriptions=self._subscriptions.active,
            session_opened=self._session_hooks.__setitem__,
            session_closed=self._session_closed,
            notify_exception_listener=self._notify_exception_listener,
            notify_closed_by_broker=self._notify_closed_by_broker,
            on_async_send_failure=self._on_async_send_failure,
        )

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("started" if self._started else "stopped")
        where = self._endpoint.display()
        if self._amqp is not None:
            where = self._amqp.endpoint.display()
        if self._failover is not None:
            where = f"failover {where}"
        return f"Connection({where!r}, client_id={self._client_id!r}, {state})"

    # ---- internal --------------------------------------------------------------------------

    @property
    def options(self) -> ConnectionOptions:
        """The connection's options.

        The ``jms.*``, ``amqp.*`` and ``transport.*`` settings from the URL and the factory.
        """
        return self._options

    def _check_closed(self) -> None:
        if self._closed or self._closing:
            raise IllegalStateException("The Connection is closed")

    def connect(self) -> None:
        """jmspy extension (Qpid JMS's ``JmsConnection.connect``): open the AMQP connection now
        rather than on first use, so that bad credentials or a duplicate client id fail here."""
        self._ensure_open()

    def _ensure_open(self) -> Provider:
        """Open the AMQP connection on first use; return it."""
        if self._amqp is not None:
            self._amqp.check_usable()
            return self._amqp
        with self._open_lock:
            if self._amqp is not None:
                return self._amqp
            self._check_closed()
            container_id = self._client_id or (f"{self._options.client_id_prefix}{uuid.uuid4()}:1")
            amqp = AmqpConnection(
                self._endpoint,
                self._options,
                container_id,
                self._on_connection_failure,
                servers=self._servers,
                failover=self._failover,
                on_event=self._on_connection_event,
            )
            amqp.open(announce=False)
            self._adapter = choose_profile(
                self._options.adapter, amqp.remote_properties, amqp.remote_offered_capabilities
            )
            self._wire = Wire(amqp, self._adapter, self._options)
            self._amqp = amqp
            self._used = True
            if self._closing or self._closed:
                # close() ran while the connection was opening and found nothing to close
                # (it reads _amqp after setting _closing, and _amqp is set above): the
                # connection just opened would otherwise outlive its Connection.
                amqp.close()
                raise IllegalStateException("The Connection was closed while it was opening")
        # Outside _open_lock: a ConnectionListener told of the open may use the connection
        # (start it, create a session) from onConnectionEstablished.
        amqp.announce_open()
        return amqp

    @property
    def wire(self) -> Wire:
        """The wire questions of this connection (addresses, decoder, delayed delivery),
        answered in one place for all its sessions, producers, consumers and browsers."""
        self._ensure_open()
        assert self._wire is not None
        return self._wire

    @property
    def adapter(self) -> BrokerProfile:
        """The broker profile in use (configured with jmspy.adapter, or detected at open)."""
        self._ensure_open()
        assert self._adapter is not None
        return self._adapter

    def _on_connection_failure(self, error: JMSException) -> None:
        """Engine thread: the connection failed. Wake every waiter, then tell the listener."""
        for hooks in list(self._session_hooks.values()):
            hooks.on_connection_failed(error)
        with self._state:
            self._state.notify_all()
        self._notify_exception_listener(error)
        if self._failover is None:
            # A failover connection reports its end itself, when it gives up reconnecting.
            self._call_listener_elsewhere(LISTENER_METHODS["failure"], error)

    def _on_connection_event(self, kind: str, arg: Any) -> None:
        """A connection event for the ConnectionListener (on a reconnect thread or the thread
        that opened the connection, never the engine thread)."""
        if kind == "restored":
            # Temporary destinations live and die with one connection to the broker.
            with self._temp_lock:
                lost, self._temporaries = list(self._temporaries), {}
            for destination in lost:
                # Reach-in kept: the connection created these temporary destinations and is
                # the only one that knows they died with the broker connection; a public
                # setter would let applications "undelete" one.
                destination._deleted = True  # type: ignore[attr-defined]
        listener = self._connection_listener
        method = getattr(listener, LISTENER_METHODS[kind], None) if listener else None
        if method is None:
            return
        with self._event_lock:
            try:
                method(arg)
            except Exception:
                log.exception("ConnectionListener.%s raised", LISTENER_METHODS[kind])

    def setConnectionListener(self, listener: ConnectionListener | Any | None) -> None:
        """jmspy extension (Qpid JMS's ``JmsConnection.addConnectionListener``): receive
        connection events, failover interruptions and restorations among them."""
        self._check_closed()
        self._connection_listener = listener

    def getConnectionListener(self) -> ConnectionListener | Any | None:
        """The listener set with :meth:`setConnectionListener`, or None."""
        return self._connection_listener

    def getConnectedURI(self) -> str | None:
        """The server this connection is connected to now (``amqp://host:port``), or None
        while it is not connected."""
        amqp = self._amqp
        if amqp is None or amqp.interrupted or amqp.failure is not None:
            return None
        return amqp.endpoint.display()

    def isFailover(self) -> bool:
        """True when the connection reconnects (a ``failover:(...)`` URL)."""
        return self._failover is not None

    def _notify_exception_listener(self, error: JMSException) -> None:
        listener = self._exception_listener
        if listener is None:
            return
        method = listener.onException if hasattr(listener, "onException") else listener
        self._exception_calls.call("ExceptionListener", method, error)

    def _notify_closed_by_broker(self, kind: str, resource: Any, error: JMSException) -> None:
        """Engine thread: a consumer or producer ended for good while the connection lives on;
        its ConnectionListener method runs on a thread of its own, one event at a time."""
        if not self._closed:
            self._call_listener_elsewhere(CLOSED_METHODS[kind], resource, error)

    def _call_listener_elsewhere(self, name: str, *args: Any) -> None:
        """Call the ConnectionListener's method ``name`` (if it has one) on a thread of its
        own, one event at a time: for events seen on the engine thread, which must not wait
        for the application."""
        listener = self._connection_listener
        method = getattr(listener, name, None) if listener else None
        if method is None:
            return

        def notify() -> None:
            # The lock also orders these calls with the events that reconnect threads report.
            with self._event_lock:
                method(*args)

        self._listener_calls.call(f"ConnectionListener.{name}", notify)

    def _on_async_send_failure(self, error: JMSException) -> None:
        """An asynchronous send failed after send() returned: only the ExceptionListener can
        hear about it (JMS 2.0 section 6.1.7)."""
        self._notify_exception_listener(error)

    def _in_own_listener(self) -> bool:
        current = threading.current_thread()
        return any(h.is_dispatch_thread(current) for h in list(self._session_hooks.values()))

    def _in_own_completion_callback(self) -> bool:
        current = threading.current_thread()
        return any(h.is_completion_thread(current) for h in list(self._session_hooks.values()))

    def _wait_started(self, deadline_check: Callable[[], float | None]) -> bool:
        """Block while the connection is stopped. Returns False if it closed or time ran out."""
        with self._state:
            while not self._started and not self._closed:
                remaining = deadline_check()
                if remaining is not None and remaining <= 0:
                    return False
                self._state.wait(remaining if remaining is not None else 1.0)
            return not self._closed

    # ---- JMS API -------------------------------------------------------------------------

    def getClientID(self) -> str | None:
        """The client id: set with :meth:`setClientID` or ``jms.clientID``, else None.

        Raises IllegalStateException when the connection is closed.
        """
        self._check_closed()
        return self._client_id

    def setClientID(self, clientID: str) -> None:
        """Set the client id; allowed only right after the connection is created (rule JMS-4).

        The AMQP connection opens at once so the broker checks the id here.

        Args:
            clientID: The id, used as the AMQP container id.

        Raises:
            IllegalStateException: An id is already configured (JMS-5), or the connection was used
                or is open already (``jms.awaitClientID=false`` opens it at creation).
            InvalidClientIDException: The id is empty, or the broker refuses it as a duplicate
                (JMS-6).
        """
        self._check_closed()
        if self._client_id_fixed:
            raise IllegalStateException(
                f"the client id is already set to {self._client_id!r}; it can only be set once"
            )
        if self._used or self._amqp is not None:
            raise IllegalStateException(
                "setClientID must be called right after the connection is created, "
                "before any other use of it"
            )
        if clientID is None or not str(clientID).strip():
            raise InvalidClientIDException(f"invalid client id {clientID!r}: must not be empty")
        self._client_id = clientID
        self._client_id_fixed = True
        # The broker checks uniqueness when it sees the open frame: open now so a duplicate id
        # is reported here as InvalidClientIDException.
        self._ensure_open()

    def getMetaData(self) -> ConnectionMetaData:
        """What the client and the broker are, as :class:`ConnectionMetaData`."""
        self._check_closed()
        self._used = True
        return ConnectionMetaData(self)

    def getExceptionListener(self) -> ExceptionListener | Callable[[JMSException], None] | None:
        """The exception listener set with :meth:`setExceptionListener`, or None."""
        self._check_closed()
        return self._exception_listener

    def setExceptionListener(
        self, listener: ExceptionListener | Callable[[JMSException], None] | None
    ) -> None:
        """Set (or with None clear) the listener told of failures no call can report.

        It receives the connection failure and asynchronous send failures, one at a time, on a jmspy
        thread. An :class:`ExceptionListener` or a plain callable.
        """
        self._check_closed()
        self._used = True
        self._exception_listener = listener

    @overload
    def createSession(self) -> Session: ...
    @overload
    def createSession(self, sessionMode: int, /) -> Session: ...
    @overload
    def createSession(self, transacted: bool, acknowledgeMode: int, /) -> Session: ...

    def createSession(self, *args: Any) -> Session:
        """``createSession()``, ``createSession(sessionMode)`` or
        ``createSession(transacted, acknowledgeMode)`` as in JMS 2.0."""
        self._check_closed()
        if len(args) == 0:
            mode = AUTO_ACKNOWLEDGE
        elif len(args) == 1:
            mode = args[0]
            if isinstance(mode, bool):
                raise JMSException(
                    "createSession(transacted) needs an acknowledge mode too: "
                    "use createSession(sessionMode)"
                )
        elif len(args) == 2:
            transacted, ack = args
            mode = SESSION_TRANSACTED if transacted else ack
            if not transacted and ack == SESSION_TRANSACTED:
                raise JMSException("acknowledge mode SESSION_TRANSACTED (0) needs transacted=True")
        else:
            raise JMSException(f"createSession takes at most 2 arguments, got {len(args)}")
        if not is_session_mode(mode):
            raise JMSException(f"invalid session mode {mode!r}: {VALID_MODES_TEXT} [rule JMS-16]")
        amqp = self._ensure_open()
        session = Session(self, amqp, mode, next(self._session_seq), self._port)
        self._sessions.append(session)
        return session

    def start(self) -> None:
        """Start (or restart) delivery to this connection's consumers; idempotent (rule JMS-8).

        A connection is created stopped (JMS-2): receive() blocks and listeners wait until start().
        """
        self._check_closed()
        self._ensure_open()
        with self._state:
            self._started = True
            self._state.notify_all()
        for hooks in list(self._session_hooks.values()):
            hooks.on_connection_started()

    def stop(self) -> None:
        """Pause delivery to consumers; sending still works; idempotent (rule JMS-8).

        Returns when running listeners have returned. Raises IllegalStateException when called from
        a listener of this connection (JMS-9).
        """
        self._check_closed()
        if self._in_own_listener():
            raise IllegalStateException(
                "Illegal invocation from MessageListener callback: a listener must not stop "
                "its own connection"
            )
        self._ensure_open()
        with self._state:
            self._started = False
        # Returns only when running listeners have returned (JMS 2.0 section 6.1.5).
        for hooks in list(self._session_hooks.values()):
            hooks.wait_for_listener()

    def close(self) -> None:
        """Close the connection with every session, producer and consumer; idempotent (JMS-13).

        A blocked receive ends (JMS-11); nothing is acknowledged (JMS-12). The close is bounded by
        ``jms.closeTimeout``. Raises IllegalStateException when called from a message or completion
        listener of this connection (JMS-10).
        """
        if self._closed:
            return
        if self._in_own_listener():
            raise IllegalStateException(
                "Illegal invocation from MessageListener callback: a listener must not close "
                "its own connection"
            )
        if self._in_own_completion_callback():
            raise IllegalStateException(
                "Illegal invocation from CompletionListener callback: a completion listener "
                "must not close its own connection"
            )
        self._closing = True
        try:
            amqp = self._amqp
            if amqp is not None:
                # One jms.closeTimeout for everything below (see AmqpConnection.close_scope).
                with amqp.close_scope():
                    self._close_sessions()
                    amqp.close()
            else:
                self._close_sessions()
        finally:
            with self._state:
                self._closed = True
                self._started = False
                self._state.notify_all()

    def _close_sessions(self) -> None:
        # All sessions' consumers ask for their credit back before the first session's close
        # waits for an answer (one jms.closeTimeout for all, see Session.close).
        for hooks in list(self._session_hooks.values()):
            hooks.begin_stop_consumer_credit()
        for session in list(self._sessions):
            try:
                session.close()
            except JMSException as exc:
                log.debug("closing session: %s", exc)
        # Deleted by the broker with the connection: marked so, as after a reconnect, so that
        # a send to one from another connection is refused by the client.
        with self._temp_lock:
            gone, self._temporaries = list(self._temporaries), {}
        for destination in gone:
            destination._deleted = True  # type: ignore[attr-defined]

    # ---- temporary destinations -------------------------------------------------------------

    def _create_temporary(self, kind: str) -> Destination:
        amqp = self._ensure_open()
        if not self.adapter.temporary_destinations:
            raise JMSException(
                f"the broker ({self.adapter.title}) does not support temporary destinations "
                "(dynamic nodes)"
            )
        with self._temp_lock:
            if self._internal_session is None:
                self._internal_session = amqp.create_session()
            session = self._internal_session
        spec = LinkSpec(
            name=f"jmspy:{kind}-creator:{self._connection_id}:{next(self._temporary_seq)}",
            address=None,
            capabilities=(kind,),
            dynamic=True,
        )
        link = session.create_sender(spec, 1)
        address = link.remote_address
        if not address:
            link.close()
            raise JMSException(f"the broker did not name the {kind} it was asked to create")
        cls = TemporaryQueue if kind == "temporary-queue" else TemporaryTopic
        destination = cls(address, owner=self, on_delete=self._delete_temporary)
        self._temporaries[destination] = link
        return destination

    def _delete_temporary(self, destination: Destination) -> None:
        self._check_closed()
        if any(h.consumes_from(destination) for h in list(self._session_hooks.values())):
            raise IllegalStateException(
                f"A consumer is consuming from the temporary destination {destination}; "
                "close it before delete()"
            )
        link = self._temporaries.pop(destination, None)
        if link is not None:
            link.close()

    def _session_closed(self, session: Session) -> None:
        self._session_hooks.pop(session, None)
        try:
            self._sessions.remove(session)
        except ValueError:
            pass

    def __enter__(self) -> Connection:
        """Enter a ``with`` block; returns this connection."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Leave a ``with`` block: :meth:`close` the connection, whatever happened inside."""
        self.close()
