"""The provider's view of a message, modelled on Qpid JMS's ``AmqpJmsMessageFacade``.

:class:`MessageFacade` owns the storage of a message's headers and properties and offers the
small typed surface through which the codec fills a received message and reads one to send, and
through which the producer and consumer stamp provider-set values (JMSXUserID, the delivery
count, the acknowledge callback). :class:`~jmspy.message.Message` extends it with the
``jakarta.jms`` API, and each body type adds its own typed body accessors.

Naming: the JMS API is camelCase (``getJMSPriority``); the facade is snake_case
(``get_wire_fields``, ``set_received_header``) and is meant for the provider, not applications.
Reads and writes are grouped per AMQP section so the hot send and receive paths make one call
per section rather than one per field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from jmspy.destination import Destination
from jmspy.message.java import TypedValue
from jmspy.message.names import DEFAULT_PRIORITY, DeliveryMode

__all__ = ["MessageFacade", "WireFields"]

# What get_wire_fields returns, in this order: delivery mode, priority, destination, reply-to,
# delivery time, message id, correlation id (str, bytes or None, as stored), JMSXUserID, JMSType,
# expiration, timestamp, JMSXGroupID, JMSXGroupSeq. A plain tuple: this runs on every send.
WireFields = tuple[
    int,
    int,
    Destination | None,
    Destination | None,
    int,
    str | None,
    str | bytes | None,
    str | None,
    str | None,
    int,
    int,
    str | None,
    int | None,
]


class MessageFacade:
    """Header and property storage plus the provider surface of a message.

    Fields are plain instance attributes with class-level defaults, so creating a message only
    allocates what is actually set.
    """

    # The x-opt-jms-msg-type byte of the body type.
    jms_msg_type: ClassVar[int] = 0
    # Only ObjectMessage takes JMS_AMQP_TYPED_ENCODING (Qpid JMS: MessageFormatException else).
    _accepts_typed_encoding: ClassVar[bool] = False

    _message_id: str | None = None
    _timestamp: int = 0
    _correlation_id: str | bytes | None = None
    _reply_to: Destination | None = None
    _destination: Destination | None = None
    _delivery_mode: int = DeliveryMode.PERSISTENT
    _redelivered: bool = False
    _type: str | None = None
    _expiration: int = 0
    _delivery_time: int = 0
    _priority: int = DEFAULT_PRIORITY
    # Ordinary and vendor (JMS_AMQP_*) properties: name -> (JavaType, value). None until used.
    _properties: dict[str, TypedValue] | None = None
    # JMSX properties mapped onto AMQP fields rather than application properties.
    _group_id: str | None = None
    _group_seq: int | None = None
    _user_id: str | None = None
    _delivery_count: int | None = None
    _read_only_properties: bool = False
    _read_only_body: bool = False
    # jms.validatePropertyNames; the consumer may turn it off for received messages.
    _validate_names: bool = True
    # Set by a CLIENT/INDIVIDUAL acknowledge consumer; Message.acknowledge() calls it.
    # It takes the JMS_AMQP_ACK_TYPE to settle with (1, accepted, unless the property says).
    _acknowledge_callback: Callable[[int], None] | None = None
    # JMS_AMQP_ACK_TYPE chosen for the next acknowledge() (1..5), passed to the callback.
    _ack_type: int | None = None

    # -- sending: read ----------------------------------------------------------------------

    def get_wire_fields(self) -> WireFields:
        """The header, annotation and properties-section values, in :data:`WireFields` order."""
        return (
            self._delivery_mode,
            self._priority,
            self._destination,
            self._reply_to,
            self._delivery_time,
            self._message_id,
            self._correlation_id,
            self._user_id,
            self._type,
            self._expiration,
            self._timestamp,
            self._group_id,
            self._group_seq,
        )

    def get_properties(self) -> dict[str, TypedValue] | None:
        """The stored application and vendor properties (the live map; None when none is set).

        JMSX properties carried in AMQP fields and JMS headers are not in it.
        """
        return self._properties

    def get_group_id(self) -> str | None:
        """JMSXGroupID (AMQP ``properties.group-id``), or None."""
        return self._group_id

    def get_group_seq(self) -> int | None:
        """JMSXGroupSeq (AMQP ``properties.group-sequence``), or None."""
        return self._group_seq

    def get_delivery_count(self) -> int | None:
        """JMSXDeliveryCount as received (None on a message that was never received)."""
        return self._delivery_count

    # -- sending: provider-set values ---------------------------------------------------------

    def set_user_id(self, user_id: str | None) -> None:
        """JMSXUserID as the producer stamps it (the authenticated user, or cleared)."""
        self._user_id = user_id

    def stamp_for_send(
        self,
        destination: Destination,
        delivery_mode: int,
        priority: int,
        timestamp: int,
        expiration: int,
        delivery_time: int,
        message_id: str | None,
        user_id: str | None,
    ) -> None:
        """The headers the producer sets at send, all at once; the producer has validated
        every value (the setters would check them again, per message)."""
        self._destination = destination
        self._delivery_mode = delivery_mode
        self._priority = priority
        self._redelivered = False
        self._timestamp = timestamp
        self._expiration = expiration
        self._delivery_time = delivery_time
        self._message_id = message_id
        self._user_id = user_id

    # -- receiving: fill ---------------------------------------------------------------------

    def set_received_header(self, durable: bool, priority: int | None, delivery_count: int) -> None:
        """The AMQP header: durable, priority (None: the default) and the broker's
        delivery-count (prior failed attempts), which gives JMSXDeliveryCount and
        JMSRedelivered."""
        if not durable:
            self._delivery_mode = DeliveryMode.NON_PERSISTENT
        if priority is not None:
            self._priority = priority
        self._redelivered = delivery_count > 0
        self._delivery_count = delivery_count + 1

    def set_received_properties(
        self,
        message_id: str | None,
        user_id: str | None,
        jms_type: str | None,
        correlation_id: str | bytes | None,
        expiration: int,
        timestamp: int,
        group_id: str | None,
        group_seq: int | None,
    ) -> None:
        """The AMQP properties section, converted to JMS values by the codec."""
        self._message_id = message_id
        self._user_id = user_id
        self._type = jms_type
        self._correlation_id = correlation_id
        self._expiration = expiration
        self._timestamp = timestamp
        self._group_id = group_id
        self._group_seq = group_seq

    def set_received_destinations(
        self, destination: Destination | None, reply_to: Destination | None, delivery_time: int
    ) -> None:
        """JMSDestination, JMSReplyTo and JMSDeliveryTime of a received message."""
        self._destination = destination
        self._reply_to = reply_to
        self._delivery_time = delivery_time

    def set_received(
        self,
        durable: bool,
        priority: int | None,
        delivery_count: int,
        message_id: str | None,
        user_id: str | None,
        jms_type: str | None,
        correlation_id: str | bytes | None,
        expiration: int,
        timestamp: int,
        group_id: str | None,
        group_seq: int | None,
        destination: Destination | None,
        reply_to: Destination | None,
        delivery_time: int,
        validate_names: bool,
    ) -> None:
        """Everything the codec read from a received message's header, properties and
        annotations, at once (one call per message instead of four on the receive path).
        The same as :meth:`set_received_header`, :meth:`set_received_properties`,
        :meth:`set_received_destinations` and :meth:`set_name_validation`."""
        if not durable:
            self._delivery_mode = DeliveryMode.NON_PERSISTENT
        if priority is not None:
            self._priority = priority
        self._redelivered = delivery_count > 0
        self._delivery_count = delivery_count + 1
        self._message_id = message_id
        self._user_id = user_id
        self._type = jms_type
        self._correlation_id = correlation_id
        self._expiration = expiration
        self._timestamp = timestamp
        self._group_id = group_id
        self._group_seq = group_seq
        self._destination = destination
        self._reply_to = reply_to
        self._delivery_time = delivery_time
        self._validate_names = validate_names

    def get_property_store(self) -> dict[str, TypedValue]:
        """The property map to fill with received application properties (created if absent)."""
        props = self._properties
        if props is None:
            self._properties = props = {}
        return props

    def set_name_validation(self, validate: bool) -> None:
        """jms.validatePropertyNames for reads of this message's property names."""
        self._validate_names = validate

    def set_read_only(self, read_only: bool) -> None:
        """Mark properties and body read-only (a received message) or writeable again.

        Body types with a read/write mode extend it (BytesMessage, StreamMessage)."""
        self._read_only_properties = read_only
        self._read_only_body = read_only

    # -- receiving: consumer hooks -------------------------------------------------------------

    def set_acknowledge_callback(self, callback: Callable[[int], None] | None) -> None:
        """What Message.acknowledge() calls (CLIENT_ and INDIVIDUAL_ACKNOWLEDGE sessions)."""
        self._acknowledge_callback = callback

    def set_delivery_count(self, count: int | None) -> None:
        """JMSXDeliveryCount (provider-set; the consumer bumps it on recover())."""
        self._delivery_count = count
        if count is not None and count > 1:
            self._redelivered = True
