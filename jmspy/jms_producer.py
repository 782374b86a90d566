"""JMSProducer: the simplified API's producer with chained setters (JMS 2.0 section 7.2).

Re-exported by :mod:`jmspy.context`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, overload

from ._runtime import runtime
from ._twins.jms_producer import JMSProducerTwins
from .destination import Destination
from .errors import (
    InvalidDestinationRuntimeException,
    JMSException,
    MessageFormatRuntimeException,
)
from .message import Message, message_for_body
from .message.headers import check_header_text, check_reply_to
from .message.java import _check_bytes_value
from .producer import MessageProducer, check_completion_listener
from .producer_settings import ProducerSettings, validate_milliseconds

__all__ = ["JMSProducer"]


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
        # Checked before anything is applied to the message (rule JMS-47): a queue name given
        # as a str used to fail deep in the send with an AttributeError.
        if destination is None:
            raise InvalidDestinationRuntimeException("Destination must not be null [rule JMS-47]")
        if not isinstance(destination, Destination):
            raise InvalidDestinationRuntimeException(
                f"Destination must be a Queue or Topic (from createQueue/createTopic), not "
                f"{type(destination).__name__}: {destination!r} [rule JMS-47]"
            )
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
        Returns this producer. Anything but None or an object with callable ``onCompletion``
        and ``onException`` raises IllegalArgumentException (rule JMS-39).
        """
        if completionListener is not None:
            check_completion_listener(completionListener, "setAsync")
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

    def _converted(self, name: str, getter: Callable[[Message, str], Any]) -> Any:
        # The message property conversion table (rule JMS-45) applies as on a Message: the
        # value is read back through a scratch message holding it.
        probe = Message()
        if name in self._properties:
            probe.setObjectProperty(name, self._properties[name])
        return getter(probe, name)

    @runtime
    def getBooleanProperty(self, name: str) -> bool:
        """Property ``name`` as a boolean (false when unset); MessageFormatRuntimeException
        when its type does not convert (the conversion table of Message properties)."""
        return bool(self._converted(name, Message.getBooleanProperty))

    @runtime
    def getByteProperty(self, name: str) -> int:
        """Property ``name`` as a byte; NumberFormatException when unset or not a number,
        MessageFormatRuntimeException when its type does not convert."""
        return int(self._converted(name, Message.getByteProperty))

    @runtime
    def getShortProperty(self, name: str) -> int:
        """Property ``name`` as a short; NumberFormatException when unset or not a number,
        MessageFormatRuntimeException when its type does not convert."""
        return int(self._converted(name, Message.getShortProperty))

    @runtime
    def getIntProperty(self, name: str) -> int:
        """Property ``name`` as an int; NumberFormatException when unset or not a number,
        MessageFormatRuntimeException when its type does not convert."""
        return int(self._converted(name, Message.getIntProperty))

    @runtime
    def getLongProperty(self, name: str) -> int:
        """Property ``name`` as a long; NumberFormatException when unset or not a number,
        MessageFormatRuntimeException when its type does not convert."""
        return int(self._converted(name, Message.getLongProperty))

    @runtime
    def getFloatProperty(self, name: str) -> float:
        """Property ``name`` as a float; NumberFormatException when unset or not a number,
        MessageFormatRuntimeException when its type does not convert."""
        return float(self._converted(name, Message.getFloatProperty))

    @runtime
    def getDoubleProperty(self, name: str) -> float:
        """Property ``name`` as a double; NumberFormatException when unset or not a number,
        MessageFormatRuntimeException when its type does not convert."""
        return float(self._converted(name, Message.getDoubleProperty))

    @runtime
    def getStringProperty(self, name: str) -> str | None:
        """Property ``name`` as a string (None when unset); MessageFormatRuntimeException
        when its type does not convert."""
        value = self._converted(name, Message.getStringProperty)
        return None if value is None else str(value)

    @runtime
    def setJMSCorrelationID(self, correlationID: str | None) -> JMSProducer:
        """Set the JMSCorrelationID of messages sent; returns this producer.

        It replaces the message's own (JMS-46); JMSRuntimeException unless a str or None.
        """
        check_header_text(correlationID, "JMSCorrelationID")
        self._correlation_id = correlationID
        return self

    def getJMSCorrelationID(self) -> str | None:
        """The correlation id set as a string, or None."""
        cid = self._correlation_id
        return cid if not isinstance(cid, bytes) else None

    @runtime
    def setJMSCorrelationIDAsBytes(self, correlationID: bytes | None) -> JMSProducer:
        """Set the JMSCorrelationID as bytes for messages sent (JMS-46); returns this producer.

        MessageFormatRuntimeException unless bytes-like or None (an int would make that many
        zero bytes)."""
        if correlationID is not None:
            _check_bytes_value(correlationID, "setJMSCorrelationIDAsBytes")
        self._correlation_id = None if correlationID is None else bytes(correlationID)
        return self

    def getJMSCorrelationIDAsBytes(self) -> bytes | None:
        """The correlation id set as bytes, or None."""
        cid = self._correlation_id
        return cid if isinstance(cid, bytes) else None

    @runtime
    def setJMSType(self, type: str | None) -> JMSProducer:
        """Set the JMSType of messages sent; returns this producer.

        It replaces the message's own (JMS-46); JMSRuntimeException unless a str or None.
        """
        check_header_text(type, "JMSType")
        self._type = type
        return self

    def getJMSType(self) -> str | None:
        """The JMSType set, or None."""
        return self._type

    @runtime
    def setJMSReplyTo(self, replyTo: Destination | None) -> JMSProducer:
        """Set the JMSReplyTo of messages sent; returns this producer.

        It replaces the message's own (JMS-46); InvalidDestinationRuntimeException unless a
        Destination or None.
        """
        check_reply_to(replyTo)
        self._reply_to = replyTo
        return self

    def getJMSReplyTo(self) -> Destination | None:
        """The JMSReplyTo set, or None."""
        return self._reply_to
