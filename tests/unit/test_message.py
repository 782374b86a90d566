"""Message headers and properties: JMS 3.4 / 3.5 rules as Qpid JMS applies them."""

from __future__ import annotations

import math
from typing import Any

import pytest

from jmspy.destination import Queue, Topic
from jmspy.errors import (
    IllegalArgumentException,
    JMSException,
    MessageFormatException,
    NumberFormatException,
)
from jmspy.message import (
    DEFAULT_DELIVERY_DELAY,
    DEFAULT_DELIVERY_MODE,
    DEFAULT_PRIORITY,
    DEFAULT_TIME_TO_LIVE,
    BytesMessage,
    DeliveryMode,
    JavaType,
    JByte,
    JChar,
    JFloat,
    JInt,
    JLong,
    JShort,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)

ALL_TYPES = [Message, TextMessage, BytesMessage, MapMessage, StreamMessage, ObjectMessage]

# ---------------------------------------------------------------------------------------------
# Headers
# ---------------------------------------------------------------------------------------------


def test_constants() -> None:
    assert DeliveryMode.NON_PERSISTENT == 1
    assert DeliveryMode.PERSISTENT == 2
    assert DEFAULT_PRIORITY == 4
    assert DEFAULT_DELIVERY_MODE == 2
    assert DEFAULT_TIME_TO_LIVE == 0
    assert DEFAULT_DELIVERY_DELAY == 0


@pytest.mark.parametrize("cls", ALL_TYPES)
def test_new_message_defaults(cls: type[Message]) -> None:
    m = cls()
    assert m.getJMSDeliveryMode() == DeliveryMode.PERSISTENT
    assert m.getJMSPriority() == 4
    assert m.getJMSMessageID() is None
    assert m.getJMSTimestamp() == 0
    assert m.getJMSCorrelationID() is None
    assert m.getJMSCorrelationIDAsBytes() is None
    assert m.getJMSReplyTo() is None
    assert m.getJMSDestination() is None
    assert m.getJMSRedelivered() is False
    assert m.getJMSType() is None
    assert m.getJMSExpiration() == 0
    assert m.getJMSDeliveryTime() == 0
    assert m.getPropertyNames() == []


def test_header_round_trip() -> None:
    m = Message()
    m.setJMSMessageID("ID:x-1")
    m.setJMSTimestamp(123)
    m.setJMSCorrelationID("corr")
    m.setJMSReplyTo(Queue("r"))
    m.setJMSDestination(Topic("t"))
    m.setJMSDeliveryMode(DeliveryMode.NON_PERSISTENT)
    m.setJMSRedelivered(True)
    m.setJMSType("type")
    m.setJMSExpiration(456)
    m.setJMSDeliveryTime(789)
    m.setJMSPriority(9)
    assert m.getJMSMessageID() == "ID:x-1"
    assert m.getJMSTimestamp() == 123
    assert m.getJMSCorrelationID() == "corr"
    assert m.getJMSReplyTo() == Queue("r")
    assert m.getJMSDestination() == Topic("t")
    assert m.getJMSDeliveryMode() == 1
    assert m.getJMSRedelivered() is True
    assert m.getJMSType() == "type"
    assert m.getJMSExpiration() == 456
    assert m.getJMSDeliveryTime() == 789
    assert m.getJMSPriority() == 9


@pytest.mark.parametrize("mode", [0, 3, -1, True, "2"])
def test_invalid_delivery_mode(mode: Any) -> None:
    with pytest.raises(JMSException, match="Invalid DeliveryMode"):
        Message().setJMSDeliveryMode(mode)


@pytest.mark.parametrize("priority", [-1, 10, 100, True, 4.0])
def test_invalid_priority(priority: Any) -> None:
    with pytest.raises(JMSException, match=f"{priority!r}"):
        Message().setJMSPriority(priority)


@pytest.mark.parametrize("priority", range(10))
def test_valid_priorities(priority: int) -> None:
    m = Message()
    m.setJMSPriority(priority)
    assert m.getJMSPriority() == priority


def test_correlation_id_as_bytes() -> None:
    m = Message()
    m.setJMSCorrelationIDAsBytes(bytearray(b"\x01\xab"))
    assert m.getJMSCorrelationIDAsBytes() == b"\x01\xab"
    # Qpid JMS shows a binary correlation id in its escaped string form.
    assert m.getJMSCorrelationID() == "ID:AMQP_BINARY:01AB"
    m.setJMSCorrelationID("plain")
    with pytest.raises(JMSException, match="not binary"):
        m.getJMSCorrelationIDAsBytes()
    m.setJMSCorrelationIDAsBytes(None)
    assert m.getJMSCorrelationIDAsBytes() is None


def test_correlation_id_type_checked() -> None:
    with pytest.raises(JMSException):
        Message().setJMSCorrelationID(b"bytes")  # type: ignore[arg-type]


def test_acknowledge_calls_callback() -> None:
    m = Message()
    m.acknowledge()  # no callback: a no-op
    calls: list[int] = []
    m.set_acknowledge_callback(calls.append)
    m.acknowledge()
    m.setIntProperty("JMS_AMQP_ACK_TYPE", 3)  # the callback is there: allowed (rule WM-16)
    m.acknowledge()
    m.setObjectProperty("JMS_AMQP_ACK_TYPE", None)
    m.acknowledge()
    assert calls == [1, 3, 1]  # the outcome each acknowledge() asks for


# ---------------------------------------------------------------------------------------------
# Property conversion table (JMS 3.5.4)
# ---------------------------------------------------------------------------------------------

READERS = ["boolean", "byte", "short", "int", "long", "float", "double", "String"]

# Written type -> (setter, value, {reader: expected value}); readers not listed must raise
# MessageFormatException.
WRITTEN: dict[str, tuple[str, Any, dict[str, Any]]] = {
    "boolean": ("setBooleanProperty", True, {"boolean": True, "String": "true"}),
    "byte": (
        "setByteProperty",
        -5,
        {"byte": -5, "short": -5, "int": -5, "long": -5, "String": "-5"},
    ),
    "short": ("setShortProperty", 300, {"short": 300, "int": 300, "long": 300, "String": "300"}),
    "int": ("setIntProperty", 70000, {"int": 70000, "long": 70000, "String": "70000"}),
    "long": ("setLongProperty", 2**40, {"long": 2**40, "String": str(2**40)}),
    "float": ("setFloatProperty", 1.5, {"float": 1.5, "double": 1.5, "String": "1.5"}),
    "double": ("setDoubleProperty", 2.25, {"double": 2.25, "String": "2.25"}),
}

GETTER = {
    "boolean": "getBooleanProperty",
    "byte": "getByteProperty",
    "short": "getShortProperty",
    "int": "getIntProperty",
    "long": "getLongProperty",
    "float": "getFloatProperty",
    "double": "getDoubleProperty",
    "String": "getStringProperty",
}


def _property_cells() -> list[tuple[str, str]]:
    return [(w, r) for w in WRITTEN for r in READERS]


@pytest.mark.parametrize(("written", "reader"), _property_cells())
def test_property_conversion_table(written: str, reader: str) -> None:
    setter, value, allowed = WRITTEN[written]
    m = Message()
    getattr(m, setter)("p", value)
    getter = getattr(m, GETTER[reader])
    if reader in allowed:
        result = getter("p")
        assert result == allowed[reader]
        assert type(result) is type(allowed[reader])
    else:
        with pytest.raises(MessageFormatException):
            getter("p")
    # A failed conversion leaves the stored value intact.
    assert getattr(m, GETTER[written])("p") == value


# String -> every type, parsed with the Java valueOf rules.
STRING_CELLS = [
    ("boolean", "true", True),
    ("boolean", "TrUe", True),
    ("boolean", "yes", False),
    ("boolean", "1", False),
    ("byte", "-128", -128),
    ("byte", "+127", 127),
    ("short", "-32768", -32768),
    ("int", "2147483647", 2147483647),
    ("long", "-9223372036854775808", -(2**63)),
    ("float", "1.5", 1.5),
    ("float", " 2.5f ", 2.5),
    ("float", "1e3", 1000.0),
    ("float", "0x1p3", 8.0),
    ("double", "-2.5D", -2.5),
    ("double", ".5", 0.5),
    ("double", "Infinity", math.inf),
    ("double", "-Infinity", -math.inf),
    ("String", "abc", "abc"),
]


@pytest.mark.parametrize(("reader", "text", "expected"), STRING_CELLS)
def test_string_property_conversions(reader: str, text: str, expected: Any) -> None:
    m = Message()
    m.setStringProperty("p", text)
    assert getattr(m, GETTER[reader])("p") == expected


def test_string_nan_and_float_rounding() -> None:
    m = Message()
    m.setStringProperty("p", "NaN")
    assert math.isnan(m.getDoubleProperty("p"))
    m.setStringProperty("p", "0.1")
    assert m.getFloatProperty("p") == JFloat(0.1)
    assert m.getFloatProperty("p") != 0.1  # float32 precision, as Java's Float.valueOf
    m.setStringProperty("p", "1e39")
    assert m.getFloatProperty("p") == math.inf  # overflows float32, Java gives Infinity


@pytest.mark.parametrize(
    ("reader", "text"),
    [
        ("byte", "128"),
        ("byte", "-129"),
        ("short", "32768"),
        ("int", "2147483648"),
        ("long", "9223372036854775808"),
        ("int", "abc"),
        ("int", " 5"),
        ("int", "5 "),
        ("int", "1.5"),
        ("int", ""),
        ("long", "1_000"),
        ("long", "0x10"),
        ("float", "abc"),
        ("double", "1.5.5"),
        ("double", ""),
        ("double", "inf"),
    ],
)
def test_string_parse_failures(reader: str, text: str) -> None:
    m = Message()
    m.setStringProperty("p", text)
    with pytest.raises(NumberFormatException):
        getattr(m, GETTER[reader])("p")


def test_number_format_exception_is_illegal_argument() -> None:
    assert issubclass(NumberFormatException, IllegalArgumentException)


def test_missing_property_reads() -> None:
    m = Message()
    assert m.getBooleanProperty("missing") is False
    assert m.getStringProperty("missing") is None
    assert m.getObjectProperty("missing") is None
    for reader in ("byte", "short", "int", "long", "float", "double"):
        with pytest.raises(NumberFormatException):
            getattr(m, GETTER[reader])("missing")
    assert m.propertyExists("missing") is False


@pytest.mark.parametrize("how", ["object", "string"])
def test_null_property_value(how: str) -> None:
    m = Message()
    if how == "object":
        m.setObjectProperty("n", None)
    else:
        m.setStringProperty("n", None)
    assert m.propertyExists("n")
    assert m.getPropertyNames() == ["n"]
    assert m.getObjectProperty("n") is None
    assert m.getStringProperty("n") is None
    assert m.getBooleanProperty("n") is False
    with pytest.raises(NumberFormatException):
        m.getIntProperty("n")


# ---------------------------------------------------------------------------------------------
# Typed setters: ranges and value types
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setter", "value"),
    [
        ("setByteProperty", 128),
        ("setByteProperty", -129),
        ("setShortProperty", 2**15),
        ("setShortProperty", -(2**15) - 1),
        ("setIntProperty", 2**31),
        ("setIntProperty", -(2**31) - 1),
        ("setLongProperty", 2**63),
        ("setLongProperty", -(2**63) - 1),
        ("setIntProperty", True),
        ("setIntProperty", 1.0),
        ("setIntProperty", "1"),
        ("setDoubleProperty", "1.0"),
        ("setFloatProperty", None),
        ("setBooleanProperty", 1),
        ("setStringProperty", 5),
    ],
)
def test_typed_setter_rejects(setter: str, value: Any) -> None:
    with pytest.raises(MessageFormatException, match=repr(value).replace(".", r"\.")):
        getattr(Message(), setter)("p", value)


@pytest.mark.parametrize(
    ("setter", "value"),
    [
        ("setByteProperty", 127),
        ("setByteProperty", -128),
        ("setShortProperty", 2**15 - 1),
        ("setIntProperty", -(2**31)),
        ("setLongProperty", 2**63 - 1),
        ("setLongProperty", -(2**63)),
    ],
)
def test_typed_setter_bounds_accepted(setter: str, value: int) -> None:
    m = Message()
    getattr(m, setter)("p", value)
    assert m.getLongProperty("p") == value


def test_float_property_is_rounded_to_32_bits() -> None:
    m = Message()
    m.setFloatProperty("f", 0.1)
    assert m.getFloatProperty("f") == pytest.approx(0.1, rel=1e-7)
    assert m.getDoubleProperty("f") == 0.10000000149011612  # Java (double) 0.1f
    assert m.getStringProperty("f") == "0.1"  # Java Float.toString(0.1f)


@pytest.mark.parametrize(
    ("value", "expected_type", "expected"),
    [
        (True, JavaType.BOOLEAN, True),
        (0, JavaType.INT, 0),
        (2**31 - 1, JavaType.INT, 2**31 - 1),
        (2**31, JavaType.LONG, 2**31),
        (-(2**63), JavaType.LONG, -(2**63)),
        (1.5, JavaType.DOUBLE, 1.5),
        ("s", JavaType.STRING, "s"),
        (JByte(3), JavaType.BYTE, 3),
        (JShort(3), JavaType.SHORT, 3),
        (JInt(3), JavaType.INT, 3),
        (JLong(3), JavaType.LONG, 3),
        (JFloat(1.5), JavaType.FLOAT, 1.5),
        (JChar("c"), JavaType.CHAR, "c"),
    ],
)
def test_set_object_property_types(value: Any, expected_type: JavaType, expected: Any) -> None:
    m = Message()
    m.setObjectProperty("p", value)
    assert m._get_property_type("p") is expected_type
    got = m.getObjectProperty("p")
    assert got == expected
    # getObjectProperty hands back plain Python values, never the wrapper classes.
    assert type(got) in (bool, int, float, str)


@pytest.mark.parametrize("value", [[1], {"a": 1}, b"x", bytearray(b"x"), object(), (1,), {1}, 1j])
def test_set_object_property_rejects(value: Any) -> None:
    with pytest.raises(MessageFormatException, match=type(value).__name__):
        Message().setObjectProperty("p", value)


def test_set_object_property_int_beyond_long() -> None:
    with pytest.raises(MessageFormatException, match=str(2**63)):
        Message().setObjectProperty("p", 2**63)


def test_char_property_reads_as_string_only() -> None:
    m = Message()
    m.setObjectProperty("c", JChar("x"))
    assert m.getStringProperty("c") == "x"
    with pytest.raises(MessageFormatException):
        m.getIntProperty("c")


@pytest.mark.parametrize(
    ("cls", "value"),
    [(JByte, 128), (JShort, 2**15), (JInt, 2**31), (JLong, 2**63), (JChar, "ab"), (JChar, "😀")],
)
def test_wrapper_ranges(cls: Any, value: Any) -> None:
    with pytest.raises(MessageFormatException):
        cls(value)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1.0"),
        (100.0, "100.0"),
        (0.001, "0.001"),
        (1e-4, "1.0E-4"),
        (1234567.0, "1234567.0"),
        (1e7, "1.0E7"),
        (1.5e300, "1.5E300"),
        (-2.5e-10, "-2.5E-10"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
        (math.nan, "NaN"),
        (123456.789, "123456.789"),
    ],
)
def test_double_to_string_matches_java(value: float, text: str) -> None:
    m = Message()
    m.setDoubleProperty("d", value)
    assert m.getStringProperty("d") == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(1.0, "1.0"), (123456.789, "123456.79"), (3.4028235e38, "3.4028235E38"), (1e-5, "1.0E-5")],
)
def test_float_to_string_matches_java(value: float, text: str) -> None:
    m = Message()
    m.setFloatProperty("f", value)
    assert m.getStringProperty("f") == text
