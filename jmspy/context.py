"""The simplified API of JMS 2.0: JMSContext, JMSProducer and JMSConsumer.

They are thin layers over the classic objects; the only differences are the ones JMS 2.0
defines: runtime exceptions instead of checked ones (the same error code, reason code, rule id
and cause, via :func:`jmspy.errors.to_runtime`), chained producer setters, one connection
shared by the contexts made from one another, and auto-start on the first consumer.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, overload

from ._limits import check_receive_timeout
from ._twins.context import JMSConsumerTwins, JMSContextTwins, JMSProducerTwins
from .connection import (
    ACKNOWLEDGE_MODES,
    AUTO_ACKNOWLEDGE,
    CLIENT_ACKNOWLEDGE,
    DUPS_OK_ACKNOWLEDGE,
    SESSION_TRANSACTED,
    Connection,
    ConnectionMetaData,
)
from .destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from .errors import (
    IllegalStateRuntimeException,
    InvalidDestinationRuntimeException,
    JMSException,
    JMSRuntimeException,
    MessageFormatRuntimeException,
    to_runtime,
)
from .message import (
    BytesMessage,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
    message_for_body,
)
from .producer import MessageProducer
from .producer_settings import ProducerSettings, validate_milliseconds

if TYPE_CHECKING:
    from .browser import QueueBrowser
    from .consumer import BatchListenerLike, ListenerLike, MessageConsumer
    from .factory import ConnectionFactory
    from .session import Session

__all__ = ["JMSContext", "JMSProducer", "JMSConsumer", "runtime"]


F = TypeVar("F", bound=Callable[..., Any])
_T = TypeVar("_T")


def runtime(method: F) -> F:
    """Raise the runtime twin of any checked JMS exception, as the simplified API must."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except JMSException as exc:
            raise to_runtime(exc) from exc

    return wrapper  # type: ignore[return-value]


class _SharedConnection:
    """One connection shared by a JMSContext and the contexts created from it; it closes with
    the last of them."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.users = 0
        self.lock = threading.Lock()

    def acquire(self) -> None:
        with self.lock:
            self.users += 1

    def release(self) -> None:
        with self.lock:
            self.users -= 1
            last = self.users == 0
        if last:
            self.connection.close()


class JMSContext(JMSContextTwins):
    """A connection and a session in one object (JMS 2.0 section 2.8)."""

    SESSION_TRANSACTED = SESSION_TRANSACTED
    AUTO_ACKNOWLEDGE = AUTO_ACKNOWLEDGE
    CLIENT_ACKNOWLEDGE = CLIENT_ACKNOWLEDGE
    DUPS_OK_ACKNOWLEDGE = DUPS_OK_ACKNOWLEDGE

    def __init__(self, shared: _SharedConnection, session_mode: int) -> None:
        if session_mode not in ACKNOWLEDGE_MODES:
            raise JMSRuntimeException(f"Invalid Session Mode: {session_mode!r}")
        self._shared = shared
        self._connection = shared.connection
        self._mode = session_mode
        self._session: Session | None = None
        self._auto_start = True
        self._closed = False
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
        if mode not in ACKNOWLEDGE_MODES:
            raise JMSRuntimeException(f"Invalid Session Mode: {mode!r}")
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

        AUTO_ACKNOWLEDGE, CLIENT_ACKNOWLEDGE, DUPS_OK_ACKNOWLEDGE or SESSION_TRANSACTED.
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

        A no-op in the other session modes. Raises IllegalStateRuntimeException when the context
        is closed (JMS-54), and when messages delivered before a reconnect could not be
        acknowledged (the broker redelivers them).
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
            # this context owns (Connection asks the same through SessionHooks).
            if self._session._dispatcher is threading.current_thread():
                raise IllegalStateRuntimeException(
                    "Illegal invocation from MessageListener callback: a listener must not "
                    "close its own JMSContext"
                )
            self._session.close()
        self._closed = True
        self._shared.release()

    def __enter__(self) -> JMSContext:
        """Enter a ``with`` block; returns this context."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Leave a ``with`` block: :meth:`close` the context, whatever happened inside."""
        self.close()


class JMSProducer(JMSProducerTwins):
    """A lightweight producer of a JMSContext with chained setters (JMS 2.0 section 7.2).

    Invalid values raise from the setter itself, as the TCK requires; the delivery-delay rules
    (DD-1, DD-2, DD-11, DD-14) raise their runtime exceptions with the rule's reason code.
    """

    def __init__(
        self, check_closed: Callable[[], None], producer: Callable[[], MessageProducer]
    ) -> None:
        # Handles given by the context: its closed check and its anonymous producer (created
        # on first use), through which every JMSProducer of the context sends.
        self._check_context_closed = check_closed
        self._producer = producer
        self._settings = ProducerSettings()
        self._properties: dict[str, Any] = {}
        self._correlation_id: str | bytes | None = None
        self._type: str | None = None
        self._reply_to: Destination | None = None
        self._async: Any = None

    # The JMS forms of send (a Message, or a String, Map, byte[] or Serializable body), for
    # type checkers; the implementation takes them all.
    @overload
    def send(self, destination: Destination, body: Message, /) -> JMSProducer: ...
    @overload
    def send(self, destination: Destination, body: str, /) -> JMSProducer: ...
    @overload
    def send(self, destination: Destination, body: Mapping[str, Any], /) -> JMSProducer: ...
    @overload
    def send(self, destination: Destination, body: bytes, /) -> JMSProducer: ...
    @overload
    def send(self, destination: Destination, body: object, /) -> JMSProducer: ...

    @runtime
    def send(self, destination: Destination, body: Any) -> JMSProducer:
        """Send a Message, or a str/bytes/dict/object body wrapped in the matching type."""
        self._check_context_closed()
        message = body if isinstance(body, Message) else message_for_body(body)
        for name, value in self._properties.items():
            message.setObjectProperty(name, value)
        if self._correlation_id is not None:
            if isinstance(self._correlation_id, bytes):
                message.setJMSCorrelationIDAsBytes(self._correlation_id)
            else:
                message.setJMSCorrelationID(self._correlation_id)
        if self._type is not None:
            message.setJMSType(self._type)
        if self._reply_to is not None:
            message.setJMSReplyTo(self._reply_to)
        producer = self._producer()
        if destination is None:
            raise InvalidDestinationRuntimeException("Destination must not be null")
        producer.send_with(self._settings, destination, message, self._async)
        return self

    # ---- settings (chained) ------------------------------------------------------------

    @runtime
    def setDeliveryMode(self, deliveryMode: int) -> JMSProducer:
        """Set the delivery mode; returns this producer.

        ``DeliveryMode.PERSISTENT`` or ``NON_PERSISTENT``; any other value raises
        JMSRuntimeException (rule JMS-44).
        """
        self._settings.set_delivery_mode(deliveryMode)
        return self

    def getDeliveryMode(self) -> int:
        """The delivery mode (PERSISTENT unless set)."""
        return self._settings.delivery_mode

    @runtime
    def setPriority(self, priority: int) -> JMSProducer:
        """Set the priority, 0 to 9 (rule DD-14); returns this producer.

        Raises JMSRuntimeException naming the value when out of range (JMS-44).
        """
        self._settings.set_priority(priority)
        return self

    def getPriority(self) -> int:
        """The priority (4 unless set)."""
        return self._settings.priority

    @runtime
    def setTimeToLive(self, timeToLive: int) -> JMSProducer:
        """Set the time to live in milliseconds (0: no expiry); returns this producer.

        Raises JMSRuntimeException for a negative or non-integer value, and with MQRC_EXPIRY_ERROR
        when shorter than a non-zero delivery delay (DD-2).
        """
        self._settings.set_time_to_live(timeToLive)
        return self

    def getTimeToLive(self) -> int:
        """The time to live in milliseconds (0: no expiry)."""
        return self._settings.time_to_live

    @runtime
    def setDeliveryDelay(self, deliveryDelay: int) -> JMSProducer:
        """Set the delivery delay in milliseconds; returns this producer.

        Raises JMSRuntimeException for a negative or non-integer value; with MQRC_OPTIONS_ERROR
        above the factory's maximum (DD-11), MQRC_EXPIRY_ERROR when longer than a non-zero time to
        live (DD-2), MQRC_FUNCTION_NOT_SUPPORTED when the broker is known to have no delayed
        delivery (DD-1; otherwise at send).
        """
        delay = validate_milliseconds("deliveryDelay", deliveryDelay)
        # DD-11 and, where support is already known (the broker profile, or the anonymous
        # relay link), DD-1 at the setter; per-destination links are checked at send.
        self._producer().check_delivery_delay(delay, relay=True)
        self._settings.set_delivery_delay(delay)
        return self

    def getDeliveryDelay(self) -> int:
        """The delivery delay in milliseconds (0 unless set)."""
        return self._settings.delivery_delay

    def setDisableMessageID(self, value: bool) -> JMSProducer:
        """When true, sent messages carry no JMSMessageID (JMS-41); returns this producer."""
        self._settings.disable_message_id = bool(value)
        return self

    def getDisableMessageID(self) -> bool:
        """Whether message ids are disabled."""
        return self._settings.disable_message_id

    def setDisableMessageTimestamp(self, value: bool) -> JMSProducer:
        """When true, sent messages carry no JMSTimestamp (JMS-41); returns this producer."""
        self._settings.disable_timestamp = bool(value)
        return self

    def getDisableMessageTimestamp(self) -> bool:
        """Whether message timestamps are disabled."""
        return self._settings.disable_timestamp

    def setAsync(self, completionListener: Any) -> JMSProducer:
        """Send asynchronously, reporting to ``completionListener`` (None: synchronous sends).

        The listener's ``onCompletion``/``onException`` run on the session's completion thread.
        Returns this producer.
        """
        self._async = completionListener
        return self

    def getAsync(self) -> Any:
        """The completion listener set with :meth:`setAsync`, or None."""
        return self._async

    @runtime
    def setProperty(self, name: str, value: Any) -> JMSProducer:
        """Set an application property added to every message sent; returns this producer.

        Raises IllegalArgumentException for a null or empty name and MessageFormatRuntimeException
        for a value of an unsupported type (rule JMS-45).
        """
        # Validate name and type now, with a scratch message, so errors come from the setter.
        probe = Message()
        try:
            probe.setObjectProperty(name, value)
        except JMSException as exc:
            raise MessageFormatRuntimeException(exc.reason, exc.error_code, exc) from exc
        self._properties[name] = value
        return self

    def clearProperties(self) -> JMSProducer:
        """Remove every property set on this producer; returns this producer."""
        self._properties.clear()
        return self

    def propertyExists(self, name: str) -> bool:
        """Whether a property ``name`` is set on this producer."""
        return name in self._properties

    def getPropertyNames(self) -> set[str]:
        """The names of the properties set on this producer."""
        return set(self._properties)

    def getObjectProperty(self, name: str) -> Any:
        """The value of property ``name`` as set, or None."""
        return self._properties.get(name)

    @runtime
    def setJMSCorrelationID(self, correlationID: str | None) -> JMSProducer:
        """Set the JMSCorrelationID of messages sent; returns this producer.

        It replaces the message's own (JMS-46).
        """
        self._correlation_id = correlationID
        return self

    def getJMSCorrelationID(self) -> str | None:
        """The correlation id set as a string, or None."""
        cid = self._correlation_id
        return cid if not isinstance(cid, bytes) else None

    def setJMSCorrelationIDAsBytes(self, correlationID: bytes | None) -> JMSProducer:
        """Set the JMSCorrelationID as bytes for messages sent (JMS-46); returns this producer."""
        self._correlation_id = None if correlationID is None else bytes(correlationID)
        return self

    def getJMSCorrelationIDAsBytes(self) -> bytes | None:
        """The correlation id set as bytes, or None."""
        cid = self._correlation_id
        return cid if isinstance(cid, bytes) else None

    def setJMSType(self, type: str | None) -> JMSProducer:
        """Set the JMSType of messages sent; returns this producer.

        It replaces the message's own (JMS-46).
        """
        self._type = type
        return self

    def getJMSType(self) -> str | None:
        """The JMSType set, or None."""
        return self._type

    def setJMSReplyTo(self, replyTo: Destination | None) -> JMSProducer:
        """Set the JMSReplyTo of messages sent; returns this producer.

        It replaces the message's own (JMS-46).
        """
        self._reply_to = replyTo
        return self

    def getJMSReplyTo(self) -> Destination | None:
        """The JMSReplyTo set, or None."""
        return self._reply_to


class JMSConsumer(JMSConsumerTwins):
    """The simplified API's consumer (JMS 2.0 section 8.6)."""

    def __init__(self, consumer: MessageConsumer) -> None:
        self._consumer = consumer
        # receiveBody is JMSConsumer-only (JMS 2.0): it wraps the classic consumer's receive
        # loop, which is not public on MessageConsumer. One reach-in, here.
        self._receive_body = consumer._receive_body

    @runtime
    def receive(self, timeout: int | None = None) -> Message | None:
        """Wait for a message; ``timeout`` in milliseconds.

        None or 0 waits until one arrives or the consumer closes. Returns None when the time runs
        out or the consumer is closed (JMS-59). Raises IllegalStateRuntimeException with a listener
        on the session, JMSRuntimeException for an invalid timeout.
        """
        return self._consumer.receive(timeout)

    @runtime
    def receiveNoWait(self) -> Message | None:
        """Return a message available now, or None.

        Before returning None it drains the broker, as ``MessageConsumer.receiveNoWait``.
        """
        return self._consumer.receiveNoWait()

    @runtime
    def receiveBody(self, c: type[_T], timeout: int | None = None) -> _T | None:
        """Receive the next message and return its body as type ``c``; ``timeout`` in milliseconds.

        Returns None when no message arrives in time. Raises MessageFormatRuntimeException when the
        body is not assignable to ``c``; in AUTO_ACKNOWLEDGE that message is returned again by the
        next receive, not counted as a redelivery (rule JMS-64).
        """
        body: _T | None = self._receive_body(c, check_receive_timeout(timeout), no_wait=False)
        return body

    @runtime
    def receiveBodyNoWait(self, c: type[_T]) -> _T | None:
        """As :meth:`receiveBody` for a message available now; None when there is none."""
        body: _T | None = self._receive_body(c, 0.0, no_wait=True)
        return body

    @runtime
    def setMessageListener(self, listener: ListenerLike | None) -> None:
        """Deliver messages to ``listener`` on the session's dispatch thread.

        None removes the listener (JMS-61).
        """
        self._consumer.setMessageListener(listener)

    @runtime
    def getMessageListener(self) -> ListenerLike | None:
        """The message listener, or None."""
        return self._consumer.getMessageListener()

    @runtime
    def setBatchMessageListener(
        self, listener: BatchListenerLike | None, batchSize: int = 1, batchTimeout: int = 0
    ) -> None:
        """Deliver messages to ``listener.onMessages(list)`` in batches (JMS_SPEC-36).

        Args:
            listener: The batch listener, or None to remove it.
            batchSize: At most this many messages per batch (BL-1), an integer >= 1.
            batchTimeout: Milliseconds a partial batch waits for more (BL-2); 0 delivers what is
                available at once (BL-3).

        Raises:
            IllegalArgumentException: An invalid batchSize or batchTimeout (BL-5).
            IllegalStateRuntimeException: A MessageListener is set, or the consumer is closed.
        """
        self._consumer.setBatchMessageListener(listener, batchSize, batchTimeout)

    @runtime
    def getBatchMessageListener(self) -> BatchListenerLike | None:
        """The batch listener, or None."""
        return self._consumer.getBatchMessageListener()

    @runtime
    def getMessageSelector(self) -> str | None:
        """The consumer's message selector, or None."""
        return self._consumer.getMessageSelector()

    @runtime
    def close(self) -> None:
        """Close the consumer; idempotent.

        A blocked receive returns None; see ``MessageConsumer.close``.
        """
        self._consumer.close()

    def __enter__(self) -> JMSConsumer:
        """Enter a ``with`` block; returns this consumer."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Leave a ``with`` block: :meth:`close` the consumer, whatever happened inside."""
        self.close()

    def __iter__(self) -> Any:
        """Iterate over messages until the consumer is closed (``for m in consumer``).

        Each step is a blocking :meth:`receive`; checked exceptions are not converted here.
        """
        return iter(self._consumer)
