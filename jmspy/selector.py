"""JMS message selectors: a parser and evaluator for the SQL-92 subset of JMS 2.0 section 3.8.

:func:`parse_selector` turns selector text into a :class:`Selector`; ``Selector.matches(message)``
answers whether a message is selected. Parsing is done once per distinct text (a module-level
LRU cache), and the parsed tree is compiled into nested Python closures, so evaluation does no
tree walking and no per-node type dispatch beyond what the JMS type rules themselves need.

Grammar (precedence from lowest to highest)::

    selector   := condOr                       (None, "" or only whitespace: no selector)
    condOr     := condAnd { OR condAnd }
    condAnd    := condNot { AND condNot }
    condNot    := NOT condNot | predicate
    predicate  := arith ( '=' | '<>' | '<' | '<=' | '>' | '>=' ) arith
                | arith [NOT] BETWEEN arith AND arith
                | ident [NOT] IN '(' string { ',' string } ')'
                | ident [NOT] LIKE string [ESCAPE string]
                | ident IS [NOT] NULL
                | arith                        (must be boolean-valued)
    arith      := term { ('+' | '-') term }
    term       := unary { ('*' | '/') unary }
    unary      := ('+' | '-') unary | primary
    primary    := '(' condOr ')' | ident | number | string | TRUE | FALSE

Values and types. Every value is a Java-typed pair ``(JavaType, value)``; a ``None`` value is
SQL NULL. Properties keep the Java type they were set with (byte, short, int, long, float,
double, boolean, String) and no getter conversion applies, so the String property ``"2"`` is not
the number 2. Arithmetic and numeric comparison use Java binary numeric promotion (byte/short ->
int, int with long -> long, anything with float -> float, anything with double -> double). Logic
is three-valued: conditions evaluate to True, False or None (UNKNOWN), and a message is selected
only when the selector is True.

Decisions where the specification is silent (each one is covered by the unit tests):

* Integer literals denote their mathematical value and must fit a Java long. A literal without
  an ``L`` suffix is an ``int`` when it fits in 32 bits and a ``long`` otherwise (so a timestamp
  such as ``1700000000000`` needs no suffix). Hex, octal and binary digits are read as a
  non-negative magnitude: ``0xFFFFFFFF`` is 4294967295, not Java's int -1. ``-9223372036854775808``
  (with or without ``L``) is accepted because the sign is folded into the literal. Java 7 forms
  are accepted too: binary ``0b1011`` and underscores between digits (``1_000``); so are Java's
  hexadecimal floating literals (``0x1.8p1``). A float literal that overflows to infinity or a
  non-zero one that rounds to zero is an error, as in Java. A number running straight into a
  letter (``12abc``, ``42AND``) is a malformed literal, not two tokens.
* Integer division by zero (``int``/``long``) evaluates to NULL, so the comparison that uses it
  is UNKNOWN (Java would throw ArithmeticException). Floating division follows IEEE 754:
  ``1.0 / 0`` is Infinity and ``0.0 / 0`` is NaN. Integer overflow wraps to 32 or 64 bits exactly
  as in Java; float arithmetic is rounded to 32 bits.
* Comparing values of unlike types gives FALSE (the specification's rule). The same applies at
  run time to ``<``, ``<=``, ``>``, ``>=`` on two String or two boolean values, which the
  specification does not define: they give FALSE. At parse time, where both operand types are
  already known from literals or operators, such comparisons are errors instead (the TCK requires
  this for ``'foo' > TRUE`` and ``TRUE = 0``).
* Arithmetic on a value that turns out not to be numeric at run time (a String property, say)
  gives NULL, which makes the enclosing condition UNKNOWN.
* ``IN`` and ``LIKE`` on a non-String, non-NULL value are UNKNOWN for the plain and the ``NOT``
  forms alike, so neither form selects a message whose property has the wrong type (the TCK
  only checks the plain forms).
* An identifier used directly as a condition (``myProp``, ``NOT myProp``) is its value when the
  value is a boolean and UNKNOWN otherwise.
* ``(a > 1) = TRUE``: a parenthesised condition may be compared with ``=`` / ``<>`` like a boolean
  value.
* ``LIKE ... ESCAPE 'c'``: the escape character makes the next character literal, whatever it is;
  a pattern that ends with a lone escape character is an error.
* Header fields: only JMSDeliveryMode, JMSPriority, JMSMessageID, JMSTimestamp, JMSCorrelationID
  and JMSType may be named (JMS 3.8.1.1 limits header field references to these six).
  Naming JMSDestination, JMSReplyTo, JMSRedelivered, JMSExpiration or JMSDeliveryTime raises
  InvalidSelectorException rather than silently evaluating to NULL. Other names that start with
  ``JMS`` (``JMSX...``, ``JMS_...`` or anything else) are property references; an absent one is
  NULL. JMSDeliveryMode is the String ``'PERSISTENT'`` or ``'NON_PERSISTENT'``, JMSPriority an
  int, JMSTimestamp a long, and a JMSTimestamp of 0 (timestamps disabled or never sent) is NULL,
  as the message model's property view reports it.
* Keywords are matched case-insensitively in ASCII only, so ``ın`` (dotless i) is an identifier,
  not ``IN``. Whitespace is Java's: space, tab, form feed, CR and LF.
"""

from __future__ import annotations

import functools
import math
import operator
import re
import struct
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, cast

from jmspy.errors import IllegalArgumentException, InvalidSelectorException
from jmspy.message import DeliveryMode, JavaType, Message

__all__ = [
    "Selector",
    "SelectorParseError",
    "parse_selector",
    "selector_cache_info",
    "clear_selector_cache",
]

TypedValue = tuple[JavaType, Any]
ValueFn = Callable[[Message], TypedValue]
CondFn = Callable[[Message], "bool | None"]

_BOOLEAN = JavaType.BOOLEAN
_BYTE = JavaType.BYTE
_SHORT = JavaType.SHORT
_INT = JavaType.INT
_LONG = JavaType.LONG
_FLOAT = JavaType.FLOAT
_DOUBLE = JavaType.DOUBLE
_STRING = JavaType.STRING
_OBJECT = JavaType.OBJECT

_NULL: TypedValue = (_OBJECT, None)

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1

# Binary numeric promotion rank: 0 int (byte and short promote to int), 1 long, 2 float, 3 double.
_RANK: dict[JavaType, int] = {_BYTE: 0, _SHORT: 0, _INT: 0, _LONG: 1, _FLOAT: 2, _DOUBLE: 3}

_CACHE_SIZE = 512


class SelectorParseError(InvalidSelectorException):
    """An invalid selector: ``selector`` is the text, ``position`` the 0-based offset of the
    problem (``len(selector)`` for an unexpected end), ``problem`` the bare explanation."""

    def __init__(self, selector: str, problem: str, position: int) -> None:
        super().__init__(
            f"Invalid message selector {selector!r}: {problem} (at character {position + 1})"
        )
        self.selector = selector
        self.problem = problem
        self.position = position


# ---------------------------------------------------------------------------------------------
# Java numeric helpers
# ---------------------------------------------------------------------------------------------

_F32 = struct.Struct("<f")


def _f32(value: float) -> float:
    """Round a double to float32, as Java's ``(float)`` conversion does."""
    try:
        return float(_F32.unpack(_F32.pack(value))[0])
    except OverflowError:  # rounds beyond the float range: Java gives +/-Infinity
        return math.copysign(math.inf, value)


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


# ---------------------------------------------------------------------------------------------
# Lexer
# ---------------------------------------------------------------------------------------------

_WHITESPACE = " \t\f\r\n"
_KEYWORDS = frozenset(
    ("NOT", "AND", "OR", "BETWEEN", "LIKE", "IN", "IS", "NULL", "ESCAPE", "TRUE", "FALSE")
)
# Character.isJavaIdentifierStart / isJavaIdentifierPart by Unicode category.
_START_CATEGORIES = frozenset(("Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "Sc", "Pc"))
_PART_CATEGORIES = _START_CATEGORIES | {"Nd", "Mn", "Mc", "Cf"}
_ASCII_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_$")
_ASCII_PART = _ASCII_START | frozenset("0123456789")

_NUMBER = re.compile(
    r"""
      (?P<hexfloat>0[xX](?:[0-9a-fA-F_]+\.?[0-9a-fA-F_]*|\.[0-9a-fA-F_]+)[pP][+-]?[0-9_]+[fFdD]?)
    | (?P<hex>0[xX][0-9a-fA-F_]+[lL]?)
    | (?P<bin>0[bB][01_]+[lL]?)
    | (?P<float>(?:[0-9][0-9_]*\.[0-9_]*(?:[eE][+-]?[0-9_]+)?
                 |\.[0-9][0-9_]*(?:[eE][+-]?[0-9_]+)?
                 |[0-9][0-9_]*[eE][+-]?[0-9_]+)[fFdD]?
               |[0-9][0-9_]*[fFdD])
    | (?P<int>[0-9][0-9_]*[lL]?)
    """,
    re.VERBOSE,
)
# Separators between the digit runs of a literal; '_' may not touch one of them.
_DIGIT_GROUPS = re.compile(r"[.eE+\-]")
_HEX_DIGIT_GROUPS = re.compile(r"[.pP+\-]")
_OPERATORS = ("<>", "<=", ">=", "=", "<", ">", "+", "-", "*", "/", "(", ")", ",")


def _is_ident_start(ch: str) -> bool:
    if ch in _ASCII_START:
        return True
    return ord(ch) > 0x7F and unicodedata.category(ch) in _START_CATEGORIES


def _is_ident_part(ch: str) -> bool:
    if ch in _ASCII_PART:
        return True
    c = ord(ch)
    # Character.isIdentifierIgnorable: non-whitespace ISO controls (and category Cf below).
    if c <= 0x08 or 0x0E <= c <= 0x1B or 0x7F <= c <= 0x9F:
        return True
    return c > 0x7F and unicodedata.category(ch) in _PART_CATEGORIES


class _Number(NamedTuple):
    exact: bool
    value: int | float  # exact: a non-negative int; approximate: the float value
    long_suffix: bool  # exact only
    java_type: JavaType  # approximate only: FLOAT or DOUBLE


class _Tok(NamedTuple):
    kind: str  # "ident", "kw", "str", "num", "op", "eof"
    value: Any  # ident: name; kw: upper-case keyword; str: text; num: _Number; op: symbol
    pos: int
    text: str


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text

    def fail(self, problem: str, pos: int) -> SelectorParseError:
        return SelectorParseError(self.text, problem, pos)

    def tokens(self) -> list[_Tok]:
        text = self.text
        n = len(text)
        out: list[_Tok] = []
        i = 0
        while i < n:
            ch = text[i]
            if ch in _WHITESPACE:
                i += 1
                continue
            if ch == "'":
                j = i + 1
                parts: list[str] = []
                while True:
                    k = text.find("'", j)
                    if k < 0:
                        raise self.fail("unterminated string literal", i)
                    parts.append(text[j:k])
                    if k + 1 < n and text[k + 1] == "'":
                        parts.append("'")
                        j = k + 2
                        continue
                    j = k + 1
                    break
                out.append(_Tok("str", "".join(parts), i, text[i:j]))
                i = j
                continue
            if ch.isdigit() and ch.isascii() or (ch == "." and i + 1 < n and text[i + 1].isdigit()):
                i = self._number(i, out)
                continue
            if _is_ident_start(ch):
                j = i + 1
                while j < n and _is_ident_part(text[j]):
                    j += 1
                word = text[i:j]
                upper = word.upper() if word.isascii() else ""
                if upper in _KEYWORDS:
                    out.append(_Tok("kw", upper, i, word))
                else:
                    out.append(_Tok("ident", word, i, word))
                i = j
                continue
            for op in _OPERATORS:
                if text.startswith(op, i):
                    out.append(_Tok("op", op, i, op))
                    i += len(op)
                    break
            else:
                if text.startswith("!=", i) or text.startswith("==", i):
                    raise self.fail(
                        f"unknown operator {text[i : i + 2]!r} (use = and <> to compare)", i
                    )
                if ch == '"':
                    raise self.fail(
                        "string literals use single quotes ('...'); double quotes are not allowed",
                        i,
                    )
                raise self.fail(f"unexpected character {ch!r}", i)
        out.append(_Tok("eof", None, n, ""))
        return out

    def _number(self, i: int, out: list[_Tok]) -> int:
        text = self.text
        m = _NUMBER.match(text, i)
        if m is None:  # pragma: no cover - the caller only calls us on a digit or ".digit"
            raise self.fail("malformed numeric literal", i)
        j = m.end()
        raw = m.group()
        if j < len(text) and (_is_ident_part(text[j]) or text[j] == "."):
            end = j + 1
            while end < len(text) and (_is_ident_part(text[end]) or text[end] == "."):
                end += 1
            raise self.fail(f"malformed numeric literal {text[i:end]!r}", i)
        kind = m.lastgroup
        body = raw
        suffix = ""
        if kind in ("hex", "bin", "int") and body[-1] in "lL":
            suffix, body = "L", body[:-1]
        elif kind in ("float", "hexfloat") and body[-1] in "fFdD":
            suffix, body = body[-1].upper(), body[:-1]
        if kind in ("hex", "bin"):
            groups = [body[2:]]
        elif kind == "hexfloat":
            groups = _HEX_DIGIT_GROUPS.split(body[2:])
        else:
            groups = _DIGIT_GROUPS.split(body)
        for group in groups:
            if group.startswith("_") or group.endswith("_"):
                raise self.fail(
                    f"malformed numeric literal {raw!r}: '_' is only allowed between digits", i
                )
        clean = body.replace("_", "")
        number: _Number
        if kind in ("hex", "bin", "int"):
            if kind == "hex":
                value = int(clean[2:], 16)
            elif kind == "bin":
                value = int(clean[2:], 2)
            elif len(clean) > 1 and clean[0] == "0":
                if any(c in "89" for c in clean):
                    raise self.fail(f"invalid octal literal {raw!r} (digits 8 and 9)", i)
                value = int(clean, 8)
            else:
                value = int(clean)
            number = _Number(True, value, suffix == "L", _LONG)
        else:
            if kind == "hexfloat":
                mantissa = clean[2:].lower().split("p")[0]
                dvalue = float.fromhex(clean)
            else:
                mantissa = re.split("[eE]", clean)[0]
                dvalue = float(clean)
            nonzero = any(c not in "0." for c in mantissa)
            jt = _FLOAT if suffix == "F" else _DOUBLE
            value_f = _f32(dvalue) if jt is _FLOAT else dvalue
            java = "float" if jt is _FLOAT else "double"
            if math.isinf(value_f):
                raise self.fail(f"numeric literal {raw!r} is too large for a Java {java}", i)
            if nonzero and value_f == 0.0:
                raise self.fail(f"numeric literal {raw!r} is too small for a Java {java}", i)
            number = _Number(False, value_f, False, jt)
        out.append(_Tok("num", number, i, raw))
        return j


# ---------------------------------------------------------------------------------------------
# Syntax tree
# ---------------------------------------------------------------------------------------------

# Static kinds: "num", "str", "bool" when known at parse time, "any" for identifiers.
_KIND_NAMES = {"num": "a numeric", "str": "a string", "bool": "a boolean", "any": "an identifier"}


@dataclass(slots=True)
class _Node:
    pos: int
    kind: str = field(init=False, default="bool")

    @property
    def const(self) -> bool:
        return False


@dataclass(slots=True)
class _Lit(_Node):
    java_type: JavaType
    value: Any

    def __post_init__(self) -> None:
        jt = self.java_type
        self.kind = "str" if jt is _STRING else "bool" if jt is _BOOLEAN else "num"

    @property
    def const(self) -> bool:
        return True


@dataclass(slots=True)
class _Ident(_Node):
    name: str

    def __post_init__(self) -> None:
        self.kind = "any"


@dataclass(slots=True)
class _Neg(_Node):
    op: str  # "+" or "-"
    operand: _Node

    def __post_init__(self) -> None:
        self.kind = "num"

    @property
    def const(self) -> bool:
        return self.operand.const


@dataclass(slots=True)
class _Arith(_Node):
    op: str
    left: _Node
    right: _Node

    def __post_init__(self) -> None:
        self.kind = "num"

    @property
    def const(self) -> bool:
        return self.left.const and self.right.const


@dataclass(slots=True)
class _Cmp(_Node):
    op: str
    left: _Node
    right: _Node

    @property
    def const(self) -> bool:
        return self.left.const and self.right.const


@dataclass(slots=True)
class _Between(_Node):
    negated: bool
    operand: _Node
    low: _Node
    high: _Node

    @property
    def const(self) -> bool:
        return self.operand.const and self.low.const and self.high.const


@dataclass(slots=True)
class _In(_Node):
    negated: bool
    ident: _Ident
    values: frozenset[str]


@dataclass(slots=True)
class _Like(_Node):
    negated: bool
    ident: _Ident
    matcher: Callable[[str], bool]


@dataclass(slots=True)
class _IsNull(_Node):
    negated: bool
    ident: _Ident


@dataclass(slots=True)
class _Logic(_Node):
    op: str  # "AND" or "OR"
    items: list[_Node]

    @property
    def const(self) -> bool:
        return all(item.const for item in self.items)


@dataclass(slots=True)
class _Not(_Node):
    operand: _Node

    @property
    def const(self) -> bool:
        return self.operand.const


# ---------------------------------------------------------------------------------------------
# Parser (with the static checks)
# ---------------------------------------------------------------------------------------------

_SELECTABLE_HEADERS = frozenset(
    (
        "JMSDeliveryMode",
        "JMSPriority",
        "JMSMessageID",
        "JMSTimestamp",
        "JMSCorrelationID",
        "JMSType",
    )
)
_UNSELECTABLE_HEADERS = frozenset(
    ("JMSDestination", "JMSReplyTo", "JMSRedelivered", "JMSExpiration", "JMSDeliveryTime")
)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _Lexer(text).tokens()
        self.i = 0
        self.tok = self.toks[0]
        self.identifiers: set[str] = set()

    # -- helpers ------------------------------------------------------------------------

    def fail(self, problem: str, pos: int) -> SelectorParseError:
        return SelectorParseError(self.text, problem, pos)

    def advance(self) -> _Tok:
        tok = self.tok
        self.i += 1
        self.tok = self.toks[self.i]
        return tok

    def is_kw(self, word: str) -> bool:
        return self.tok.kind == "kw" and self.tok.value == word

    def is_op(self, symbol: str) -> bool:
        return self.tok.kind == "op" and self.tok.value == symbol

    def describe(self, tok: _Tok) -> str:
        if tok.kind == "eof":
            return "the end of the selector"
        if tok.kind == "kw":
            return f"keyword {tok.value}"
        if tok.kind == "str":
            return f"string literal {tok.text}"
        if tok.kind == "num":
            return f"number {tok.text}"
        if tok.kind == "ident":
            return f"identifier {tok.text!r}"
        return f"{tok.text!r}"

    def expected(self, what: str) -> SelectorParseError:
        return self.fail(f"expected {what} but found {self.describe(self.tok)}", self.tok.pos)

    def need_bool(self, node: _Node, where: str) -> None:
        if node.kind not in ("bool", "any"):
            raise self.fail(
                f"{where} needs a boolean expression, not {_KIND_NAMES[node.kind]} expression",
                node.pos,
            )

    def need_num(self, node: _Node, where: str) -> None:
        if node.kind in ("str", "bool"):
            raise self.fail(
                f"{where} needs numeric operands, not {_KIND_NAMES[node.kind]} value", node.pos
            )

    def need_ident(self, node: _Node, where: str) -> _Ident:
        if not isinstance(node, _Ident):
            raise self.fail(f"the left side of {where} must be an identifier", node.pos)
        return node

    # -- grammar ------------------------------------------------------------------------

    def parse(self) -> _Node:
        node = self.cond_or()
        if self.tok.kind != "eof":
            if self.is_op(")"):
                raise self.fail("unbalanced ')'", self.tok.pos)
            raise self.expected("an operator or the end of the selector")
        self.need_bool(node, "a selector")
        return node

    def cond_or(self) -> _Node:
        node = self.cond_and()
        if not self.is_kw("OR"):
            return node
        items = [node]
        self.need_bool(node, "OR")
        while self.is_kw("OR"):
            self.advance()
            item = self.cond_and()
            self.need_bool(item, "OR")
            items.append(item)
        return _Logic(node.pos, "OR", items)

    def cond_and(self) -> _Node:
        node = self.cond_not()
        if not self.is_kw("AND"):
            return node
        items = [node]
        self.need_bool(node, "AND")
        while self.is_kw("AND"):
            self.advance()
            item = self.cond_not()
            self.need_bool(item, "AND")
            items.append(item)
        return _Logic(node.pos, "AND", items)

    def cond_not(self) -> _Node:
        if self.is_kw("NOT"):
            tok = self.advance()
            operand = self.cond_not()
            self.need_bool(operand, "NOT")
            return _Not(tok.pos, operand)
        return self.predicate()

    def predicate(self) -> _Node:
        left = self.arith()
        tok = self.tok
        if tok.kind == "op" and tok.value in _CMP_OPS:
            self.advance()
            right = self.arith()
            return self.comparison(tok, left, right)
        negated = False
        if self.is_kw("NOT"):
            self.advance()
            negated = True
            if not (self.is_kw("BETWEEN") or self.is_kw("IN") or self.is_kw("LIKE")):
                raise self.expected("BETWEEN, IN or LIKE after NOT")
        if self.is_kw("BETWEEN"):
            self.advance()
            low = self.arith()
            if not self.is_kw("AND"):
                raise self.expected("AND in BETWEEN ... AND ...")
            self.advance()
            high = self.arith()
            for node in (left, low, high):
                self.need_num(node, "BETWEEN")
            return _Between(left.pos, negated, left, low, high)
        if self.is_kw("IN"):
            self.advance()
            return self.in_list(left, negated)
        if self.is_kw("LIKE"):
            self.advance()
            return self.like(left, negated)
        if self.is_kw("IS"):
            ident = self.need_ident(left, "IS NULL")
            self.advance()
            is_not = False
            if self.is_kw("NOT"):
                self.advance()
                is_not = True
            if not self.is_kw("NULL"):
                raise self.expected("NULL after IS" + (" NOT" if is_not else ""))
            self.advance()
            return _IsNull(left.pos, is_not, ident)
        return left

    def comparison(self, tok: _Tok, left: _Node, right: _Node) -> _Node:
        op = tok.value
        if op in _ORDERING:
            for node in (left, right):
                if node.kind in ("str", "bool"):
                    raise self.fail(
                        f"{_KIND_NAMES[node.kind]} value cannot be compared with {op!r}: strings "
                        "and booleans only support = and <>",
                        node.pos,
                    )
        elif "any" not in (left.kind, right.kind) and left.kind != right.kind:
            raise self.fail(
                f"{_KIND_NAMES[left.kind]} value can never equal {_KIND_NAMES[right.kind]} "
                f"value ({op!r} compares like types only)",
                tok.pos,
            )
        return _Cmp(left.pos, op, left, right)

    def in_list(self, left: _Node, negated: bool) -> _Node:
        ident = self.need_ident(left, "IN")
        if not self.is_op("("):
            raise self.expected("'(' after IN")
        self.advance()
        values: list[str] = []
        while True:
            tok = self.tok
            if tok.kind != "str":
                if tok.kind in ("num", "ident", "kw") or self.is_op("-") or self.is_op("+"):
                    raise self.fail(
                        f"IN list items must be string literals, not {self.describe(tok)}",
                        tok.pos,
                    )
                raise self.expected("a string literal in the IN list")
            self.advance()
            values.append(tok.value)
            if self.is_op(","):
                self.advance()
                continue
            if self.is_op(")"):
                self.advance()
                break
            raise self.expected("',' or ')' in the IN list")
        return _In(left.pos, negated, ident, frozenset(values))

    def like(self, left: _Node, negated: bool) -> _Node:
        ident = self.need_ident(left, "LIKE")
        tok = self.tok
        if tok.kind != "str":
            raise self.fail(
                f"the LIKE pattern must be a string literal, not {self.describe(tok)}", tok.pos
            )
        self.advance()
        escape: str | None = None
        if self.is_kw("ESCAPE"):
            self.advance()
            etok = self.tok
            if etok.kind != "str":
                raise self.fail(
                    f"ESCAPE needs a one-character string literal, not {self.describe(etok)}",
                    etok.pos,
                )
            if len(etok.value) != 1:
                raise self.fail(
                    f"the ESCAPE string must be exactly one character, not {etok.text}", etok.pos
                )
            self.advance()
            escape = etok.value
        matcher = _like_matcher(tok.value, escape)
        if matcher is None:
            raise self.fail(
                f"the LIKE pattern {tok.text} ends with the escape character {escape!r}", tok.pos
            )
        return _Like(left.pos, negated, ident, matcher)

    def arith(self) -> _Node:
        node = self.term()
        while self.tok.kind == "op" and self.tok.value in ("+", "-"):
            tok = self.advance()
            right = self.term()
            self.need_num(node, f"{tok.value!r}")
            self.need_num(right, f"{tok.value!r}")
            node = _Arith(node.pos, tok.value, node, right)
        return node

    def term(self) -> _Node:
        node = self.unary()
        while self.tok.kind == "op" and self.tok.value in ("*", "/"):
            tok = self.advance()
            right = self.unary()
            self.need_num(node, f"{tok.value!r}")
            self.need_num(right, f"{tok.value!r}")
            node = _Arith(node.pos, tok.value, node, right)
        return node

    def unary(self) -> _Node:
        tok = self.tok
        if tok.kind == "op" and tok.value in ("+", "-"):
            self.advance()
            if self.tok.kind == "num":
                # Fold the sign into the literal, so -9223372036854775808 is in range.
                return self.number(self.advance(), tok.value == "-", tok.pos)
            operand = self.unary()
            self.need_num(operand, f"unary {tok.value!r}")
            return _Neg(tok.pos, tok.value, operand)
        return self.primary()

    def number(self, tok: _Tok, negate: bool, pos: int) -> _Lit:
        num: _Number = tok.value
        if not num.exact:
            return _Lit(pos, num.java_type, -num.value if negate else num.value)
        value = -num.value if negate else num.value
        if not _LONG_MIN <= value <= _LONG_MAX:
            raise self.fail(f"integer literal {tok.text} is out of range for a Java long", pos)
        jt = _LONG if num.long_suffix or not _INT_MIN <= value <= _INT_MAX else _INT
        return _Lit(pos, jt, int(value))

    def primary(self) -> _Node:
        tok = self.tok
        kind = tok.kind
        if kind == "ident":
            self.advance()
            name = tok.value
            if name in _UNSELECTABLE_HEADERS:
                raise self.fail(
                    f"the header field {name} cannot be used in a selector (only "
                    "JMSDeliveryMode, JMSPriority, JMSMessageID, JMSTimestamp, JMSCorrelationID "
                    "and JMSType can)",
                    tok.pos,
                )
            self.identifiers.add(name)
            return _Ident(tok.pos, name)
        if kind == "num":
            self.advance()
            return self.number(tok, False, tok.pos)
        if kind == "str":
            self.advance()
            return _Lit(tok.pos, _STRING, tok.value)
        if kind == "kw":
            if tok.value in ("TRUE", "FALSE"):
                self.advance()
                return _Lit(tok.pos, _BOOLEAN, tok.value == "TRUE")
            if tok.value == "NULL":
                raise self.fail(
                    "NULL is a reserved word: it can only be used in IS NULL / IS NOT NULL",
                    tok.pos,
                )
            raise self.fail(
                f"expected an expression but found keyword {tok.value} (reserved words cannot "
                "be used as identifiers)",
                tok.pos,
            )
        if self.is_op("("):
            self.advance()
            if self.is_op(")"):
                raise self.expected("an expression inside '()'")
            node = self.cond_or()
            if not self.is_op(")"):
                raise self.expected("')'")
            self.advance()
            return node
        raise self.expected("an expression")


# ---------------------------------------------------------------------------------------------
# LIKE patterns
# ---------------------------------------------------------------------------------------------

# A fixed-length piece of a pattern between '%' wildcards: a literal str, or a compiled regex
# when it contains '_'.
_Segment = str | re.Pattern[str]


def _like_matcher(pattern: str, escape: str | None) -> Callable[[str], bool] | None:
    """A function testing a string against a LIKE pattern; None if the pattern is malformed."""
    segments: list[list[str | None]] = [[]]  # None stands for '_'
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == escape:
            if i + 1 >= n:
                return None
            segments[-1].append(pattern[i + 1])
            i += 2
            continue
        if c == "%":
            segments.append([])
        elif c == "_":
            segments[-1].append(None)
        else:
            segments[-1].append(c)
        i += 1

    def build(items: list[str | None]) -> _Segment:
        if None not in items:
            return "".join(cast(list[str], items))
        return re.compile("".join("." if c is None else re.escape(c) for c in items), re.DOTALL)

    if len(segments) == 1:
        only = build(segments[0])
        if isinstance(only, str):
            return only.__eq__
        full = only.fullmatch
        return lambda s: full(s) is not None

    first = build(segments[0])
    last = build(segments[-1])
    middle = [build(seg) for seg in segments[1:-1] if seg]
    len_first = len(segments[0])
    len_last = len(segments[-1])
    if isinstance(first, str) and isinstance(last, str) and all(isinstance(s, str) for s in middle):
        mids = cast(list[str], middle)
        if not mids:
            if not first and not last:
                return lambda s: True
            if not last:
                return lambda s: s.startswith(first)
            if not first:
                return lambda s: s.endswith(last)
            need = len_first + len_last
            return lambda s: len(s) >= need and s.startswith(first) and s.endswith(last)
        if len(mids) == 1 and not first and not last:
            lit = mids[0]
            return lambda s: lit in s

    def at(seg: _Segment, s: str, pos: int) -> bool:
        if isinstance(seg, str):
            return s.startswith(seg, pos)
        return seg.match(s, pos) is not None

    def match(s: str) -> bool:
        end = len(s) - len_last
        if end < len_first:
            return False
        if len_first and not at(first, s, 0):
            return False
        if len_last and not at(last, s, end):
            return False
        pos = len_first
        for seg in middle:
            if isinstance(seg, str):
                idx = s.find(seg, pos, end)
                if idx < 0:
                    return False
                pos = idx + len(seg)
            else:
                m = seg.search(s, pos, end)
                if m is None:
                    return False
                pos = m.end()
        return True

    return match


# ---------------------------------------------------------------------------------------------
# Compilation to closures
# ---------------------------------------------------------------------------------------------

_DM_PERSISTENT: TypedValue = (_STRING, "PERSISTENT")
_DM_NON_PERSISTENT: TypedValue = (_STRING, "NON_PERSISTENT")


def _typed_from_python(value: Any) -> TypedValue:
    """Tag a plain Python property value (for message objects without the typed accessor)."""
    t = type(value)
    if value is None:
        return _NULL
    if t is bool:
        return (_BOOLEAN, value)
    if t is float:
        return (_DOUBLE, value)
    if t is str:
        return (_STRING, value)
    if isinstance(value, int):
        return (_INT if _INT_MIN <= value <= _INT_MAX else _LONG, int(value))
    return (_OBJECT, value)


def _header_reader(name: str) -> ValueFn:
    if name == "JMSDeliveryMode":

        def delivery_mode(m: Message) -> TypedValue:
            if m.getJMSDeliveryMode() == DeliveryMode.PERSISTENT:
                return _DM_PERSISTENT
            return _DM_NON_PERSISTENT

        return delivery_mode
    if name == "JMSPriority":
        return lambda m: (_INT, m.getJMSPriority())
    if name == "JMSTimestamp":

        def timestamp(m: Message) -> TypedValue:
            ts = m.getJMSTimestamp()
            return (_LONG, ts) if ts else _NULL

        return timestamp
    if name == "JMSMessageID":
        return lambda m: (_STRING, m.getJMSMessageID())
    if name == "JMSCorrelationID":
        return lambda m: (_STRING, m.getJMSCorrelationID())
    return lambda m: (_STRING, m.getJMSType())  # JMSType


def _property_reader(name: str) -> ValueFn:
    def read(m: Message) -> TypedValue:
        try:
            return m._get_typed(name)
        except AttributeError:
            return _typed_from_python(m.getObjectProperty(name))
        except IllegalArgumentException:
            return _NULL

    return read


def _const_value(tv: TypedValue) -> ValueFn:
    return lambda m: tv


def _const_cond(value: bool | None) -> CondFn:
    return lambda m: value


def _value(node: _Node) -> ValueFn:
    """Compile a node into a function giving its typed value (constant subtrees folded)."""
    if node.const and not isinstance(node, _Lit):
        return _const_value(_value_of(node)(cast(Message, None)))
    return _value_of(node)


def _value_of(node: _Node) -> ValueFn:
    if isinstance(node, _Lit):
        return _const_value((node.java_type, node.value))
    if isinstance(node, _Ident):
        if node.name in _SELECTABLE_HEADERS:
            return _header_reader(node.name)
        return _property_reader(node.name)
    if isinstance(node, _Arith):
        return _arith(node.op, _value(node.left), _value(node.right))
    if isinstance(node, _Neg):
        return _negate(node.op, _value(node.operand))
    cond = _cond_of(node)
    return lambda m: (_BOOLEAN, cond(m))


def _arith(op: str, left: ValueFn, right: ValueFn) -> ValueFn:
    impl = _ARITH[op]
    rank = _RANK.get

    def arith(m: Message) -> TypedValue:
        lt, lv = left(m)
        if lv is None:
            return _NULL
        rt, rv = right(m)
        if rv is None:
            return _NULL
        lr = rank(lt)
        rr = rank(rt)
        if lr is None or rr is None:
            return _NULL  # arithmetic on a non-numeric value
        return impl[lr if lr > rr else rr](lv, rv)

    return arith


def _negate(op: str, operand: ValueFn) -> ValueFn:
    rank = _RANK.get

    def negate(m: Message) -> TypedValue:
        t, v = operand(m)
        if v is None:
            return _NULL
        r = rank(t)
        if r is None:
            return _NULL
        return _NEGATE[r](v) if op == "-" else (_PROMOTED[r], v)

    return negate


def _cond(node: _Node) -> CondFn:
    """Compile a boolean node into a function giving True, False or None (UNKNOWN)."""
    if node.const:
        return _const_cond(_cond_of(node)(cast(Message, None)))
    return _cond_of(node)


def _cond_of(node: _Node) -> CondFn:
    if isinstance(node, _Logic):
        items = [_cond(item) for item in node.items]
        return _and(items) if node.op == "AND" else _or(items)
    if isinstance(node, _Not):
        operand = _cond(node.operand)

        def not_(m: Message) -> bool | None:
            v = operand(m)
            return None if v is None else not v

        return not_
    if isinstance(node, _Cmp):
        return _comparison(node)
    if isinstance(node, _Between):
        return _between(node)
    if isinstance(node, _In):
        return _in(node)
    if isinstance(node, _Like):
        return _like(node)
    if isinstance(node, _IsNull):
        read = _value(node.ident)
        if node.negated:
            return lambda m: read(m)[1] is not None
        return lambda m: read(m)[1] is None
    if isinstance(node, _Lit):
        const: bool | None = node.value if node.java_type is _BOOLEAN else None
        return _const_cond(const)
    # An identifier (or other value) used as a condition: its value when boolean, else UNKNOWN.
    value = _value(node)

    def as_bool(m: Message) -> bool | None:
        t, v = value(m)
        return v if t is _BOOLEAN else None

    return as_bool


def _and(items: list[CondFn]) -> CondFn:
    if len(items) == 2:
        a, b = items

        def and2(m: Message) -> bool | None:
            x = a(m)
            if x is False:
                return False
            y = b(m)
            if y is False:
                return False
            return None if x is None or y is None else True

        return and2

    def and_n(m: Message) -> bool | None:
        result: bool | None = True
        for item in items:
            v = item(m)
            if v is False:
                return False
            if v is None:
                result = None
        return result

    return and_n


def _or(items: list[CondFn]) -> CondFn:
    if len(items) == 2:
        a, b = items

        def or2(m: Message) -> bool | None:
            x = a(m)
            if x is True:
                return True
            y = b(m)
            if y is True:
                return True
            return None if x is None or y is None else False

        return or2

    def or_n(m: Message) -> bool | None:
        result: bool | None = False
        for item in items:
            v = item(m)
            if v is True:
                return True
            if v is None:
                result = None
        return result

    return or_n


def _comparison(node: _Cmp) -> CondFn:
    op = node.op
    left_node, right_node = node.left, node.right
    if left_node.const and not right_node.const:
        left_node, right_node = right_node, left_node
        op = _SWAPPED[op]
    opfn = _CMP_OPS[op]
    ordering = op in _ORDERING
    left = _value(left_node)
    if right_node.const:
        rt, rv = _value(right_node)(cast(Message, None))
        if rv is None:
            return _const_cond(None)  # e.g. "x = 1 / 0"
        rr = _RANK.get(rt)
        if rr is not None:
            rank = _RANK.get
            # Comparisons with a numeric constant: promote per operand type, constant side
            # pre-converted for the common cases.
            r_as_float = _i2f(rv) if rr < 2 else rv
            r_as_double = float(rv)

            def cmp_num(m: Message) -> bool | None:
                lt, lv = left(m)
                if lv is None:
                    return None
                lr = rank(lt)
                if lr is None:
                    return False
                if (lr >= 2) == (rr >= 2):
                    return opfn(lv, rv)
                if lr < 2:  # integral property, floating constant
                    return opfn(_i2f(lv) if rr == 2 else float(lv), rv)
                return opfn(lv, r_as_float if lr == 2 else r_as_double)

            return cmp_num
        if rt is _STRING or rt is _BOOLEAN:
            # Only = and <> reach here (the parser rejects ordering on literals).
            want = rt
            if opfn is operator.eq:

                def cmp_eq(m: Message) -> bool | None:
                    lt, lv = left(m)
                    if lv is None:
                        return None
                    return lt is want and lv == rv

                return cmp_eq

            def cmp_ne(m: Message) -> bool | None:
                lt, lv = left(m)
                if lv is None:
                    return None
                return lt is want and lv != rv

            return cmp_ne
    right = _value(right_node)

    def cmp(m: Message) -> bool | None:
        lt, lv = left(m)
        if lv is None:
            return None
        rt, rv = right(m)
        if rv is None:
            return None
        return _compare(opfn, ordering, lt, lv, rt, rv)

    return cmp


def _between(node: _Between) -> CondFn:
    operand = _value(node.operand)
    ge, le, lt, gt = operator.ge, operator.le, operator.lt, operator.gt
    if node.low.const and node.high.const:
        lo_t, lo_v = _value(node.low)(cast(Message, None))
        hi_t, hi_v = _value(node.high)(cast(Message, None))
        lo_r, hi_r = _RANK.get(lo_t), _RANK.get(hi_t)
        if lo_v is not None and hi_v is not None and lo_r is not None and hi_r is not None:
            # Numeric constant bounds (the usual case): no NULL bound, so the result is never
            # UNKNOWN unless the operand is NULL. Fast path when no promotion is needed.
            lo_floating, hi_floating = lo_r >= 2, hi_r >= 2
            rank = _RANK.get
            negated = node.negated

            def between_const(m: Message) -> bool | None:
                t, v = operand(m)
                if v is None:
                    return None
                r = rank(t)
                if r is None:
                    return False  # not a number: unlike types, FALSE either way
                floating = r >= 2
                if floating is lo_floating and floating is hi_floating:
                    if negated:
                        return v < lo_v or v > hi_v
                    return lo_v <= v <= hi_v
                if negated:
                    return _compare(lt, True, t, v, lo_t, lo_v) or _compare(
                        gt, True, t, v, hi_t, hi_v
                    )
                return _compare(ge, True, t, v, lo_t, lo_v) and _compare(le, True, t, v, hi_t, hi_v)

            return between_const
    low = _value(node.low)
    high = _value(node.high)

    if not node.negated:

        def between(m: Message) -> bool | None:
            t, v = operand(m)
            at, av = low(m)
            bt, bv = high(m)
            # v >= low AND v <= high
            x = None if v is None or av is None else _compare(ge, True, t, v, at, av)
            if x is False:
                return False
            y = None if v is None or bv is None else _compare(le, True, t, v, bt, bv)
            if y is False:
                return False
            return None if x is None or y is None else True

        return between

    def not_between(m: Message) -> bool | None:
        t, v = operand(m)
        at, av = low(m)
        bt, bv = high(m)
        # v < low OR v > high
        x = None if v is None or av is None else _compare(lt, True, t, v, at, av)
        if x is True:
            return True
        y = None if v is None or bv is None else _compare(gt, True, t, v, bt, bv)
        if y is True:
            return True
        return None if x is None or y is None else False

    return not_between


def _in(node: _In) -> CondFn:
    read = _value(node.ident)
    values = node.values
    negated = node.negated

    def in_(m: Message) -> bool | None:
        t, v = read(m)
        if v is None or t is not _STRING:
            return None
        return (v in values) is not negated

    return in_


def _like(node: _Like) -> CondFn:
    read = _value(node.ident)
    matcher = node.matcher
    negated = node.negated

    def like(m: Message) -> bool | None:
        t, v = read(m)
        if v is None or t is not _STRING:
            return None
        return matcher(v) is not negated

    return like


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------


class Selector:
    """A parsed, compiled message selector. Immutable and safe to share between threads."""

    __slots__ = ("text", "identifiers", "_cond")

    text: str
    identifiers: frozenset[str]
    _cond: CondFn

    def __init__(self, text: str, cond: CondFn, identifiers: frozenset[str]) -> None:
        self.text = text
        self.identifiers = identifiers
        self._cond = cond

    def evaluate(self, message: Message) -> bool | None:
        """True, False, or None for UNKNOWN."""
        return self._cond(message)

    def matches(self, message: Message) -> bool:
        """Whether the selector selects ``message`` (only a TRUE result does)."""
        return self._cond(message) is True

    def __repr__(self) -> str:
        return f"Selector({self.text!r})"


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _parse_cached(text: str) -> Selector:
    parser = _Parser(text)
    try:
        tree = parser.parse()
        cond = _cond(tree)
    except RecursionError:
        raise SelectorParseError(text, "the selector is nested too deeply", 0) from None
    return Selector(text, cond, frozenset(parser.identifiers))


def parse_selector(text: str | None) -> Selector | None:
    """Parse a JMS message selector.

    Returns None for None, ``""`` or a selector of only whitespace (no selector: every message
    matches). Raises :class:`~jmspy.errors.InvalidSelectorException` (a
    :class:`SelectorParseError`, with the problem and its position) for an invalid selector.
    Parsed selectors are cached by text, so parsing the same text again is a dictionary lookup.
    """
    if text is None:
        return None
    if not isinstance(text, str):
        raise InvalidSelectorException(
            f"A message selector must be a str, not {type(text).__name__}"
        )
    if not text.strip(_WHITESPACE):
        return None
    return _parse_cached(text)


def selector_cache_info() -> Any:
    """Hit/miss statistics of the parsed-selector cache (``functools`` cache info)."""
    return _parse_cached.cache_info()


def clear_selector_cache() -> None:
    _parse_cached.cache_clear()
