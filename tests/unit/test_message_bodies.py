"""Message bodies: Bytes/Stream/Map/Text/Object messages, getBody and message_for_body."""

from __future__ import annotations

import dataclasses
import math
import pickle
from typing import Any

import pytest

from jmspy.errors import (
    IllegalArgumentException,
    MessageEOFException,
    MessageFormatException,
    MessageNotReadableException,
    MessageNotWriteableException,
    NumberFormatException,
)
from jmspy.message import (
    JAVA_SERIALIZED_CONTENT_TYPE,
    BytesMessage,
    DeserializationPolicy,
    JByte,
    JChar,
    JFloat,
    JLong,
    JShort,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
    message_for_body,
)


@dataclasses.dataclass
class Order:
    """A user class for the deserialization allow-list tests (module tests.unit...)."""

    item: str
    qty: int


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
# Map / Stream conversion table (JMS 3.11.3)
# ---------------------------------------------------------------------------------------------

MS_READERS = [
    "boolean",
    "byte",
    "short",
    "char",
    "int",
    "long",
    "float",
    "double",
    "String",
    "bytes",
]

# written type -> (value, {reader: expected}); unlisted readers raise MessageFormatException.
MS_WRITTEN: dict[str, tuple[Any, dict[str, Any]]] = {
    "boolean": (True, {"boolean": True, "String": "true"}),
    "byte": (JByte(-5), {"byte": -5, "short": -5, "int": -5, "long": -5, "String": "-5"}),
    "short": (JShort(300), {"short": 300, "int": 300, "long": 300, "String": "300"}),
    "char": (JChar("c"), {"char": "c", "String": "c"}),
    "int": (70000, {"int": 70000, "long": 70000, "String": "70000"}),
    "long": (JLong(5), {"long": 5, "String": "5"}),
    "float": (JFloat(1.5), {"float": 1.5, "double": 1.5, "String": "1.5"}),
    "double": (2.25, {"double": 2.25, "String": "2.25"}),
    "String": (
        "12",
        {
            "boolean": False,
            "byte": 12,
            "short": 12,
            "int": 12,
            "long": 12,
            "float": 12.0,
            "double": 12.0,
            "String": "12",
        },
    ),
    "bytes": (b"\x01\x02", {"bytes": b"\x01\x02"}),
}

MAP_GETTER = {
    "boolean": "getBoolean",
    "byte": "getByte",
    "short": "getShort",
    "char": "getChar",
    "int": "getInt",
    "long": "getLong",
    "float": "getFloat",
    "double": "getDouble",
    "String": "getString",
    "bytes": "getBytes",
}
STREAM_READER = {k: v.replace("get", "read") for k, v in MAP_GETTER.items()}


def _cells() -> list[tuple[str, str]]:
    return [(w, r) for w in MS_WRITTEN for r in MS_READERS]


@pytest.mark.parametrize(("written", "reader"), _cells())
def test_map_conversion_table(written: str, reader: str) -> None:
    value, allowed = MS_WRITTEN[written]
    m = MapMessage()
    m.setObject("k", value)
    if reader in allowed:
        assert getattr(m, MAP_GETTER[reader])("k") == allowed[reader]
    else:
        with pytest.raises(MessageFormatException):
            getattr(m, MAP_GETTER[reader])("k")


@pytest.mark.parametrize(("written", "reader"), _cells())
def test_stream_conversion_table(written: str, reader: str) -> None:
    value, allowed = MS_WRITTEN[written]
    m = StreamMessage()
    m.writeObject(value)
    m.writeString("next")
    m.reset()
    if reader == "bytes":
        buf = bytearray(8)
        if reader in allowed:
            n = m.readBytes(buf)
            assert bytes(buf[:n]) == allowed[reader]
        else:
            with pytest.raises(MessageFormatException):
                m.readBytes(buf)
            # A failed conversion does not move the position.
            assert m.readObject() == value
    elif reader in allowed:
        assert getattr(m, STREAM_READER[reader])() == allowed[reader]
    else:
        with pytest.raises(MessageFormatException):
            getattr(m, STREAM_READER[reader])()
        assert m.readObject() == value
    # Whatever happened, the next item is read in order.
    assert m.readString() == "next"


def test_stream_failed_number_parse_does_not_advance() -> None:
    m = StreamMessage()
    m.writeString("abc")
    m.reset()
    with pytest.raises(NumberFormatException):
        m.readInt()
    assert m.readString() == "abc"
    with pytest.raises(MessageEOFException):
        m.readString()


def test_stream_null_values() -> None:
    m = StreamMessage()
    m.writeObject(None)
    m.writeObject(None)
    m.writeObject(None)
    m.writeObject(None)
    m.writeObject(None)
    m.reset()
    assert m.readString() is None
    assert m.readBoolean() is False
    with pytest.raises(NumberFormatException):
        m.readInt()
    assert m.readObject() is None  # the failed readInt did not advance
    with pytest.raises(TypeError):
        m.readChar()  # Java: NullPointerException
    assert m.readBytes(bytearray(1)) == -1
    assert m.readObject() is None


def test_stream_read_bytes_chunks() -> None:
    m = StreamMessage()
    m.writeBytes(b"abcde")
    m.writeBytes(b"xy")
    m.writeBytes(b"")
    m.writeInt(1)
    m.reset()
    buf = bytearray(2)
    assert m.readBytes(buf) == 2 and bytes(buf) == b"ab"
    # Reading another item while a byte[] is partly consumed is refused.
    with pytest.raises(MessageFormatException, match="partially"):
        m.readInt()
    assert m.readBytes(buf) == 2 and bytes(buf) == b"cd"
    assert m.readBytes(buf) == 1 and buf[0:1] == b"e"
    # The buffer was not filled, so the item is complete and the next one starts.
    assert m.readBytes(buf) == 2 and bytes(buf) == b"xy"
    # Exactly filled: one more call returns -1 to end the item.
    assert m.readBytes(buf) == -1
    assert m.readBytes(buf) == 0  # the empty byte[]
    assert m.readInt() == 1


def test_stream_write_bytes_offset_and_copy() -> None:
    m = StreamMessage()
    source = bytearray(b"0123456")
    m.writeBytes(source, 1, 3)
    source[1] = ord("X")
    m.reset()
    assert m.readObject() == b"123"
    with pytest.raises(IndexError):
        StreamMessage().writeBytes(b"abc", 2, 5)


def test_stream_modes() -> None:
    m = StreamMessage()
    with pytest.raises(MessageNotReadableException):
        m.readInt()
    with pytest.raises(MessageNotReadableException):
        m.readBytes(bytearray(1))
    m.writeInt(1)
    m.reset()
    with pytest.raises(MessageNotWriteableException):
        m.writeInt(2)
    assert m.readInt() == 1
    with pytest.raises(MessageEOFException):
        m.readInt()
    m.reset()
    assert m.readInt() == 1
    m.clearBody()
    m.writeInt(3)
    m.reset()
    assert m.readInt() == 3


def test_stream_received_is_read_only() -> None:
    m = StreamMessage()
    m.writeInt(5)
    m.set_read_only(True)
    assert m.readInt() == 5
    with pytest.raises(MessageNotWriteableException):
        m.writeInt(1)


@pytest.mark.parametrize(
    ("write", "value"),
    [
        ("writeByte", 200),
        ("writeShort", 2**15),
        ("writeInt", 2**31),
        ("writeLong", 2**63),
        ("writeBoolean", 1),
        ("writeString", 5),
        ("writeObject", [1]),
        ("writeObject", {"a": 1}),
        ("writeObject", object()),
    ],
)
def test_stream_write_rejects(write: str, value: Any) -> None:
    with pytest.raises(MessageFormatException):
        getattr(StreamMessage(), write)(value)


def test_map_message_basics() -> None:
    m = MapMessage()
    m.setBoolean("b", True)
    m.setByte("y", 1)
    m.setShort("s", 2)
    m.setChar("c", "x")
    m.setInt("i", 3)
    m.setLong("l", 4)
    m.setFloat("f", 0.5)
    m.setDouble("d", 0.25)
    m.setString("str", "v")
    m.setString("null", None)
    source = bytearray(b"abcdef")
    m.setBytes("bytes", source, 1, 2)
    source[1] = 0
    m.setObject("o", JShort(9))
    assert m.getMapNames() == [
        "b", "y", "s", "c", "i", "l", "f", "d", "str", "null", "bytes", "o",
    ]  # fmt: skip
    assert m.itemExists("i") and not m.itemExists("zz")
    assert m.getBytes("bytes") == b"bc"
    assert m.getObject("o") == 9
    assert m.getShort("o") == 9
    assert m.getString("null") is None
    assert m.getBoolean("missing") is False
    assert m.getString("missing") is None
    assert m.getObject("missing") is None
    assert m.getBytes("missing") is None
    with pytest.raises(NumberFormatException):
        m.getInt("missing")
    with pytest.raises(NumberFormatException):
        m.getDouble("missing")
    with pytest.raises(TypeError):
        m.getChar("missing")
    assert m.getBody(dict) == {
        "b": True,
        "y": 1,
        "s": 2,
        "c": "x",
        "i": 3,
        "l": 4,
        "f": 0.5,
        "d": 0.25,
        "str": "v",
        "null": None,
        "bytes": b"bc",
        "o": 9,
    }


@pytest.mark.parametrize("name", [None, ""])
@pytest.mark.parametrize(
    ("setter", "value"),
    [
        ("setBoolean", True),
        ("setByte", 1),
        ("setShort", 1),
        ("setChar", "c"),
        ("setInt", 1),
        ("setLong", 1),
        ("setFloat", 1.0),
        ("setDouble", 1.0),
        ("setString", "s"),
        ("setBytes", b"b"),
        ("setObject", 1),
    ],
)
def test_map_empty_names(setter: str, value: Any, name: Any) -> None:
    with pytest.raises(IllegalArgumentException):
        getattr(MapMessage(), setter)(name, value)


def test_map_names_need_not_be_identifiers() -> None:
    m = MapMessage()
    m.setInt("a-b c", 1)
    assert m.getInt("a-b c") == 1


def test_map_read_only_and_clear() -> None:
    m = MapMessage()
    m.setInt("a", 1)
    m.set_read_only(True)
    with pytest.raises(MessageNotWriteableException):
        m.setInt("b", 2)
    assert m.getInt("a") == 1
    m.clearBody()
    assert m.getMapNames() == []
    m.setInt("b", 2)


@pytest.mark.parametrize("value", [[1], {"a": 1}, object(), 2**63, {1}])
def test_map_set_object_rejects(value: Any) -> None:
    with pytest.raises(MessageFormatException):
        MapMessage().setObject("k", value)


# ---------------------------------------------------------------------------------------------
# ObjectMessage and the deserialization policy
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "obj",
    [
        {"a": [1, 2.5, "x", None, True, b"b", (1, 2)]},
        [1, 2],
        (1, "a"),
        "text",
        12345678901234567890,
        1.5,
        b"raw",
        True,
        {1, 2},
        frozenset({3}),
        bytearray(b"ba"),
    ],
)
def test_object_message_primitives_always_load(obj: Any) -> None:
    m = ObjectMessage(obj)
    assert m.getObject() == obj


def test_object_message_copies_at_set_time() -> None:
    data = {"k": [1]}
    m = ObjectMessage()
    m.setObject(data)
    data["k"].append(2)
    assert m.getObject() == {"k": [1]}
    assert m.getObject() is not m.getObject()


def test_object_message_pickle_protocol_5() -> None:
    m = ObjectMessage([1])
    raw = m.getSerializedBytes()
    assert raw is not None
    assert raw[:2] == b"\x80\x05"
    assert pickle.loads(raw) == [1]


def test_object_message_class_denied_by_default() -> None:
    m = ObjectMessage(Order("apple", 2))
    with pytest.raises(MessageFormatException, match="allowList") as info:
        m.getObject()
    assert f"{__name__}.Order" in str(info.value)
    assert m.isBodyAssignableTo(Order) is False


@pytest.mark.parametrize(
    "allow",
    [
        [f"{__name__}.Order"],  # exact class
        [__name__],  # its module
        [__name__.rsplit(".", 1)[0]],  # a parent package matches sub-packages
        ["*"],
    ],
)
def test_object_message_allowed(allow: list[str]) -> None:
    m = ObjectMessage(Order("apple", 2))
    m.set_deserialization_policy(DeserializationPolicy(allow_list=allow))
    assert m.getObject() == Order("apple", 2)
    assert m.getBody(Order) == Order("apple", 2)
    assert m.isBodyAssignableTo(Order)
    assert m.isBodyAssignableTo(object)
    assert not m.isBodyAssignableTo(str)
    with pytest.raises(MessageFormatException):
        m.getBody(str)


def test_object_message_prefix_is_not_a_substring_match() -> None:
    m = ObjectMessage(Order("apple", 2))
    m.set_deserialization_policy(DeserializationPolicy(allow_list=[f"{__name__}.Ord"]))
    with pytest.raises(MessageFormatException):
        m.getObject()


@pytest.mark.parametrize("deny", [[f"{__name__}.Order"], [__name__], ["*"]])
def test_object_message_deny_beats_allow(deny: list[str]) -> None:
    m = ObjectMessage(Order("apple", 2))
    m.set_deserialization_policy(DeserializationPolicy(allow_list=["*"], deny_list=deny))
    with pytest.raises(MessageFormatException, match="Order"):
        m.getObject()


def test_object_message_deny_does_not_affect_primitives() -> None:
    m = ObjectMessage({"a": 1})
    m.set_deserialization_policy(DeserializationPolicy(deny_list=["*"]))
    assert m.getObject() == {"a": 1}


def test_object_message_blocks_dangerous_globals() -> None:
    class Evil:
        def __reduce__(self) -> Any:
            return (eval, ("1+1",))

    m = ObjectMessage(Evil())
    with pytest.raises(MessageFormatException, match="builtins.eval"):
        m.getObject()


def test_policy_parse() -> None:
    p = DeserializationPolicy.parse("a.b, c ,", None)
    assert p.allow_list == ["a.b", "c"]
    assert p.deny_list == []
    assert p.is_allowed("a.b.C")
    assert p.is_allowed("c")
    assert not p.is_allowed("ab.C")


def test_object_message_unpicklable() -> None:
    with pytest.raises(MessageFormatException, match="serialize"):
        ObjectMessage(lambda: 1)


def test_object_message_java_serialized() -> None:
    m = ObjectMessage()
    m.set_serialized_body(b"\xac\xed\x00\x05", JAVA_SERIALIZED_CONTENT_TYPE)
    with pytest.raises(MessageFormatException, match="Java serialized"):
        m.getObject()
    assert m.getSerializedBytes() == b"\xac\xed\x00\x05"
    assert m.isBodyAssignableTo(object) is False


def test_object_message_corrupt_pickle() -> None:
    m = ObjectMessage()
    m.set_serialized_body(b"\x80\x05garbage", "application/x-python-serialized-object")
    with pytest.raises(MessageFormatException, match="deserialize"):
        m.getObject()


def test_object_message_typed_body() -> None:
    m = ObjectMessage()
    m.set_typed_body({"k": [1, 2]})
    got = m.getObject()
    assert got == {"k": [1, 2]}
    got["k"].append(3)
    assert m.getObject() == {"k": [1, 2]}  # a copy each time
    assert m.getSerializedBytes() is None
    assert m.getBody(dict) == {"k": [1, 2]}


def test_object_message_read_only_and_clear() -> None:
    m = ObjectMessage("x")
    m.set_read_only(True)
    with pytest.raises(MessageNotWriteableException):
        m.setObject("y")
    m.clearBody()
    assert m.getObject() is None
    m.setObject("y")
    m.setObject(None)
    assert m.getObject() is None


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
