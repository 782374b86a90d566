"""MapMessage and StreamMessage bodies: the JMS 3.11.3 conversion table, modes and names."""

from __future__ import annotations

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
    JByte,
    JChar,
    JFloat,
    JLong,
    JShort,
    MapMessage,
    StreamMessage,
)

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


@pytest.mark.parametrize("unusable", [None, b"12345678", memoryview(b"12345678"), [0] * 8])
def test_stream_read_bytes_into_an_unwritable_buffer_leaves_the_item_unread(
    unusable: object,
) -> None:
    m = StreamMessage()
    m.writeBytes(b"abc")
    m.reset()
    with pytest.raises(TypeError, match="writable byte buffer"):
        m.readBytes(unusable)  # type: ignore[arg-type]
    assert m.readObject() == b"abc"
    view = memoryview(bytearray(2))
    m.reset()
    assert m.readBytes(view) == 2 and bytes(view) == b"ab"
