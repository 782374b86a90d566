"""The simplified API of JMS 2.0: JMSContext, JMSProducer and JMSConsumer.

They are thin layers over the classic objects; the only differences are the ones JMS 2.0
defines: runtime exceptions instead of checked ones (the same error code, reason code, rule id
and cause, via :func:`jmspy.errors.to_runtime`), chained producer setters, one connection
shared by the contexts made from one another, and auto-start on the first consumer.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, TypeVar

from ._modes import VALID_MODES_TEXT, is_session_mode
from ._runtime import runtime
from ._twins.context import JMSContextTwins
from .connection import (
    ARTEMIS_PRE_ACKNOWLEDGE,
    AUTO_ACKNOWLEDGE,
    CLIENT_ACKNOWLEDGE,
    DUPS_OK_ACKNOWLEDGE,
    INDIVIDUAL_ACKNOWLEDGE,
    NO_ACKNOWLEDGE,
    SESSION_TRANSACTED,
    Connection,
    ConnectionMetaData,
)
from .destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from .errors import (
    IllegalStateException,
    IllegalStateRuntimeException,
    JMSException,
    JMSRuntimeException,
)
from .jms_consumer import JMSConsumer
from .jms_producer import JMSProducer
from .message import (
    BytesMessage,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)
from .producer import MessageProducer

if TYPE_CHECKING:
    from .browser import QueueBrowser
    from .consumer import MessageConsumer
    from .factory import ConnectionFactory
    from .session import Session

# JMSProducer and JMSConsumer live in their own modules; this module keeps exporting them.
__all__ = ["JMSConsumer", "JMSContext", "JMSProducer", "runtime"]

_T = TypeVar("_T")


class _SharedConnection:
    """One connection shared by a JMSContext and the contexts created from it; it closes with
    the last of them."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.users = 0
        self.released = False  # the last context closed: the connection is closed or closing
        self.lock = threading.Lock()

    def acquire(self) -> None:
        """One more context; refused once the last one has closed (a createContext() that
        raced the close of the context it was called on)."""
        with self.lock:
            if self.released:
                raise IllegalStateRuntimeException(
                    "The JMSContext is closed: its connection closed with the last context "
                    "sharing it"
                )
            self.users += 1

    def release(self) -> None:
        with self.lock:
            self.users -= 1
            last = self.users == 0
            self.released = self.released or last
        if last:
            self.connection.close()


class JMSContext(JMSContextTwins):
    """A connection and a session in one object (JMS 2.0 section 2.8)."""

    SESSION_TRANSACTED = SESSION_TRANSACTED
    AUTO_ACKNOWLEDGE = AUTO_ACKNOWLEDGE
    CLIENT_ACKNOWLEDGE = CLIENT_ACKNOWLEDGE
    DUPS_OK_ACKNOWLEDGE = DUPS_OK_ACKNOWLEDGE
    INDIVIDUAL_ACKNOWLEDGE = INDIVIDUAL_ACKNOWLEDGE
    ARTEMIS_PRE_ACKNOWLEDGE = ARTEMIS_PRE_ACKNOWLEDGE
    NO_ACKNOWLEDGE = NO_ACKNOWLEDGE

    def __init__(self, shared: _SharedConnection, session_mode: int) -> None:
        if not is_session_mode(session_mode):
            raise JMSRuntimeException(
                f"Invalid Session Mode: {session_mode!r}: {VALID_MODES_TEXT} [rule JMS-3]"
            )
        self._shared = shared
        self._connection = shared.connection
        self._mode = session_mode
        self._session: Session | None = None
        self._auto_start = True
        self._closed = False
        # close() may be called from several threads at once (JMS 2.0 section 6.2.6): the
        # context's share of the connection must be given back once, or the connection
        # would close under the other contexts sharing it.
        self._released = False
        self._release_lock = threading.Lock()
        self._producer: MessageProducer | None = None
        shared.acquire()

    @classmethod
    @runtime
    def create(cls, factory: ConnectionFactory, *args: Any) -> JMSContext:
        """``createContext()``, ``(sessionMode)``, ``(user, password)``,
        ``(user, password, sessionMode)``."""
        user = password = None
        mode = AUTO_ACKNOWLEDGE
        if len(args) == 1:
            (mode,) = args
        elif len(args) == 2:
            user, password = args
        elif len(args) == 3:
            user, password, mode = args
        elif args:
            raise JMSRuntimeException(f"createContext takes 0 to 3 arguments, got {len(args)}")
        if not is_session_mode(mode):
            raise JMSRuntimeException(
                f"Invalid Session Mode: {mode!r}: {VALID_MODES_TEXT} [rule JMS-3]"
            )
        connection = factory.createConnection(user, password)
        try:
            # A context is usable at once: open now so bad credentials fail here.
            connection.connect()
        except JMSException:
            connection.close()
            raise
        return cls(_SharedConnection(connection), mode)

    # ---- internal ------------------------------------------------------------------------

    def _check_closed(self) -> None:
        if self._closed:
            raise IllegalStateRuntimeException("The JMSContext is closed")

    def _session_or_create(self) -> Session:
        self._check_closed()
        if self._session is None:
            self._session = self._connection.createSession(self._mode)
        return self._session

    def _anonymous_producer(self) -> MessageProducer:
        if self._producer is None:
            self._producer = self._session_or_create().createProducer(None)
        return self._producer

    # ---- JMSContext API --------------------------------------------------------------------

    @runtime
    def createContext(self, sessionMode: int) -> JMSContext:
        """Create another context on the same connection with its own session (``sessionMode``).

        The connection closes with the last context that shares it. Raises JMSRuntimeException for
        an invalid session mode (rule JMS-3) and IllegalStateRuntimeException when this context is
        closed.
        """
        self._check_closed()
        return JMSContext(self._shared, sessionMode)

    @runtime
    def createProducer(self) -> JMSProducer:
        """Create a :class:`JMSProducer` with its own settings.

        Every producer of a context sends through the context's one anonymous producer. Raises
        IllegalStateRuntimeException when the context is closed.
        """
        self._check_closed()
        return JMSProducer(self._check_closed, self._anonymous_producer)

    @runtime
    def createConsumer(
        self, destination: Destination, messageSelector: str | None = None, noLocal: bool = False
    ) -> JMSConsumer:
        """Create a :class:`JMSConsumer` of ``destination``.

        Starts the connection unless autoStart is off (JMS-52). Raises
        InvalidDestinationRuntimeException for a missing or unusable destination and
        InvalidSelectorRuntimeException for a bad selector, as ``Session.createConsumer``.
        """
        consumer = self._session_or_create().createConsumer(destination, messageSelector, noLocal)
        if self._auto_start:
            self._connection.start()
        return JMSConsumer(consumer)

    def _auto_started(self, consumer: MessageConsumer) -> JMSConsumer:
        if self._auto_start:
            self._connection.start()
        return JMSConsumer(consumer)

    @runtime
    def createDurableConsumer(
        self,
        topic: Topic,
        name: str,
        messageSelector: str | None = None,
        noLocal: bool = False,
    ) -> JMSConsumer:
        """Consume from the unshared durable subscription ``name`` on ``topic`` (needs a client id).

        Starts the connection unless autoStart is off. Raises what ``Session.createDurableConsumer``
        raises, as runtime exceptions.
        """
        session = self._session_or_create()
        return self._auto_started(
            session.createDurableConsumer(topic, name, messageSelector, noLocal)
        )

    @runtime
    def createSharedDurableConsumer(
        self, topic: Topic, name: str, messageSelector: str | None = None
    ) -> JMSConsumer:
        """Consume from the shared durable subscription ``name`` on ``topic``.

        Starts the connection unless autoStart is off. Raises what
        ``Session.createSharedDurableConsumer`` raises, as runtime exceptions.
        """
        session = self._session_or_create()
        return self._auto_started(session.createSharedDurableConsumer(topic, name, messageSelector))

    @runtime
    def createSharedConsumer(
        self, topic: Topic, sharedSubscriptionName: str, messageSelector: str | None = None
    ) -> JMSConsumer:
        """Consume from the shared non-durable subscription ``sharedSubscriptionName`` on ``topic``.

        Starts the connection unless autoStart is off. Raises what ``Session.createSharedConsumer``
        raises, as runtime exceptions.
        """
        session = self._session_or_create()
        return self._auto_started(
            session.createSharedConsumer(topic, sharedSubscriptionName, messageSelector)
        )

    @runtime
    def unsubscribe(self, name: str) -> None:
        """Delete the durable subscription ``name``.

        Raises IllegalStateRuntimeException while a consumer of this connection is active on it.
        """
        self._session_or_create().unsubscribe(name)

    @runtime
    def createBrowser(self, queue: Queue, messageSelector: str | None = None) -> QueueBrowser:
        """Browse ``queue`` without consuming, optionally filtered by a selector.

        See ``Session.createBrowser``; its exceptions are raised as runtime twins.
        """
        return self._session_or_create().createBrowser(queue, messageSelector)

    @runtime
    def createTemporaryQueue(self) -> TemporaryQueue:
        """Create a queue that lives as long as the connection (or until delete())."""
        return self._session_or_create().createTemporaryQueue()

    @runtime
    def createTemporaryTopic(self) -> TemporaryTopic:
        """Create a topic that lives as long as the connection (or until delete())."""
        return self._session_or_create().createTemporaryTopic()

    @runtime
    def createQueue(self, queueName: str, **options: Any) -> Queue:
        """A queue by name; jmspy options (see DestinationOptions) may describe it."""
        return self._session_or_create().createQueue(queueName, **options)

    @runtime
    def createTopic(self, topicName: str, **options: Any) -> Topic:
        """A topic by name; jmspy options (see DestinationOptions) may describe it."""
        return self._session_or_create().createTopic(topicName, **options)

    @runtime
    def createMessage(self) -> Message:
        """Create a message with no body."""
        return self._session_or_create().createMessage()

    @runtime
    def createTextMessage(self, text: str | None = None) -> TextMessage:
        """Create a ``TextMessage``, with ``text`` as its body when given."""
        return self._session_or_create().createTextMessage(text)

    @runtime
    def createBytesMessage(self) -> BytesMessage:
        """Create an empty ``BytesMessage``, open for writing."""
        return self._session_or_create().createBytesMessage()

    @runtime
    def createMapMessage(self) -> MapMessage:
        """Create an empty ``MapMessage``."""
        return self._session_or_create().createMapMessage()

    @runtime
    def createStreamMessage(self) -> StreamMessage:
        """Create an empty ``StreamMessage``, open for writing."""
        return self._session_or_create().createStreamMessage()

    @runtime
    def createObjectMessage(self, obj: Any = None) -> ObjectMessage:
        """Create an ``ObjectMessage``, with ``obj`` as its body when not None."""
        return self._session_or_create().createObjectMessage(obj)

    @runtime
    def getClientID(self) -> str | None:
        """The connection's client id, or None."""
        self._check_closed()
        return self._connection.getClientID()

    @runtime
    def setClientID(self, clientID: str) -> None:
        """Set the connection's client id (JMS allows it only right after creation, rule JMS-4).

        A context opens its connection when it is created, so in jmspy this raises
        IllegalStateRuntimeException; give the id with ``jms.clientID`` (or the factory's
        ``client_id``) instead.
        """
        self._check_closed()
        self._connection.setClientID(clientID)

    @runtime
    def getMetaData(self) -> ConnectionMetaData:
        """What the client and the broker are, as :class:`ConnectionMetaData`."""
        self._check_closed()
        return self._connection.getMetaData()

    @runtime
    def setExceptionListener(self, listener: Any) -> None:
        """Set (or with None clear) the connection's exception listener."""
        self._check_closed()
        self._connection.setExceptionListener(listener)

    @runtime
    def getExceptionListener(self) -> Any:
        """The connection's exception listener, or None."""
        self._check_closed()
        return self._connection.getExceptionListener()

    def getSessionMode(self) -> int:
        """The session mode given at creation.

        AUTO_ACKNOWLEDGE, CLIENT_ACKNOWLEDGE, DUPS_OK_ACKNOWLEDGE, SESSION_TRANSACTED,
        INDIVIDUAL_ACKNOWLEDGE (101), ARTEMIS_PRE_ACKNOWLEDGE (100) or NO_ACKNOWLEDGE (257).
        """
        self._check_closed()
        return self._mode

    def getTransacted(self) -> bool:
        """Whether the session mode is SESSION_TRANSACTED."""
        self._check_closed()
        return self._mode == SESSION_TRANSACTED

    def getAutoStart(self) -> bool:
        """Whether creating a consumer starts the connection (true unless set off)."""
        self._check_closed()
        return self._auto_start

    def setAutoStart(self, autoStart: bool) -> None:
        """Choose whether creating a consumer starts the connection (rule JMS-52)."""
        self._check_closed()
        self._auto_start = bool(autoStart)

    @runtime
    def start(self) -> None:
        """Start (or restart) delivery to the connection's consumers; idempotent (JMS-8)."""
        self._check_closed()
        self._connection.start()

    @runtime
    def stop(self) -> None:
        """Pause delivery to the connection's consumers; sending still works (JMS-8).

        Raises IllegalStateRuntimeException when called from a listener of this connection (JMS-9).
        """
        self._check_closed()
        self._connection.stop()

    @runtime
    def acknowledge(self) -> None:
        """Acknowledge every message consumed by this context's session (CLIENT_ACKNOWLEDGE).

        A no-op in the other session modes, INDIVIDUAL_ACKNOWLEDGE included (as in Qpid JMS:
        there each message is acknowledged with its own ``acknowledge()``, rule JMS-67), and
        the no-acknowledgement modes (JMS-68).
        Raises IllegalStateRuntimeException when the context is closed (JMS-54), and when
        messages delivered before a reconnect could not be acknowledged (the broker
        redelivers them).
        """
        self._check_closed()
        if self._session is not None:
            # Reach-in kept: JMSContext.acknowledge() is the session-wide acknowledge that
            # the classic API only offers on Message; the context owns this session.
            self._session._acknowledge()

    @runtime
    def recover(self) -> None:
        """Redeliver every unacknowledged message of the session, marked redelivered (RD-2).

        Raises IllegalStateRuntimeException for a transacted context (JMS-19).
        """
        self._session_or_create().recover()

    @runtime
    def commit(self) -> None:
        """Commit the current transaction (see ``Session.commit``).

        Raises IllegalStateRuntimeException unless transacted (JMS-18),
        TransactionRolledBackRuntimeException when it was rolled back instead and
        TransactionInDoubtRuntimeException when the outcome is unknown (FO-5).
        """
        self._session_or_create().commit()

    @runtime
    def rollback(self) -> None:
        """Roll back the current transaction; received messages are redelivered (RD-3).

        Raises IllegalStateRuntimeException unless transacted (JMS-18).
        """
        self._session_or_create().rollback()

    @runtime
    def close(self) -> None:
        """Close the context's session, and the connection when no other context shares it.

        Idempotent. Raises IllegalStateRuntimeException when called from a listener of this context
        (JMS-20).
        """
        if self._closed:
            return
        if self._session is not None:
            # Reach-in kept: "is this the session's listener thread", asked of the session
            # this context owns (Connection asks the same through SessionHooks); on the shared
            # dispatch pool the listener thread is the pool thread running this session.
            if self._session._is_dispatch_thread(threading.current_thread()):
                raise IllegalStateRuntimeException(
                    "Illegal invocation from MessageListener callback: a listener must not "
                    "close its own JMSContext"
                )
            try:
                self._session.close()
            except IllegalStateException:
                # Refused before closing anything (called from the session's completion
                # listener, rule JMS-40): the context stays open.
                raise
            except BaseException:
                # Failed part way (the session is closed regardless): the context closes, and
                # the connection it shares is released as on any close, or it would stay
                # open for good.
                self._release()
                raise
        self._release()

    def _release(self) -> None:
        """Mark the context closed and give its share of the connection back, once."""
        self._closed = True
        with self._release_lock:
            if self._released:
                return
            self._released = True
        self._shared.release()

    def __enter__(self) -> JMSContext:
        """Enter a ``with`` block; returns this context."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Leave a ``with`` block: :meth:`close` the context, whatever happened inside."""
        self.close()
