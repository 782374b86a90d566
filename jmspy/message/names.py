"""Names with a meaning in the message model: delivery-mode and default constants, the JMS
header names reachable through the property API, the JMSX and vendor (JMS_AMQP_*) property names,
and property-name validation (JMS 3.5.1, as Qpid JMS's JmsMessagePropertySupport applies it).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from jmspy.errors import IllegalArgumentException

__all__ = [
    "DeliveryMode",
    "DEFAULT_PRIORITY",
    "DEFAULT_DELIVERY_MODE",
    "DEFAULT_TIME_TO_LIVE",
    "DEFAULT_DELIVERY_DELAY",
    "PYTHON_SERIALIZED_CONTENT_TYPE",
    "JAVA_SERIALIZED_CONTENT_TYPE",
    "JMSX_GROUP_ID",
    "JMSX_GROUP_SEQ",
    "JMSX_USER_ID",
    "JMSX_DELIVERY_COUNT",
    "JMS_AMQP_TTL",
    "JMS_AMQP_REPLY_TO_GROUP_ID",
    "JMS_AMQP_TYPED_ENCODING",
    "JMS_AMQP_ACK_TYPE",
    "JMS_AMQP_PREFIX",
]


class DeliveryMode:
    """The JMS delivery modes (``jakarta.jms.DeliveryMode``): NON_PERSISTENT (1) and PERSISTENT (2).

    PERSISTENT is sent as AMQP ``header.durable`` true (rule WM-2).
    """

    NON_PERSISTENT = 1
    PERSISTENT = 2


DEFAULT_PRIORITY = 4
DEFAULT_DELIVERY_MODE = DeliveryMode.PERSISTENT
DEFAULT_TIME_TO_LIVE = 0
DEFAULT_DELIVERY_DELAY = 0

PYTHON_SERIALIZED_CONTENT_TYPE = "application/x-python-serialized-object"
JAVA_SERIALIZED_CONTENT_TYPE = "application/x-java-serialized-object"


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
