"""The message selector case table used by test_selector.py.

Each case is ``(selector, message, expected)``:

* ``message`` names one of the sample messages built by :func:`build_messages` ("M" carries
  headers and many typed properties, "E" is a fresh message with nothing set);
* ``expected`` is True / False / None (UNKNOWN) for a valid selector, or :data:`INVALID` when
  parsing must raise InvalidSelectorException (the message is then unused, written "-").

Cases named after a TCK test (``# TCK selectorTest03``) reproduce the selector and the property
values of that test in the Jakarta Messaging TCK (core/selectorQueue).
"""

from __future__ import annotations

from typing import Final

from jmspy.message import DeliveryMode, JChar, Message, TextMessage

INVALID: Final = "INVALID"

Expected = bool | None | str
Case = tuple[str, str, Expected]

T, F, U = True, False, None


def build_messages() -> dict[str, Message]:
    m = TextMessage("body")
    m.setJMSType("car")
    m.setJMSPriority(7)
    m.setJMSDeliveryMode(DeliveryMode.NON_PERSISTENT)
    m.setJMSMessageID("ID:abc-1")
    m.setJMSCorrelationID("corr-42")
    m.setJMSTimestamp(1_700_000_000_000)
    # strings
    for name, value in {
        "s": "hello",
        "s2": "world",
        "empty": "",
        "num_str": "2",
        "quote": "literal's",
        "uni": "héllo",
        "nl": "a\nb",
        "dotted": "a.c",
        "pct": "100%",
        "under": "_foo",
        "bar": "bar",
        "lose": "lose",
        "loose": "loose",
        "p123": "123",
        "p12993": "12993",
        "p1234": "1234",
        "esc1": "_foo%foo",
        "esc2": "_foo%",
        "esc3": "%foo_",
        "esc4": "_A",
        "bs": "_a%b",
        "foo_test": "foo_test",
        "abcd": "abcd",
        "JMSX_weird": "x",
    }.items():
        m.setStringProperty(name, value)
    m.setStringProperty("nulls", None)
    # booleans
    m.setBooleanProperty("t", True)
    m.setBooleanProperty("f", False)
    m.setBooleanProperty("$myProp", True)
    m.setBooleanProperty("_myProp", False)
    m.setBooleanProperty("myProp", True)
    m.setBooleanProperty("MYpROP", False)
    m.setBooleanProperty("JMS_acme_flag", True)
    # numbers with their Java types
    m.setByteProperty("b", 5)
    m.setShortProperty("sh", 300)
    m.setIntProperty("i", 42)
    m.setLongProperty("l", 10_000_000_000)
    m.setFloatProperty("fl", 2.5)
    m.setDoubleProperty("d", 7.25)
    m.setIntProperty("zero", 0)
    m.setIntProperty("neg", -5)
    m.setIntProperty("ten", 10)
    m.setIntProperty("imax", 2**31 - 1)
    m.setIntProperty("imin", -(2**31))
    m.setLongProperty("lmax", 2**63 - 1)
    m.setLongProperty("lmin", -(2**63))
    m.setLongProperty("l29", 29)
    m.setIntProperty("i16777217", 16_777_217)
    m.setLongProperty("lbig", 9_007_199_254_740_993)
    m.setFloatProperty("f11", 1.1)
    m.setDoubleProperty("d7000", 7000.0)
    m.setDoubleProperty("dneg", -5790.0)
    m.setDoubleProperty("d15", 1.5)
    for n in (1, 2, 3, 4):
        m.setFloatProperty(f"f{n}", float(n))
    m.setIntProperty("café", 1)
    m.setObjectProperty("ch", JChar("x"))
    # JMSX properties
    m.setStringProperty("JMSXGroupID", "g1")
    m.setIntProperty("JMSXGroupSeq", 3)

    e = TextMessage()
    return {"M": m, "E": e}


CASES: list[Case] = [
    # -- literals and bare conditions -----------------------------------------------------
    ("TRUE", "E", T),
    ("FALSE", "E", F),
    ("true", "E", T),
    ("fAlSe", "E", F),
    ("t", "M", T),  # TCK expressionTest1
    ("f", "M", F),  # TCK expressionTest2
    ("nope", "M", U),  # TCK expressionTest3
    ("(t)", "M", T),
    ("i", "M", U),  # a non-boolean identifier as a condition is UNKNOWN
    ("NOT i", "M", U),
    ("s", "M", U),
    ("JMS_acme_flag", "M", T),
    # -- three-valued logic: AND ----------------------------------------------------------
    ("t AND t", "M", T),
    ("t AND f", "M", F),
    ("t AND nope", "M", U),
    ("f AND t", "M", F),
    ("f AND f", "M", F),
    ("f AND nope", "M", F),
    ("nope AND t", "M", U),
    ("nope AND f", "M", F),
    ("nope AND nope", "M", U),
    # -- three-valued logic: OR -----------------------------------------------------------
    ("t OR t", "M", T),
    ("t OR f", "M", T),
    ("t OR nope", "M", T),
    ("f OR t", "M", T),
    ("f OR f", "M", F),
    ("f OR nope", "M", U),
    ("nope OR t", "M", T),
    ("nope OR f", "M", U),
    ("nope OR nope", "M", U),
    # -- three-valued logic: NOT, and n-ary chains ----------------------------------------
    ("NOT t", "M", F),  # TCK nullTest09
    ("NOT f", "M", T),  # TCK nullTest08
    ("NOT nope", "M", U),  # TCK nullTest10
    ("NOT NOT t", "M", T),
    ("t AND t AND nope", "M", U),
    ("t AND nope AND f", "M", F),
    ("f OR nope OR t", "M", T),
    ("f OR f OR nope", "M", U),
    ("f OR f OR f", "M", F),
    # TCK nullTest05 (every disjunct is FALSE or UNKNOWN)
    (
        "(t AND f) OR (t AND nope) OR (f AND t) OR (f AND f) OR (f AND nope) OR "
        "(nope AND t) OR (nope AND f) OR (nope AND nope)",
        "M",
        U,
    ),
    # TCK nullTest06
    ("(t OR t) AND (t OR f) AND (t OR nope) AND (f OR t) AND (nope OR t)", "M", T),
    # -- precedence and bracketing --------------------------------------------------------
    ("NOT t AND f", "M", F),  # TCK precedenceTest1: (NOT T) AND F
    ("t AND NOT f", "M", T),  # TCK precedenceTest2
    ("t OR t AND f", "M", T),  # TCK precedenceTest3: T OR (T AND F)
    ("f AND f OR t", "M", T),
    ("(t OR t) AND f", "M", F),
    ("(t OR f) AND f", "M", F),  # TCK bracketingTest1
    ("TRUE OR (FALSE AND FALSE)", "E", T),  # TCK bracketingTest2
    ("(t = true OR f = true) AND JMSType = 'not_foo'", "M", F),  # TCK bracketingTest3
    ("(f = true AND JMSType = 'not_foo') OR t = true", "M", T),  # TCK bracketingTest4
    ("NOT i = 42", "M", F),  # NOT binds looser than comparison
    ("1 + 2 * 3 = 7", "E", T),
    ("(1 + 2) * 3 = 9", "E", T),
    ("10 - 4 - 3 = 3", "E", T),  # left to right
    ("100 / 10 / 5 = 2", "E", T),
    ("- neg + neg = 10", "M", F),  # (-neg) + neg = 0
    ("- ten + ten = 0", "M", T),  # TCK precedenceTest4
    ("f1+f2*f3-f4/f4 = 6", "M", T),  # TCK precedenceTest5 (floats)
    ("-(-5) = 5", "E", T),
    ("- -5 = 5", "E", T),
    ("+-5 = -5", "E", T),
    ("2 * -3 = -6", "E", T),
    ("-i < 0 AND +neg < 0", "M", T),  # TCK operatorTest1
    ("ten*2 = 20 AND neg/2 = -2", "M", T),  # TCK operatorTest2 shape; -5/2 truncates to -2
    ("neg+5 = 0 AND ten-5 = 5", "M", T),  # TCK operatorTest3
    # -- numeric comparisons --------------------------------------------------------------
    ("i = 42", "M", T),
    ("i <> 42", "M", F),
    ("i < 43", "M", T),
    ("i <= 42", "M", T),
    ("i > 42", "M", F),
    ("i >= 42", "M", T),
    ("42 = i", "M", T),
    ("43 > i", "M", T),
    ("i = l", "M", F),
    ("i < l", "M", T),
    ("i = 42.0", "M", T),
    ("b = 5 AND sh = 300", "M", T),
    ("b < i AND i < sh AND sh < l", "M", T),
    ("fl = 2.5 AND d = 7.25", "M", T),
    ("fl < d", "M", T),
    ("zero < d15", "M", T),  # TCK comparisonTest03: int < double
    # TCK comparisonTest01 shape (mixed int/float/double properties)
    ("s = 'hello' AND b > 0 AND fl >= 2 AND i >= 2 AND d < 8 AND ten <= 10 AND fl <> 7", "M", T),
    # TCK comparisonTest02 shape: every disjunct false
    ("s = 'x' OR zero > 0 OR fl >= 3 OR d < 5 OR i <= 6 OR f1 <> 1", "M", F),
    ("nope = 1", "M", U),  # TCK nullTest01/02 shapes
    ("nope + 2 < 10", "M", U),
    ("nope <> 1", "M", U),
    ("nope = nope", "M", U),
    # -- Java numeric promotion -----------------------------------------------------------
    ("i16777217 = 16777216.0F", "M", T),  # int -> float loses the last bit, as in Java
    ("i16777217 = 16777216.0", "M", F),  # int -> double is exact
    ("i16777217 = 16777216", "M", F),
    ("lbig = 9007199254740992.0", "M", T),  # long -> double rounds, as in Java
    ("lbig = 9007199254740992", "M", F),
    ("f11 = 1.1", "M", F),  # float 1.1f widened to double is not 1.1
    ("f11 = 1.1F", "M", T),
    ("f11 = 1.1f", "M", T),
    ("0.1F + 0.2F = 0.3F", "E", T),  # float arithmetic rounds to 32 bits
    ("0.1 + 0.2 = 0.3", "E", F),  # double arithmetic does not
    ("fl + 1 = 3.5", "M", T),
    ("b * sh = 1500", "M", T),  # byte * short -> int
    ("i / 5 = 8", "M", T),  # int division
    ("i / 5.0 = 8.4", "M", T),
    ("i / 5F = 8.4F", "M", T),
    ("l / 3 = 3333333333", "M", T),
    # -- overflow and division ------------------------------------------------------------
    ("imax + 1 = -2147483648", "M", T),  # int overflow wraps
    ("imax + 1 = imin", "M", T),
    ("imax + 1L = 2147483648", "M", T),  # long arithmetic does not overflow here
    ("imax * 2 = -2", "M", T),
    ("2147483647 + 1 = -2147483648", "E", T),  # also when folded at parse time
    ("lmax + 1 = lmin", "M", T),  # long overflow wraps
    ("lmax * 2 = -2", "M", T),
    ("-imin = imin", "M", T),
    ("imin / -1 = imin", "M", T),
    ("-7 / 2 = -3", "E", T),  # truncation toward zero, not floor
    ("7 / -2 = -3", "E", T),
    ("7 / 2 = 3", "E", T),
    ("7 / 2.0 = 3.5", "E", T),
    ("i / 0 = 0", "M", U),  # integer division by zero is NULL
    ("NOT (i / zero = 1)", "M", U),
    ("i / 0 = 0 OR t", "M", T),
    ("1.0 / 0 > 1e308", "E", T),  # IEEE: Infinity
    ("-1.0 / 0 < -1e308", "E", T),
    ("0.0 / 0 = 0.0 / 0", "E", F),  # NaN never equals
    ("0.0 / 0 <> 0.0 / 0", "E", T),
    ("d / zero > 0", "M", T),
    # -- exact literal forms --------------------------------------------------------------
    ("l29 = 035", "M", T),  # TCK selectorTest05: octal
    ("l29 = 0x1d", "M", T),  # TCK selectorTest06: hex
    ("l29 = 0X1D", "M", T),
    ("l29 = 29L", "M", T),
    ("l29 = 29l", "M", T),
    ("l29 = 0b11101", "M", T),
    ("l29 = 0x1DL", "M", T),
    ("1_000 = 1000", "E", T),
    ("0x1E_5 = 0x1E5", "E", T),  # 'E' is a hex digit here, not an exponent
    ("0x1e = 30", "E", T),
    ("1e1_0 = 1e10", "E", T),
    ("0x1.8P1 = 3", "E", T),
    ("0_17 = 15", "E", T),  # octal with an underscore
    ("00 = 0", "E", T),
    ("lmin = -9223372036854775808L AND lmax = 9223372036854775807L", "M", T),  # selectorTest03
    ("lmin = -9223372036854775808", "M", T),
    ("imin = -2147483648", "M", T),
    ("neg = -5 AND ten = +10", "M", T),  # TCK selectorTest04 shape
    ("JMSTimestamp = 1700000000000", "M", T),
    ("0xFFFFFFFF = 4294967295", "E", T),  # magnitude, not Java's two's complement int
    # -- approximate literal forms --------------------------------------------------------
    ("d7000 = 7E3 AND dneg = -57.9E2", "M", T),  # TCK selectorTest07 shape
    ("d7000 = 7000.", "M", T),  # TCK selectorTest08
    ("d7000 = .7e4", "M", T),  # TCK selectorTest09
    ("d7000 = 7000D", "M", T),
    ("d7000 = 7000f", "M", T),
    ("d7000 = 7e+3", "M", T),
    ("d15 = 15E-1", "M", T),
    ("7E-3 = 0.007", "E", T),
    ("+6.2 > 6", "E", T),
    ("d15 = 0x1.8p0", "M", T),  # Java hexadecimal floating literal
    ("1e308 * 10 > 1e308", "E", T),  # overflow to Infinity at run time is allowed
    # -- strings --------------------------------------------------------------------------
    ("s = 'hello'", "M", T),
    ("s <> 'hello'", "M", F),
    ("s = 'HELLO'", "M", F),  # case-sensitive
    ("s = 'hello '", "M", F),
    ("'hello' = s", "M", T),
    ("s = s2", "M", F),
    ("s <> s2", "M", T),
    ("empty = ''", "M", T),
    ("quote = 'literal''s'", "M", T),  # TCK selectorTest02
    ("uni = 'héllo'", "M", T),
    ("JMSType = 'car' AND s <> 'not_foo'", "M", T),  # TCK comparisonTest08 shape
    ("'a' = 'a'", "E", T),
    ("'a' <> 'b'", "E", T),
    ("s < s2", "M", F),  # ordering is not defined for strings: FALSE at run time
    ("NOT (s >= s2)", "M", T),
    # -- unlike types compare FALSE -------------------------------------------------------
    ("num_str = 2", "M", F),  # the String "2" is not a number
    ("num_str > 1", "M", F),
    ("NOT (num_str = 2)", "M", T),
    ("num_str + 1 = 3", "M", U),  # arithmetic on a String value is NULL
    ("t = 1", "M", F),
    ("t <> 1", "M", F),
    ("s = t", "M", F),
    ("i = 'forty-two'", "M", F),
    ("i <> '42'", "M", F),
    ("ch = 'x'", "M", F),  # a char property is not a String
    ("JMSDeliveryMode = 1", "M", F),  # delivery mode compares as a String
    # -- booleans -------------------------------------------------------------------------
    ("t = TRUE AND f = FALSE", "M", T),  # TCK selectorTest11
    ("t = true AND f = false", "M", T),  # TCK selectorTest12 shape
    ("t = TRUE AND f <> TRUE", "M", T),  # TCK comparisonTest13 shape
    ("t = f", "M", F),
    ("t < f", "M", F),  # ordering on booleans: FALSE at run time
    ("(i > 1) = TRUE", "M", T),
    ("(i > 1) <> (f = TRUE)", "M", T),
    ("(nope > 1) = TRUE", "M", U),
    # -- BETWEEN --------------------------------------------------------------------------
    ("i BETWEEN 40 AND 50", "M", T),
    ("i NOT BETWEEN 40 AND 50", "M", F),
    ("i BETWEEN 42 AND 42", "M", T),
    ("i BETWEEN 43 AND 50", "M", F),
    ("i NOT BETWEEN 43 AND 50", "M", T),
    ("i BETWEEN 50 AND 40", "M", F),
    ("fl BETWEEN 2 AND 3", "M", T),
    ("i BETWEEN 41.5 AND 42.5", "M", T),
    ("d BETWEEN 7 AND 8", "M", T),
    ("i + 1 BETWEEN 43 AND 43", "M", T),
    ("i BETWEEN ten * 4 AND ten * 5", "M", T),
    ("lmax BETWEEN 0 AND 9223372036854775807", "M", T),
    # TCK betweenTest1..4
    ("ten BETWEEN 5 and 10 AND neg BETWEEN -5 and 5 AND zero BETWEEN 0 and 2", "M", T),
    ("neg BETWEEN -4 and 5 OR ten BETWEEN -5 and 4", "M", F),
    ("neg NOT BETWEEN -4 and 5 AND ten NOT BETWEEN -5 and 4", "M", T),
    ("ten NOT BETWEEN 5 and 10 OR zero NOT BETWEEN -1 and 1", "M", F),
    ("num_str BETWEEN 1 AND 3", "M", F),  # TCK betweenTest5: a String does not match
    ("num_str NOT BETWEEN 1 AND 3", "M", F),
    ("s BETWEEN 5 and 10", "M", F),  # TCK betweenTest6
    ("nope BETWEEN 1 AND 2", "M", U),
    ("nope NOT BETWEEN 1 AND 2", "M", U),
    ("i BETWEEN nope AND 50", "M", U),  # UNKNOWN AND TRUE
    ("i BETWEEN nope AND 10", "M", F),  # UNKNOWN AND FALSE
    ("i NOT BETWEEN nope AND 10", "M", T),  # UNKNOWN OR TRUE
    ("i NOT BETWEEN nope AND 50", "M", U),  # UNKNOWN OR FALSE
    ("i BETWEEN zero AND nope", "M", U),
    # -- IN -------------------------------------------------------------------------------
    ("s IN ('a', 'hello')", "M", T),
    ("s NOT IN ('a', 'hello')", "M", F),
    ("s IN ('a', 'b')", "M", F),
    ("s NOT IN ('a', 'b')", "M", T),
    ("s IN ('hello')", "M", T),
    ("s IN ('HELLO')", "M", F),
    ("empty IN ('')", "M", T),
    ("quote IN ('literal''s')", "M", T),
    ("JMSType IN ('foo','car','test')", "M", T),  # TCK inTest1 shape
    ("JMSType NOT IN ('foo','car','test')", "M", F),
    ("nope IN ('foo','jms','test')", "M", U),  # TCK inTest5
    ("nope NOT IN ('foo','jms','test')", "M", U),  # TCK inTest6 / nullTest03
    ("i IN ('42')", "M", U),  # not a String: no match
    ("i NOT IN ('foo','jms','test')", "M", U),  # TCK inTest7
    ("JMSType IN ('car')", "E", U),  # JMSType not set: NULL
    ("JMSDeliveryMode IN ('PERSISTENT', 'NON_PERSISTENT')", "E", T),
    # -- LIKE -----------------------------------------------------------------------------
    ("p123 LIKE '12%3'", "M", T),
    ("p12993 LIKE '12%3'", "M", T),
    ("p1234 LIKE '12%3'", "M", F),
    ("p123 NOT LIKE '12%3'", "M", F),
    ("p1234 NOT LIKE '12%3'", "M", T),
    ("lose LIKE 'l_se'", "M", T),
    ("loose LIKE 'l_se'", "M", F),
    ("under LIKE '\\_%' ESCAPE '\\'", "M", T),
    ("bar LIKE '\\_%' ESCAPE '\\'", "M", F),
    ("esc1 LIKE 'A_fo_A%f%' ESCAPE 'A'", "M", T),  # TCK likeTest04
    ("esc2 LIKE 'A%fooA_' ESCAPE 'A'", "M", F),  # TCK likeTest08
    ("esc3 LIKE 'A%fooA_' ESCAPE 'A'", "M", T),
    ("esc4 NOT LIKE 'A_A_' ESCAPE 'A'", "M", T),  # TCK likeTest12
    ("esc2 NOT LIKE 'A_fooA%' ESCAPE 'A'", "M", F),  # TCK likeTest16
    ("bs LIKE '\\__\\%%' ESCAPE '\\'", "M", T),  # TCK likeTest17
    ("foo_test like 'fooG_%' escape 'G'", "M", T),  # TCK caseTest1 part
    ("pct LIKE '100!%' ESCAPE '!'", "M", T),
    ("pct LIKE '%!%%' ESCAPE '!'", "M", T),
    ("s LIKE '%!%%' ESCAPE '!'", "M", F),
    ("pct LIKE '100%%' ESCAPE '%'", "M", T),  # '%%' with ESCAPE '%' is a literal '%'
    ("JMSType LIKE 'car'", "M", T),  # TCK likeTest01 shape
    ("JMSType LIKE 'c_r' AND abcd LIKE '_bcd' AND p1234 LIKE '123_'", "M", T),  # likeTest02
    # TCK likeTest03 shape
    ("JMSType LIKE 'c%r' AND abcd LIKE '%cd' AND p1234 LIKE '1%' AND s LIKE '%'", "M", T),
    ("abcd NOT LIKE '%cde' AND p1234 NOT LIKE '01%' AND s NOT LIKE 'h%x%o'", "M", T),  # 11
    ("s LIKE 'hello'", "M", T),
    ("s LIKE 'hell'", "M", F),
    ("s LIKE 'he%'", "M", T),
    ("s LIKE '%lo'", "M", T),
    ("s LIKE '%ll%'", "M", T),
    ("s LIKE '%xx%'", "M", F),
    ("s LIKE 'h%l%o'", "M", T),
    ("s LIKE 'h%l%l%l%o'", "M", F),
    ("s LIKE 'he%lo'", "M", T),
    ("s LIKE 'hel%llo'", "M", F),  # prefix and suffix may not overlap
    ("s LIKE '_____'", "M", T),
    ("s LIKE '______'", "M", F),
    ("s LIKE '%_l_%'", "M", T),
    ("s LIKE '_%_%_'", "M", T),
    ("empty LIKE '%'", "M", T),
    ("empty LIKE '_'", "M", F),
    ("empty LIKE ''", "M", T),
    ("nl LIKE 'a_b'", "M", T),  # '_' matches a line terminator
    ("nl LIKE 'a%'", "M", T),
    ("dotted LIKE 'a.c'", "M", T),  # regex metacharacters are literal
    ("s LIKE 'h.llo'", "M", F),
    ("s LIKE 'h[e]llo'", "M", F),
    ("s LIKE 'H%'", "M", F),  # case-sensitive
    ("uni LIKE 'h_llo'", "M", T),
    ("nope LIKE '1_3'", "M", U),  # TCK likeTest18
    ("nope NOT LIKE '1_3'", "M", U),  # TCK likeTest19
    ("i LIKE '4_'", "M", U),  # TCK likeTest20: not a String, no match
    ("i NOT LIKE '4_'", "M", U),
    # -- IS [NOT] NULL --------------------------------------------------------------------
    ("nope IS NULL", "M", T),  # TCK isNullTest1
    ("s IS NULL", "M", F),  # TCK isNullTest2
    ("fl IS NOT NULL", "M", T),  # TCK isNullTest3
    ("nope IS NOT NULL", "M", F),  # TCK isNullTest4
    ("nulls IS NULL", "M", T),  # a property set to null
    ("NOT nope IS NULL", "M", F),
    ("JMSType IS NULL", "E", T),
    ("JMSMessageID IS NULL", "E", T),
    ("JMSCorrelationID IS NOT NULL", "M", T),
    ("JMSCorrelationID IS NULL", "E", T),
    ("JMSTimestamp IS NULL", "E", T),  # a zero timestamp is NULL
    ("JMSPriority IS NULL", "E", F),
    ("JMSXDeliveryCount IS NULL", "E", T),
    ("nope is not null or t", "M", T),
    # -- header fields --------------------------------------------------------------------
    ("JMSType = 'car'", "M", T),
    ("JMSPriority = 7", "M", T),
    ("JMSPriority > 5 AND JMSPriority <= 9", "M", T),
    ("JMSPriority = 4", "E", T),  # the default priority
    ("JMSDeliveryMode = 'NON_PERSISTENT'", "M", T),
    ("JMSDeliveryMode = 'PERSISTENT'", "M", F),
    ("JMSDeliveryMode = 'PERSISTENT'", "E", T),  # the default delivery mode
    ("JMSMessageID = 'ID:abc-1'", "M", T),
    ("JMSMessageID LIKE 'ID:%'", "M", T),
    ("JMSCorrelationID = 'corr-42'", "M", T),
    ("JMSTimestamp > 1600000000000", "M", T),
    ("JMSTimestamp > 0", "E", U),
    ("JMSTimestamp / 1000 = 1700000000", "M", T),
    ("JMSType = 'car'", "E", U),
    # -- JMSX, JMS_ and other property names ----------------------------------------------
    ("JMSXGroupID = 'g1' AND JMSXGroupSeq = 3", "M", T),
    ("JMSXGroupSeq + 1 = 4", "M", T),
    ("JMSXUserID IS NULL", "M", T),
    ("JMS_acme_flag = TRUE", "M", T),
    ("JMSX_weird = 'x'", "M", T),
    ("JMSSomething IS NULL", "M", T),
    # -- identifiers ----------------------------------------------------------------------
    ("$myProp=TRUE AND _myProp=FALSE", "M", T),  # TCK identifierTest01
    ("myProp=TRUE AND MYpROP=FALSE", "M", T),  # TCK identifierTest12: case-sensitive
    ("myprop IS NULL", "M", T),
    ("café = 1", "M", T),
    ("ın IS NULL", "M", T),  # dotless i: an identifier, not the keyword IN
    # -- keywords in any case, whitespace -------------------------------------------------
    # TCK caseTest1
    (
        "nope is null and foo_test like 'fooG_%' escape 'G' and s in ('a', 'hello') and "
        "ten not between 0 and 5 and (t or false)",
        "M",
        T,
    ),
    ("s iS nOt NuLl AnD NoT f", "M", T),
    ("JMSType   =   'car'", "M", T),  # TCK whitespaceTest1
    ("JMSType\t=\t'car'", "M", T),  # TCK whitespaceTest2
    ("JMSType\f=\f'car'", "M", T),  # TCK whitespaceTest3
    ("JMSType\n= \n'car'", "M", T),  # TCK whitespaceTest4
    ("\r\n JMSType='car' \r\n", "M", T),
    ("s='hello'AND(t)", "M", T),
    # =====================================================================================
    # Invalid selectors
    # -- reserved words as identifiers (TCK identifierTest02..11, 14) ----------------------
    ("NULL = 0", "-", INVALID),
    ("TRUE = 0", "-", INVALID),
    ("FALSE = 0", "-", INVALID),
    ("NOT = 0", "-", INVALID),
    ("AND = 0", "-", INVALID),
    ("OR = 0", "-", INVALID),
    ("BETWEEN = 0", "-", INVALID),
    ("LIKE = 0", "-", INVALID),
    ("IN = 0", "-", INVALID),
    ("IS = 0", "-", INVALID),
    ("ESCAPE = 0", "-", INVALID),
    ("null = 0", "-", INVALID),
    ("Escape = 0", "-", INVALID),
    ("a = NULL", "-", INVALID),
    ("a IN (NULL)", "-", INVALID),
    # -- strings and booleans with ordering operators (TCK comparisonTest04..07, 09..12) ---
    ("myProp > 'foo'", "-", INVALID),
    ("myProp >= 'foo'", "-", INVALID),
    ("myProp < 'foo'", "-", INVALID),
    ("myProp <= 'foo'", "-", INVALID),
    ("'foo' > TRUE ", "-", INVALID),
    ("'foo' >= TRUE ", "-", INVALID),
    ("'foo' < TRUE ", "-", INVALID),
    ("'foo' <= TRUE ", "-", INVALID),
    ("a > TRUE", "-", INVALID),
    ("(a = 1) < (b = 2)", "-", INVALID),
    # -- like types only, when known at parse time ----------------------------------------
    ("'a' = 1", "-", INVALID),
    ("TRUE <> 'x'", "-", INVALID),
    ("a + 1 = 'x'", "-", INVALID),
    ("(a > 1) = 1", "-", INVALID),
    # -- BETWEEN, IN, LIKE operand rules (TCK betweenTest7, inTest8, likeTest21) ------------
    ("myProp BETWEEN 'foo' and 'test'", "-", INVALID),
    ("myProp BETWEEN 1 and 'test'", "-", INVALID),
    ("'x' BETWEEN 1 AND 2", "-", INVALID),
    ("a BETWEEN TRUE AND FALSE", "-", INVALID),
    ("myProp NOT IN (1,2,3)", "-", INVALID),
    ("a IN ('x', 2)", "-", INVALID),
    ("a IN (b)", "-", INVALID),
    ("a IN ('x', -1)", "-", INVALID),
    ("myProp LIKE 7", "-", INVALID),
    ("a LIKE b", "-", INVALID),
    ("'x' IN ('x')", "-", INVALID),
    ("'x' LIKE 'x'", "-", INVALID),
    ("a + 1 IN ('2')", "-", INVALID),
    ("1 IS NULL", "-", INVALID),
    ("(a + 1) IS NULL", "-", INVALID),
    # -- ESCAPE ---------------------------------------------------------------------------
    ("a LIKE 'x' ESCAPE 'ab'", "-", INVALID),
    ("a LIKE 'x' ESCAPE ''", "-", INVALID),
    ("a LIKE 'x' ESCAPE 5", "-", INVALID),
    ("a LIKE 'x' ESCAPE b", "-", INVALID),
    ("a LIKE 'x' ESCAPE", "-", INVALID),
    ("a LIKE 'ab\\' ESCAPE '\\'", "-", INVALID),  # pattern ends with the escape character
    # -- arithmetic on strings and booleans -----------------------------------------------
    ("'a' + 1 = 2", "-", INVALID),
    ("1 + 'a' = 2", "-", INVALID),
    ("TRUE * 2 = 2", "-", INVALID),
    ("a / FALSE = 2", "-", INVALID),
    ("-'a' = 1", "-", INVALID),
    ("-TRUE = 1", "-", INVALID),
    ("(a = 1) + 1 = 2", "-", INVALID),
    # -- the selector, and AND / OR / NOT operands, must be boolean ------------------------
    ("a + 1", "-", INVALID),
    ("'abc'", "-", INVALID),
    ("5", "-", INVALID),
    ("1.5", "-", INVALID),
    ("(a + 1)", "-", INVALID),
    ("-a", "-", INVALID),
    ("a AND 5", "-", INVALID),
    ("'x' OR b", "-", INVALID),
    ("NOT 5", "-", INVALID),
    ("NOT 'x'", "-", INVALID),
    ("a AND (b * 2)", "-", INVALID),
    # -- header fields a selector may not name --------------------------------------------
    ("JMSDestination = 'queue://q'", "-", INVALID),
    ("JMSReplyTo IS NULL", "-", INVALID),
    ("JMSRedelivered = TRUE", "-", INVALID),
    ("JMSExpiration > 0", "-", INVALID),
    ("JMSDeliveryTime > 0", "-", INVALID),
    ("a = 1 OR NOT JMSRedelivered", "-", INVALID),
    # -- syntax errors --------------------------------------------------------------------
    ("a =", "-", INVALID),
    ("= 1", "-", INVALID),
    ("a = 1)", "-", INVALID),
    ("(a = 1", "-", INVALID),
    ("()", "-", INVALID),
    ("a == 1", "-", INVALID),
    ("a != 1", "-", INVALID),
    ("a = 'unterminated", "-", INVALID),
    ("a = 'it''s", "-", INVALID),
    ('a = "x"', "-", INVALID),
    ("a = 1 2", "-", INVALID),
    ("a b", "-", INVALID),
    ("a AND", "-", INVALID),
    ("OR a", "-", INVALID),
    ("a OR OR b", "-", INVALID),
    ("a = b = c", "-", INVALID),
    ("a BETWEEN 1", "-", INVALID),
    ("a BETWEEN 1 OR 2", "-", INVALID),
    ("a IN ()", "-", INVALID),
    ("a IN ('x',)", "-", INVALID),
    ("a IN 'x'", "-", INVALID),
    ("a IN ('x'", "-", INVALID),
    ("a IS 5", "-", INVALID),
    ("a IS NOT", "-", INVALID),
    ("a IS NOT NOT NULL", "-", INVALID),
    ("a NOT NULL", "-", INVALID),
    ("a NOT 5", "-", INVALID),
    ("a LIKE", "-", INVALID),
    ("a.b = 1", "-", INVALID),
    ("a = 1;", "-", INVALID),
    ("a = @", "-", INVALID),
    ("#a = 1", "-", INVALID),
    ("a = 1 /* comment */", "-", INVALID),
    ("a\u00a0= 1", "-", INVALID),  # only Java whitespace separates tokens
    ("a = 1 +", "-", INVALID),
    ("a * = 1", "-", INVALID),
    # -- malformed or out-of-range numbers ------------------------------------------------
    ("a = 0x", "-", INVALID),
    ("a = 08", "-", INVALID),
    ("a = 019L", "-", INVALID),
    ("a = 1e", "-", INVALID),
    ("a = 1.2.3", "-", INVALID),
    ("a = 1_", "-", INVALID),
    ("a = 1__", "-", INVALID),
    ("a = 0x_1", "-", INVALID),
    ("a = 1._5", "-", INVALID),
    ("a = 12abc", "-", INVALID),
    ("i=42AND t", "-", INVALID),  # a number must not run straight into a word
    ("a = 0b102", "-", INVALID),
    ("a = 1LL", "-", INVALID),
    ("a = 9223372036854775808", "-", INVALID),
    ("a = 9223372036854775808L", "-", INVALID),
    ("a = -9223372036854775809", "-", INVALID),
    ("a = 99999999999999999999", "-", INVALID),
    ("a = 1e400", "-", INVALID),
    ("a = 1e-400", "-", INVALID),
    ("a = 3.5e38F", "-", INVALID),
    ("a = 1e-50F", "-", INVALID),
]
