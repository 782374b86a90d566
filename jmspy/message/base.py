"""The base JMS message: headers and typed properties, no body (``jakarta.jms.Message``).

Method names follow ``jakarta.jms`` so code ported from Java reads the same. Python has a single
``int`` and a single ``float`` type, so every property is stored with its Java type tag
(:class:`~jmspy.message.java.JavaType`); the tag drives both the JMS conversion tables and the
AMQP type used on the wire. This module must not import proton.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

from jmspy._twins.message_base import MessageTwins
from jmspy.enumeration import Enumeration
from jmspy.errors import (
    IllegalArgumentException,
    JMSException,
    MessageFormatException,
    MessageNotWriteableException,
    NumberFormatException,
)
from jmspy.message.headers import MessageHeaders
from jmspy.message.java import (
    _BOOLEAN,
    _BYTE,
    _BYTE_MAX,
    _BYTE_MIN,
    _DOUBLE,
    _FLOAT,
    _INT,
    _INT_MAX,
    _INT_MIN,
    _LONG,
    _LONG_MAX,
    _LONG_MIN,
    _MISSING,
    _SHORT,
    _SHORT_MAX,
    _SHORT_MIN,
    _STRING,
    _UINT_MAX,
    JavaType,
    TypedValue,
    _as_boolean,
    _as_byte,
    _as_double,
    _as_float,
    _as_int,
    _as_long,
    _as_short,
    _as_string,
    _check_float,
    _check_range,
    _message_format,
    _plain,
    _to_float32,
    _typed_object,
)
from jmspy.message.names import (
    _HEADER_NAMES,
    _SPECIAL_NAMES,
    _VALID_NAME_CACHE,
    JMS_AMQP_ACK_TYPE,
    JMS_AMQP_TTL,
    JMS_AMQP_TYPED_ENCODING,
    JMSX_DELIVERY_COUNT,
    JMSX_GROUP_ID,
    JMSX_GROUP_SEQ,
    JMSX_USER_ID,
    DeliveryMode,
    _check_name,
    _name_problem,
)

__all__ = ["Message"]

_T = TypeVar("_T")


class Message(MessageHeaders, MessageTwins):
    """A JMS message with headers and properties and no body (``jakarta.jms.Message``).

    The storage and the provider's surface are in :class:`MessageFacade`, the header accessors in
    :class:`MessageHeaders`; application code uses the Java-style methods below.
    """

    # -- properties: internal access ------------------------------------------------------

    def _check_properties_writeable(self) -> None:
        if self._read_only_properties:
            raise MessageNotWriteableException("Message properties are read-only")

    def _get_typed(self, name: Any) -> TypedValue:
        """The (JavaType, value) stored under a validated name; _MISSING when absent."""
        name = _check_name(name, self._validate_names)
        if name in _SPECIAL_NAMES:
            tv = self._get_special(name)
            if tv[1] is not None:
                return tv
        # A received message may also carry e.g. JMSXUserID as a plain application property;
        # Qpid JMS falls back to it when the dedicated AMQP field is absent.
        props = self._properties
        if props is not None:
            found = props.get(name)
            if found is not None:
                return found
        return _MISSING

    # The selector's read of a property or header (part of the provider surface).
    get_typed_property = _get_typed

    def _get_special(self, name: str) -> TypedValue:
        if name == JMSX_GROUP_ID:
            return (_STRING, self._group_id)
        if name == JMSX_GROUP_SEQ:
            return _MISSING if self._group_seq is None else (_INT, self._group_seq)
        if name == JMSX_USER_ID:
            return (_STRING, self._user_id)
        if name == JMSX_DELIVERY_COUNT:
            return _MISSING if self._delivery_count is None else (_INT, self._delivery_count)
        if name == JMS_AMQP_ACK_TYPE:
            return _MISSING if self._ack_type is None else (_INT, self._ack_type)
        if name in (JMS_AMQP_TTL, JMS_AMQP_TYPED_ENCODING):
            return _MISSING
        # JMS headers, with the value types Qpid JMS hands to selectors.
        if name == "JMSDestination":
            d = self._destination
            return (_STRING, None if d is None else d.address)
        if name == "JMSReplyTo":
            r = self._reply_to
            return (_STRING, None if r is None else r.address)
        if name == "JMSType":
            return (_STRING, self._type)
        if name == "JMSDeliveryMode":
            persistent = self._delivery_mode == DeliveryMode.PERSISTENT
            return (_STRING, "PERSISTENT" if persistent else "NON_PERSISTENT")
        if name == "JMSPriority":
            return (_INT, self._priority)
        if name == "JMSMessageID":
            return (_STRING, self._message_id)
        if name == "JMSTimestamp":
            return _MISSING if not self._timestamp else (_LONG, self._timestamp)
        if name == "JMSCorrelationID":
            return (_STRING, self.getJMSCorrelationID())
        if name == "JMSExpiration":
            return _MISSING if not self._expiration else (_LONG, self._expiration)
        if name == "JMSRedelivered":
            return (_BOOLEAN, self._redelivered)
        if name == "JMSDeliveryTime":
            return _MISSING if not self._delivery_time else (_LONG, self._delivery_time)
        return _MISSING  # pragma: no cover - every special name is handled above

    def _special_exists(self, name: str) -> bool:
        if name in _HEADER_NAMES:
            return False  # headers are not properties for getPropertyNames/propertyExists
        if name == JMSX_GROUP_ID:
            return self._group_id is not None
        if name == JMSX_GROUP_SEQ:
            return self._group_seq is not None
        if name == JMSX_USER_ID:
            return self._user_id is not None
        if name == JMSX_DELIVERY_COUNT:
            return self._delivery_count is not None
        if name == JMS_AMQP_ACK_TYPE:
            return self._ack_type is not None
        return False

    def _set_typed(self, name: Any, tv: TypedValue) -> None:
        # Qpid checks the name before the read-only state, so a bad name on a received message
        # is still an IllegalArgumentException.
        name = _check_name(name, True)
        if name == JMS_AMQP_ACK_TYPE:
            # Settable on received (read-only) messages: it steers the acknowledge outcome.
            self._set_ack_type(tv)
            return
        self._check_properties_writeable()
        if name in _SPECIAL_NAMES:
            self._set_special(name, tv)
            return
        props = self._properties
        if props is None:
            self._properties = props = {}
        props[name] = tv

    def _set_ack_type(self, tv: TypedValue) -> None:
        if self._acknowledge_callback is None:
            raise JMSException(
                "Session Acknowledgement Mode does not allow setting: "
                + JMS_AMQP_ACK_TYPE
                + " (only CLIENT_ACKNOWLEDGE and INDIVIDUAL_ACKNOWLEDGE consumers) [rule WM-16]"
            )
        if tv[1] is None:
            self._ack_type = None
            return
        value = _as_int(*tv)
        if not 1 <= value <= 5:
            raise JMSException(
                f"Invalid {JMS_AMQP_ACK_TYPE} value {value}: use 1 (ACCEPTED), 2 (REJECTED), "
                "3 (RELEASED), 4 (MODIFIED_FAILED) or 5 (MODIFIED_FAILED_UNDELIVERABLE) "
                "[rule WM-16]"
            )
        self._ack_type = value

    def _set_special(self, name: str, tv: TypedValue) -> None:
        jt, v = tv
        try:
            if name == JMSX_GROUP_ID:
                self._group_id = _as_string(jt, v)
            elif name == JMSX_GROUP_SEQ:
                self._group_seq = None if v is None else _as_int(jt, v)
            elif name == JMSX_USER_ID:
                self._user_id = _as_string(jt, v)
            elif name == JMSX_DELIVERY_COUNT:
                raise MessageNotWriteableException(
                    "JMSXDeliveryCount is set by the provider on receipt and cannot be set"
                )
            elif name == JMS_AMQP_TTL:
                self._set_amqp_ttl(tv)
            elif name == JMS_AMQP_TYPED_ENCODING:
                self._set_typed_encoding(tv)
            elif name in ("JMSDestination", "JMSReplyTo"):
                raise JMSException(f"Cannot set {name} as a property, use set{name}() instead")
            elif name == "JMSType":
                self._type = _as_string(jt, v)
            elif name == "JMSDeliveryMode":
                self._set_delivery_mode_property(jt, v)
            elif name == "JMSPriority":
                self.setJMSPriority(_as_int(jt, v))
            elif name == "JMSMessageID":
                self._message_id = _as_string(jt, v)
            elif name == "JMSTimestamp":
                self._timestamp = _as_long(jt, v)
            elif name == "JMSCorrelationID":
                self._correlation_id = _as_string(jt, v)
            elif name == "JMSExpiration":
                self._expiration = _as_long(jt, v)
            elif name == "JMSRedelivered":
                self._redelivered = _as_boolean(jt, v)
            elif name == "JMSDeliveryTime":
                self._delivery_time = _as_long(jt, v)
        except NumberFormatException as exc:
            raise _message_format(exc, name) from exc

    def _set_delivery_mode_property(self, jt: JavaType, v: Any) -> None:
        if jt is _BOOLEAN:
            self._delivery_mode = DeliveryMode.PERSISTENT if v else DeliveryMode.NON_PERSISTENT
            return
        if jt is _STRING and v in ("PERSISTENT", "NON_PERSISTENT"):
            persistent = v == "PERSISTENT"
            self._delivery_mode = (
                DeliveryMode.PERSISTENT if persistent else DeliveryMode.NON_PERSISTENT
            )
            return
        self.setJMSDeliveryMode(_as_int(jt, v))

    def _set_amqp_ttl(self, tv: TypedValue) -> None:
        if tv[1] is None:
            self._remove_property(JMS_AMQP_TTL)
            return
        ttl = _as_long(*tv)
        if not 0 <= ttl <= _UINT_MAX:
            raise MessageFormatException(
                f"{JMS_AMQP_TTL} value {ttl} is out of range: it must be 0..{_UINT_MAX}"
            )
        self._store(JMS_AMQP_TTL, (_LONG, ttl))

    def _set_typed_encoding(self, tv: TypedValue) -> None:
        if not self._accepts_typed_encoding:
            raise MessageFormatException(
                f"{JMS_AMQP_TYPED_ENCODING} is only supported on ObjectMessage"
            )
        if tv[1] is None:
            self._remove_property(JMS_AMQP_TYPED_ENCODING)
            return
        self._store(JMS_AMQP_TYPED_ENCODING, (_BOOLEAN, _as_boolean(*tv)))

    def _store(self, name: str, tv: TypedValue) -> None:
        props = self._properties
        if props is None:
            self._properties = props = {}
        props[name] = tv

    def _remove_property(self, name: str) -> None:
        if self._properties is not None:
            self._properties.pop(name, None)

    # -- properties: public API -----------------------------------------------------------

    def propertyExists(self, name: str) -> bool:
        """Whether property ``name`` is set.

        An invalid name is simply absent; headers are not properties.
        """
        try:
            name = _check_name(name, self._validate_names)
        except IllegalArgumentException:
            return False
        props = self._properties
        if props is not None and name in props:
            return True
        return name in _SPECIAL_NAMES and self._special_exists(name)

    def getPropertyNames(self) -> Enumeration[str]:
        """The names of the properties set, JMSX ones included: a list that is also a Java
        Enumeration (``hasMoreElements()``/``nextElement()``).

        Received names that no JMS setter accepts are left out, as Qpid JMS does.
        """
        names: Enumeration[str] = Enumeration()
        props = self._properties
        if props:
            if self._validate_names:
                # Received messages may carry names no JMS setter accepts (e.g. "sentry-trace");
                # Qpid JMS silently leaves them out.
                names.extend(n for n in props if n in _VALID_NAME_CACHE or not _name_problem(n))
            else:
                names.extend(props)
        for special in (
            JMSX_GROUP_ID,
            JMSX_GROUP_SEQ,
            JMSX_USER_ID,
            JMSX_DELIVERY_COUNT,
            JMS_AMQP_ACK_TYPE,
        ):
            # A received message may also carry the name as an application property (a
            # non-JMS producer's JMSXUserID, say): one name, as in Qpid JMS's name set.
            if self._special_exists(special) and not (props and special in props):
                names.append(special)
        return names

    def clearProperties(self) -> None:
        """Remove every property and make the properties writeable again (headers are kept)."""
        self._properties = None
        self._group_id = None
        self._group_seq = None
        self._user_id = None
        self._ack_type = None
        self._read_only_properties = False

    def setBooleanProperty(self, name: str, value: bool) -> None:
        """Set property ``name`` to a Java boolean; ``value`` must be a bool.

        Raises IllegalArgumentException for an invalid name (a reserved word, not a Java
        identifier), MessageNotWriteableException when the properties are read-only (a received
        message), and MessageFormatException for a value of the wrong type or out of range.
        """
        if not isinstance(value, bool):
            raise MessageFormatException(f"Value {value!r} is not a bool")
        self._set_typed(name, (_BOOLEAN, value))

    def setByteProperty(self, name: str, value: int) -> None:
        """Set property ``name`` to a Java byte (-128..127).

        Raises IllegalArgumentException for an invalid name (a reserved word, not a Java
        identifier), MessageNotWriteableException when the properties are read-only (a received
        message), and MessageFormatException for a value of the wrong type or out of range.
        """
        self._set_typed(name, (_BYTE, _check_range(value, _BYTE_MIN, _BYTE_MAX, "byte")))

    def setShortProperty(self, name: str, value: int) -> None:
        """Set property ``name`` to a Java short (-32768..32767).

        Raises IllegalArgumentException for an invalid name (a reserved word, not a Java
        identifier), MessageNotWriteableException when the properties are read-only (a received
        message), and MessageFormatException for a value of the wrong type or out of range.
        """
        self._set_typed(name, (_SHORT, _check_range(value, _SHORT_MIN, _SHORT_MAX, "short")))

    def setIntProperty(self, name: str, value: int) -> None:
        """Set property ``name`` to a Java int (32-bit).

        Raises IllegalArgumentException for an invalid name (a reserved word, not a Java
        identifier), MessageNotWriteableException when the properties are read-only (a received
        message), and MessageFormatException for a value of the wrong type or out of range.
        """
        self._set_typed(name, (_INT, _check_range(value, _INT_MIN, _INT_MAX, "int")))

    def setLongProperty(self, name: str, value: int) -> None:
        """Set property ``name`` to a Java long (64-bit).

        Raises IllegalArgumentException for an invalid name (a reserved word, not a Java
        identifier), MessageNotWriteableException when the properties are read-only (a received
        message), and MessageFormatException for a value of the wrong type or out of range.
        """
        self._set_typed(name, (_LONG, _check_range(value, _LONG_MIN, _LONG_MAX, "long")))

    def setFloatProperty(self, name: str, value: float) -> None:
        """Set property ``name`` to a Java float (rounded to 32 bits).

        Raises IllegalArgumentException for an invalid name (a reserved word, not a Java
        identifier), MessageNotWriteableException when the properties are read-only (a received
        message), and MessageFormatException for a value of the wrong type or out of range.
        """
        self._set_typed(name, (_FLOAT, _to_float32(_check_float(value, "float"))))

    def setDoubleProperty(self, name: str, value: float) -> None:
        """Set property ``name`` to a Java double.

        Raises IllegalArgumentException for an invalid name (a reserved word, not a Java
        identifier), MessageNotWriteableException when the properties are read-only (a received
        message), and MessageFormatException for a value of the wrong type or out of range.
        """
        self._set_typed(name, (_DOUBLE, _check_float(value, "double")))

    def setStringProperty(self, name: str, value: str | None) -> None:
        """Set property ``name`` to a Java String (or None).

        Raises IllegalArgumentException for an invalid name (a reserved word, not a Java
        identifier), MessageNotWriteableException when the properties are read-only (a received
        message), and MessageFormatException for a value of the wrong type or out of range.
        """
        if value is not None and not isinstance(value, str):
            raise MessageFormatException(f"Value {value!r} is not a str")
        self._set_typed(name, (_STRING, value))

    def setObjectProperty(self, name: str, value: Any) -> None:
        """Set a property from a Python value.

        bool -> boolean, int -> int (long when it does not fit in 32 bits), float -> double,
        str -> String, None -> null; JByte/JShort/JInt/JLong/JFloat/JChar force a Java type.
        Any other type (bytes, list, dict, objects) raises MessageFormatException.
        """
        # Qpid JMS checks the name, then the read-only state, then the value type.
        _check_name(name, True)
        if name != JMS_AMQP_ACK_TYPE:
            self._check_properties_writeable()
        self._set_typed(name, _typed_object(value, allow_bytes=False))

    def getBooleanProperty(self, name: str) -> bool:
        """The property ``name`` as a Java boolean, converted per the JMS conversion table.

        An absent property is false. Raises IllegalArgumentException for an invalid name,
        MessageFormatException when the stored type does not convert, NumberFormatException when a
        String value does not parse.
        """
        return _as_boolean(*self._get_typed(name))

    def getByteProperty(self, name: str) -> int:
        """The property ``name`` as a Java byte, converted per the JMS conversion table.

        An absent property raises NumberFormatException, as Java's ``valueOf(null)``. Raises
        IllegalArgumentException for an invalid name, MessageFormatException when the stored type
        does not convert, NumberFormatException when a String value does not parse.
        """
        return _as_byte(*self._get_typed(name))

    def getShortProperty(self, name: str) -> int:
        """The property ``name`` as a Java short, converted per the JMS conversion table.

        An absent property raises NumberFormatException, as Java's ``valueOf(null)``. Raises
        IllegalArgumentException for an invalid name, MessageFormatException when the stored type
        does not convert, NumberFormatException when a String value does not parse.
        """
        return _as_short(*self._get_typed(name))

    def getIntProperty(self, name: str) -> int:
        """The property ``name`` as a Java int, converted per the JMS conversion table.

        An absent property raises NumberFormatException, as Java's ``valueOf(null)``. Raises
        IllegalArgumentException for an invalid name, MessageFormatException when the stored type
        does not convert, NumberFormatException when a String value does not parse.
        """
        return _as_int(*self._get_typed(name))

    def getLongProperty(self, name: str) -> int:
        """The property ``name`` as a Java long, converted per the JMS conversion table.

        An absent property raises NumberFormatException, as Java's ``valueOf(null)``. Raises
        IllegalArgumentException for an invalid name, MessageFormatException when the stored type
        does not convert, NumberFormatException when a String value does not parse.
        """
        return _as_long(*self._get_typed(name))

    def getFloatProperty(self, name: str) -> float:
        """The property ``name`` as a Java float, converted per the JMS conversion table.

        An absent property raises NumberFormatException, as Java's ``valueOf(null)``. Raises
        IllegalArgumentException for an invalid name, MessageFormatException when the stored type
        does not convert, NumberFormatException when a String value does not parse.
        """
        return _as_float(*self._get_typed(name))

    def getDoubleProperty(self, name: str) -> float:
        """The property ``name`` as a Java double, converted per the JMS conversion table.

        An absent property raises NumberFormatException, as Java's ``valueOf(null)``. Raises
        IllegalArgumentException for an invalid name, MessageFormatException when the stored type
        does not convert, NumberFormatException when a String value does not parse.
        """
        return _as_double(*self._get_typed(name))

    def getStringProperty(self, name: str) -> str | None:
        """The property ``name`` as a Java String, converted per the JMS conversion table.

        An absent property is None. Raises IllegalArgumentException for an invalid name,
        MessageFormatException when the stored type does not convert, NumberFormatException when a
        String value does not parse.
        """
        return _as_string(*self._get_typed(name))

    def getObjectProperty(self, name: str) -> Any:
        """The property ``name`` as a plain Python value, or None when absent.

        A bool, int, float or str. Raises IllegalArgumentException for an invalid name.
        """
        jt, v = self._get_typed(name)
        return _plain(jt, v)

    def _get_property_type(self, name: str) -> JavaType | None:
        """The Java type a property is stored with (None when absent); for selectors and tests."""
        if not self.propertyExists(name):
            return None
        return self._get_typed(name)[0]

    # -- body -----------------------------------------------------------------------------

    def _check_body_writeable(self) -> None:
        if self._read_only_body:
            raise MessageNotWriteableException("Message body is read-only")

    def clearBody(self) -> None:
        """Empty the body and make it writeable again (properties are kept)."""
        self._read_only_body = False

    def _has_body(self) -> bool:
        return False

    def _body_value(self) -> Any:
        return None

    def _body_assignable(self, cls: type) -> bool:
        return False

    def getBody(self, cls: type[_T]) -> _T | None:
        """The body as ``cls`` (JMS 2.0 ``getBody``): None when there is no body."""
        if not self._has_body():
            return None
        if not self._body_assignable(cls):
            raise MessageFormatException(
                f"The body of a {type(self).__name__} cannot be assigned to {_cls_name(cls)}"
            )
        return cast("_T | None", self._body_value())

    def isBodyAssignableTo(self, cls: type) -> bool:
        """Whether :meth:`getBody` could return the body as ``cls`` (always true without a body)."""
        if not self._has_body():
            return True
        return self._body_assignable(cls)

    # -- provider hooks -------------------------------------------------------------------

    def acknowledge(self) -> None:
        """Acknowledge: every message the session delivered so far (CLIENT_ACKNOWLEDGE) or this
        one (INDIVIDUAL_ACKNOWLEDGE, rule JMS-67), settled with the outcome this message's
        ``JMS_AMQP_ACK_TYPE`` names, accepted by default (rule WM-16); a no-op when the session
        does not need it."""
        callback = self._acknowledge_callback
        if callback is not None:
            callback(self._ack_type or 1)

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} id={self._message_id!r} dest={self._destination!r} "
            f"props={len(self._properties or ())}>"
        )


def _cls_name(cls: Any) -> str:
    return getattr(cls, "__qualname__", repr(cls))


def _assignable(value_type: type, cls: Any) -> bool:
    try:
        return issubclass(value_type, cls)
    except TypeError:
        return False
