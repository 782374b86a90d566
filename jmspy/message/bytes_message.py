"""BytesMessage: uninterpreted bytes written and read Java DataOutput/DataInput style."""

from __future__ import annotations

import struct
from typing import Any, ClassVar, TypeVar, cast

from jmspy._twins.message_bytes_message import BytesMessageTwins
from jmspy.errors import (
    MessageEOFException,
    MessageFormatException,
    MessageNotReadableException,
    MessageNotWriteableException,
)
from jmspy.message.base import Message, _assignable
from jmspy.message.java import (
    _BOOLEAN,
    _BYTE,
    _BYTE_MAX,
    _BYTE_MIN,
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
    JChar,
    _check_bytes_value,
    _check_float,
    _check_range,
    _to_float32,
    _typed_object,
)

__all__ = ["BytesMessage"]


_T = TypeVar("_T")

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
        # surrogatepass and then let the UTF-16 codec pair them up. A lone surrogate (a Java
        # String may hold one, and writeUTF writes it) stays one, as DataInput.readUTF keeps it.
        text = data.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
        return text.encode("utf-16-be", "surrogatepass").decode("utf-16-be", "surrogatepass")
    except UnicodeError as exc:
        raise MessageFormatException(f"Malformed modified UTF-8 data: {exc}", linked=exc) from exc


class BytesMessage(Message, BytesMessageTwins):
    """A stream of uninterpreted bytes, written and read Java DataOutput/DataInput style.

    New messages are write-only until :meth:`reset`; received messages are read-only.
    """

    jms_msg_type: ClassVar[int] = 3

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
        """Empty the body and return to write mode (properties are kept)."""
        self._wbuf = bytearray()
        self._rdata = b""
        self._rpos = 0
        self._read_only_body = False

    def set_read_only(self, read_only: bool) -> None:
        """Provider surface: mark the message read-only or writeable (see ``Message``).

        A read-only body is also reset to read mode, at its start.
        """
        super().set_read_only(read_only)
        if read_only:
            self.reset()

    def get_body_bytes(self) -> bytes:
        """The whole body whatever the mode (for the codec)."""
        return bytes(self._wbuf) if self._wbuf is not None else self._rdata

    def set_body_bytes(self, data: bytes) -> None:
        """Install a received body, in read mode."""
        self._wbuf = None
        self._rdata = data
        self._rpos = 0

    def getBodyLength(self) -> int:
        """The length of the body in bytes; MessageNotReadableException before :meth:`reset`."""
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
        """Read a boolean (one byte, non-zero is true) from the body.

        Raises MessageNotReadableException before :meth:`reset` and MessageEOFException past the
        end.
        """
        return bool(self._read(_S_UBYTE) != 0)

    def readByte(self) -> int:
        """Read a signed 8-bit value from the body.

        Raises MessageNotReadableException before :meth:`reset` and MessageEOFException past the
        end.
        """
        return cast(int, self._read(_S_BYTE))

    def readUnsignedByte(self) -> int:
        """Read an unsigned 8-bit value (0..255) from the body.

        Raises MessageNotReadableException before :meth:`reset` and MessageEOFException past the
        end.
        """
        return cast(int, self._read(_S_UBYTE))

    def readShort(self) -> int:
        """Read a signed 16-bit big-endian value from the body.

        Raises MessageNotReadableException before :meth:`reset` and MessageEOFException past the
        end.
        """
        return cast(int, self._read(_S_SHORT))

    def readUnsignedShort(self) -> int:
        """Read an unsigned 16-bit big-endian value (0..65535) from the body.

        Raises MessageNotReadableException before :meth:`reset` and MessageEOFException past the
        end.
        """
        return cast(int, self._read(_S_USHORT))

    def readChar(self) -> str:
        """Read a Java char (two bytes, big-endian) as a one-character str from the body.

        Raises MessageNotReadableException before :meth:`reset` and MessageEOFException past the
        end.
        """
        return chr(self._read(_S_USHORT))

    def readInt(self) -> int:
        """Read a signed 32-bit big-endian value from the body.

        Raises MessageNotReadableException before :meth:`reset` and MessageEOFException past the
        end.
        """
        return cast(int, self._read(_S_INT))

    def readLong(self) -> int:
        """Read a signed 64-bit big-endian value from the body.

        Raises MessageNotReadableException before :meth:`reset` and MessageEOFException past the
        end.
        """
        return cast(int, self._read(_S_LONG))

    def readFloat(self) -> float:
        """Read a 32-bit IEEE 754 float from the body.

        Raises MessageNotReadableException before :meth:`reset` and MessageEOFException past the
        end.
        """
        return cast(float, self._read(_S_FLOAT))

    def readDouble(self) -> float:
        """Read a 64-bit IEEE 754 double from the body.

        Raises MessageNotReadableException before :meth:`reset` and MessageEOFException past the
        end.
        """
        return cast(float, self._read(_S_DOUBLE))

    def readUTF(self) -> str:
        """Read a string in Java's modified UTF-8 (``DataInput.readUTF``).

        The string has a two-byte length prefix. Raises MessageNotReadableException before
        :meth:`reset`, MessageEOFException past the end and MessageFormatException for malformed
        data; on error the position is unchanged.
        """
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
        """Write a boolean as one byte (1 for a true value, else 0) to the body.

        Raises MessageNotWriteableException in read mode.
        """
        self._check_writing().append(1 if value else 0)

    def writeByte(self, value: int) -> None:
        """Write a signed 8-bit value (-128..127) to the body.

        Raises MessageNotWriteableException in read mode and MessageFormatException for a value of
        the wrong type or range.
        """
        v = _check_range(value, _BYTE_MIN, _BYTE_MAX, "byte")
        self._check_writing().append(v & 0xFF)

    def writeShort(self, value: int) -> None:
        """Write a signed 16-bit big-endian value to the body.

        Raises MessageNotWriteableException in read mode and MessageFormatException for a value of
        the wrong type or range.
        """
        v = _check_range(value, _SHORT_MIN, _SHORT_MAX, "short")
        self._check_writing().extend(_S_SHORT.pack(v))

    def writeChar(self, value: str) -> None:
        """Write a one-character str as a Java char (two bytes) to the body.

        Raises MessageNotWriteableException in read mode and MessageFormatException for a value of
        the wrong type or range.
        """
        c = JChar(value)
        self._check_writing().extend(_S_USHORT.pack(ord(c)))

    def writeInt(self, value: int) -> None:
        """Write a signed 32-bit big-endian value to the body.

        Raises MessageNotWriteableException in read mode and MessageFormatException for a value of
        the wrong type or range.
        """
        v = _check_range(value, _INT_MIN, _INT_MAX, "int")
        self._check_writing().extend(_S_INT.pack(v))

    def writeLong(self, value: int) -> None:
        """Write a signed 64-bit big-endian value to the body.

        Raises MessageNotWriteableException in read mode and MessageFormatException for a value of
        the wrong type or range.
        """
        v = _check_range(value, _LONG_MIN, _LONG_MAX, "long")
        self._check_writing().extend(_S_LONG.pack(v))

    def writeFloat(self, value: float) -> None:
        """Write a float rounded to 32-bit IEEE 754 to the body.

        Raises MessageNotWriteableException in read mode and MessageFormatException for a value of
        the wrong type or range.
        """
        v = _to_float32(_check_float(value, "float"))
        self._check_writing().extend(_S_FLOAT.pack(v))

    def writeDouble(self, value: float) -> None:
        """Write a 64-bit IEEE 754 double to the body.

        Raises MessageNotWriteableException in read mode and MessageFormatException for a value of
        the wrong type or range.
        """
        self._check_writing().extend(_S_DOUBLE.pack(_check_float(value, "double")))

    def writeUTF(self, value: str) -> None:
        """Write a str in Java's modified UTF-8 (``DataOutput.writeUTF``).

        The string gets a two-byte length prefix. Raises MessageNotWriteableException in read mode
        and MessageFormatException for a value that is not a str or encodes to more than 65535
        bytes.
        """
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
        """Write ``value[offset:offset + length]`` (all of it by default) to the body.

        Raises MessageNotWriteableException in read mode, MessageFormatException unless ``value`` is
        bytes-like, and IndexError for an offset or length outside ``value``.
        """
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
        return len(self.get_body_bytes()) > 0

    def _body_value(self) -> Any:
        # JMS 2.0: getBody resets the message before and after.
        self.reset()
        return self._rdata

    def _body_assignable(self, cls: type) -> bool:
        return _assignable(bytes, cls)


# ---------------------------------------------------------------------------------------------
