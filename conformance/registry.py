"""The check functions, registered by rule id.

A check module decorates one function per rule::

    @check("DD-2")
    def dd2(ctx: CheckContext) -> Verdict:
        ...

and, where the rule needs a broker capability, optionally the expectation verified instead when
the broker lacks it::

    @fallback("DD-7", "a delay is refused with MQRC_FUNCTION_NOT_SUPPORTED (DD-1)")
    def dd7_without_delay(ctx: CheckContext) -> Verdict:
        ...

Capability-wide fallbacks (``@capability_fallback("DELAYED_DELIVERY", ...)``) apply to every
check needing that capability that has no fallback of its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .context import CheckContext
    from .model import Verdict

CheckFunction = Callable[["CheckContext"], "Verdict"]


@dataclasses.dataclass
class CheckSpec:
    rule_id: str
    run: CheckFunction
    fallback: CheckFunction | None = None
    fallback_text: str | None = None
    # Seconds the runner allows this check instead of its default (None: the default).
    time_limit: float | None = None


@dataclasses.dataclass(frozen=True)
class CapabilityFallback:
    capability: str
    run: CheckFunction
    text: str


REGISTRY: dict[str, CheckSpec] = {}
CAPABILITY_FALLBACKS: dict[str, CapabilityFallback] = {}


class RegistryError(RuntimeError):
    """A check registered twice, or a fallback for a check that does not exist."""


def check(
    rule_id: str, time_limit: float | None = None
) -> Callable[[CheckFunction], CheckFunction]:
    def register(function: CheckFunction) -> CheckFunction:
        if rule_id in REGISTRY:
            raise RegistryError(f"two checks registered for {rule_id}")
        REGISTRY[rule_id] = CheckSpec(rule_id, function, time_limit=time_limit)
        return function

    return register


def fallback(rule_id: str, text: str) -> Callable[[CheckFunction], CheckFunction]:
    def register(function: CheckFunction) -> CheckFunction:
        spec = REGISTRY.get(rule_id)
        if spec is None:
            raise RegistryError(f"fallback for {rule_id}, which has no check (register it first)")
        spec.fallback = function
        spec.fallback_text = text
        return function

    return register


def capability_fallback(capability: str, text: str) -> Callable[[CheckFunction], CheckFunction]:
    def register(function: CheckFunction) -> CheckFunction:
        CAPABILITY_FALLBACKS[capability] = CapabilityFallback(capability, function, text)
        return function

    return register
