"""The JMS message model: headers, typed properties and the six body types.

Method names follow ``jakarta.jms`` so code ported from Java reads the same. Python has a single
``int`` and a single ``float`` type, so every property, map entry and stream item is stored with
its Java type tag (:class:`JavaType`); the tag drives both the JMS conversion tables and the AMQP
type used on the wire. :class:`JByte`, :class:`JShort`, :class:`JInt`, :class:`JLong`,
:class:`JFloat` and :class:`JChar` let callers force a Java type through the ``setObject*`` APIs.

This module must not import proton: it is the hot object on the send path and is also used by
code that never touches AMQP. Wire encoding lives in :mod:`jmspy._amqp.codec`, which reads the
private fields below directly.
"""

from __future__ import annotations

import copy
import decimal
import enum
import math
import pickle
import re
import struct
import unicodedata
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from jmspy._limits import check_java_long
from jmspy._pickle_policy import _DEFAULT_POLICY, DeserializationPolicy, _PolicyUnpickler
from jmspy.destination import Destination
from jmspy.errors import (
    IllegalArgumentException,
    JMSException,
    MessageEOFException,
    MessageFormatException,
    MessageNotReadableException,
    MessageNotWriteableException,
    NumberFormatException,
)

__all__ = [
    "DeliveryMode",
    "DEFAULT_PRIORITY",
    "DEFAULT_DELIVERY_MODE",
    "DEFAULT_TIME_TO_LIVE",
    "DEFAULT_DELIVERY_DELAY",
    "JavaType",
    "JByte",
    "JShort",
    "JInt",
    "JLong",
    "JFloat",
    "JChar",
    "DeserializationPolicy",
    "Message",
    "TextMessage",
    "BytesMessage",
    "MapMessage",
    "StreamMessage",
    "ObjectMessage",
    "message_for_body",
    "PYTHON_SERIALIZED_CONTENT_TYPE",
    "JAVA_SERIALIZED_CONTENT_TYPE",
]


class DeliveryMode:
    NON_PERSISTENT = 1
    PERSISTENT = 2


DEFAULT_PRIORITY = 4
DEFAULT_DELIVERY_MODE = DeliveryMode.PERSISTENT
DEFAULT_TIME_TO_LIVE = 0
DEFAULT_DELIVERY_DELAY = 0

PYTHON_SERIALIZED_CONTENT_TYPE = "application/x-python-serialized-object"
JAVA_SERIALIZED_CONTENT_TYPE = "application/x-java-serialized-object"

_BYTE_MIN, _BYTE_MAX = -(2**7), 2**7 - 1
_SHORT_MIN, _SHORT_MAX = -(2**15), 2**15 - 1
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


# ---------------------------------------------------------------------------------------------
# Java types
# ---------------------------------------------------------------------------------------------


class JavaType(enum.Enum):
    """The Java type a property, map entry or stream item was written as."""

    BOOLEAN = "boolean"
    BYTE = "byte"
    SHORT = "short"
    INT = "int"
    LONG = "long"
    FLOAT = "float"
    DOUBLE = "double"
    STRING = "String"
    CHAR = "char"  # Map/Stream only (and Qpid JMS accepts Character properties too)
    BYTES = "byte[]"  # Map/Stream only
    # A received AMQP value with no Java equivalent (binary, list, map, decimal, described...)
    # found in application properties or a foreign map/stream body. Only the *Object getters
    # return it; it is re-encoded unchanged if the message is sent on.
    OBJECT = "Object"


_BOOLEAN = JavaType.BOOLEAN
_BYTE = JavaType.BYTE
_SHORT = JavaType.SHORT
_INT = JavaType.INT
_LONG = JavaType.LONG
_FLOAT = JavaType.FLOAT
_DOUBLE = JavaType.DOUBLE
_STRING = JavaType.STRING
_CHAR = JavaType.CHAR
_BYTES = JavaType.BYTES
_OBJECT = JavaType.OBJECT

TypedValue = tuple[JavaType, Any]

_F32 = struct.Struct(">f")


def _to_float32(value: float) -> float:
    """Round a double to the nearest float32, as a Java ``(float)`` cast does."""
    try:
        return float(_F32.unpack(_F32.pack(value))[0])
    except OverflowError:
        # struct refuses values that round to infinity; Java yields +/-Infinity.
        return math.copysign(math.inf, value)


class JByte(int):
    """An ``int`` that is written as a Java ``byte``."""

    def __new__(cls, value: int) -> JByte:
        if not _BYTE_MIN <= value <= _BYTE_MAX:
            raise MessageFormatException(f"Value {value!r} is out of range for a Java byte")
        return super().__new__(cls, value)


class JShort(int):
    """An ``int`` that is written as a Java ``short``."""

    def __new__(cls, value: int) -> JShort:
        if not _SHORT_MIN <= value <= _SHORT_MAX:
            raise MessageFormatException(f"Value {value!r} is out of range for a Java short")
        return super().__new__(cls, value)


class JInt(int):
    """An ``int`` that is written as a Java ``int``."""

    def __new__(cls, value: int) -> JInt:
        if not _INT_MIN <= value <= _INT_MAX:
            raise MessageFormatException(f"Value {value!r} is out of range for a Java int")
        return super().__new__(cls, value)


class JLong(int):
    """An ``int`` that is written as a Java ``long`` even when it would fit in an int."""

    def __new__(cls, value: int) -> JLong:
        if not _LONG_MIN <= value <= _LONG_MAX:
            raise MessageFormatException(f"Value {value!r} is out of range for a Java long")
        return super().__new__(cls, value)


class JFloat(float):
    """A ``float`` that is written as a Java ``float`` (rounded to 32 bits)."""

    def __new__(cls, value: float) -> JFloat:
        return super().__new__(cls, _to_float32(float(value)))


class JChar(str):
    """A one-character ``str`` that is written as a Java ``char`` (one UTF-16 unit)."""

    def __new__(cls, value: str) -> JChar:
        if not isinstance(value, str) or len(value) != 1 or ord(value) > 0xFFFF:
            raise MessageFormatException(
                f"Value {value!r} is not a single UTF-16 character for a Java char"
            )
        return super().__new__(cls, value)


def _check_range(value: Any, lo: int, hi: int, java: str) -> int:
    # bool is an int subclass, but a Java numeric setter can never receive a boolean.
    if isinstance(value, bool) or not isinstance(value, int):
        raise MessageFormatException(
            f"Value {value!r} of type {type(value).__name__} is not a valid Java {java}"
        )
    if not lo <= value <= hi:
        raise MessageFormatException(f"Value {value!r} is out of range for a Java {java}")
    return int(value)


def _check_float(value: Any, java: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MessageFormatException(
            f"Value {value!r} of type {type(value).__name__} is not a valid Java {java}"
        )
    return float(value)


def _typed_object(value: Any, *, allow_bytes: bool) -> TypedValue:
    """Tag a value passed to setObjectProperty / MapMessage.setObject / writeObject."""
    t = type(value)
    # Exact-type fast paths first: this runs for every dict entry of message_for_body.
    if t is str:
        return (_STRING, value)
    if t is bool:
        return (_BOOLEAN, value)
    if t is int:
        if _INT_MIN <= value <= _INT_MAX:
            return (_INT, value)
        if _LONG_MIN <= value <= _LONG_MAX:
            return (_LONG, value)
        raise MessageFormatException(f"Value {value!r} is out of range for a Java long")
    if t is float:
        return (_DOUBLE, value)
    if value is None:
        return (_STRING, None)
    if isinstance(value, JByte):
        return (_BYTE, int(value))
    if isinstance(value, JShort):
        return (_SHORT, int(value))
    if isinstance(value, JInt):
        return (_INT, int(value))
    if isinstance(value, JLong):
        return (_LONG, int(value))
    if isinstance(value, JFloat):
        return (_FLOAT, float(value))
    if isinstance(value, JChar):
        return (_CHAR, str(value))
    if allow_bytes and isinstance(value, bytes | bytearray | memoryview):
        return (_BYTES, bytes(value))
    # Subclasses of the plain types (e.g. IntEnum, str enums) are accepted by their base.
    if isinstance(value, bool):
        return (_BOOLEAN, bool(value))
    if isinstance(value, int):
        return _typed_object(int(value), allow_bytes=allow_bytes)
    if isinstance(value, float):
        return (_DOUBLE, float(value))
    if isinstance(value, str):
        return (_STRING, str(value))
    allowed = "bool, int, float, str, None or a JByte/JShort/JInt/JLong/JFloat/JChar"
    if allow_bytes:
        allowed += ", bytes"
    raise MessageFormatException(
        f"Invalid object value type {type(value).__name__}: only {allowed} values are allowed"
    )


# ---------------------------------------------------------------------------------------------
# Java conversion rules (JMS 3.5.4 property table, 3.11.3 map/stream table)
# ---------------------------------------------------------------------------------------------

_INT_RE = re.compile(r"[+-]?\d+")
# Java FloatingDecimal.readJavaFormatString: optional sign, NaN/Infinity, decimal or hex form,
# optional f/F/d/D suffix; surrounding whitespace (chars <= ' ') is trimmed first.
_FLOAT_RE = re.compile(
    r"[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?"
    r"|0[xX](?:[0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?\d+[fFdD]?)"
)
_JAVA_WS = "".join(chr(c) for c in range(0x21))


def _parse_int(s: str | None, lo: int, hi: int, java: str) -> int:
    # Java Integer.valueOf(null) and friends throw NumberFormatException ("null"), which is
    # how reading an absent numeric property behaves.
    if s is None:
        raise NumberFormatException(f"Cannot parse null as a Java {java}")
    if not _INT_RE.fullmatch(s):
        raise NumberFormatException(f'For input string: "{s}" (not a valid Java {java})')
    value = int(s)
    if not lo <= value <= hi:
        raise NumberFormatException(f'Value out of range for a Java {java}: "{s}"')
    return value


def _parse_double(s: str | None, java: str) -> float:
    # Java's Float.valueOf(null) / Double.valueOf(null) throw NullPointerException rather than
    # NumberFormatException; we use NumberFormatException so that every "absent numeric value"
    # read fails the same catchable way.
    if s is None:
        raise NumberFormatException(f"Cannot parse null as a Java {java}")
    t = s.strip(_JAVA_WS)
    if not _FLOAT_RE.fullmatch(t):
        raise NumberFormatException(f'For input string: "{s}" (not a valid Java {java})')
    if t[-1] in "fFdD" and "x" not in t.lower():
        t = t[:-1]
    if "x" in t.lower():
        if t[-1] in "fFdD":
            t = t[:-1]
        return float.fromhex(t)
    if t.lstrip("+-") == "Infinity":
        return -math.inf if t[0] == "-" else math.inf
    if t.lstrip("+-") == "NaN":
        return math.nan
    return float(t)


def _shortest_digits(v: float, single: bool) -> tuple[str, int]:
    """Shortest significant digits of positive ``v`` and its decimal exponent (d.ddd * 10**e)."""
    if single:
        # The shortest decimal that reads back as the same float32 (Java Float.toString).
        s = f"{v:.8e}"
        for prec in range(1, 10):
            candidate = f"{v:.{prec - 1}e}"
            if _to_float32(float(candidate)) == v:
                s = candidate
                break
        mant, exp = s.split("e")
        return mant.replace(".", "").rstrip("0") or "0", int(exp)
    # repr() is the shortest string that reads back as the same double.
    _, digit_tuple, exponent = decimal.Decimal(repr(v)).as_tuple()
    digits = "".join(map(str, digit_tuple))
    sci_exp = len(digits) + int(exponent) - 1
    return digits.rstrip("0") or "0", sci_exp


def _java_float_string(v: float, single: bool) -> str:
    """``Float.toString`` / ``Double.toString`` formatting."""
    if v != v:
        return "NaN"
    if v in (math.inf, -math.inf):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0.0:
        return "-0.0" if math.copysign(1.0, v) < 0 else "0.0"
    sign = "-" if v < 0 else ""
    digits, exp = _shortest_digits(abs(v), single)
    if 1e-3 <= abs(v) < 1e7:
        if exp >= 0:
            whole = digits[: exp + 1].ljust(exp + 1, "0")
            frac = digits[exp + 1 :] or "0"
        else:
            whole = "0"
            frac = "0" * (-exp - 1) + digits
        return f"{sign}{whole}.{frac}"
    frac = digits[1:] or "0"
    return f"{sign}{digits[0]}.{frac}E{exp}"


def _type_error(jt: JavaType, target: str) -> MessageFormatException:
    return MessageFormatException(f"Cannot convert a {jt.value} value to {target}")


def _as_boolean(jt: JavaType, v: Any) -> bool:
    if jt is _BOOLEAN:
        return bool(v)
    if jt is _STRING:
        # Boolean.valueOf: only "true" in any case is true, everything else (null too) is false.
        return v is not None and v.lower() == "true"
    raise _type_error(jt, "boolean")


def _as_byte(jt: JavaType, v: Any) -> int:
    if jt is _BYTE:
        return int(v)
    if jt is _STRING:
        return _parse_int(v, _BYTE_MIN, _BYTE_MAX, "byte")
    raise _type_error(jt, "byte")


def _as_short(jt: JavaType, v: Any) -> int:
    if jt is _SHORT or jt is _BYTE:
        return int(v)
    if jt is _STRING:
        return _parse_int(v, _SHORT_MIN, _SHORT_MAX, "short")
    raise _type_error(jt, "short")


def _as_int(jt: JavaType, v: Any) -> int:
    if jt is _INT or jt is _SHORT or jt is _BYTE:
        return int(v)
    if jt is _STRING:
        return _parse_int(v, _INT_MIN, _INT_MAX, "int")
    raise _type_error(jt, "int")


def _as_long(jt: JavaType, v: Any) -> int:
    if jt is _LONG or jt is _INT or jt is _SHORT or jt is _BYTE:
        return int(v)
    if jt is _STRING:
        return _parse_int(v, _LONG_MIN, _LONG_MAX, "long")
    raise _type_error(jt, "long")


def _as_float(jt: JavaType, v: Any) -> float:
    if jt is _FLOAT:
        return float(v)
    if jt is _STRING:
        return _to_float32(_parse_double(v, "float"))
    raise _type_error(jt, "float")


def _as_double(jt: JavaType, v: Any) -> float:
    if jt is _DOUBLE or jt is _FLOAT:
        return float(v)
    if jt is _STRING:
        return _parse_double(v, "double")
    raise _type_error(jt, "double")


def _as_string(jt: JavaType, v: Any) -> str | None:
    if jt is _STRING or jt is _CHAR:
        return v
    if v is None:
        return None
    if jt is _BOOLEAN:
        return "true" if v else "false"
    if jt is _INT or jt is _LONG or jt is _SHORT or jt is _BYTE:
        return str(v)
    if jt is _DOUBLE:
        return _java_float_string(v, single=False)
    if jt is _FLOAT:
        return _java_float_string(v, single=True)
    raise _type_error(jt, "String")


def _as_char(jt: JavaType, v: Any) -> str:
    if jt is _CHAR:
        return v
    if jt is _STRING and v is None:
        # Java unboxes null to char and throws NullPointerException; TypeError is the Python
        # analogue of "None where a value is required".
        raise TypeError("Cannot read a null value as a char")
    raise _type_error(jt, "char")


def _as_bytes(jt: JavaType, v: Any) -> bytes | None:
    if jt is _BYTES:
        return None if v is None else bytes(v)
    if jt is _STRING and v is None:
        return None
    raise _type_error(jt, "byte[]")


def _plain(jt: JavaType, v: Any) -> Any:
    """The value handed back by the *Object getters: plain Python types, copies of mutables."""
    if jt is _OBJECT:
        return _deep_copy(v)
    return v


def _deep_copy(v: Any) -> Any:
    # A received list or map nested a few hundred levels deep (a hostile or buggy sender)
    # exhausts the recursion limit of deepcopy: a JMS exception, not a RecursionError.
    try:
        return copy.deepcopy(v)
    except RecursionError:
        raise MessageFormatException(
            "the value is nested too deeply to be copied (a list or map inside a list or map "
            "several hundred levels deep)"
        ) from None


_MISSING: TypedValue = (_STRING, None)

# ---------------------------------------------------------------------------------------------
# Property names (JMS 3.5.1, Qpid JmsMessagePropertySupport)
# ---------------------------------------------------------------------------------------------

_RESERVED_NAMES = frozenset(
    ("NULL", "TRUE", "FALSE", "NOT", "AND", "OR", "BETWEEN", "LIKE", "IN", "IS", "ESCAPE")
)
_ASCII_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
# Character.isJavaIdentifierStart: letters, letter numbers, currency symbols, connectors.
_JAVA_START_CATEGORIES = frozenset(("Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "Sc", "Pc"))
# Character.isJavaIdentifierPart adds digits, combining marks and ignorable format characters.
_JAVA_PART_CATEGORIES = _JAVA_START_CATEGORIES | {"Nd", "Mn", "Mc", "Cf"}
# Names seen valid; bounded so a stream of unique names cannot grow memory without limit.
_VALID_NAME_CACHE: set[str] = set()
_VALID_NAME_CACHE_MAX = 4096


def _is_java_ignorable_control(ch: str) -> bool:
    # Character.isIdentifierIgnorable: the non-whitespace ISO controls are identifier parts.
    c = ord(ch)
    return c <= 0x08 or 0x0E <= c <= 0x1B or 0x7F <= c <= 0x9F


def _name_problem(name: Any) -> str | None:
    """Why ``name`` is not a legal property name, or None when it is legal."""
    if not isinstance(name, str):
        return "it must be a str"
    if _ASCII_IDENT.fullmatch(name) is None:
        if name == "":
            return "it must not be empty"
        if unicodedata.category(name[0]) not in _JAVA_START_CATEGORIES:
            return "its first character must be a letter, '_' or '$' (Java identifier start)"
        for ch in name[1:]:
            cat = unicodedata.category(ch)
            if cat not in _JAVA_PART_CATEGORIES and not _is_java_ignorable_control(ch):
                return (
                    f"character {ch!r} is not allowed: names must be Java identifiers "
                    "(letters, digits, '_' or '$')"
                )
    if name in _RESERVED_NAMES:
        return (
            "it is a reserved selector word (NULL TRUE FALSE NOT AND OR BETWEEN LIKE IN IS ESCAPE)"
        )
    return None


def _check_name(name: Any, validate: bool = True) -> str:
    """Validate a property name; raise IllegalArgumentException when it is not acceptable."""
    if type(name) is str and name in _VALID_NAME_CACHE:
        return name
    if name is None or name == "":
        raise IllegalArgumentException("Property name must not be None or empty")
    if not isinstance(name, str):
        raise IllegalArgumentException(
            f"Property name {name!r} is invalid: it must be a str, not {type(name).__name__}"
        )
    if validate:
        problem = _name_problem(name)
        if problem is not None:
            raise IllegalArgumentException(f"Property name {name!r} is invalid: {problem}")
        if len(_VALID_NAME_CACHE) < _VALID_NAME_CACHE_MAX:
            _VALID_NAME_CACHE.add(name)
    return name


def _check_map_name(name: Any) -> str:
    if name is None or name == "":
        raise IllegalArgumentException("Map entry name must not be None or empty")
    if not isinstance(name, str):
        raise IllegalArgumentException(
            f"Map entry name {name!r} is invalid: it must be a str, not {type(name).__name__}"
        )
    return name


# Names with a dedicated meaning. JMS headers are reachable through the property API (as in
# Qpid JMS, for selector-style access) but are never listed by getPropertyNames.
JMSX_GROUP_ID = "JMSXGroupID"
JMSX_GROUP_SEQ = "JMSXGroupSeq"
JMSX_USER_ID = "JMSXUserID"
JMSX_DELIVERY_COUNT = "JMSXDeliveryCount"
JMS_AMQP_TTL = "JMS_AMQP_TTL"
JMS_AMQP_REPLY_TO_GROUP_ID = "JMS_AMQP_REPLY_TO_GROUP_ID"
JMS_AMQP_TYPED_ENCODING = "JMS_AMQP_TYPED_ENCODING"
JMS_AMQP_ACK_TYPE = "JMS_AMQP_ACK_TYPE"
# Prefix of the vendor properties the codec intercepts and never sends as application properties.
JMS_AMQP_PREFIX = "JMS_AMQP_"

_UINT_MAX = 2**32 - 1


def _check_bytes_value(value: Any, what: str) -> None:
    # A str or int here is a caller mistake that bytes()/extend() would turn into a raw
    # TypeError (or, for an int, silently into that many zero bytes).
    if not isinstance(value, bytes | bytearray | memoryview):
        raise MessageFormatException(
            f"{what} needs bytes, bytearray or memoryview, not {type(value).__name__}"
        )


def _message_format(exc: Exception, what: str) -> MessageFormatException:
    return MessageFormatException(f"Invalid value for {what}: {exc}", linked=exc)


# ---------------------------------------------------------------------------------------------
# Message
# ---------------------------------------------------------------------------------------------

# Header names reachable through the property API (Qpid JmsMessagePropertyIntercepter).
_HEADER_NAMES = frozenset(
    (
        "JMSDestination",
        "JMSReplyTo",
        "JMSType",
        "JMSDeliveryMode",
        "JMSPriority",
        "JMSMessageID",
        "JMSTimestamp",
        "JMSCorrelationID",
        "JMSExpiration",
        "JMSRedelivered",
        "JMSDeliveryTime",
    )
)
_SPECIAL_NAMES = _HEADER_NAMES | {
    JMSX_GROUP_ID,
    JMSX_GROUP_SEQ,
    JMSX_USER_ID,
    JMSX_DELIVERY_COUNT,
    JMS_AMQP_TTL,
    JMS_AMQP_TYPED_ENCODING,
    JMS_AMQP_ACK_TYPE,
}

_T = TypeVar("_T")


class Message:
    """A JMS message with headers and properties and no body (``jakarta.jms.Message``).

    Fields are plain instance attributes with class-level defaults, so creating a message only
    allocates what is actually set. The underscore attributes are read and written by the codec
    and the consumer; application code uses the Java-style methods.
    """

    # The x-opt-jms-msg-type byte.
    _jms_msg_type: ClassVar[int] = 0

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
    _acknowledge_callback: Callable[[], None] | None = None
    # JMS_AMQP_ACK_TYPE chosen for the next acknowledge() (1..5), read by the consumer.
    _ack_type: int | None = None

    # -- headers --------------------------------------------------------------------------

    def getJMSMessageID(self) -> str | None:
        return self._message_id

    def setJMSMessageID(self, value: str | None) -> None:
        self._message_id = value

    def getJMSTimestamp(self) -> int:
        return self._timestamp

    def setJMSTimestamp(self, value: int) -> None:
        self._timestamp = check_java_long("JMSTimestamp", value)

    def getJMSCorrelationID(self) -> str | None:
        cid = self._correlation_id
        if isinstance(cid, bytes):
            # Qpid JMS shows a binary correlation-id in its escaped string form.
            return "ID:AMQP_BINARY:" + cid.hex().upper()
        return cid

    def setJMSCorrelationID(self, value: str | None) -> None:
        if value is not None and not isinstance(value, str):
            raise JMSException(f"JMSCorrelationID must be a str, not {type(value).__name__}")
        self._correlation_id = value

    def getJMSCorrelationIDAsBytes(self) -> bytes | None:
        cid = self._correlation_id
        if cid is None:
            return None
        if not isinstance(cid, bytes):
            raise JMSException(
                "The underlying correlation-id is not binary and so can't be returned as bytes"
            )
        return cid

    def setJMSCorrelationIDAsBytes(self, value: bytes | bytearray | None) -> None:
        if value is not None:
            _check_bytes_value(value, "setJMSCorrelationIDAsBytes")
        self._correlation_id = None if value is None else bytes(value)

    def getJMSReplyTo(self) -> Destination | None:
        return self._reply_to

    def setJMSReplyTo(self, value: Destination | None) -> None:
        self._reply_to = value

    def getJMSDestination(self) -> Destination | None:
        return self._destination

    def setJMSDestination(self, value: Destination | None) -> None:
        self._destination = value

    def getJMSDeliveryMode(self) -> int:
        return self._delivery_mode

    def setJMSDeliveryMode(self, value: int) -> None:
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
        return self._redelivered

    def setJMSRedelivered(self, value: bool) -> None:
        self._redelivered = bool(value)

    def getJMSType(self) -> str | None:
        return self._type

    def setJMSType(self, value: str | None) -> None:
        self._type = value

    def getJMSExpiration(self) -> int:
        return self._expiration

    def setJMSExpiration(self, value: int) -> None:
        self._expiration = check_java_long("JMSExpiration", value)

    def getJMSDeliveryTime(self) -> int:
        return self._delivery_time

    def setJMSDeliveryTime(self, value: int) -> None:
        self._delivery_time = check_java_long("JMSDeliveryTime", value)

    def getJMSPriority(self) -> int:
        return self._priority

    def setJMSPriority(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 9:
            raise JMSException(f"Priority value given {value!r} is out of range (0..9)")
        self._priority = int(value)

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
                "Session Acknowledgement Mode does not allow setting: " + JMS_AMQP_ACK_TYPE
            )
        if tv[1] is None:
            self._ack_type = None
            return
        value = _as_int(*tv)
        if not 1 <= value <= 5:
            raise JMSException(
                f"Invalid {JMS_AMQP_ACK_TYPE} value {value}: use 1 (ACCEPTED), 2 (REJECTED), "
                "3 (RELEASED), 4 (MODIFIED_FAILED) or 5 (MODIFIED_FAILED_UNDELIVERABLE)"
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
        if not isinstance(self, ObjectMessage):
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
        try:
            name = _check_name(name, self._validate_names)
        except IllegalArgumentException:
            return False
        props = self._properties
        if props is not None and name in props:
            return True
        return name in _SPECIAL_NAMES and self._special_exists(name)

    def getPropertyNames(self) -> list[str]:
        names: list[str] = []
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
            if self._special_exists(special):
                names.append(special)
        return names

    def clearProperties(self) -> None:
        self._properties = None
        self._group_id = None
        self._group_seq = None
        self._user_id = None
        self._ack_type = None
        self._read_only_properties = False

    def setBooleanProperty(self, name: str, value: bool) -> None:
        if not isinstance(value, bool):
            raise MessageFormatException(f"Value {value!r} is not a bool")
        self._set_typed(name, (_BOOLEAN, value))

    def setByteProperty(self, name: str, value: int) -> None:
        self._set_typed(name, (_BYTE, _check_range(value, _BYTE_MIN, _BYTE_MAX, "byte")))

    def setShortProperty(self, name: str, value: int) -> None:
        self._set_typed(name, (_SHORT, _check_range(value, _SHORT_MIN, _SHORT_MAX, "short")))

    def setIntProperty(self, name: str, value: int) -> None:
        self._set_typed(name, (_INT, _check_range(value, _INT_MIN, _INT_MAX, "int")))

    def setLongProperty(self, name: str, value: int) -> None:
        self._set_typed(name, (_LONG, _check_range(value, _LONG_MIN, _LONG_MAX, "long")))

    def setFloatProperty(self, name: str, value: float) -> None:
        self._set_typed(name, (_FLOAT, _to_float32(_check_float(value, "float"))))

    def setDoubleProperty(self, name: str, value: float) -> None:
        self._set_typed(name, (_DOUBLE, _check_float(value, "double")))

    def setStringProperty(self, name: str, value: str | None) -> None:
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
        return _as_boolean(*self._get_typed(name))

    def getByteProperty(self, name: str) -> int:
        return _as_byte(*self._get_typed(name))

    def getShortProperty(self, name: str) -> int:
        return _as_short(*self._get_typed(name))

    def getIntProperty(self, name: str) -> int:
        return _as_int(*self._get_typed(name))

    def getLongProperty(self, name: str) -> int:
        return _as_long(*self._get_typed(name))

    def getFloatProperty(self, name: str) -> float:
        return _as_float(*self._get_typed(name))

    def getDoubleProperty(self, name: str) -> float:
        return _as_double(*self._get_typed(name))

    def getStringProperty(self, name: str) -> str | None:
        return _as_string(*self._get_typed(name))

    def getObjectProperty(self, name: str) -> Any:
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
        return self._body_value()

    def isBodyAssignableTo(self, cls: type) -> bool:
        if not self._has_body():
            return True
        return self._body_assignable(cls)

    # -- provider hooks -------------------------------------------------------------------

    def acknowledge(self) -> None:
        """Acknowledge (CLIENT_ACKNOWLEDGE); a no-op when the session does not need it."""
        callback = self._acknowledge_callback
        if callback is not None:
            callback()

    def _set_read_only(self, read_only: bool) -> None:
        """Mark properties and body read-only (a received message) or writeable again."""
        self._read_only_properties = read_only
        self._read_only_body = read_only

    def _set_acknowledge_callback(self, callback: Callable[[], None] | None) -> None:
        self._acknowledge_callback = callback

    def _set_delivery_count(self, count: int | None) -> None:
        """JMSXDeliveryCount (provider-set; the consumer bumps it on recover())."""
        self._delivery_count = count
        if count is not None and count > 1:
            self._redelivered = True

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


# ---------------------------------------------------------------------------------------------
# TextMessage
# ---------------------------------------------------------------------------------------------


class TextMessage(Message):
    _jms_msg_type: ClassVar[int] = 5
    _text: str | None = None

    def __init__(self, text: str | None = None) -> None:
        if text is not None:
            self.setText(text)

    def setText(self, text: str | None) -> None:
        self._check_body_writeable()
        if text is not None and not isinstance(text, str):
            raise MessageFormatException(
                f"TextMessage text must be a str, not {type(text).__name__}"
            )
        self._text = text

    def getText(self) -> str | None:
        return self._text

    def clearBody(self) -> None:
        self._text = None
        self._read_only_body = False

    def _has_body(self) -> bool:
        return self._text is not None

    def _body_value(self) -> Any:
        return self._text

    def _body_assignable(self, cls: type) -> bool:
        return _assignable(str, cls)


# ---------------------------------------------------------------------------------------------
# BytesMessage
# ---------------------------------------------------------------------------------------------

_S_BYTE = struct.Struct(">b")
_S_UBYTE = struct.Struct(">B")
_S_SHORT = struct.Struct(">h")
_S_USHORT = struct.Struct(">H")
_S_INT = struct.Struct(">i")
_S_LONG = struct.Struct(">q")
_S_FLOAT = struct.Struct(">f")
_S_DOUBLE = struct.Struct(">d")


def _encode_modified_utf8(s: str) -> bytes:
    """Java modified UTF-8 (DataOutput.writeUTF payload, without the length)."""
    if "\x00" not in s and s.isascii():
        return s.encode("ascii")
    out = bytearray()
    # Work on UTF-16 code units: supplementary characters become two 3-byte surrogates (CESU-8).
    units = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        c = (units[i] << 8) | units[i + 1]
        if 0x0001 <= c <= 0x007F:
            out.append(c)
        elif c <= 0x07FF:  # includes U+0000, written as the two bytes C0 80
            out.append(0xC0 | (c >> 6))
            out.append(0x80 | (c & 0x3F))
        else:
            out.append(0xE0 | (c >> 12))
            out.append(0x80 | ((c >> 6) & 0x3F))
            out.append(0x80 | (c & 0x3F))
    return bytes(out)


def _decode_modified_utf8(data: bytes) -> str:
    try:
        if data.isascii():
            return data.decode("ascii")
        # C0 80 is NUL; surrogate pairs arrive as separate 3-byte sequences, so decode with
        # surrogatepass and then let the UTF-16 codec pair them up.
        text = data.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
        return text.encode("utf-16-be", "surrogatepass").decode("utf-16-be")
    except UnicodeError as exc:
        raise MessageFormatException(f"Malformed modified UTF-8 data: {exc}", linked=exc) from exc


class BytesMessage(Message):
    """A stream of uninterpreted bytes, written and read Java DataOutput/DataInput style.

    New messages are write-only until :meth:`reset`; received messages are read-only.
    """

    _jms_msg_type: ClassVar[int] = 3

    def __init__(self) -> None:
        self._wbuf: bytearray | None = bytearray()
        self._rdata: bytes = b""
        self._rpos = 0

    # -- modes --------------------------------------------------------------------------

    def _check_writing(self) -> bytearray:
        buf = self._wbuf
        if buf is None or self._read_only_body:
            raise MessageNotWriteableException("BytesMessage body is read-only (in read mode)")
        return buf

    def _check_reading(self) -> None:
        if self._wbuf is not None:
            raise MessageNotReadableException(
                "BytesMessage body is write-only: call reset() before reading"
            )

    def reset(self) -> None:
        """Make the body read-only and move to its start."""
        if self._wbuf is not None:
            self._rdata = bytes(self._wbuf)
            self._wbuf = None
        self._rpos = 0

    def clearBody(self) -> None:
        self._wbuf = bytearray()
        self._rdata = b""
        self._rpos = 0
        self._read_only_body = False

    def _set_read_only(self, read_only: bool) -> None:
        super()._set_read_only(read_only)
        if read_only:
            self.reset()

    def _body_bytes(self) -> bytes:
        """The whole body whatever the mode (for the codec)."""
        return bytes(self._wbuf) if self._wbuf is not None else self._rdata

    def _set_body_bytes(self, data: bytes) -> None:
        """Install a received body, in read mode."""
        self._wbuf = None
        self._rdata = data
        self._rpos = 0

    def getBodyLength(self) -> int:
        self._check_reading()
        return len(self._rdata)

    # -- reading ------------------------------------------------------------------------

    def _take(self, n: int) -> bytes:
        self._check_reading()
        pos = self._rpos
        end = pos + n
        if end > len(self._rdata):
            raise MessageEOFException("Reached the end of the BytesMessage body")
        self._rpos = end
        return self._rdata[pos:end]

    def _read(self, s: struct.Struct) -> Any:
        self._check_reading()
        pos = self._rpos
        end = pos + s.size
        if end > len(self._rdata):
            raise MessageEOFException("Reached the end of the BytesMessage body")
        self._rpos = end
        return s.unpack_from(self._rdata, pos)[0]

    def readBoolean(self) -> bool:
        return self._read(_S_UBYTE) != 0

    def readByte(self) -> int:
        return self._read(_S_BYTE)

    def readUnsignedByte(self) -> int:
        return self._read(_S_UBYTE)

    def readShort(self) -> int:
        return self._read(_S_SHORT)

    def readUnsignedShort(self) -> int:
        return self._read(_S_USHORT)

    def readChar(self) -> str:
        return chr(self._read(_S_USHORT))

    def readInt(self) -> int:
        return self._read(_S_INT)

    def readLong(self) -> int:
        return self._read(_S_LONG)

    def readFloat(self) -> float:
        return self._read(_S_FLOAT)

    def readDouble(self) -> float:
        return self._read(_S_DOUBLE)

    def readUTF(self) -> str:
        self._check_reading()
        start = self._rpos
        length = self._read(_S_USHORT)
        try:
            data = self._take(length)
        except MessageEOFException:
            self._rpos = start
            raise
        try:
            return _decode_modified_utf8(data)
        except MessageFormatException:
            self._rpos = start
            raise

    def readBytes(self, buffer: bytearray, length: int | None = None) -> int:
        """Read up to ``length`` (default ``len(buffer)``) bytes into ``buffer``.

        Returns the number of bytes read, or -1 when the end of the body was already reached.
        """
        self._check_reading()
        if length is None:
            length = len(buffer)
        if length < 0 or length > len(buffer):
            raise IndexError(f"length {length} is outside the buffer (size {len(buffer)})")
        remaining = len(self._rdata) - self._rpos
        if remaining <= 0 and length > 0:
            return -1
        n = min(length, remaining)
        pos = self._rpos
        buffer[0:n] = self._rdata[pos : pos + n]
        self._rpos = pos + n
        return n

    # -- writing ------------------------------------------------------------------------

    def writeBoolean(self, value: bool) -> None:
        self._check_writing().append(1 if value else 0)

    def writeByte(self, value: int) -> None:
        v = _check_range(value, _BYTE_MIN, _BYTE_MAX, "byte")
        self._check_writing().append(v & 0xFF)

    def writeShort(self, value: int) -> None:
        v = _check_range(value, _SHORT_MIN, _SHORT_MAX, "short")
        self._check_writing().extend(_S_SHORT.pack(v))

    def writeChar(self, value: str) -> None:
        c = JChar(value)
        self._check_writing().extend(_S_USHORT.pack(ord(c)))

    def writeInt(self, value: int) -> None:
        v = _check_range(value, _INT_MIN, _INT_MAX, "int")
        self._check_writing().extend(_S_INT.pack(v))

    def writeLong(self, value: int) -> None:
        v = _check_range(value, _LONG_MIN, _LONG_MAX, "long")
        self._check_writing().extend(_S_LONG.pack(v))

    def writeFloat(self, value: float) -> None:
        v = _to_float32(_check_float(value, "float"))
        self._check_writing().extend(_S_FLOAT.pack(v))

    def writeDouble(self, value: float) -> None:
        self._check_writing().extend(_S_DOUBLE.pack(_check_float(value, "double")))

    def writeUTF(self, value: str) -> None:
        if not isinstance(value, str):
            raise MessageFormatException(f"writeUTF needs a str, not {type(value).__name__}")
        data = _encode_modified_utf8(value)
        if len(data) > 0xFFFF:
            raise MessageFormatException(
                f"String too long for writeUTF: {len(data)} encoded bytes (limit 65535)"
            )
        buf = self._check_writing()
        buf.extend(_S_USHORT.pack(len(data)))
        buf.extend(data)

    def writeBytes(
        self, value: bytes | bytearray | memoryview, offset: int = 0, length: int | None = None
    ) -> None:
        buf = self._check_writing()
        _check_bytes_value(value, "BytesMessage.writeBytes")
        if offset == 0 and length is None:
            buf.extend(value)
            return
        end = len(value) if length is None else offset + length
        if offset < 0 or end > len(value) or end < offset:
            raise IndexError(f"offset {offset} / length {length} outside a value of {len(value)}")
        buf.extend(value[offset:end])

    def writeObject(self, value: Any) -> None:
        """Write a value with the method matching its (Java) type."""
        if value is None:
            # Java throws NullPointerException here (BytesMessage has no null encoding).
            raise TypeError("BytesMessage.writeObject(None) is not allowed")
        jt, v = _typed_object(value, allow_bytes=True)
        if jt is _BOOLEAN:
            self.writeBoolean(v)
        elif jt is _BYTE:
            self.writeByte(v)
        elif jt is _SHORT:
            self.writeShort(v)
        elif jt is _CHAR:
            self.writeChar(v)
        elif jt is _INT:
            self.writeInt(v)
        elif jt is _LONG:
            self.writeLong(v)
        elif jt is _FLOAT:
            self.writeFloat(v)
        elif jt is _DOUBLE:
            self.writeDouble(v)
        elif jt is _STRING:
            self.writeUTF(v)
        else:
            self.writeBytes(v)

    # -- JMS 2.0 body access -------------------------------------------------------------

    def _has_body(self) -> bool:
        return len(self._body_bytes()) > 0

    def _body_value(self) -> Any:
        # JMS 2.0: getBody resets the message before and after.
        self.reset()
        return self._rdata

    def _body_assignable(self, cls: type) -> bool:
        return _assignable(bytes, cls)


# ---------------------------------------------------------------------------------------------
# MapMessage
# ---------------------------------------------------------------------------------------------


class MapMessage(Message):
    """Name/value pairs with typed values (JMS 3.11.3 conversions)."""

    _jms_msg_type: ClassVar[int] = 2

    def __init__(self) -> None:
        self._map: dict[str, TypedValue] = {}

    def _get(self, name: str) -> TypedValue:
        return self._map.get(_check_map_name(name), _MISSING)

    def _put(self, name: str, tv: TypedValue) -> None:
        name = _check_map_name(name)
        self._check_body_writeable()
        self._map[name] = tv

    def getBoolean(self, name: str) -> bool:
        return _as_boolean(*self._get(name))

    def getByte(self, name: str) -> int:
        return _as_byte(*self._get(name))

    def getShort(self, name: str) -> int:
        return _as_short(*self._get(name))

    def getChar(self, name: str) -> str:
        return _as_char(*self._get(name))

    def getInt(self, name: str) -> int:
        return _as_int(*self._get(name))

    def getLong(self, name: str) -> int:
        return _as_long(*self._get(name))

    def getFloat(self, name: str) -> float:
        return _as_float(*self._get(name))

    def getDouble(self, name: str) -> float:
        return _as_double(*self._get(name))

    def getString(self, name: str) -> str | None:
        return _as_string(*self._get(name))

    def getBytes(self, name: str) -> bytes | None:
        return _as_bytes(*self._get(name))

    def getObject(self, name: str) -> Any:
        jt, v = self._get(name)
        return _plain(jt, v)

    def getMapNames(self) -> list[str]:
        return list(self._map)

    def itemExists(self, name: str) -> bool:
        return name in self._map

    def setBoolean(self, name: str, value: bool) -> None:
        if not isinstance(value, bool):
            raise MessageFormatException(f"Value {value!r} is not a bool")
        self._put(name, (_BOOLEAN, value))

    def setByte(self, name: str, value: int) -> None:
        self._put(name, (_BYTE, _check_range(value, _BYTE_MIN, _BYTE_MAX, "byte")))

    def setShort(self, name: str, value: int) -> None:
        self._put(name, (_SHORT, _check_range(value, _SHORT_MIN, _SHORT_MAX, "short")))

    def setChar(self, name: str, value: str) -> None:
        self._put(name, (_CHAR, str(JChar(value))))

    def setInt(self, name: str, value: int) -> None:
        self._put(name, (_INT, _check_range(value, _INT_MIN, _INT_MAX, "int")))

    def setLong(self, name: str, value: int) -> None:
        self._put(name, (_LONG, _check_range(value, _LONG_MIN, _LONG_MAX, "long")))

    def setFloat(self, name: str, value: float) -> None:
        self._put(name, (_FLOAT, _to_float32(_check_float(value, "float"))))

    def setDouble(self, name: str, value: float) -> None:
        self._put(name, (_DOUBLE, _check_float(value, "double")))

    def setString(self, name: str, value: str | None) -> None:
        if value is not None and not isinstance(value, str):
            raise MessageFormatException(f"Value {value!r} is not a str")
        self._put(name, (_STRING, value))

    def setBytes(
        self,
        name: str,
        value: bytes | bytearray | memoryview | None,
        offset: int = 0,
        length: int | None = None,
    ) -> None:
        if value is None:
            self._put(name, (_BYTES, None))
            return
        _check_bytes_value(value, "MapMessage.setBytes")
        end = len(value) if length is None else offset + length
        if offset < 0 or end > len(value) or end < offset:
            raise IndexError(f"offset {offset} / length {length} outside a value of {len(value)}")
        # Copy: later changes to the caller's buffer must not reach the message (JMS 3.12).
        self._put(name, (_BYTES, bytes(value[offset:end])))

    def setObject(self, name: str, value: Any) -> None:
        _check_map_name(name)
        self._put(name, _typed_object(value, allow_bytes=True))

    def clearBody(self) -> None:
        self._map = {}
        self._read_only_body = False

    def _has_body(self) -> bool:
        return bool(self._map)

    def _body_value(self) -> Any:
        return {k: _plain(jt, v) for k, (jt, v) in self._map.items()}

    def _body_assignable(self, cls: type) -> bool:
        return _assignable(dict, cls)


# ---------------------------------------------------------------------------------------------
# StreamMessage
# ---------------------------------------------------------------------------------------------

_NO_BYTES_IN_FLIGHT = -1


class StreamMessage(Message):
    """A sequence of typed values, written then read in order (JMS 3.11.3 conversions)."""

    _jms_msg_type: ClassVar[int] = 4

    def __init__(self) -> None:
        self._items: list[TypedValue] = []
        self._reading = False
        self._ridx = 0
        self._bytes_remaining = _NO_BYTES_IN_FLIGHT

    def _check_writing(self) -> list[TypedValue]:
        if self._reading or self._read_only_body:
            raise MessageNotWriteableException("StreamMessage body is read-only (in read mode)")
        return self._items

    def reset(self) -> None:
        self._reading = True
        self._ridx = 0
        self._bytes_remaining = _NO_BYTES_IN_FLIGHT

    def clearBody(self) -> None:
        self._items = []
        self._reading = False
        self._ridx = 0
        self._bytes_remaining = _NO_BYTES_IN_FLIGHT
        self._read_only_body = False

    def _set_read_only(self, read_only: bool) -> None:
        super()._set_read_only(read_only)
        if read_only:
            self.reset()

    def _set_items(self, items: list[TypedValue]) -> None:
        """Install a received body, in read mode."""
        self._items = items
        self.reset()

    def _read_with(self, convert: Callable[[JavaType, Any], _T]) -> _T:
        if not self._reading:
            raise MessageNotReadableException(
                "StreamMessage body is write-only: call reset() before reading"
            )
        if self._bytes_remaining != _NO_BYTES_IN_FLIGHT:
            raise MessageFormatException(
                "A partially read byte[] entry must be read completely with readBytes() first"
            )
        idx = self._ridx
        if idx >= len(self._items):
            raise MessageEOFException("Reached the end of the StreamMessage body")
        jt, v = self._items[idx]
        # Convert before advancing: a failed conversion leaves the position unchanged so the
        # caller can retry as another type (JMS 3.11.3).
        result = convert(jt, v)
        self._ridx = idx + 1
        return result

    def readBoolean(self) -> bool:
        return self._read_with(_as_boolean)

    def readByte(self) -> int:
        return self._read_with(_as_byte)

    def readShort(self) -> int:
        return self._read_with(_as_short)

    def readChar(self) -> str:
        return self._read_with(_as_char)

    def readInt(self) -> int:
        return self._read_with(_as_int)

    def readLong(self) -> int:
        return self._read_with(_as_long)

    def readFloat(self) -> float:
        return self._read_with(_as_float)

    def readDouble(self) -> float:
        return self._read_with(_as_double)

    def readString(self) -> str | None:
        return self._read_with(_as_string)

    def readObject(self) -> Any:
        return self._read_with(_plain)

    def readBytes(self, buffer: bytearray) -> int:
        """Read a byte[] item into ``buffer`` (possibly over several calls).

        Returns the number of bytes copied; -1 once the item is exhausted or when it is null.
        """
        if not self._reading:
            raise MessageNotReadableException(
                "StreamMessage body is write-only: call reset() before reading"
            )
        if buffer is None:
            raise TypeError("readBytes needs a bytearray buffer")
        if self._bytes_remaining == _NO_BYTES_IN_FLIGHT:
            idx = self._ridx
            if idx >= len(self._items):
                raise MessageEOFException("Reached the end of the StreamMessage body")
            jt, v = self._items[idx]
            if v is None and jt in (_BYTES, _STRING):
                self._ridx = idx + 1
                return -1
            if jt is not _BYTES:
                raise _type_error(jt, "byte[]")
            self._ridx = idx + 1
            self._bytes_remaining = len(v)
        elif self._bytes_remaining == 0:
            # Everything was copied by a call that filled the buffer exactly; this call ends it.
            self._bytes_remaining = _NO_BYTES_IN_FLIGHT
            return -1
        source = self._items[self._ridx - 1][1]
        start = len(source) - self._bytes_remaining
        n = min(len(buffer), self._bytes_remaining)
        buffer[0:n] = source[start : start + n]
        self._bytes_remaining -= n
        if self._bytes_remaining == 0 and n < len(buffer):
            self._bytes_remaining = _NO_BYTES_IN_FLIGHT
        return n

    def writeBoolean(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise MessageFormatException(f"Value {value!r} is not a bool")
        self._check_writing().append((_BOOLEAN, value))

    def writeByte(self, value: int) -> None:
        v = _check_range(value, _BYTE_MIN, _BYTE_MAX, "byte")
        self._check_writing().append((_BYTE, v))

    def writeShort(self, value: int) -> None:
        v = _check_range(value, _SHORT_MIN, _SHORT_MAX, "short")
        self._check_writing().append((_SHORT, v))

    def writeChar(self, value: str) -> None:
        c = str(JChar(value))
        self._check_writing().append((_CHAR, c))

    def writeInt(self, value: int) -> None:
        v = _check_range(value, _INT_MIN, _INT_MAX, "int")
        self._check_writing().append((_INT, v))

    def writeLong(self, value: int) -> None:
        v = _check_range(value, _LONG_MIN, _LONG_MAX, "long")
        self._check_writing().append((_LONG, v))

    def writeFloat(self, value: float) -> None:
        v = _to_float32(_check_float(value, "float"))
        self._check_writing().append((_FLOAT, v))

    def writeDouble(self, value: float) -> None:
        v = _check_float(value, "double")
        self._check_writing().append((_DOUBLE, v))

    def writeString(self, value: str | None) -> None:
        if value is not None and not isinstance(value, str):
            raise MessageFormatException(f"Value {value!r} is not a str")
        self._check_writing().append((_STRING, value))

    def writeBytes(
        self, value: bytes | bytearray | memoryview, offset: int = 0, length: int | None = None
    ) -> None:
        _check_bytes_value(value, "StreamMessage.writeBytes")
        end = len(value) if length is None else offset + length
        if offset < 0 or end > len(value) or end < offset:
            raise IndexError(f"offset {offset} / length {length} outside a value of {len(value)}")
        self._check_writing().append((_BYTES, bytes(value[offset:end])))

    def writeObject(self, value: Any) -> None:
        tv = _typed_object(value, allow_bytes=True)
        self._check_writing().append(tv)

    def _has_body(self) -> bool:
        return True

    def getBody(self, cls: type[_T]) -> _T | None:
        raise MessageFormatException("getBody() is not supported for StreamMessage")

    def isBodyAssignableTo(self, cls: type) -> bool:
        return False


# ---------------------------------------------------------------------------------------------
# ObjectMessage
# ---------------------------------------------------------------------------------------------


class ObjectMessage(Message):
    """A message whose body is one Python object, pickled when set.

    The object is pickled (protocol 5) by :meth:`setObject`, so later changes to it do not
    affect the message, and unpickled by :meth:`getObject` under the message's
    :class:`DeserializationPolicy`. A body received as an AMQP value (typed encoding, or from a
    non-JMS producer) is returned as decoded. A Java-serialized body cannot be read.
    """

    _jms_msg_type: ClassVar[int] = 1
    _serialized: bytes | None = None
    _content_type: str | None = None
    # Typed (AMQP value) body: _has_typed distinguishes a typed None from no body.
    _typed: Any = None
    _has_typed: bool = False
    _policy: DeserializationPolicy = _DEFAULT_POLICY

    def __init__(self, obj: Any = None) -> None:
        if obj is not None:
            self.setObject(obj)

    def setObject(self, obj: Any) -> None:
        self._check_body_writeable()
        self._typed = None
        self._has_typed = False
        if obj is None:
            self._serialized = None
            self._content_type = None
            return
        try:
            self._serialized = pickle.dumps(obj, protocol=5)
        except Exception as exc:  # pickling user objects can fail in many ways
            raise MessageFormatException(
                f"Cannot serialize object of type {type(obj).__name__}: {exc}", linked=exc
            ) from exc
        self._content_type = PYTHON_SERIALIZED_CONTENT_TYPE

    def getObject(self) -> Any:
        if self._has_typed:
            return _deep_copy(self._typed)
        data = self._serialized
        if data is None:
            return None
        ctype = self._content_type
        if ctype == JAVA_SERIALIZED_CONTENT_TYPE:
            raise MessageFormatException(
                "ObjectMessage body is a Java serialized object "
                f"({JAVA_SERIALIZED_CONTENT_TYPE}) and cannot be deserialized in Python; "
                "use getSerializedBytes() for the raw bytes"
            )
        if ctype != PYTHON_SERIALIZED_CONTENT_TYPE:
            raise MessageFormatException(
                f"ObjectMessage body has content type {ctype!r}, not "
                f"{PYTHON_SERIALIZED_CONTENT_TYPE}; use getSerializedBytes() for the raw bytes"
            )
        try:
            return _PolicyUnpickler(data, self._policy).load()
        except MessageFormatException:
            raise
        except Exception as exc:
            raise MessageFormatException(
                f"Failed to deserialize ObjectMessage body: {exc}", linked=exc
            ) from exc

    def getSerializedBytes(self) -> bytes | None:
        """The raw serialized body (pickle or Java serialization); None for a typed body."""
        return self._serialized

    def _set_deserialization_policy(self, policy: DeserializationPolicy | None) -> None:
        self._policy = _DEFAULT_POLICY if policy is None else policy

    def _set_serialized(self, data: bytes, content_type: str | None) -> None:
        self._serialized = data
        self._content_type = content_type
        self._typed = None
        self._has_typed = False

    def _set_typed_body(self, value: Any) -> None:
        self._serialized = None
        self._content_type = None
        self._typed = value
        self._has_typed = True

    def _typed_encoding(self) -> bool:
        props = self._properties
        if not props:
            return False
        tv = props.get(JMS_AMQP_TYPED_ENCODING)
        return tv is not None and bool(tv[1])

    def clearBody(self) -> None:
        self._serialized = None
        self._content_type = None
        self._typed = None
        self._has_typed = False
        self._read_only_body = False

    def _has_body(self) -> bool:
        return self._serialized is not None or (self._has_typed and self._typed is not None)

    def getBody(self, cls: type[_T]) -> _T | None:
        if not self._has_body():
            return None
        obj = self.getObject()
        if obj is not None and not _isinstance(obj, cls):
            raise MessageFormatException(
                f"ObjectMessage body of type {type(obj).__name__} cannot be assigned to "
                f"{_cls_name(cls)}"
            )
        return obj

    def isBodyAssignableTo(self, cls: type) -> bool:
        if not self._has_body():
            return True
        try:
            obj = self.getObject()
        except MessageFormatException:
            return False
        return obj is None or _isinstance(obj, cls)


def _isinstance(obj: Any, cls: Any) -> bool:
    try:
        return isinstance(obj, cls)
    except TypeError:
        return False


# ---------------------------------------------------------------------------------------------
# Body helpers
# ---------------------------------------------------------------------------------------------


def message_for_body(body: Any) -> Message:
    """The message JMSProducer.send(destination, body) sends for a Python body value.

    str -> TextMessage, bytes -> BytesMessage, dict -> MapMessage (values as setObject),
    None -> Message, anything else -> ObjectMessage.
    """
    if isinstance(body, str):
        return TextMessage(body)
    if isinstance(body, bytes | bytearray | memoryview):
        bm = BytesMessage()
        bm.writeBytes(body)
        return bm
    if isinstance(body, dict):
        mm = MapMessage()
        for key, value in body.items():
            mm.setObject(key, value)
        return mm
    if body is None:
        return Message()
    return ObjectMessage(body)
