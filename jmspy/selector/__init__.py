"""JMS message selectors: a parser and evaluator for the SQL-92 subset of JMS 2.0 section 3.8.

:func:`parse_selector` turns selector text into a :class:`Selector`; ``Selector.matches(message)``
answers whether a message is selected. Parsing is done once per distinct text (a module-level
LRU cache), and the parsed tree is compiled into nested Python closures, so evaluation does no
tree walking and no per-node type dispatch beyond what the JMS type rules themselves need.

The package follows those steps: :mod:`~jmspy.selector.lexer` (text to tokens, and the error
type), :mod:`~jmspy.selector.parser` (tokens to the syntax tree of :mod:`~jmspy.selector.tree`,
with the static checks), :mod:`~jmspy.selector.like` (LIKE patterns),
:mod:`~jmspy.selector.evaluator` (the tree compiled to closures, three-valued logic) and
:mod:`~jmspy.selector.numeric` (Java types, numeric promotion and arithmetic, used by all three).

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
from typing import Any

from jmspy.errors import InvalidSelectorException
from jmspy.message import Message

from .evaluator import CondFn, _cond
from .lexer import _WHITESPACE, SelectorParseError
from .numeric import _f32, _i2f  # noqa: F401 (the unit tests check these helpers)
from .parser import _Parser

__all__ = [
    "Selector",
    "SelectorParseError",
    "parse_selector",
    "selector_cache_info",
    "clear_selector_cache",
]

_CACHE_SIZE = 512

# Defined in the lexer (its first user) but public here: tracebacks name it
# jmspy.selector.SelectorParseError, as they did when the selector was a single module.
SelectorParseError.__module__ = __name__


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
