"""The JMS header accessors of a message (``getJMSMessageID`` ... ``setJMSPriority``).

A layer of :class:`~jmspy.message.base.Message`, kept apart from the typed properties and the
body; the storage is :class:`MessageFacade`. This module must not import proton.
"""

from __future__ import annotations

from jmspy._limits import check_java_long
from jmspy._twins.message_headers import MessageHeadersTwins
from jmspy.destination import Destination
from jmspy.errors import InvalidDestinationException, JMSException
from jmspy.message.facade import MessageFacade
from jmspy.message.java import _check_bytes_value
from jmspy.message.names import DeliveryMode

__all__ = ["MessageHeaders", "check_header_text", "check_reply_to"]


def check_header_text(value: object, header: str) -> None:
    """A JMSCorrelationID or JMSType is a str or None: anything else is refused when it is
    set, naming it, rather than at send or never (rule JMS-46)."""
    if value is not None and not isinstance(value, str):
        raise JMSException(f"{header} must be a str or None, not {type(value).__name__}: {value!r}")


def check_reply_to(value: object) -> None:
    """A JMSReplyTo is a Destination or None (a queue name as a str is a caller mistake that
    used to fail only at send, as an encoding error)."""
    if value is not None and not isinstance(value, Destination):
        raise InvalidDestinationException(
            f"JMSReplyTo must be a Destination or None, not {type(value).__name__}: {value!r}"
        )


class MessageHeaders(MessageFacade, MessageHeadersTwins):
    """The JMS header getters and setters of :class:`~jmspy.message.base.Message`."""

    # -- headers --------------------------------------------------------------------------

    def getJMSMessageID(self) -> str | None:
        """The JMSMessageID (``ID:...``) set by the provider at send.

        None when ids are disabled or the message was not sent.
        """
        return self._message_id

    def setJMSMessageID(self, value: str | None) -> None:
        """Set the JMSMessageID; the provider replaces it at send."""
        self._message_id = value

    def getJMSTimestamp(self) -> int:
        """The JMSTimestamp: when the message was sent, in milliseconds since the epoch.

        0 when timestamps are disabled or the message was not sent.
        """
        return self._timestamp

    def setJMSTimestamp(self, value: int) -> None:
        """Set the JMSTimestamp in milliseconds; the provider replaces it at send.

        Raises JMSException unless ``value`` is a Java long.
        """
        self._timestamp = check_java_long("JMSTimestamp", value)

    def getJMSCorrelationID(self) -> str | None:
        """The JMSCorrelationID as a string, or None.

        A binary correlation id is shown as ``ID:AMQP_BINARY:<hex>``, as Qpid JMS shows it.
        """
        cid = self._correlation_id
        if isinstance(cid, bytes):
            # Qpid JMS shows a binary correlation-id in its escaped string form.
            return "ID:AMQP_BINARY:" + cid.hex().upper()
        return cid

    def setJMSCorrelationID(self, value: str | None) -> None:
        """Set the JMSCorrelationID; raises JMSException when ``value`` is not a str or None."""
        check_header_text(value, "JMSCorrelationID")
        self._correlation_id = value

    def getJMSCorrelationIDAsBytes(self) -> bytes | None:
        """The binary JMSCorrelationID, or None; JMSException when it is a string id."""
        cid = self._correlation_id
        if cid is None:
            return None
        if not isinstance(cid, bytes):
            raise JMSException(
                "The underlying correlation-id is not binary and so can't be returned as bytes"
            )
        return cid

    def setJMSCorrelationIDAsBytes(self, value: bytes | bytearray | None) -> None:
        """Set a binary JMSCorrelationID (sent as AMQP binary).

        Raises MessageFormatException unless ``value`` is bytes-like or None.
        """
        if value is not None:
            _check_bytes_value(value, "setJMSCorrelationIDAsBytes")
        self._correlation_id = None if value is None else bytes(value)

    def getJMSReplyTo(self) -> Destination | None:
        """The destination replies should go to, or None."""
        return self._reply_to

    def setJMSReplyTo(self, value: Destination | None) -> None:
        """Set the destination replies should go to (None: no reply expected).

        Raises InvalidDestinationException unless ``value`` is a Destination or None."""
        check_reply_to(value)
        self._reply_to = value

    def getJMSDestination(self) -> Destination | None:
        """The destination the message was sent to (set by the provider at send)."""
        return self._destination

    def setJMSDestination(self, value: Destination | None) -> None:
        """Set JMSDestination; the provider replaces it at send."""
        self._destination = value

    def getJMSDeliveryMode(self) -> int:
        """The delivery mode: ``DeliveryMode.PERSISTENT`` (2) or ``NON_PERSISTENT`` (1)."""
        return self._delivery_mode

    def setJMSDeliveryMode(self, value: int) -> None:
        """Set JMSDeliveryMode; the provider replaces it at send.

        Raises JMSException unless ``value`` is PERSISTENT (2) or NON_PERSISTENT (1).
        """
        if isinstance(value, bool) or value not in (
            DeliveryMode.NON_PERSISTENT,
            DeliveryMode.PERSISTENT,
        ):
            raise JMSException(
                f"Invalid DeliveryMode specified: {value!r} (use DeliveryMode.PERSISTENT=2 or "
                "DeliveryMode.NON_PERSISTENT=1)"
            )
        self._delivery_mode = value

    def getJMSRedelivered(self) -> bool:
        """Whether the message was delivered before.

        On receipt, AMQP ``delivery-count`` above 0 (rule WM-10).
        """
        return self._redelivered

    def setJMSRedelivered(self, value: bool) -> None:
        """Set JMSRedelivered; the provider sets it on receipt."""
        self._redelivered = bool(value)

    def getJMSType(self) -> str | None:
        """The JMSType (AMQP ``properties.subject``, rule WM-13), or None."""
        return self._type

    def setJMSType(self, value: str | None) -> None:
        """Set the JMSType, an application-defined type name; JMSException unless a str or
        None."""
        check_header_text(value, "JMSType")
        self._type = value

    def getJMSExpiration(self) -> int:
        """The JMSExpiration: milliseconds since the epoch when it expires (0: never)."""
        return self._expiration

    def setJMSExpiration(self, value: int) -> None:
        """Set JMSExpiration in milliseconds; JMSException unless a Java long. Replaced at send."""
        self._expiration = check_java_long("JMSExpiration", value)

    def getJMSDeliveryTime(self) -> int:
        """The JMSDeliveryTime: milliseconds since the epoch before which it is not delivered."""
        return self._delivery_time

    def setJMSDeliveryTime(self, value: int) -> None:
        """Set JMSDeliveryTime in milliseconds; the provider replaces it at send.

        Raises JMSException unless ``value`` is a Java long.
        """
        self._delivery_time = check_java_long("JMSDeliveryTime", value)

    def getJMSPriority(self) -> int:
        """The JMSPriority, 0 (lowest) to 9 (highest)."""
        return self._priority

    def setJMSPriority(self, value: int) -> None:
        """Set JMSPriority, 0 to 9 (else JMSException naming the value); replaced at send."""
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 9:
            raise JMSException(f"Priority value given {value!r} is out of range (0..9)")
        self._priority = int(value)
