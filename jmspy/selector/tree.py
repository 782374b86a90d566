"""The selector syntax tree: one node class per construct, each knowing its static kind and
whether it is constant (so the evaluator can fold it), and which header fields may be named."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jmspy.message import JavaType

from .numeric import _BOOLEAN, _STRING

__all__: list[str] = []  # internal to the selector package


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
    # Worked out once, as the node is built: a flat sum of a thousand terms is a left-deep
    # chain a thousand nodes long, and asking each node of it recursively would overflow.
    is_const: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        self.kind = "num"
        self.is_const = self.left.const and self.right.const

    @property
    def const(self) -> bool:
        return self.is_const


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
