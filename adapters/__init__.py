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


#: Open-frame properties by which a broker announces its address prefixes (ActiveMQ Classic
#: sends ``queue://`` and ``topic://``); Qpid JMS applies them the same way.
QUEUE_PREFIX_PROPERTY = "queue-prefix"
TOPIC_PREFIX_PROPERTY = "topic-prefix"


def with_announced_prefixes(
    profile: BrokerProfile, remote_properties: Mapping[str, Any]
) -> BrokerProfile:
    """``profile`` with the address prefixes the broker announced in its open frame.

    The broker's word wins over the profile's (which stays the fallback for brokers that say
    nothing): the prefixes go in front of link addresses, ``to`` and ``reply-to``, and are
    stripped from the ``to`` / ``reply-to`` of received messages.
    """
    update: dict[str, str] = {}
    for key, field in (
        (QUEUE_PREFIX_PROPERTY, "queue_prefix"),
        (TOPIC_PREFIX_PROPERTY, "topic_prefix"),
    ):
        value = remote_properties.get(key)
        if isinstance(value, str) and value != getattr(profile, field):
            update[field] = value
    return profile.model_copy(update=update) if update else profile


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
    profile = with_announced_prefixes(profile, remote_properties)
    log.info(
        "broker adapter %s (%s)%s",
        profile.name,
        profile.title,
        " configured" if configured else " detected",
    )
    return profile


__all__ = [
    "PROFILES",
    "BrokerProfile",
    "choose_profile",
    "detect_profile",
    "get_profile",
    "with_announced_prefixes",
]
