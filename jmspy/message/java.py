"""Java value semantics shared by messages and selectors: the Java type tags, the J* wrapper
types, float32 rounding, the JMS conversion tables (JMS 3.5.4 properties, 3.11.3 map/stream) and
Java's number parsing and formatting.

One home for each conversion: :mod:`jmspy.selector.numeric` uses the float32 rounding and the
range limits below rather than its own copies.
"""

from __future__ import annotations

import copy
import decimal
import enum
import math
import re
import struct
from typing import Any

from jmspy.errors import MessageFormatException, NumberFormatException

__all__ = ["JavaType", "TypedValue", "JByte", "JShort", "JInt", "JLong", "JFloat", "JChar"]


_BYTE_MIN, _BYTE_MAX = -(2**7), 2**7 - 1
_SHORT_MIN, _SHORT_MAX = -(2**15), 2**15 - 1
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_UINT_MAX = 2**32 - 1

_BYTE_MIN, _BYTE_MAX = -(2**7), 2**7 - 1
_SHORT_MIN, _SHORT_MAX = -(2**15), 2**15 - 1
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


# ---------------------------------------------------------------------------------------------
# Java types
# ---------------------------------------------------------------------------------------------


class JavaType(enum.Enum):
    """The Java type a property, map entry or stream item was written as."""

    BOOLEAN = "boolean"
    BYTE = "byte"
    SHORT = "short"
    INT = "int"
    LONG = "long"
    FLOAT = "float"
    DOUBLE = "double"
    STRING = "String"
    CHAR = "char"  # Map/Stream only (and Qpid JMS accepts Character properties too)
    BYTES = "byte[]"  # Map/Stream only
    # A received AMQP value with no Java equivalent (binary, list, map, decimal, described...)
    # found in application properties or a foreign map/stream body. Only the *Object getters
    # return it; it is re-encoded unchanged if the message is sent on.
    OBJECT = "Object"

    # Members are singletons compared by identity, so identity is a consistent hash; Enum's
    # own __hash__ is a Python function, and the codec looks a writer up by JavaType for every
    # property it encodes.
    __hash__ = object.__hash__


_BOOLEAN = JavaType.BOOLEAN
_BYTE = JavaType.BYTE
_SHORT = JavaType.SHORT
_INT = JavaType.INT
_LONG = JavaType.LONG
_FLOAT = JavaType.FLOAT
_DOUBLE = JavaType.DOUBLE
_STRING = JavaType.STRING
_CHAR = JavaType.CHAR
_BYTES = JavaType.BYTES
_OBJECT = JavaType.OBJECT

TypedValue = tuple[JavaType, Any]

_F32 = struct.Struct(">f")


def _to_float32(value: float) -> float:
    """Round a double to the nearest float32, as a Java ``(float)`` cast does."""
    try:
        return float(_F32.unpack(_F32.pack(value))[0])
    except OverflowError:
        # struct refuses values that round to infinity; Java yields +/-Infinity.
        return math.copysign(math.inf, value)


class JByte(int):
    """An ``int`` that is written as a Java ``byte``."""

    def __new__(cls, value: int) -> JByte:
        if not _BYTE_MIN <= value <= _BYTE_MAX:
            raise MessageFormatException(f"Value {value!r} is out of range for a Java byte")
        return super().__new__(cls, value)


class JShort(int):
    """An ``int`` that is written as a Java ``short``."""

    def __new__(cls, value: int) -> JShort:
        if not _SHORT_MIN <= value <= _SHORT_MAX:
            raise MessageFormatException(f"Value {value!r} is out of range for a Java short")
        return super().__new__(cls, value)


class JInt(int):
    """An ``int`` that is written as a Java ``int``."""

    def __new__(cls, value: int) -> JInt:
        if not _INT_MIN <= value <= _INT_MAX:
            raise MessageFormatException(f"Value {value!r} is out of range for a Java int")
        return super().__new__(cls, value)


class JLong(int):
    """An ``int`` that is written as a Java ``long`` even when it would fit in an int."""

    def __new__(cls, value: int) -> JLong:
        if not _LONG_MIN <= value <= _LONG_MAX:
            raise MessageFormatException(f"Value {value!r} is out of range for a Java long")
        return super().__new__(cls, value)


class JFloat(float):
    """A ``float`` that is written as a Java ``float`` (rounded to 32 bits)."""

    def __new__(cls, value: float) -> JFloat:
        return super().__new__(cls, _to_float32(_check_float(value, "float")))


class JChar(str):
    """A one-character ``str`` that is written as a Java ``char`` (one UTF-16 unit)."""

    def __new__(cls, value: str) -> JChar:
        if not isinstance(value, str) or len(value) != 1 or ord(value) > 0xFFFF:
            raise MessageFormatException(
                f"Value {value!r} is not a single UTF-16 character for a Java char"
            )
        return super().__new__(cls, value)


def _check_range(value: Any, lo: int, hi: int, java: str) -> int:
    # bool is an int subclass, but a Java numeric setter can never receive a boolean.
    if isinstance(value, bool) or not isinstance(value, int):
        raise MessageFormatException(
            f"Value {value!r} of type {type(value).__name__} is not a valid Java {java}"
        )
    if not lo <= value <= hi:
        raise MessageFormatException(f"Value {value!r} is out of range for a Java {java}")
    return int(value)


def _check_float(value: Any, java: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MessageFormatException(
            f"Value {value!r} of type {type(value).__name__} is not a valid Java {java}"
        )
    try:
        return float(value)
    except OverflowError:  # an int beyond any double
        raise MessageFormatException(f"Value {value!r} is out of range for a Java {java}") from None


def _typed_object(value: Any, *, allow_bytes: bool) -> TypedValue:
    """Tag a value passed to setObjectProperty / MapMessage.setObject / writeObject."""
    t = type(value)
    # Exact-type fast paths first: this runs for every dict entry of message_for_body.
    if t is str:
        return (_STRING, value)
    if t is bool:
        return (_BOOLEAN, value)
    if t is int:
        if _INT_MIN <= value <= _INT_MAX:
            return (_INT, value)
        if _LONG_MIN <= value <= _LONG_MAX:
            return (_LONG, value)
        raise MessageFormatException(f"Value {value!r} is out of range for a Java long")
    if t is float:
        return (_DOUBLE, value)
    if value is None:
        return (_STRING, None)
    if isinstance(value, JByte):
        return (_BYTE, int(value))
    if isinstance(value, JShort):
        return (_SHORT, int(value))
    if isinstance(value, JInt):
        return (_INT, int(value))
    if isinstance(value, JLong):
        return (_LONG, int(value))
    if isinstance(value, JFloat):
        return (_FLOAT, float(value))
    if isinstance(value, JChar):
        return (_CHAR, str(value))
    if allow_bytes and isinstance(value, bytes | bytearray | memoryview):
        return (_BYTES, bytes(value))
    # Subclasses of the plain types (e.g. IntEnum, str enums) are accepted by their base.
    if isinstance(value, bool):
        return (_BOOLEAN, bool(value))
    if isinstance(value, int):
        return _typed_object(int(value), allow_bytes=allow_bytes)
    if isinstance(value, float):
        return (_DOUBLE, float(value))
    if isinstance(value, str):
        return (_STRING, str(value))
    allowed = "bool, int, float, str, None or a JByte/JShort/JInt/JLong/JFloat/JChar"
    if allow_bytes:
        allowed += ", bytes"
    raise MessageFormatException(
        f"Invalid object value type {type(value).__name__}: only {allowed} values are allowed"
    )


# ---------------------------------------------------------------------------------------------
# Java conversion rules (JMS 3.5.4 property table, 3.11.3 map/stream table)
# ---------------------------------------------------------------------------------------------

_INT_RE = re.compile(r"[+-]?\d+")
# Java FloatingDecimal.readJavaFormatString: optional sign, NaN/Infinity, decimal or hex form,
# optional f/F/d/D suffix; surrounding whitespace (chars <= ' ') is trimmed first. ASCII digits
# only, as FloatingDecimal reads them (Integer.parseInt, below, takes any Unicode digit, as
# Character.digit does).
_FLOAT_RE = re.compile(
    r"[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?"
    r"|0[xX](?:[0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?\d+[fFdD]?)",
    re.ASCII,
)
_JAVA_WS = "".join(chr(c) for c in range(0x21))


def _parse_int(s: str | None, lo: int, hi: int, java: str) -> int:
    # Java Integer.valueOf(null) and friends throw NumberFormatException ("null"), which is
    # how reading an absent numeric property behaves.
    if s is None:
        raise NumberFormatException(f"Cannot parse null as a Java {java}")
    if not _INT_RE.fullmatch(s):
        raise NumberFormatException(f'For input string: "{s}" (not a valid Java {java})')
    value = int(s)
    if not lo <= value <= hi:
        raise NumberFormatException(f'Value out of range for a Java {java}: "{s}"')
    return value


def _parse_double(s: str | None, java: str) -> float:
    # Java's Float.valueOf(null) / Double.valueOf(null) throw NullPointerException rather than
    # NumberFormatException; we use NumberFormatException so that every "absent numeric value"
    # read fails the same catchable way.
    if s is None:
        raise NumberFormatException(f"Cannot parse null as a Java {java}")
    t = s.strip(_JAVA_WS)
    if not _FLOAT_RE.fullmatch(t):
        raise NumberFormatException(f'For input string: "{s}" (not a valid Java {java})')
    if t[-1] in "fFdD" and "x" not in t.lower():
        t = t[:-1]
    if "x" in t.lower():
        if t[-1] in "fFdD":
            t = t[:-1]
        return float.fromhex(t)
    if t.lstrip("+-") == "Infinity":
        return -math.inf if t[0] == "-" else math.inf
    if t.lstrip("+-") == "NaN":
        return math.nan
    return float(t)


def _shortest_digits(v: float, single: bool) -> tuple[str, int]:
    """Shortest significant digits of positive ``v`` and its decimal exponent (d.ddd * 10**e)."""
    if single:
        # The shortest decimal that reads back as the same float32 (Java Float.toString).
        s = f"{v:.8e}"
        for prec in range(1, 10):
            candidate = f"{v:.{prec - 1}e}"
            if _to_float32(float(candidate)) == v:
                s = candidate
                break
        mant, exp = s.split("e")
    else:
        # repr() is the shortest string that reads back as the same double.
        _, digit_tuple, exponent = decimal.Decimal(repr(v)).as_tuple()
        digits = "".join(map(str, digit_tuple))
        mant, exp = digits, str(len(digits) + int(exponent) - 1)
    digits = mant.replace(".", "").rstrip("0") or "0"
    if len(digits) == 1:
        # One digit reads back, but Java picks among the decimals of one or two digits the
        # one closest to the exact value: Double.MIN_VALUE is 4.9E-324, not 5.0E-324.
        mant, exp = f"{decimal.Decimal(v):.1e}".split("e")
        digits = mant.replace(".", "").rstrip("0") or "0"
    return digits, int(exp)


def _java_float_string(v: float, single: bool) -> str:
    """``Float.toString`` / ``Double.toString`` formatting."""
    if v != v:
        return "NaN"
    if v in (math.inf, -math.inf):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0.0:
        return "-0.0" if math.copysign(1.0, v) < 0 else "0.0"
    sign = "-" if v < 0 else ""
    digits, exp = _shortest_digits(abs(v), single)
    if 1e-3 <= abs(v) < 1e7:
        if exp >= 0:
            whole = digits[: exp + 1].ljust(exp + 1, "0")
            frac = digits[exp + 1 :] or "0"
        else:
            whole = "0"
            frac = "0" * (-exp - 1) + digits
        return f"{sign}{whole}.{frac}"
    frac = digits[1:] or "0"
    return f"{sign}{digits[0]}.{frac}E{exp}"


def _type_error(jt: JavaType, target: str) -> MessageFormatException:
    return MessageFormatException(f"Cannot convert a {jt.value} value to {target}")


def _as_boolean(jt: JavaType, v: Any) -> bool:
    if jt is _BOOLEAN:
        return bool(v)
    if jt is _STRING:
        # Boolean.valueOf: only "true" in any case is true, everything else (null too) is false.
        return v is not None and v.lower() == "true"
    raise _type_error(jt, "boolean")


def _as_byte(jt: JavaType, v: Any) -> int:
    if jt is _BYTE:
        return int(v)
    if jt is _STRING:
        return _parse_int(v, _BYTE_MIN, _BYTE_MAX, "byte")
    raise _type_error(jt, "byte")


def _as_short(jt: JavaType, v: Any) -> int:
    if jt is _SHORT or jt is _BYTE:
        return int(v)
    if jt is _STRING:
        return _parse_int(v, _SHORT_MIN, _SHORT_MAX, "short")
    raise _type_error(jt, "short")


def _as_int(jt: JavaType, v: Any) -> int:
    if jt is _INT or jt is _SHORT or jt is _BYTE:
        return int(v)
    if jt is _STRING:
        return _parse_int(v, _INT_MIN, _INT_MAX, "int")
    raise _type_error(jt, "int")


def _as_long(jt: JavaType, v: Any) -> int:
    if jt is _LONG or jt is _INT or jt is _SHORT or jt is _BYTE:
        return int(v)
    if jt is _STRING:
        return _parse_int(v, _LONG_MIN, _LONG_MAX, "long")
    raise _type_error(jt, "long")


def _as_float(jt: JavaType, v: Any) -> float:
    if jt is _FLOAT:
        return float(v)
    if jt is _STRING:
        return _to_float32(_parse_double(v, "float"))
    raise _type_error(jt, "float")


def _as_double(jt: JavaType, v: Any) -> float:
    if jt is _DOUBLE or jt is _FLOAT:
        return float(v)
    if jt is _STRING:
        return _parse_double(v, "double")
    raise _type_error(jt, "double")


def _as_string(jt: JavaType, v: Any) -> str | None:
    if jt is _STRING or jt is _CHAR:
        text: str | None = v
        return text
    if v is None:
        return None
    if jt is _BOOLEAN:
        return "true" if v else "false"
    if jt is _INT or jt is _LONG or jt is _SHORT or jt is _BYTE:
        return str(v)
    if jt is _DOUBLE:
        return _java_float_string(v, single=False)
    if jt is _FLOAT:
        return _java_float_string(v, single=True)
    raise _type_error(jt, "String")


def _as_char(jt: JavaType, v: Any) -> str:
    if jt is _CHAR:
        char: str = v
        return char
    if jt is _STRING and v is None:
        # Java unboxes null to char and throws NullPointerException; TypeError is the Python
        # analogue of "None where a value is required".
        raise TypeError("Cannot read a null value as a char")
    raise _type_error(jt, "char")


def _as_bytes(jt: JavaType, v: Any) -> bytes | None:
    if jt is _BYTES:
        return None if v is None else bytes(v)
    if jt is _STRING and v is None:
        return None
    raise _type_error(jt, "byte[]")


def _plain(jt: JavaType, v: Any) -> Any:
    """The value handed back by the *Object getters: plain Python types, copies of mutables."""
    if jt is _OBJECT:
        return _deep_copy(v)
    return v


def _deep_copy(v: Any) -> Any:
    # A received list or map nested a few hundred levels deep (a hostile or buggy sender)
    # exhausts the recursion limit of deepcopy: a JMS exception, not a RecursionError.
    try:
        return copy.deepcopy(v)
    except RecursionError:
        raise MessageFormatException(
            "the value is nested too deeply to be copied (a list or map inside a list or map "
            "several hundred levels deep)"
        ) from None


_MISSING: TypedValue = (_STRING, None)

# ---------------------------------------------------------------------------------------------


def _check_bytes_value(value: Any, what: str) -> None:
    # A str or int here is a caller mistake that bytes()/extend() would turn into a raw
    # TypeError (or, for an int, silently into that many zero bytes).
    if not isinstance(value, bytes | bytearray | memoryview):
        raise MessageFormatException(
            f"{what} needs bytes, bytearray or memoryview, not {type(value).__name__}"
        )


def _message_format(exc: Exception, what: str) -> MessageFormatException:
    return MessageFormatException(f"Invalid value for {what}: {exc}", linked=exc)


# Pickles name a class by module and name: the wrapper types keep the public module they have
# always been imported from, so bodies pickled by earlier versions still load (and the
# deserialization policy's built-in allow list stays valid).
for _cls in (JByte, JShort, JInt, JLong, JFloat, JChar):
    _cls.__module__ = "jmspy.message"
del _cls
