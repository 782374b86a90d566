"""Evidence that an outcome is the broker's doing, not jmspy's: each helper checks on the
traced wire that jmspy sent what the rule asks for, notes what it sent and what came back,
and returns the deviation; None when jmspy's own frames were wrong or not captured (then the
check fails as usual)."""

from __future__ import annotations

from typing import Any

from ..context import CheckContext
from ..model import Verdict


def expiry_restamped(
    ctx: CheckContext,
    received: Any,
    text: str = "expires while delayed",
    delay_ms: int = 300,
    ttl_ms: int = 300,
) -> Verdict | None:
    """A deviation when jmspy sent the delayed message ``text`` with the right
    absolute-expiry-time (send time + ``ttl_ms``, delivery time send time + ``delay_ms``) and
    the broker delivered it with a later expiration: the ActiveMQ Classic scheduler stamps a
    new one (release time + TTL) when it releases a delayed message, which also delivers one
    that expired while it was delayed. None when jmspy's own frame was wrong or not
    captured."""
    sent = [m for m in ctx.sent_messages() if m is not None]
    wanted = [m for m in sent if ("amqp-value", text) in m.body]
    if len(wanted) != 1:
        return None
    raw = wanted[0]
    stamp = raw.properties.get("creation-time")
    expiry = raw.properties.get("absolute-expiry-time")
    due = raw.annotations.get("x-opt-delivery-time")
    if stamp is None or expiry is None or due is None:
        return None
    if (int(expiry) - int(stamp), int(due) - int(stamp)) != (ttl_ms, delay_ms):
        return None
    if received.getJMSExpiration() <= int(expiry):
        return None  # not moved later: something else is wrong
    ctx.note(f"jmspy sent: {raw.describe()}")
    ctx.note(
        f"the broker delivered it with JMSExpiration {received.getJMSExpiration()} "
        f"({received.getJMSExpiration() - int(expiry)} ms after the expiry jmspy sent)"
    )
    if ttl_ms <= delay_ms:
        what = "a message that expired while it was delayed, with its expiration moved"
        expected = f"expired unseen at absolute-expiry-time {int(expiry)}"
    else:
        what = "a delayed message with its expiration moved"
        expected = f"JMSExpiration {int(expiry)} (absolute-expiry-time as sent)"
    return ctx.broker_deviation(
        f"the broker delivered {what} past the release (the scheduler re-stamps the TTL)",
        observed=f"delivered, JMSExpiration {received.getJMSExpiration()}",
        expected=expected,
    )


def sent_priorities(ctx: CheckContext, order: list[int]) -> bool:
    """Whether the first messages jmspy sent carried ``order`` as their header priorities."""
    sent = [m for m in ctx.sent_messages() if m is not None][: len(order)]
    return [int((m.header or {}).get("priority", 4)) for m in sent] == order


def uncounted_failures(ctx: CheckContext, attempts: int) -> Verdict | None:
    """A deviation when jmspy settled each failed attempt modified(delivery-failed=true) with
    the link's credit stopped first, yet the broker delivered the message again uncounted
    (ActiveMQ Classic forgets the count when the consumer goes away); None otherwise."""
    failed = ctx.frames_sent("@modified(39) [delivery-failed=true")
    drains = ctx.frames_sent("drain=true")
    if len(failed) < attempts:
        return None
    for line in drains[-attempts:] + failed[-attempts:]:
        ctx.note(f"jmspy sent: {line.split('FRAME: ')[-1][:200]}")
    return ctx.broker_deviation(
        f"jmspy settled {attempts} failed attempt(s) modified(delivery-failed=true) after "
        "stopping the link's credit, and the broker delivered the message again without "
        "counting them",
        observed="next delivery: JMSRedelivered false, JMSXDeliveryCount 1 (no "
        "header.delivery-count)",
        expected=f"JMSRedelivered true, JMSXDeliveryCount {attempts + 1}",
    )
