"""Broker profiles (installed as ``jmspy.adapters``): what each broker supports and how delay,
priority and redelivery are expressed there, plus the choice of profile for a connection."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from . import activemq, artemis, generic, ibmmq, qpid_broker_j, rabbitmq, servicebus
from .base import BrokerProfile

log = logging.getLogger("jmspy.adapters")

PROFILES: dict[str, BrokerProfile] = {
    p.name: p
    for p in (
        artemis.PROFILE,
        rabbitmq.PROFILE,
        rabbitmq.PROFILE_4X,
        activemq.PROFILE,
        servicebus.PROFILE,
        qpid_broker_j.PROFILE,
        ibmmq.PROFILE,
        generic.PROFILE,
    )
}


def get_profile(name: str) -> BrokerProfile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(
            f"unknown adapter {name!r} (jmspy.adapter); known: {', '.join(sorted(PROFILES))}"
        ) from None


def detect_profile(
    remote_properties: Mapping[str, Any], offered_capabilities: Iterable[str]
) -> BrokerProfile:
    """Pick a profile from the broker's open frame: its `product` property, then the
    capabilities it offers; fall back to the generic, capability-driven profile."""
    product = str(remote_properties.get("product", "") or "")
    offered = set(offered_capabilities)
    for profile in PROFILES.values():
        if product and any(product.lower() == p.lower() for p in profile.products):
            if profile.name == "rabbitmq" and "LINK_PAIR_V1_0" in offered:
                return PROFILES["rabbitmq4"]
            return profile
    if "LINK_PAIR_V1_0" in offered:
        return PROFILES["rabbitmq4"]
    return PROFILES["generic"]


def choose_profile(
    configured: str | None,
    remote_properties: Mapping[str, Any],
    offered_capabilities: Iterable[str],
) -> BrokerProfile:
    profile = (
        get_profile(configured)
        if configured
        else detect_profile(remote_properties, offered_capabilities)
    )
    log.info(
        "broker adapter %s (%s)%s",
        profile.name,
        profile.title,
        " configured" if configured else " detected",
    )
    return profile


__all__ = ["PROFILES", "BrokerProfile", "choose_profile", "detect_profile", "get_profile"]
