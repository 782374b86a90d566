"""Syntax tree to closures: each node becomes a Python function of the message giving a typed
value or a three-valued truth (True, False, None for UNKNOWN), with constant subtrees folded at
compile time, so evaluating a selector walks no tree."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, cast

from jmspy.errors import IllegalArgumentException
from jmspy.message import DeliveryMode, Message

from .numeric import (
    _ARITH,
    _BOOLEAN,
    _CMP_OPS,
    _DOUBLE,
    _INT,
    _INT_MAX,
    _INT_MIN,
    _LONG,
    _NEGATE,
    _NULL,
    _OBJECT,
    _ORDERING,
    _PROMOTED,
    _RANK,
    _STRING,
    _SWAPPED,
    TypedValue,
    _compare,
    _i2f,
)
from .tree import (
    _SELECTABLE_HEADERS,
    _Arith,
    _Between,
    _Cmp,
    _Ident,
    _In,
    _IsNull,
    _Like,
    _Lit,
    _Logic,
    _Neg,
    _Node,
    _Not,
)

__all__ = ["ValueFn", "CondFn"]


ValueFn = Callable[[Message], TypedValue]
CondFn = Callable[[Message], "bool | None"]


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
            return m.get_typed_property(name)
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
        return _arith_chain(node)
    if isinstance(node, _Neg):
        return _negate(node.op, _value(node.operand))
    cond = _cond_of(node)
    return lambda m: (_BOOLEAN, cond(m))


def _arith_chain(node: _Arith) -> ValueFn:
    """Compile the left-deep run of arithmetic under ``node`` (``a + b - c * d ...``, which
    the parser builds left-associative) into one loop over its operands: a nested call per
    operator would overflow Python's recursion limit on a flat sum of a thousand terms.

    A constant chain is walked to its end (it is folded as a whole); otherwise the walk stops
    at a constant part, which is folded on its own."""
    steps: list[tuple[tuple[Callable[[Any, Any], TypedValue], ...], ValueFn]] = []
    stop_at_const = not node.const
    current: _Node = node
    while isinstance(current, _Arith):
        if stop_at_const and current is not node and current.const:
            break
        steps.append((_ARITH[current.op], _value(current.right)))
        current = current.left
    first = _value(current)
    steps.reverse()
    rank = _RANK.get

    def arith(m: Message) -> TypedValue:
        result = first(m)
        for impl, right in steps:
            lt, lv = result
            if lv is None:
                return _NULL
            rt, rv = right(m)
            if rv is None:
                return _NULL
            lr = rank(lt)
            rr = rank(rt)
            if lr is None or rr is None:
                return _NULL  # arithmetic on a non-numeric value
            result = impl[lr if lr > rr else rr](lv, rv)
        return result

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
                    # Not "not inside": NaN is neither inside nor outside.
                    result: bool = (v < lo_v or v > hi_v) if negated else (lo_v <= v <= hi_v)
                    return result
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
