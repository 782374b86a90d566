"""Message bodies: TextMessage, BytesMessage, getBody/isBodyAssignableTo and message_for_body."""

from __future__ import annotations

import math
from typing import Any

import pytest

from jmspy.errors import (
    MessageEOFException,
    MessageFormatException,
    MessageNotReadableException,
    MessageNotWriteableException,
)
from jmspy.message import (
    BytesMessage,
    JByte,
    JChar,
    JFloat,
    JShort,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
    message_for_body,
)

# ---------------------------------------------------------------------------------------------
# TextMessage
# ---------------------------------------------------------------------------------------------


def test_text_message() -> None:
    m = TextMessage()
    assert m.getText() is None
    m.setText("héllo")
    assert m.getText() == "héllo"
    assert TextMessage("x").getText() == "x"
    with pytest.raises(MessageFormatException):
        m.setText(b"bytes")  # type: ignore[arg-type]
    m.set_read_only(True)
    with pytest.raises(MessageNotWriteableException):
        m.setText("no")
    m.clearBody()
    assert m.getText() is None
    m.setText("again")


# ---------------------------------------------------------------------------------------------
# BytesMessage
# ---------------------------------------------------------------------------------------------


def _written(write: str, *args: Any) -> bytes:
    m = BytesMessage()
    getattr(m, write)(*args)
    return m.get_body_bytes()


@pytest.mark.parametrize(
    ("write", "value", "java_bytes"),
    [
        ("writeBoolean", True, b"\x01"),
        ("writeBoolean", False, b"\x00"),
        ("writeByte", -2, b"\xfe"),
        ("writeShort", -2, b"\xff\xfe"),
        ("writeChar", "A", b"\x00A"),
        ("writeChar", "é", b"\x00\xe9"),
        ("writeInt", 1, b"\x00\x00\x00\x01"),
        ("writeInt", -(2**31), b"\x80\x00\x00\x00"),
        ("writeLong", 2**40, b"\x00\x00\x01\x00\x00\x00\x00\x00"),
        ("writeFloat", 1.5, b"\x3f\xc0\x00\x00"),
        ("writeDouble", 1.5, b"\x3f\xf8\x00\x00\x00\x00\x00\x00"),
        ("writeUTF", "A", b"\x00\x01A"),
        ("writeUTF", "", b"\x00\x00"),
        # Java modified UTF-8: NUL is C0 80, supplementary characters are surrogate pairs.
        ("writeUTF", "\x00", b"\x00\x02\xc0\x80"),
        ("writeUTF", "é", b"\x00\x02\xc3\xa9"),
        ("writeUTF", "€", b"\x00\x03\xe2\x82\xac"),
        ("writeUTF", "😀", b"\x00\x06\xed\xa0\xbd\xed\xb8\x80"),
        ("writeBytes", b"\x01\x02", b"\x01\x02"),
    ],
)
def test_bytes_message_java_encodings(write: str, value: Any, java_bytes: bytes) -> None:
    assert _written(write, value) == java_bytes
    m = BytesMessage()
    m.set_body_bytes(java_bytes)
    read = write.replace("write", "read")
    if write == "writeBytes":
        buf = bytearray(10)
        assert m.readBytes(buf) == len(value)
        assert bytes(buf[: len(value)]) == value
    else:
        assert getattr(m, read)() == value


def test_bytes_message_round_trip_and_modes() -> None:
    m = BytesMessage()
    with pytest.raises(MessageNotReadableException):
        m.readInt()
    with pytest.raises(MessageNotReadableException):
        m.getBodyLength()
    m.writeBoolean(True)
    m.writeByte(-1)
    m.writeShort(-300)
    m.writeChar("z")
    m.writeInt(123456)
    m.writeLong(-(2**60))
    m.writeFloat(0.1)
    m.writeDouble(0.1)
    m.writeUTF("a\x00b😀")
    m.writeBytes(b"0123456789", 2, 3)
    m.reset()
    assert m.getBodyLength() == 1 + 1 + 2 + 2 + 4 + 8 + 4 + 8 + (2 + 10) + 3
    assert m.readBoolean() is True
    assert m.readUnsignedByte() == 255
    assert m.readShort() == -300
    assert m.readChar() == "z"
    assert m.readInt() == 123456
    assert m.readLong() == -(2**60)
    assert m.readFloat() == JFloat(0.1)
    assert m.readDouble() == 0.1
    assert m.readUTF() == "a\x00b😀"
    buf = bytearray(2)
    assert m.readBytes(buf) == 2 and bytes(buf) == b"23"
    assert m.readBytes(buf) == 1 and buf[0:1] == b"4"
    assert m.readBytes(buf) == -1
    with pytest.raises(MessageEOFException):
        m.readByte()
    with pytest.raises(MessageNotWriteableException):
        m.writeInt(1)
    m.reset()
    assert m.readBoolean() is True  # reset rewinds
    m.clearBody()
    m.writeInt(7)  # write mode again, empty
    m.reset()
    assert m.getBodyLength() == 4


def test_bytes_message_read_signed_and_unsigned() -> None:
    m = BytesMessage()
    m.set_body_bytes(b"\xff\xff\xff")
    assert m.readByte() == -1
    assert m.readUnsignedShort() == 0xFFFF
    m.reset()
    assert m.readShort() == -1
    assert m.readUnsignedByte() == 255


def test_bytes_message_eof_does_not_consume() -> None:
    m = BytesMessage()
    m.set_body_bytes(b"\x00\x01")
    with pytest.raises(MessageEOFException):
        m.readInt()
    assert m.readShort() == 1


def test_bytes_message_read_bytes_with_length() -> None:
    m = BytesMessage()
    m.set_body_bytes(b"abcdef")
    buf = bytearray(10)
    assert m.readBytes(buf, 4) == 4
    assert bytes(buf[:4]) == b"abcd"
    assert m.readBytes(buf, 0) == 0
    with pytest.raises(IndexError):
        m.readBytes(buf, 11)
    assert m.readBytes(buf) == 2
    assert m.readBytes(buf) == -1


def test_bytes_message_utf_errors() -> None:
    m = BytesMessage()
    with pytest.raises(MessageFormatException, match="65535"):
        m.writeUTF("x" * 70000)
    m.set_body_bytes(b"\x00\x05ab")  # declared length longer than the data
    with pytest.raises(MessageEOFException):
        m.readUTF()
    assert m.readShort() == 5  # position restored
    m.set_body_bytes(b"\x00\x02\xff\xfe")
    with pytest.raises(MessageFormatException):
        m.readUTF()


@pytest.mark.parametrize(
    ("write", "value"),
    [("writeByte", 128), ("writeShort", 2**15), ("writeInt", 2**31), ("writeLong", 2**63)],
)
def test_bytes_message_write_ranges(write: str, value: int) -> None:
    with pytest.raises(MessageFormatException):
        getattr(BytesMessage(), write)(value)


def test_bytes_message_write_object() -> None:
    m = BytesMessage()
    for value in (True, JByte(1), JShort(2), JChar("c"), 3, 2**40, JFloat(1.5), 2.5, "s", b"b"):
        m.writeObject(value)
    expected = BytesMessage()
    expected.writeBoolean(True)
    expected.writeByte(1)
    expected.writeShort(2)
    expected.writeChar("c")
    expected.writeInt(3)
    expected.writeLong(2**40)
    expected.writeFloat(1.5)
    expected.writeDouble(2.5)
    expected.writeUTF("s")
    expected.writeBytes(b"b")
    assert m.get_body_bytes() == expected.get_body_bytes()
    with pytest.raises(TypeError):
        m.writeObject(None)
    with pytest.raises(MessageFormatException, match="list"):
        m.writeObject([1])


def test_bytes_message_received_is_read_only() -> None:
    m = BytesMessage()
    m.writeInt(5)
    m.set_read_only(True)
    assert m.readInt() == 5
    with pytest.raises(MessageNotWriteableException):
        m.writeInt(1)
    m.clearBody()
    m.writeInt(1)


# ---------------------------------------------------------------------------------------------

# getBody / isBodyAssignableTo (JMS 2.0)
# ---------------------------------------------------------------------------------------------


def _bytes_message(data: bytes) -> BytesMessage:
    m = BytesMessage()
    m.writeBytes(data)
    return m


def _map_message() -> MapMessage:
    m = MapMessage()
    m.setInt("a", 1)
    return m


@pytest.mark.parametrize(
    ("message", "cls", "expected"),
    [
        (Message(), str, None),
        (Message(), dict, None),
        (TextMessage("t"), str, "t"),
        (TextMessage("t"), object, "t"),
        (TextMessage(), bytes, None),  # no body: any type, None
        (_bytes_message(b"ab"), bytes, b"ab"),
        (_bytes_message(b"ab"), object, b"ab"),
        (BytesMessage(), str, None),
        (_map_message(), dict, {"a": 1}),
        (_map_message(), object, {"a": 1}),
        (MapMessage(), bytes, None),
        (ObjectMessage([1]), list, [1]),
        (ObjectMessage([1]), object, [1]),
        (ObjectMessage(), str, None),
    ],
)
def test_get_body(message: Message, cls: type, expected: Any) -> None:
    assert message.isBodyAssignableTo(cls)
    assert message.getBody(cls) == expected


@pytest.mark.parametrize(
    ("message", "cls"),
    [
        (TextMessage("t"), bytes),
        (TextMessage("t"), dict),
        (_bytes_message(b"ab"), str),
        (_map_message(), str),
        (ObjectMessage([1]), dict),
        (ObjectMessage([1]), str),
    ],
)
def test_get_body_wrong_type(message: Message, cls: type) -> None:
    assert not message.isBodyAssignableTo(cls)
    with pytest.raises(MessageFormatException):
        message.getBody(cls)


def test_stream_message_get_body_always_fails() -> None:
    m = StreamMessage()
    assert m.isBodyAssignableTo(object) is False
    with pytest.raises(MessageFormatException):
        m.getBody(object)


def test_bytes_get_body_resets() -> None:
    m = BytesMessage()
    m.writeInt(1)
    assert m.getBody(bytes) == b"\x00\x00\x00\x01"
    assert m.readInt() == 1  # now in read mode
    assert m.getBody(bytes) == b"\x00\x00\x00\x01"
    assert m.readInt() == 1  # and reset again


def test_get_body_map_returns_copy() -> None:
    m = _map_message()
    body = m.getBody(dict)
    assert body is not None
    body["b"] = 2
    assert m.getMapNames() == ["a"]


# ---------------------------------------------------------------------------------------------
# message_for_body
# ---------------------------------------------------------------------------------------------


def test_message_for_body() -> None:
    t = message_for_body("x")
    assert isinstance(t, TextMessage) and t.getText() == "x"
    b = message_for_body(b"\x01")
    assert isinstance(b, BytesMessage) and b.get_body_bytes() == b"\x01"
    m = message_for_body({"a": 1, "b": b"x", "c": JFloat(0.5)})
    assert isinstance(m, MapMessage)
    assert m.getInt("a") == 1 and m.getBytes("b") == b"x" and m.getFloat("c") == 0.5
    n = message_for_body(None)
    assert type(n) is Message
    o = message_for_body([1, 2])
    assert isinstance(o, ObjectMessage) and o.getObject() == [1, 2]
    with pytest.raises(MessageFormatException):
        message_for_body({"a": [1]})


def test_nan_survives_float_storage() -> None:
    m = MapMessage()
    m.setFloat("f", math.nan)
    assert math.isnan(m.getFloat("f"))
    assert m.getString("f") == "NaN"
