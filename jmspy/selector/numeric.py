"""Java value semantics for selectors: the Java types of values, float32 rounding, 32/64-bit
wrapping arithmetic, binary numeric promotion and the JMS comparison of two typed values.

Shared by the lexer (float literals are rounded as Java rounds them), the parser (literal ranges,
comparison operators) and the evaluator (arithmetic and comparison at run time).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

# Java types, float32 rounding and the range limits have one home, shared with the message model.
from jmspy.message.java import (
    _BOOLEAN,
    _BYTE,
    _DOUBLE,
    _FLOAT,
    _INT,
    _INT_MAX,
    _INT_MIN,
    _LONG,
    _LONG_MAX,
    _LONG_MIN,
    _OBJECT,
    _SHORT,
    _STRING,
    JavaType,
    TypedValue,
)
from jmspy.message.java import _to_float32 as _f32

# What the other selector modules use (some of it the message model's Java types, re-exported);
# nothing here is public API.
__all__ = [
    "TypedValue",
    "_ARITH",
    "_BOOLEAN",
    "_CMP_OPS",
    "_DOUBLE",
    "_FLOAT",
    "_INT",
    "_INT_MAX",
    "_INT_MIN",
    "_LONG",
    "_LONG_MAX",
    "_LONG_MIN",
    "_NEGATE",
    "_NULL",
    "_OBJECT",
    "_ORDERING",
    "_PROMOTED",
    "_RANK",
    "_STRING",
    "_SWAPPED",
    "_compare",
    "_f32",
    "_i2f",
]

_NULL: TypedValue = (_OBJECT, None)


# Binary numeric promotion rank: 0 int (byte and short promote to int), 1 long, 2 float, 3 double.
_RANK: dict[JavaType, int] = {_BYTE: 0, _SHORT: 0, _INT: 0, _LONG: 1, _FLOAT: 2, _DOUBLE: 3}


def _i2f(value: int) -> float:
    """Java int/long -> float conversion: one rounding straight to 24 significant bits."""
    if -(2**53) <= value <= 2**53:
        return _f32(float(value))  # exact as a double, so a single rounding happens
    sign = -1.0 if value < 0 else 1.0
    mag = -value if value < 0 else value
    shift = mag.bit_length() - 24
    q, r = divmod(mag, 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return sign * float(q << shift)


def _to_float(value: Any) -> float:
    """An operand promoted to float (value is an int/long or already a float32 value)."""
    return value if type(value) is float else _i2f(value)


def _wrap32(v: int) -> int:
    if _INT_MIN <= v <= _INT_MAX:
        return v
    return ((v + 2**31) & 0xFFFFFFFF) - 2**31


def _wrap64(v: int) -> int:
    if _LONG_MIN <= v <= _LONG_MAX:
        return v
    return ((v + 2**63) & 0xFFFFFFFFFFFFFFFF) - 2**63


def _idiv(a: int, b: int) -> int | None:
    """Java integer division (truncates toward zero); None for division by zero."""
    if b == 0:
        return None
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def _fdiv(a: float, b: float) -> float:
    """IEEE 754 division as Java does it (no ZeroDivisionError)."""
    if b == 0.0:
        if a == 0.0 or a != a:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _div_int(a: Any, b: Any) -> TypedValue:
    q = _idiv(a, b)
    return _NULL if q is None else (_INT, _wrap32(q))


def _div_long(a: Any, b: Any) -> TypedValue:
    q = _idiv(a, b)
    return _NULL if q is None else (_LONG, _wrap64(q))


# For each operator: the implementation per promoted rank (int, long, float, double).
_ArithImpl = tuple[
    Callable[[Any, Any], TypedValue],
    Callable[[Any, Any], TypedValue],
    Callable[[Any, Any], TypedValue],
    Callable[[Any, Any], TypedValue],
]
_ARITH: dict[str, _ArithImpl] = {
    "+": (
        lambda a, b: (_INT, _wrap32(a + b)),
        lambda a, b: (_LONG, _wrap64(a + b)),
        lambda a, b: (_FLOAT, _f32(_to_float(a) + _to_float(b))),
        lambda a, b: (_DOUBLE, float(a) + float(b)),
    ),
    "-": (
        lambda a, b: (_INT, _wrap32(a - b)),
        lambda a, b: (_LONG, _wrap64(a - b)),
        lambda a, b: (_FLOAT, _f32(_to_float(a) - _to_float(b))),
        lambda a, b: (_DOUBLE, float(a) - float(b)),
    ),
    "*": (
        lambda a, b: (_INT, _wrap32(a * b)),
        lambda a, b: (_LONG, _wrap64(a * b)),
        lambda a, b: (_FLOAT, _f32(_to_float(a) * _to_float(b))),
        lambda a, b: (_DOUBLE, float(a) * float(b)),
    ),
    "/": (
        _div_int,
        _div_long,
        lambda a, b: (_FLOAT, _f32(_fdiv(_to_float(a), _to_float(b)))),
        lambda a, b: (_DOUBLE, _fdiv(float(a), float(b))),
    ),
}

_NEGATE: tuple[Callable[[Any], TypedValue], ...] = (
    lambda v: (_INT, _wrap32(-v)),
    lambda v: (_LONG, _wrap64(-v)),
    lambda v: (_FLOAT, -v),
    lambda v: (_DOUBLE, -v),
)
_PROMOTED = (_INT, _LONG, _FLOAT, _DOUBLE)

_CMP_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "<>": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_ORDERING = frozenset(("<", "<=", ">", ">="))
_SWAPPED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _compare(
    opfn: Callable[[Any, Any], bool], ordering: bool, lt: JavaType, lv: Any, rt: JavaType, rv: Any
) -> bool:
    """Compare two non-NULL typed values under the JMS rules."""
    lr = _RANK.get(lt)
    if lr is not None:
        rr = _RANK.get(rt)
        if rr is None:
            return False  # unlike types
        if (lr >= 2) != (rr >= 2):  # integral with floating: promote the integral side
            if lr < 2:
                lv = _i2f(lv) if rr == 2 else float(lv)
            else:
                rv = _i2f(rv) if lr == 2 else float(rv)
        return opfn(lv, rv)
    if lt is not rt or ordering or (lt is not _STRING and lt is not _BOOLEAN):
        return False  # unlike types, ordering on String/boolean, or an uncomparable type
    return opfn(lv, rv)
