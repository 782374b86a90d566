"""The catalogue: one check per rule of :data:`jmspy.rules.RULES`.

Ids and wording come from the rules themselves (there is no second copy of a rule's text); the
catalogue adds the family, the check function registered for the id, and the fallback verified
when a broker lacks a capability. :func:`catalogue` validates the whole thing with pydantic and
fails loudly when a rule has no check, a check has no rule, or a capability is unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, field_validator

from jmspy.rules import RULES, Rule

from . import checks as _checks  # noqa: F401 - registers every check
from .context import CAPABILITIES
from .model import CatalogueEntry
from .registry import CAPABILITY_FALLBACKS, REGISTRY, CheckSpec

__all__ = [
    "FAMILIES",
    "CatalogueError",
    "catalogue",
    "family_of",
    "select",
    "spec_for",
]

#: Rule families in report order, with their titles.
FAMILIES: dict[str, str] = {
    "DD": "Delivery delay, time to live and priority",
    "RD": "Redelivery and dead letters",
    "BL": "Batch message listener",
    "JMS": "JMS 2.0 client rules",
    "WM": "JMS <-> AMQP wire mapping",
    "SEC": "Transport security and client safeguards",
    "FO": "Failover: reconnecting across a broker crash",
}

_ID = re.compile(r"^(DD|RD|BL|JMS|WM|SEC|FO)-[1-9][0-9]*$")


class CatalogueError(RuntimeError):
    """The rules and the registered checks do not match."""


class _ValidatedEntry(BaseModel):
    """Validation of one entry before it becomes a :class:`CatalogueEntry`."""

    model_config = ConfigDict(frozen=True)

    id: str
    level: str
    capabilities: tuple[str, ...]

    @field_validator("id")
    @classmethod
    def _id_form(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError(f"rule id {value!r} is not FAMILY-n with a known family")
        return value

    @field_validator("level")
    @classmethod
    def _level(cls, value: str) -> str:
        if value not in ("client", "wire", "broker"):
            raise ValueError(f"level {value!r} is not client, wire or broker")
        return value

    @field_validator("capabilities")
    @classmethod
    def _known(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [c for c in value if c not in CAPABILITIES]
        if unknown:
            raise ValueError(f"unknown capabilities {unknown}; known: {sorted(CAPABILITIES)}")
        return value


def family_of(rule_id: str) -> str:
    return rule_id.split("-", 1)[0]


def _sort_key(rule_id: str) -> tuple[int, int]:
    family, number = rule_id.split("-", 1)
    return (list(FAMILIES).index(family), int(number))


def _fallback_text(rule: Rule, spec: CheckSpec) -> str | None:
    if spec.fallback_text:
        return spec.fallback_text
    texts = [CAPABILITY_FALLBACKS[c].text for c in rule.capabilities if c in CAPABILITY_FALLBACKS]
    return "; ".join(texts) or None


def catalogue() -> list[CatalogueEntry]:
    """Every rule with its check, in family order; raises CatalogueError when they diverge."""
    problems = []
    missing = sorted(set(RULES) - set(REGISTRY))
    if missing:
        problems.append(f"rules without a check: {', '.join(missing)}")
    orphans = sorted(set(REGISTRY) - set(RULES))
    if orphans:
        problems.append(f"checks without a rule in jmspy.rules.RULES: {', '.join(orphans)}")
    entries = []
    for rule_id in sorted(set(RULES) & set(REGISTRY), key=_sort_key_safe):
        rule = RULES[rule_id]
        try:
            _ValidatedEntry(id=rule.id, level=rule.level, capabilities=rule.capabilities)
        except ValueError as exc:
            problems.append(f"{rule_id}: {exc}")
            continue
        entries.append(
            CatalogueEntry(
                id=rule.id,
                family=family_of(rule.id),
                title=rule.title,
                text=rule.text,
                source=rule.source,
                level=rule.level,
                capabilities=rule.capabilities,
                reason=rule.reason.name if rule.reason is not None else None,
                fallback=_fallback_text(rule, REGISTRY[rule_id]),
            )
        )
    if problems:
        raise CatalogueError("the conformance catalogue is inconsistent:\n" + "\n".join(problems))
    return entries


def _sort_key_safe(rule_id: str) -> tuple[int, int, str]:
    try:
        family, number = _sort_key(rule_id)
    except ValueError:
        return (len(FAMILIES), 0, rule_id)
    return (family, number, "")


def spec_for(rule_id: str) -> CheckSpec:
    return REGISTRY[rule_id]


def _matches(rule_id: str, pattern: str) -> bool:
    """``DD-7`` matches exactly; ``DD`` / ``DD-`` / ``dd`` match the family (a prefix)."""
    pattern = pattern.strip().upper()
    if not pattern:
        return False
    if pattern == rule_id:
        return True
    return "-" not in pattern.rstrip("-") and family_of(rule_id) == pattern.rstrip("-")


def select(
    entries: Sequence[CatalogueEntry],
    only: Iterable[str] = (),
    skip: Iterable[str] = (),
) -> list[CatalogueEntry]:
    """The entries chosen by ``--only`` / ``--skip`` (ids or family prefixes)."""
    only = [p for p in only if p.strip()]
    skip = [p for p in skip if p.strip()]
    known = {e.id for e in entries} | set(FAMILIES)
    unknown = [p for p in [*only, *skip] if p.strip().upper().rstrip("-") not in known]
    if unknown:
        raise CatalogueError(
            f"unknown check ids or families: {', '.join(unknown)} "
            f"(families: {', '.join(FAMILIES)}; ids like DD-7)"
        )
    chosen = [e for e in entries if not only or any(_matches(e.id, p) for p in only)]
    return [e for e in chosen if not any(_matches(e.id, p) for p in skip)]
