"""StreamMessage: typed values written then read in order (JMS 3.11.3 conversions)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from jmspy._twins.message_stream_message import StreamMessageTwins
from jmspy.errors import (
    MessageEOFException,
    MessageFormatException,
    MessageNotReadableException,
    MessageNotWriteableException,
)
from jmspy.message.base import Message
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
    _SHORT,
    _SHORT_MAX,
    _SHORT_MIN,
    _STRING,
    JavaType,
    JChar,
    TypedValue,
    _as_boolean,
    _as_byte,
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
    _type_error,
    _typed_object,
)

__all__ = ["StreamMessage"]


_T = TypeVar("_T")

_NO_BYTES_IN_FLIGHT = -1


class StreamMessage(Message, StreamMessageTwins):
    """A sequence of typed values, written then read in order (JMS 3.11.3 conversions)."""

    jms_msg_type: ClassVar[int] = 4

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
        """Switch the body to read mode and move to its first item."""
        self._reading = True
        self._ridx = 0
        self._bytes_remaining = _NO_BYTES_IN_FLIGHT

    def clearBody(self) -> None:
        """Remove every item and return to write mode (properties are kept)."""
        self._items = []
        self._reading = False
        self._ridx = 0
        self._bytes_remaining = _NO_BYTES_IN_FLIGHT
        self._read_only_body = False

    def set_read_only(self, read_only: bool) -> None:
        """Provider surface: mark the message read-only or writeable (see ``Message``).

        A read-only body is also reset to read mode, at its first item.
        """
        super().set_read_only(read_only)
        if read_only:
            self.reset()

    def get_typed_items(self) -> list[TypedValue]:
        """The body items (the live list, for the codec)."""
        return self._items

    def set_typed_items(self, items: list[TypedValue]) -> None:
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
        """Read the next item as a Java boolean, converted per the JMS conversion table.

        Raises MessageNotReadableException before :meth:`reset`, MessageEOFException past the end,
        MessageFormatException when the item does not convert (the position is then unchanged, so it
        can be read as another type), NumberFormatException when a String item does not parse.
        """
        return self._read_with(_as_boolean)

    def readByte(self) -> int:
        """Read the next item as a Java byte, converted per the JMS conversion table.

        Raises MessageNotReadableException before :meth:`reset`, MessageEOFException past the end,
        MessageFormatException when the item does not convert (the position is then unchanged, so it
        can be read as another type), NumberFormatException when a String item does not parse.
        """
        return self._read_with(_as_byte)

    def readShort(self) -> int:
        """Read the next item as a Java short, converted per the JMS conversion table.

        Raises MessageNotReadableException before :meth:`reset`, MessageEOFException past the end,
        MessageFormatException when the item does not convert (the position is then unchanged, so it
        can be read as another type), NumberFormatException when a String item does not parse.
        """
        return self._read_with(_as_short)

    def readChar(self) -> str:
        """Read the next item as a one-character str (only a char item converts).

        Raises MessageNotReadableException before :meth:`reset`, MessageEOFException past the end,
        MessageFormatException when the item does not convert (the position is then unchanged, so it
        can be read as another type).
        """
        return self._read_with(_as_char)

    def readInt(self) -> int:
        """Read the next item as a Java int, converted per the JMS conversion table.

        Raises MessageNotReadableException before :meth:`reset`, MessageEOFException past the end,
        MessageFormatException when the item does not convert (the position is then unchanged, so it
        can be read as another type), NumberFormatException when a String item does not parse.
        """
        return self._read_with(_as_int)

    def readLong(self) -> int:
        """Read the next item as a Java long, converted per the JMS conversion table.

        Raises MessageNotReadableException before :meth:`reset`, MessageEOFException past the end,
        MessageFormatException when the item does not convert (the position is then unchanged, so it
        can be read as another type), NumberFormatException when a String item does not parse.
        """
        return self._read_with(_as_long)

    def readFloat(self) -> float:
        """Read the next item as a Java float, converted per the JMS conversion table.

        Raises MessageNotReadableException before :meth:`reset`, MessageEOFException past the end,
        MessageFormatException when the item does not convert (the position is then unchanged, so it
        can be read as another type), NumberFormatException when a String item does not parse.
        """
        return self._read_with(_as_float)

    def readDouble(self) -> float:
        """Read the next item as a Java double, converted per the JMS conversion table.

        Raises MessageNotReadableException before :meth:`reset`, MessageEOFException past the end,
        MessageFormatException when the item does not convert (the position is then unchanged, so it
        can be read as another type), NumberFormatException when a String item does not parse.
        """
        return self._read_with(_as_double)

    def readString(self) -> str | None:
        """Read the next item as a Java String, converted per the JMS conversion table.

        Raises MessageNotReadableException before :meth:`reset`, MessageEOFException past the end,
        MessageFormatException when the item does not convert (the position is then unchanged, so it
        can be read as another type), NumberFormatException when a String item does not parse.
        """
        return self._read_with(_as_string)

    def readObject(self) -> Any:
        """Read the next item as a plain Python value (bytes for a byte array).

        Raises MessageNotReadableException before :meth:`reset` and MessageEOFException past the
        end.
        """
        return self._read_with(_plain)

    def readBytes(self, buffer: bytearray) -> int:
        """Read a byte[] item into ``buffer`` (possibly over several calls).

        Returns the number of bytes copied; -1 once the item is exhausted or when it is null.
        """
        if not self._reading:
            raise MessageNotReadableException(
                "StreamMessage body is write-only: call reset() before reading"
            )
        if not _writable_bytes(buffer):
            # Checked before anything moves: the item stays unread for a retry.
            raise TypeError(
                f"readBytes needs a writable byte buffer such as a bytearray, got "
                f"{type(buffer).__name__}"
            )
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
        """Append a boolean; ``value`` must be a bool to the body.

        Raises MessageNotWriteableException in read mode and MessageFormatException for a value of
        the wrong type or range.
        """
        if not isinstance(value, bool):
            raise MessageFormatException(f"Value {value!r} is not a bool")
        self._check_writing().append((_BOOLEAN, value))

    def writeByte(self, value: int) -> None:
        """Append a Java byte (-128..127) to the body.

        Raises MessageNotWriteableException in read mode and MessageFormatException for a value of
        the wrong type or range.
        """
        v = _check_range(value, _BYTE_MIN, _BYTE_MAX, "byte")
        self._check_writing().append((_BYTE, v))

    def writeShort(self, value: int) -> None:
        """Append a Java short (-32768..32767) to the body.

        Raises MessageNotWriteableException in read mode and MessageFormatException for a value of
        the wrong type or range.
        """
        v = _check_range(value, _SHORT_MIN, _SHORT_MAX, "short")
        self._check_writing().append((_SHORT, v))

    def writeChar(self, value: str) -> None:
        """Append a Java char (a one-character str) to the body.

        Raises MessageNotWriteableException in read mode and MessageFormatException for a value of
        the wrong type or range.
        """
        c = str(JChar(value))
        self._check_writing().append((_CHAR, c))

    def writeInt(self, value: int) -> None:
        """Append a Java int (32-bit) to the body.

        Raises MessageNotWriteableException in read mode and MessageFormatException for a value of
        the wrong type or range.
        """
        v = _check_range(value, _INT_MIN, _INT_MAX, "int")
        self._check_writing().append((_INT, v))

    def writeLong(self, value: int) -> None:
        """Append a Java long (64-bit) to the body.

        Raises MessageNotWriteableException in read mode and MessageFormatException for a value of
        the wrong type or range.
        """
        v = _check_range(value, _LONG_MIN, _LONG_MAX, "long")
        self._check_writing().append((_LONG, v))

    def writeFloat(self, value: float) -> None:
        """Append a Java float (rounded to 32 bits) to the body.

        Raises MessageNotWriteableException in read mode and MessageFormatException for a value of
        the wrong type or range.
        """
        v = _to_float32(_check_float(value, "float"))
        self._check_writing().append((_FLOAT, v))

    def writeDouble(self, value: float) -> None:
        """Append a Java double to the body.

        Raises MessageNotWriteableException in read mode and MessageFormatException for a value of
        the wrong type or range.
        """
        v = _check_float(value, "double")
        self._check_writing().append((_DOUBLE, v))

    def writeString(self, value: str | None) -> None:
        """Append a String (or None) to the body.

        Raises MessageNotWriteableException in read mode and MessageFormatException for a value of
        the wrong type or range.
        """
        if value is not None and not isinstance(value, str):
            raise MessageFormatException(f"Value {value!r} is not a str")
        self._check_writing().append((_STRING, value))

    def writeBytes(
        self, value: bytes | bytearray | memoryview, offset: int = 0, length: int | None = None
    ) -> None:
        """Append a copy of ``value[offset:offset + length]`` as one byte array item.

        All of ``value`` by default. Raises MessageNotWriteableException in read mode,
        MessageFormatException unless ``value`` is bytes-like, and IndexError for an offset or
        length outside ``value``.
        """
        _check_bytes_value(value, "StreamMessage.writeBytes")
        end = len(value) if length is None else offset + length
        if offset < 0 or end > len(value) or end < offset:
            raise IndexError(f"offset {offset} / length {length} outside a value of {len(value)}")
        self._check_writing().append((_BYTES, bytes(value[offset:end])))

    def writeObject(self, value: Any) -> None:
        """Append a Python value, typed as ``Message.setObjectProperty`` types it.

        Bytes-like values are allowed (byte arrays). Raises MessageNotWriteableException in read
        mode and MessageFormatException for a value of an unsupported type.
        """
        tv = _typed_object(value, allow_bytes=True)
        self._check_writing().append(tv)

    def _has_body(self) -> bool:
        return True

    def getBody(self, cls: type[_T]) -> _T | None:
        """Not supported for a StreamMessage (JMS 2.0): always raises MessageFormatException."""
        raise MessageFormatException("getBody() is not supported for StreamMessage")

    def isBodyAssignableTo(self, cls: type) -> bool:
        """Always false: a StreamMessage body cannot be returned by :meth:`getBody`."""
        return False


# ---------------------------------------------------------------------------------------------


def _writable_bytes(buffer: object) -> bool:
    """Whether readBytes can copy into ``buffer``: a bytearray, or a writable one-dimensional
    byte-sized memoryview (bytes and other read-only buffers cannot take the copy)."""
    if isinstance(buffer, bytearray):
        return True
    if not isinstance(buffer, memoryview):
        return False
    return not buffer.readonly and buffer.ndim == 1 and buffer.itemsize == 1
