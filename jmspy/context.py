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
        self._check_closed()
        return JMSContext(self._shared, sessionMode)

    @runtime
    def createProducer(self) -> JMSProducer:
        self._check_closed()
        return JMSProducer(self._check_closed, self._anonymous_producer)

    @runtime
    def createConsumer(
        self, destination: Destination, messageSelector: str | None = None, noLocal: bool = False
    ) -> JMSConsumer:
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
        session = self._session_or_create()
        return self._auto_started(
            session.createDurableConsumer(topic, name, messageSelector, noLocal)
        )

    @runtime
    def createSharedDurableConsumer(
        self, topic: Topic, name: str, messageSelector: str | None = None
    ) -> JMSConsumer:
        session = self._session_or_create()
        return self._auto_started(session.createSharedDurableConsumer(topic, name, messageSelector))

    @runtime
    def createSharedConsumer(
        self, topic: Topic, sharedSubscriptionName: str, messageSelector: str | None = None
    ) -> JMSConsumer:
        session = self._session_or_create()
        return self._auto_started(
            session.createSharedConsumer(topic, sharedSubscriptionName, messageSelector)
        )

    @runtime
    def unsubscribe(self, name: str) -> None:
        self._session_or_create().unsubscribe(name)

    @runtime
    def createBrowser(self, queue: Queue, messageSelector: str | None = None) -> QueueBrowser:
        return self._session_or_create().createBrowser(queue, messageSelector)

    @runtime
    def createTemporaryQueue(self) -> TemporaryQueue:
        return self._session_or_create().createTemporaryQueue()

    @runtime
    def createTemporaryTopic(self) -> TemporaryTopic:
        return self._session_or_create().createTemporaryTopic()

    @runtime
    def createQueue(self, queueName: str, **options: Any) -> Queue:
        return self._session_or_create().createQueue(queueName, **options)

    @runtime
    def createTopic(self, topicName: str, **options: Any) -> Topic:
        return self._session_or_create().createTopic(topicName, **options)

    @runtime
    def createMessage(self) -> Message:
        return self._session_or_create().createMessage()

    @runtime
    def createTextMessage(self, text: str | None = None) -> TextMessage:
        return self._session_or_create().createTextMessage(text)

    @runtime
    def createBytesMessage(self) -> BytesMessage:
        return self._session_or_create().createBytesMessage()

    @runtime
    def createMapMessage(self) -> MapMessage:
        return self._session_or_create().createMapMessage()

    @runtime
    def createStreamMessage(self) -> StreamMessage:
        return self._session_or_create().createStreamMessage()

    @runtime
    def createObjectMessage(self, obj: Any = None) -> ObjectMessage:
        return self._session_or_create().createObjectMessage(obj)

    @runtime
    def getClientID(self) -> str | None:
        self._check_closed()
        return self._connection.getClientID()

    @runtime
    def setClientID(self, clientID: str) -> None:
        self._check_closed()
        self._connection.setClientID(clientID)

    @runtime
    def getMetaData(self) -> ConnectionMetaData:
        self._check_closed()
        return self._connection.getMetaData()

    @runtime
    def setExceptionListener(self, listener: Any) -> None:
        self._check_closed()
        self._connection.setExceptionListener(listener)

    @runtime
    def getExceptionListener(self) -> Any:
        self._check_closed()
        return self._connection.getExceptionListener()

    def getSessionMode(self) -> int:
        self._check_closed()
        return self._mode

    def getTransacted(self) -> bool:
        self._check_closed()
        return self._mode == SESSION_TRANSACTED

    def getAutoStart(self) -> bool:
        self._check_closed()
        return self._auto_start

    def setAutoStart(self, autoStart: bool) -> None:
        self._check_closed()
        self._auto_start = bool(autoStart)

    @runtime
    def start(self) -> None:
        self._check_closed()
        self._connection.start()

    @runtime
    def stop(self) -> None:
        self._check_closed()
        self._connection.stop()

    @runtime
    def acknowledge(self) -> None:
        self._check_closed()
        if self._session is not None:
            # Reach-in kept: JMSContext.acknowledge() is the session-wide acknowledge that
            # the classic API only offers on Message; the context owns this session.
            self._session._acknowledge()

    @runtime
    def recover(self) -> None:
        self._session_or_create().recover()

    @runtime
    def commit(self) -> None:
        self._session_or_create().commit()

    @runtime
    def rollback(self) -> None:
        self._session_or_create().rollback()

    @runtime
    def close(self) -> None:
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
        return self

    def __exit__(self, *exc_info: object) -> None:
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
        self._settings.set_delivery_mode(deliveryMode)
        return self

    def getDeliveryMode(self) -> int:
        return self._settings.delivery_mode

    @runtime
    def setPriority(self, priority: int) -> JMSProducer:
        self._settings.set_priority(priority)
        return self

    def getPriority(self) -> int:
        return self._settings.priority

    @runtime
    def setTimeToLive(self, timeToLive: int) -> JMSProducer:
        self._settings.set_time_to_live(timeToLive)
        return self

    def getTimeToLive(self) -> int:
        return self._settings.time_to_live

    @runtime
    def setDeliveryDelay(self, deliveryDelay: int) -> JMSProducer:
        delay = validate_milliseconds("deliveryDelay", deliveryDelay)
        # DD-11 and, where support is already known (the broker profile, or the anonymous
        # relay link), DD-1 at the setter; per-destination links are checked at send.
        self._producer().check_delivery_delay(delay, relay=True)
        self._settings.set_delivery_delay(delay)
        return self

    def getDeliveryDelay(self) -> int:
        return self._settings.delivery_delay

    def setDisableMessageID(self, value: bool) -> JMSProducer:
        self._settings.disable_message_id = bool(value)
        return self

    def getDisableMessageID(self) -> bool:
        return self._settings.disable_message_id

    def setDisableMessageTimestamp(self, value: bool) -> JMSProducer:
        self._settings.disable_timestamp = bool(value)
        return self

    def getDisableMessageTimestamp(self) -> bool:
        return self._settings.disable_timestamp

    def setAsync(self, completionListener: Any) -> JMSProducer:
        self._async = completionListener
        return self

    def getAsync(self) -> Any:
        return self._async

    @runtime
    def setProperty(self, name: str, value: Any) -> JMSProducer:
        # Validate name and type now, with a scratch message, so errors come from the setter.
        probe = Message()
        try:
            probe.setObjectProperty(name, value)
        except JMSException as exc:
            raise MessageFormatRuntimeException(exc.reason, exc.error_code, exc) from exc
        self._properties[name] = value
        return self

    def clearProperties(self) -> JMSProducer:
        self._properties.clear()
        return self

    def propertyExists(self, name: str) -> bool:
        return name in self._properties

    def getPropertyNames(self) -> set[str]:
        return set(self._properties)

    def getObjectProperty(self, name: str) -> Any:
        return self._properties.get(name)

    @runtime
    def setJMSCorrelationID(self, correlationID: str | None) -> JMSProducer:
        self._correlation_id = correlationID
        return self

    def getJMSCorrelationID(self) -> str | None:
        cid = self._correlation_id
        return cid if not isinstance(cid, bytes) else None

    def setJMSCorrelationIDAsBytes(self, correlationID: bytes | None) -> JMSProducer:
        self._correlation_id = None if correlationID is None else bytes(correlationID)
        return self

    def getJMSCorrelationIDAsBytes(self) -> bytes | None:
        cid = self._correlation_id
        return cid if isinstance(cid, bytes) else None

    def setJMSType(self, type: str | None) -> JMSProducer:
        self._type = type
        return self

    def getJMSType(self) -> str | None:
        return self._type

    def setJMSReplyTo(self, replyTo: Destination | None) -> JMSProducer:
        self._reply_to = replyTo
        return self

    def getJMSReplyTo(self) -> Destination | None:
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
        return self._consumer.receive(timeout)

    @runtime
    def receiveNoWait(self) -> Message | None:
        return self._consumer.receiveNoWait()

    @runtime
    def receiveBody(self, c: type[_T], timeout: int | None = None) -> _T | None:
        body: _T | None = self._receive_body(c, check_receive_timeout(timeout), no_wait=False)
        return body

    @runtime
    def receiveBodyNoWait(self, c: type[_T]) -> _T | None:
        body: _T | None = self._receive_body(c, 0.0, no_wait=True)
        return body

    @runtime
    def setMessageListener(self, listener: ListenerLike | None) -> None:
        self._consumer.setMessageListener(listener)

    @runtime
    def getMessageListener(self) -> ListenerLike | None:
        return self._consumer.getMessageListener()

    @runtime
    def setBatchMessageListener(
        self, listener: BatchListenerLike | None, batchSize: int = 1, batchTimeout: int = 0
    ) -> None:
        self._consumer.setBatchMessageListener(listener, batchSize, batchTimeout)

    @runtime
    def getBatchMessageListener(self) -> BatchListenerLike | None:
        return self._consumer.getBatchMessageListener()

    @runtime
    def getMessageSelector(self) -> str | None:
        return self._consumer.getMessageSelector()

    @runtime
    def close(self) -> None:
        self._consumer.close()

    def __enter__(self) -> JMSConsumer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __iter__(self) -> Any:
        return iter(self._consumer)
