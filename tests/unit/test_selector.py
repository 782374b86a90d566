"""JMS message selectors: parsing, static checks and evaluation (jmspy.selector).

The bulk of the coverage is the case table in selector_cases.py; the tests below it cover the
API around the table: no-selector inputs, error details, the parse cache, foreign messages and
the numeric helpers.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from fractions import Fraction
from typing import Any

import pytest
from selector_cases import CASES, INVALID, build_messages

from jmspy.errors import (
    InvalidSelectorException,
    InvalidSelectorRuntimeException,
    to_runtime,
)
from jmspy.message import DeliveryMode, Message, TextMessage
from jmspy.selector import (
    Selector,
    SelectorParseError,
    _f32,
    _i2f,
    clear_selector_cache,
    parse_selector,
    selector_cache_info,
)

MESSAGES = build_messages()

# The table is meant to grow only deliberately: update the number when adding cases.
EXPECTED_CASE_COUNT = 461


def _case_id(case: tuple[str, str, Any]) -> str:
    selector, message, expected = case
    return f"{selector!r}@{message}->{expected}"


def test_case_table_size() -> None:
    assert len(CASES) == EXPECTED_CASE_COUNT
    assert len(CASES) >= 150
    valid = [c for c in CASES if c[2] != INVALID]
    invalid = [c for c in CASES if c[2] == INVALID]
    assert len(valid) >= 100 and len(invalid) >= 50
    # every outcome is represented, and no case is listed twice
    assert {c[2] for c in valid} == {True, False, None}
    duplicates = [k for k, n in Counter((c[0], c[1]) for c in CASES).items() if n > 1]
    assert duplicates == []


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_selector_case(case: tuple[str, str, Any]) -> None:
    text, message_name, expected = case
    if expected == INVALID:
        with pytest.raises(InvalidSelectorException) as info:
            parse_selector(text)
        exc = info.value
        assert isinstance(exc, SelectorParseError)
        assert 0 <= exc.position <= len(text)
        assert exc.selector == text
        assert exc.problem and exc.problem in str(exc)
        assert f"at character {exc.position + 1}" in str(exc)
        return
    selector = parse_selector(text)
    assert selector is not None
    message = MESSAGES[message_name]
    assert selector.evaluate(message) is expected
    assert selector.matches(message) is (expected is True)


# -- no selector ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [None, "", " ", "\t\n\r\f  "])
def test_no_selector(text: str | None) -> None:
    assert parse_selector(text) is None


def test_non_java_whitespace_is_not_empty() -> None:
    with pytest.raises(InvalidSelectorException):
        parse_selector("\u00a0")


def test_selector_must_be_a_string() -> None:
    with pytest.raises(InvalidSelectorException, match="must be a str"):
        parse_selector(b"a = 1")  # type: ignore[arg-type]


# -- error details ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "position", "fragment"),
    [
        ("myProp > 'foo'", 9, "strings and booleans only support = and <>"),
        ("'foo' > TRUE", 0, "cannot be compared with '>'"),
        ("TRUE = 0", 5, "can never equal"),
        ("myProp BETWEEN 'foo' and 'test'", 15, "BETWEEN needs numeric operands"),
        ("myProp NOT IN (1,2,3)", 15, "IN list items must be string literals"),
        ("myProp LIKE 7", 12, "LIKE pattern must be a string literal"),
        ("a LIKE 'x' ESCAPE 'ab'", 18, "exactly one character"),
        ("a LIKE 'ab!' ESCAPE '!'", 7, "ends with the escape character"),
        ("'a' + 1 = 2", 0, "needs numeric operands"),
        ("a + 1", 0, "a selector needs a boolean expression"),
        ("'abc'", 0, "a selector needs a boolean expression"),
        ("a AND 5", 6, "AND needs a boolean expression"),
        ("NULL = 0", 0, "NULL is a reserved word"),
        ("ESCAPE = 0", 0, "reserved words cannot be used as identifiers"),
        ("a = 1 OR JMSRedelivered", 9, "JMSRedelivered cannot be used in a selector"),
        ("JMSDestination = 'q'", 0, "JMSDestination cannot be used"),
        ("a = 'x", 4, "unterminated string literal"),
        ("a != 1", 2, "unknown operator '!='"),
        ("(a = 1", 6, "expected ')' but found the end of the selector"),
        ("a = 1)", 5, "unbalanced ')'"),
        ("a = 08", 4, "invalid octal literal"),
        ("a = 9223372036854775808", 4, "out of range for a Java long"),
        ("a = 1e400", 4, "too large for a Java double"),
        ("a = 12abc", 4, "malformed numeric literal '12abc'"),
        ("a IS 5", 5, "expected NULL after IS"),
        ("a = @", 4, "unexpected character '@'"),
    ],
)
def test_error_names_problem_and_position(text: str, position: int, fragment: str) -> None:
    with pytest.raises(SelectorParseError) as info:
        parse_selector(text)
    exc = info.value
    assert fragment in exc.problem
    assert exc.position == position
    assert repr(text) in str(exc)
    assert exc.getMessage() == str(exc)


def test_error_converts_to_runtime_twin() -> None:
    with pytest.raises(InvalidSelectorException) as info:
        parse_selector("a >")
    twin = to_runtime(info.value)
    assert isinstance(twin, InvalidSelectorRuntimeException)
    assert twin.getMessage() == info.value.getMessage()


# -- API --------------------------------------------------------------------------------------


def test_selector_api() -> None:
    selector = parse_selector("JMSType = 'car' AND weight > 3 OR nope IS NULL")
    assert isinstance(selector, Selector)
    assert selector.text == "JMSType = 'car' AND weight > 3 OR nope IS NULL"
    assert selector.identifiers == frozenset({"JMSType", "weight", "nope"})
    assert repr(selector) == "Selector(\"JMSType = 'car' AND weight > 3 OR nope IS NULL\")"


def test_unknown_does_not_match() -> None:
    selector = parse_selector("nope = 1")
    assert selector is not None
    message = TextMessage()
    assert selector.evaluate(message) is None
    assert selector.matches(message) is False
    assert parse_selector("NOT (nope = 1)").matches(message) is False  # type: ignore[union-attr]


def test_parse_cache_returns_the_same_selector() -> None:
    clear_selector_cache()
    first = parse_selector("cached_a = 1 AND cached_b = 'x'")
    before = selector_cache_info()
    second = parse_selector("cached_a = 1 AND cached_b = 'x'")
    after = selector_cache_info()
    assert first is second
    assert after.hits == before.hits + 1
    assert after.misses == before.misses
    assert after.maxsize is not None and after.maxsize >= 128


def test_invalid_selector_is_not_cached_and_raises_every_time() -> None:
    for _ in range(2):
        with pytest.raises(InvalidSelectorException):
            parse_selector("a >")


def test_evaluation_reads_the_message_each_time() -> None:
    selector = parse_selector("JMSPriority >= 5 AND colour = 'red'")
    assert selector is not None
    message = TextMessage()
    assert selector.evaluate(message) is False  # priority 4 (the default): FALSE wins
    message.setJMSPriority(9)
    assert selector.evaluate(message) is None  # colour is NULL
    message.setStringProperty("colour", "red")
    assert selector.matches(message) is True
    message.setJMSDeliveryMode(DeliveryMode.NON_PERSISTENT)
    assert parse_selector("JMSDeliveryMode = 'NON_PERSISTENT'").matches(message)  # type: ignore[union-attr]


def test_received_read_only_message() -> None:
    message = TextMessage("x")
    message.setIntProperty("n", 3)
    message.set_read_only(True)
    assert parse_selector("n = 3").matches(message)  # type: ignore[union-attr]


class _ForeignMessage:
    """A message-like object without jmspy's typed property access."""

    def __init__(self, properties: dict[str, Any]) -> None:
        self.properties = properties

    def getObjectProperty(self, name: str) -> Any:
        return self.properties.get(name)

    def getJMSType(self) -> str | None:
        return "foreign"

    def getJMSPriority(self) -> int:
        return 6

    def getJMSDeliveryMode(self) -> int:
        return DeliveryMode.PERSISTENT

    def getJMSMessageID(self) -> str | None:
        return None

    def getJMSCorrelationID(self) -> str | None:
        return None

    def getJMSTimestamp(self) -> int:
        return 5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("n = 3 AND s = 'x' AND b AND d = 1.5", True),
        ("big = 4294967296 AND n + 2147483647 < 0", True),  # plain ints are Java ints here
        ("JMSType = 'foreign' AND JMSPriority = 6 AND JMSTimestamp = 5", True),
        ("JMSDeliveryMode = 'PERSISTENT'", True),
        ("JMSMessageID IS NULL AND absent IS NULL", True),
        ("other = 1", False),
    ],
)
def test_foreign_message(text: str, expected: bool) -> None:
    message = _ForeignMessage({"n": 3, "s": "x", "b": True, "d": 1.5, "big": 2**32, "other": [1]})
    selector = parse_selector(text)
    assert selector is not None
    assert selector.evaluate(message) is expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "pattern", "matches"),
    [
        ("\U0001f600", "_", True),
        ("\U0001f600", "__", False),
        ("a\U0001f600b", "a_b", True),
        ("a\U0001f600b", "a%b", True),
        ("x\U0001f600", "%\U0001f600", True),
        ("\U0001f600\U0001f601", "\U0001f600_", True),
    ],
)
def test_like_underscore_is_one_code_point(value: str, pattern: str, matches: bool) -> None:
    # As the brokers evaluate it: Artemis, ActiveMQ and Broker-J turn '_' into a
    # java.util.regex '.', which matches a whole character outside the Basic Multilingual
    # Plane (a surrogate pair), not half of one.
    selector = parse_selector(f"s LIKE '{pattern}'")
    assert selector is not None
    message = TextMessage()
    message.setStringProperty("s", value)
    assert selector.matches(message) is matches


def test_like_escape_is_one_java_char() -> None:
    # The brokers refuse an ESCAPE string whose Java length is not 1: an emoji is 2.
    with pytest.raises(SelectorParseError, match="exactly one character"):
        parse_selector("s LIKE 'a' ESCAPE '\U0001f600'")


def test_like_has_no_catastrophic_backtracking() -> None:
    message = TextMessage()
    message.setStringProperty("s", "a" * 20_000)
    selector = parse_selector("s LIKE '%a%a%a%a%a%a%a%a%a%a%a%a%b' OR s LIKE '%a_a_a_a_a_a_a_b%'")
    assert selector is not None
    start = time.perf_counter()
    assert selector.evaluate(message) is False
    assert time.perf_counter() - start < 1.0


def test_many_clauses() -> None:
    text = " OR ".join(f"p{n} = {n}" for n in range(200))
    selector = parse_selector(text)
    assert selector is not None
    message: Message = TextMessage()
    assert selector.evaluate(message) is None
    message.setIntProperty("p150", 150)
    assert selector.matches(message)


def test_deep_nesting() -> None:
    selector = parse_selector("(" * 50 + "t" + ")" * 50 + " AND " + "NOT " * 51 + "f")
    assert selector is not None
    message = TextMessage()
    message.setBooleanProperty("t", True)
    message.setBooleanProperty("f", False)
    assert selector.matches(message)
    with pytest.raises(SelectorParseError, match="nested too deeply"):
        parse_selector("(" * 5000 + "t" + ")" * 5000)


@pytest.mark.parametrize("terms", [1000, 5000])
def test_a_long_flat_sum_is_no_nesting(terms: int) -> None:
    # A flat chain of operators is one level of the grammar, however long: the parser builds it
    # left-deep, and compiling or evaluating it node by node recursed once per operator.
    mixed = " + ".join("a * 2 - a" if i % 2 else "a" for i in range(terms))
    selector = parse_selector(f"{mixed} = {terms} AND 1{' + 1' * (terms - 1)} = {terms}")
    assert selector is not None
    message = TextMessage()
    message.setIntProperty("a", 1)
    assert selector.matches(message)
    message.setIntProperty("a", 2)
    assert not selector.matches(message)
    message.clearProperties()
    assert selector.evaluate(message) is None  # a missing operand is NULL: UNKNOWN


# -- Java numeric helpers ---------------------------------------------------------------------


def _exact_float32(value: int) -> float:
    """Round an integer to the nearest float32 (ties to even) with exact arithmetic."""
    if value == 0:
        return 0.0
    mag = abs(value)
    exp = mag.bit_length() - 24
    if exp <= 0:
        return float(value)
    unit = 1 << exp
    q = Fraction(mag, unit)
    lower = q.numerator // q.denominator
    rem = q - lower
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and lower % 2 == 1):
        lower += 1
    return float(lower * unit) * (1 if value > 0 else -1)


def test_int_to_float_rounds_once_like_java() -> None:
    rng = random.Random(20240601)
    samples = [2**63 - 1, -(2**63), 2**53 + 1, 2**54 + 2**30 + 1, 16_777_217, -16_777_219]
    samples += [rng.randrange(-(2**63), 2**63) for _ in range(2000)]
    # values just above a float32 tie, where rounding twice (via double) goes wrong
    samples += [(2**24 + 1) * 2**39 + 1, (2**24 + 3) * 2**39 - 1]
    for value in samples:
        assert _i2f(value) == _exact_float32(value), value


def test_f32_overflow_is_infinity() -> None:
    assert _f32(1e300) == float("inf")
    assert _f32(-1e300) == float("-inf")
