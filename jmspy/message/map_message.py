"""MapMessage: name/value pairs with typed values (JMS 3.11.3 conversions)."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from jmspy._twins.message_map_message import MapMessageTwins
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

    def get_typed_entries(self) -> dict[str, TypedValue]:
        """The body entries (the live map, for the codec)."""
        return self._map

    def set_typed_entries(self, entries: dict[str, TypedValue]) -> None:
        """Install a received body."""
        self._map = entries

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
