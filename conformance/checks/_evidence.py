"""Evidence that an outcome is the broker's doing, not jmspy's: each helper checks on the
traced wire that jmspy sent what the rule asks for, notes what it sent and what came back,
and returns the deviation; None when jmspy's own frames were wrong or not captured (then the
check fails as usual)."""

from __future__ import annotations

from typing import Any

from ..context import CheckContext
from ..model import Verdict


def expiry_restamped(ctx: CheckContext, received: Any) -> Verdict | None:
    """A deviation when jmspy sent the expired-while-delayed message with the right
    absolute-expiry-time and the broker delivered it anyway with a later expiration (the
    ActiveMQ Classic scheduler stamps a new one when it releases the message); None when
    jmspy's own frame was wrong or not captured."""
    sent = [m for m in ctx.sent_messages() if m is not None]
    wanted = [m for m in sent if ("amqp-value", "expires while delayed") in m.body]
    if len(wanted) != 1:
        return None
    raw = wanted[0]
    stamp = raw.properties.get("creation-time")
    expiry = raw.properties.get("absolute-expiry-time")
    due = raw.annotations.get("x-opt-delivery-time")
    if stamp is None or expiry is None or due is None:
        return None
    if (int(expiry) - int(stamp), int(due) - int(stamp)) != (300, 300):
        return None
    ctx.note(f"jmspy sent: {raw.describe()}")
    ctx.note(
        f"the broker delivered it with JMSExpiration {received.getJMSExpiration()} "
        f"({received.getJMSExpiration() - int(expiry)} ms after the expiry jmspy sent)"
    )
    return ctx.broker_deviation(
        "the broker delivered a message that expired while it was delayed, with its "
        "expiration moved past the release (the scheduler re-stamps the TTL)",
        observed=f"delivered, JMSExpiration {received.getJMSExpiration()}",
        expected=f"expired unseen at absolute-expiry-time {int(expiry)}",
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
