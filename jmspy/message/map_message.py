"""MapMessage: name/value pairs with typed values (JMS 3.11.3 conversions)."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from jmspy._twins.message_map_message import MapMessageTwins
from jmspy.enumeration import Enumeration
from jmspy.errors import (
    MessageFormatException,
)
from jmspy.message.base import Message, _assignable
from jmspy.message.java import (
    _BOOLEAN,
    _BYTE,
    _BYTE_MAX,
    _BYTE_MIN,
    _BYTES,
    _CHAR,
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
    JChar,
    TypedValue,
    _as_boolean,
    _as_byte,
    _as_bytes,
    _as_char,
    _as_double,
    _as_float,
    _as_int,
    _as_long,
    _as_short,
    _as_string,
    _check_bytes_value,
    _check_float,
    _check_range,
    _plain,
    _to_float32,
    _typed_object,
)
from jmspy.message.names import (
    _check_map_name,
)

__all__ = ["MapMessage"]


_T = TypeVar("_T")


class MapMessage(Message, MapMessageTwins):
    """Name/value pairs with typed values (JMS 3.11.3 conversions)."""

    jms_msg_type: ClassVar[int] = 2

    def __init__(self) -> None:
        self._map: dict[str, TypedValue] = {}

    def _get(self, name: str) -> TypedValue:
        return self._map.get(_check_map_name(name), _MISSING)

    def _put(self, name: str, tv: TypedValue) -> None:
        name = _check_map_name(name)
        self._check_body_writeable()
        self._map[name] = tv

    def getBoolean(self, name: str) -> bool:
        """The entry ``name`` as a Java boolean, converted per the JMS conversion table.

        An absent entry is false. Raises IllegalArgumentException for an empty name,
        MessageFormatException when the stored type does not convert, NumberFormatException when a
        String does not parse.
        """
        return _as_boolean(*self._get(name))

    def getByte(self, name: str) -> int:
        """The entry ``name`` as a Java byte, converted per the JMS conversion table.

        An absent entry raises NumberFormatException. Raises IllegalArgumentException for an empty
        name, MessageFormatException when the stored type does not convert, NumberFormatException
        when a String does not parse.
        """
        return _as_byte(*self._get(name))

    def getShort(self, name: str) -> int:
        """The entry ``name`` as a Java short, converted per the JMS conversion table.

        An absent entry raises NumberFormatException. Raises IllegalArgumentException for an empty
        name, MessageFormatException when the stored type does not convert, NumberFormatException
        when a String does not parse.
        """
        return _as_short(*self._get(name))

    def getChar(self, name: str) -> str:
        """The entry ``name`` as a one-character str (only a char entry converts).

        Raises MessageFormatException for another type and TypeError for an absent entry (Java's
        NullPointerException).
        """
        return _as_char(*self._get(name))

    def getInt(self, name: str) -> int:
        """The entry ``name`` as a Java int, converted per the JMS conversion table.

        An absent entry raises NumberFormatException. Raises IllegalArgumentException for an empty
        name, MessageFormatException when the stored type does not convert, NumberFormatException
        when a String does not parse.
        """
        return _as_int(*self._get(name))

    def getLong(self, name: str) -> int:
        """The entry ``name`` as a Java long, converted per the JMS conversion table.

        An absent entry raises NumberFormatException. Raises IllegalArgumentException for an empty
        name, MessageFormatException when the stored type does not convert, NumberFormatException
        when a String does not parse.
        """
        return _as_long(*self._get(name))

    def getFloat(self, name: str) -> float:
        """The entry ``name`` as a Java float, converted per the JMS conversion table.

        An absent entry raises NumberFormatException. Raises IllegalArgumentException for an empty
        name, MessageFormatException when the stored type does not convert, NumberFormatException
        when a String does not parse.
        """
        return _as_float(*self._get(name))

    def getDouble(self, name: str) -> float:
        """The entry ``name`` as a Java double, converted per the JMS conversion table.

        An absent entry raises NumberFormatException. Raises IllegalArgumentException for an empty
        name, MessageFormatException when the stored type does not convert, NumberFormatException
        when a String does not parse.
        """
        return _as_double(*self._get(name))

    def getString(self, name: str) -> str | None:
        """The entry ``name`` as a Java String, converted per the JMS conversion table.

        An absent entry is None. Raises IllegalArgumentException for an empty name,
        MessageFormatException when the stored type does not convert, NumberFormatException when a
        String does not parse.
        """
        return _as_string(*self._get(name))

    def getBytes(self, name: str) -> bytes | None:
        """A copy of the byte array entry ``name``, or None when absent.

        Raises MessageFormatException for an entry of another type.
        """
        return _as_bytes(*self._get(name))

    def getObject(self, name: str) -> Any:
        """The entry ``name`` as a plain Python value (bytes as a copy), or None when absent."""
        jt, v = self._get(name)
        return _plain(jt, v)

    def getMapNames(self) -> Enumeration[str]:
        """The names of the entries, in insertion order: a list that is also a Java
        Enumeration (``hasMoreElements()``/``nextElement()``)."""
        return Enumeration(self._map)

    def itemExists(self, name: str) -> bool:
        """Whether an entry ``name`` exists."""
        return name in self._map

    def setBoolean(self, name: str, value: bool) -> None:
        """Set entry ``name`` to a Java boolean; ``value`` must be a bool.

        Raises IllegalArgumentException for an empty name, MessageNotWriteableException when the
        body is read-only, MessageFormatException for a value of the wrong type or range.
        """
        if not isinstance(value, bool):
            raise MessageFormatException(f"Value {value!r} is not a bool")
        self._put(name, (_BOOLEAN, value))

    def setByte(self, name: str, value: int) -> None:
        """Set entry ``name`` to a Java byte (-128..127).

        Raises IllegalArgumentException for an empty name, MessageNotWriteableException when the
        body is read-only, MessageFormatException for a value of the wrong type or range.
        """
        self._put(name, (_BYTE, _check_range(value, _BYTE_MIN, _BYTE_MAX, "byte")))

    def setShort(self, name: str, value: int) -> None:
        """Set entry ``name`` to a Java short (-32768..32767).

        Raises IllegalArgumentException for an empty name, MessageNotWriteableException when the
        body is read-only, MessageFormatException for a value of the wrong type or range.
        """
        self._put(name, (_SHORT, _check_range(value, _SHORT_MIN, _SHORT_MAX, "short")))

    def setChar(self, name: str, value: str) -> None:
        """Set entry ``name`` to a Java char (a one-character str).

        Raises IllegalArgumentException for an empty name, MessageNotWriteableException when the
        body is read-only, MessageFormatException for a value of the wrong type or range.
        """
        self._put(name, (_CHAR, str(JChar(value))))

    def setInt(self, name: str, value: int) -> None:
        """Set entry ``name`` to a Java int (32-bit).

        Raises IllegalArgumentException for an empty name, MessageNotWriteableException when the
        body is read-only, MessageFormatException for a value of the wrong type or range.
        """
        self._put(name, (_INT, _check_range(value, _INT_MIN, _INT_MAX, "int")))

    def setLong(self, name: str, value: int) -> None:
        """Set entry ``name`` to a Java long (64-bit).

        Raises IllegalArgumentException for an empty name, MessageNotWriteableException when the
        body is read-only, MessageFormatException for a value of the wrong type or range.
        """
        self._put(name, (_LONG, _check_range(value, _LONG_MIN, _LONG_MAX, "long")))

    def setFloat(self, name: str, value: float) -> None:
        """Set entry ``name`` to a Java float (rounded to 32 bits).

        Raises IllegalArgumentException for an empty name, MessageNotWriteableException when the
        body is read-only, MessageFormatException for a value of the wrong type or range.
        """
        self._put(name, (_FLOAT, _to_float32(_check_float(value, "float"))))

    def setDouble(self, name: str, value: float) -> None:
        """Set entry ``name`` to a Java double.

        Raises IllegalArgumentException for an empty name, MessageNotWriteableException when the
        body is read-only, MessageFormatException for a value of the wrong type or range.
        """
        self._put(name, (_DOUBLE, _check_float(value, "double")))

    def setString(self, name: str, value: str | None) -> None:
        """Set entry ``name`` to a Java String (or None).

        Raises IllegalArgumentException for an empty name, MessageNotWriteableException when the
        body is read-only, MessageFormatException for a value of the wrong type or range.
        """
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
        """Set entry ``name`` to a copy of ``value[offset:offset + length]`` (all of it by default).

        Raises IllegalArgumentException for an empty name, MessageNotWriteableException when the
        body is read-only, MessageFormatException for a value that is not bytes-like, IndexError for
        an offset or length outside ``value``.
        """
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
        """Set entry ``name`` from a Python value, typed as ``Message.setObjectProperty`` types it.

        bytes-like values are allowed here (byte arrays). Raises IllegalArgumentException for an
        empty name, MessageNotWriteableException when read-only, MessageFormatException for other
        types.
        """
        _check_map_name(name)
        self._put(name, _typed_object(value, allow_bytes=True))

    def get_typed_entries(self) -> dict[str, TypedValue]:
        """The body entries (the live map, for the codec)."""
        return self._map

    def set_typed_entries(self, entries: dict[str, TypedValue]) -> None:
        """Install a received body."""
        self._map = entries

    def clearBody(self) -> None:
        """Remove every entry and make the body writeable again."""
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
