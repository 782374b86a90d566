"""Tokens to a syntax tree, by recursive descent over the grammar in :mod:`jmspy.selector`,
with the static checks (operand kinds known at parse time, literal ranges, header names) that
make a selector invalid rather than merely false."""

from __future__ import annotations

from .lexer import SelectorParseError, _Lexer, _Number, _Tok
from .like import _like_matcher
from .numeric import (
    _BOOLEAN,
    _CMP_OPS,
    _INT,
    _INT_MAX,
    _INT_MIN,
    _LONG,
    _LONG_MAX,
    _LONG_MIN,
    _ORDERING,
    _STRING,
)
from .tree import (
    _KIND_NAMES,
    _UNSELECTABLE_HEADERS,
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

__all__: list[str] = []  # internal to the selector package


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
            # One Java char, as the brokers require: a character outside the Basic
            # Multilingual Plane is two (a surrogate pair).
            if len(etok.value) != 1 or ord(etok.value) > 0xFFFF:
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
