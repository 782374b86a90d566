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

import uuid

from ..context import CheckContext
from ..model import Verdict, deviation
from ..raw import RawMessage
from ._support import LATE_MS, now_ms

#: How long the control message may take: Broker-J's lateness is 8-13 s idle, 20-30 s on a
#: busy machine.
CONTROL_WAIT_MS = 60_000
#: The time limit of the checks that may call :func:`late_release` (its wait and their own).
LATE_RELEASE_LIMIT_S = 120.0


def late_release(ctx: CheckContext, delay_ms: int, missed: str) -> Verdict | None:
    """A deviation naming the broker's release lateness when it exceeds LATE_MS and jmspy
    wrote the delivery time right; None when the broker is on time (the caller's failure
    stands). ``missed`` says what the calling check did not see in time."""
    connection = ctx.traced_connection()
    session = connection.createSession()
    queue = session.createQueue(ctx.name("held"))
    producer = session.createProducer(queue)
    producer.setDeliveryDelay(delay_ms)
    marker = f"control {uuid.uuid4().hex}"
    control = session.createTextMessage(marker)
    producer.send(control)
    due = control.getJMSDeliveryTime()

    def transfer() -> RawMessage | None:
        for message in ctx.sent_messages():
            if message is not None and any(value == marker for _, value in message.body):
                return message
        return None

    # The engine thread writes the trace; give it a moment after the send returned.
    if ctx.wait_for(lambda: transfer() is not None, 5.0):
        written = transfer()
        assert written is not None
        annotation = written.annotations.get("x-opt-delivery-time")
        ctx.expect_equal(annotation, due, "x-opt-delivery-time jmspy wrote (frame trace)")
        how = f"whose x-opt-delivery-time jmspy wrote as {due} (frame trace)"
    else:
        ctx.note("the frame trace did not capture the control message's transfer")
        how = f"with JMSDeliveryTime {due}"
    connection.start()
    received = session.createConsumer(queue).receive(CONTROL_WAIT_MS)
    arrived = now_ms()
    if received is None:
        ctx.note(
            f"a control message sent with x-opt-delivery-time {due} (delay {delay_ms} ms) did "
            f"not arrive within {CONTROL_WAIT_MS} ms either"
        )
        return None
    lateness = arrived - due
    ctx.note(
        f"control message: jmspy wrote x-opt-delivery-time {due} (send time + {delay_ms} ms); "
        f"the broker released it {lateness} ms after that"
    )
    if lateness < LATE_MS:
        return None
    return deviation(
        f"the broker releases held messages late: {missed}; a control message with the same "
        f"delay, {how}, came {lateness} ms after it fell due",
        observed=f"held message released {lateness} ms after JMSDeliveryTime",
        expected=f"released at JMSDeliveryTime (< {LATE_MS} ms late)",
    )
