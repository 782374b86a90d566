"""Selector text to tokens: Java's whitespace, identifiers and numeric literals, SQL string
literals and keywords; and :class:`SelectorParseError`, the error for invalid selector text."""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any, NamedTuple

from jmspy.errors import InvalidSelectorException
from jmspy.message import JavaType

from .numeric import _DOUBLE, _FLOAT, _LONG, _f32

__all__ = ["SelectorParseError"]


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
