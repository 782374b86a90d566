"""Telling a broker that releases held (delayed) messages late from a client that sent them
wrong.

Some brokers honour ``x-opt-delivery-time`` but release a held message long after it falls
due (Qpid Broker-J 9.2.1: 8-13 s, its housekeeping period), so a delay check that waits a few
seconds sees nothing, or sees it late, and a message whose time to live is shorter than the
delay plus that lateness expires unseen. :func:`late_release` measures the broker itself with a
control message whose annotation is read back from jmspy's own frame trace: when jmspy wrote the
right delivery time and the broker released the message late, the check's miss is the broker's
(a deviation with that evidence); otherwise the check's failure stands.
"""

from __future__ import annotations

import time
import uuid

from ..context import CheckContext
from ..model import Verdict, deviation
from ._support import LATE_MS, now_ms

#: Control messages, and the time between their sends.
CONTROLS = 3
CONTROL_SPACING_S = 1.0
#: How long the control messages may take: Broker-J's lateness is 8-13 s idle, 20-30 s on a
#: busy machine.
CONTROL_WAIT_MS = 60_000
#: The time limit of the checks that may call :func:`late_release` (its wait and their own).
LATE_RELEASE_LIMIT_S = 120.0


def late_release(ctx: CheckContext, delay_ms: int, missed: str) -> Verdict | None:
    """A deviation naming the broker's release lateness when it exceeds LATE_MS and jmspy
    wrote the delivery times right; None when the broker is on time (the caller's failure
    stands). ``missed`` says what the calling check did not see in time.

    Three control messages are sent a second apart: a broker that releases held messages at a
    periodic check is late by a different amount for each, and the largest is reported."""
    connection = ctx.traced_connection()
    session = connection.createSession()
    queue = session.createQueue(ctx.name("held"))
    producer = session.createProducer(queue)
    producer.setDeliveryDelay(delay_ms)
    due: dict[str, int] = {}
    for n in range(CONTROLS):
        if n:
            time.sleep(CONTROL_SPACING_S)  # spreads the controls over the broker's period
        marker = f"control {n} {uuid.uuid4().hex}"
        control = session.createTextMessage(marker)
        producer.send(control)
        due[marker] = control.getJMSDeliveryTime()

    def written() -> dict[str, object]:
        found: dict[str, object] = {}
        for message in ctx.sent_messages():
            for _, value in message.body if message is not None else ():
                if isinstance(value, str) and value in due and message is not None:
                    found[str(value)] = message.annotations.get("x-opt-delivery-time")
        return found

    # The engine thread writes the trace; give it a moment after the sends returned.
    if ctx.wait_for(lambda: len(written()) == len(due), 5.0):
        ctx.expect_equal(written(), due, "x-opt-delivery-time jmspy wrote (frame trace)")
        how = "whose x-opt-delivery-time jmspy wrote right (frame trace)"
    else:
        ctx.note("the frame trace did not capture every control message's transfer")
        how = "with their JMSDeliveryTime set"
    connection.start()
    consumer = session.createConsumer(queue)
    lateness: dict[str, int] = {}
    deadline = time.monotonic() + CONTROL_WAIT_MS / 1000
    while len(lateness) < len(due) and time.monotonic() < deadline:
        received = consumer.receive(1000)
        if received is not None and received.getText() in due:
            lateness[received.getText()] = now_ms() - due[received.getText()]
    ctx.note(
        f"{len(due)} control messages (delay {delay_ms} ms, sent {CONTROL_SPACING_S:g} s apart) "
        f"released {sorted(lateness.values())} ms after they fell due"
    )
    if len(lateness) < len(due) or max(lateness.values()) < LATE_MS:
        return None
    worst = max(lateness.values())
    return deviation(
        f"the broker releases held messages late: {missed}; control messages with the same "
        f"delay, {how}, came up to {worst} ms after they fell due",
        observed=f"held messages released {sorted(lateness.values())} ms after JMSDeliveryTime",
        expected=f"released at JMSDeliveryTime (< {LATE_MS} ms late)",
    )
