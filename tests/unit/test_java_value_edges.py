"""Java value edges of the message API: readUTF reads back a lone surrogate (a Java String may
hold one, writeUTF writes it, DataInput.readUTF keeps it); a float or double given an int
beyond any double raises MessageFormatException (it raised a bare OverflowError); the
smallest floats and doubles convert to the String Java's Float/Double.toString gives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import jmspy
from jmspy.message import BytesMessage, MapMessage, StreamMessage, TextMessage
from jmspy.message.java import JFloat

FLOAT_MIN = 1.401298464324817e-45  # Float.MIN_VALUE
DOUBLE_MIN = 5e-324  # Double.MIN_VALUE


@pytest.mark.parametrize("text", ["x\ud800y", "\udfff", "pair \U0001f600 and lone \ud83d"])
def test_read_utf_reads_back_a_lone_surrogate(text: str) -> None:
    message = BytesMessage()
    message.writeUTF(text)
    message.reset()
    assert message.readUTF() == text


def test_read_utf_reads_what_java_writes_for_a_lone_surrogate() -> None:
    message = BytesMessage()
    message.writeBytes(bytes.fromhex("000578eda08079"))  # Java: writeUTF("x\uD800y")
    message.reset()
    assert message.readUTF() == "x\ud800y"


def _float_setters() -> list[tuple[str, Callable[[Any], Any]]]:
    stream, bytes_message, map_message, text = (
        StreamMessage(),
        BytesMessage(),
        MapMessage(),
        TextMessage(),
    )
    return [
        ("setDoubleProperty", lambda v: text.setDoubleProperty("d", v)),
        ("setFloatProperty", lambda v: text.setFloatProperty("f", v)),
        ("MapMessage.setDouble", lambda v: map_message.setDouble("d", v)),
        ("MapMessage.setFloat", lambda v: map_message.setFloat("f", v)),
        ("StreamMessage.writeDouble", stream.writeDouble),
        ("StreamMessage.writeFloat", stream.writeFloat),
        ("BytesMessage.writeDouble", bytes_message.writeDouble),
        ("BytesMessage.writeFloat", bytes_message.writeFloat),
        ("JFloat", JFloat),
    ]


@pytest.mark.parametrize(("call", "setter"), _float_setters(), ids=lambda v: str(v))
def test_an_int_beyond_any_double_is_a_message_format_error(
    call: str, setter: Callable[[Any], Any]
) -> None:
    with pytest.raises(jmspy.MessageFormatException, match=r"out of range for a Java"):
        setter(10**400)


@pytest.mark.parametrize(
    ("setter", "value", "java"),
    [
        ("setFloatProperty", FLOAT_MIN, "1.4E-45"),
        ("setFloatProperty", 2 * FLOAT_MIN, "2.8E-45"),
        ("setDoubleProperty", DOUBLE_MIN, "4.9E-324"),
        ("setDoubleProperty", 1e23, "1.0E23"),
        ("setDoubleProperty", 2e23, "2.0E23"),
        ("setDoubleProperty", 1.0, "1.0"),
        ("setFloatProperty", 0.1, "0.1"),
        ("setDoubleProperty", 1.7976931348623157e308, "1.7976931348623157E308"),
    ],
)
def test_float_to_string_is_javas(setter: str, value: float, java: str) -> None:
    message = TextMessage()
    getattr(message, setter)("v", value)
    assert message.getStringProperty("v") == java


def test_string_to_double_takes_ascii_digits_only_as_java_does() -> None:
    """Double.valueOf reads ASCII digits only; Integer.parseInt takes any Unicode digit."""
    message = TextMessage()
    message.setStringProperty("arabic", "\u0661.\u0665")  # 1.5 in Arabic-Indic digits
    message.setStringProperty("whole", "\u0661\u0662")  # 12
    with pytest.raises(jmspy.NumberFormatException, match="not a valid Java double"):
        message.getDoubleProperty("arabic")
    assert message.getIntProperty("whole") == 12
