"""JMS-66: selector arithmetic, evaluated by the broker's filter and by jmspy's own evaluator.

The JMS specification makes selector arithmetic Java's (numeric promotion: an int divided by an
int is an integer division), and jmspy's client-side evaluator (jmspy.selector) does exactly
that. It runs where the broker cannot filter (the adapter says so: RabbitMQ topic subscribers);
everywhere else the selector is sent as the link's source filter and the broker's own filter
decides. A broker whose filter computes otherwise (Artemis divides in floating point) is a
deviation of the broker, recorded with what each evaluator selected.
"""

from __future__ import annotations

from typing import Any

from jmspy.selector import parse_selector

from ..context import CheckContext
from ..model import Verdict, deviation, passed
from ..registry import check, fallback
from ._support import drain

#: n = 7..12 with the selector "n / 4 = 2": Java's int division selects 8, 9, 10 and 11;
#: floating-point division selects 8 only.
VALUES = (7, 8, 9, 10, 11, 12)
INTEGER_DIVISION = "n / 4 = 2"
#: A double operand promotes the division to floating point in Java too: 8 only.
FLOAT_DIVISION = "n / 4.0 = 2"


def _client_side(ctx: CheckContext, session: Any) -> list[int]:
    """What jmspy's own evaluator selects; wrong results are jmspy's failure."""
    selected: dict[str, list[int]] = {}
    for text in (INTEGER_DIVISION, FLOAT_DIVISION):
        selector = parse_selector(text)
        assert selector is not None
        chosen = []
        for n in VALUES:
            message = session.createTextMessage(str(n))
            message.setIntProperty("n", n)
            if selector.matches(message):
                chosen.append(n)
        selected[text] = chosen
    ctx.expect_equal(
        selected[INTEGER_DIVISION], [8, 9, 10, 11], f"jmspy's evaluator: {INTEGER_DIVISION!r}"
    )
    ctx.expect_equal(selected[FLOAT_DIVISION], [8], f"jmspy's evaluator: {FLOAT_DIVISION!r}")
    ctx.note(f"jmspy's client-side evaluator selects {selected}")
    return selected[INTEGER_DIVISION]


@check("JMS-66")
def jms66(ctx: CheckContext) -> Verdict:
    connection = ctx.connection()
    session = connection.createSession()
    spec = _client_side(ctx, session)
    queue = session.createQueue(ctx.name())
    producer = session.createProducer(queue)
    for n in VALUES:
        message = session.createTextMessage(str(n))
        message.setIntProperty("n", n)
        producer.send(message)
    connection.start()
    consumer = session.createConsumer(queue, INTEGER_DIVISION)
    by_broker = sorted(int(m.getText()) for m in drain(consumer, 1000))
    ctx.note(f"the broker's filter (source filter {INTEGER_DIVISION!r}) selected {by_broker}")
    if by_broker == spec:
        return passed(f"{INTEGER_DIVISION!r} selected {spec} on the broker and in jmspy")
    return deviation(
        f"the broker's filter computes {INTEGER_DIVISION!r} differently from the JMS rules "
        f"(jmspy's client-side evaluator selects {spec}); on this broker the broker's result "
        "applies to every consumer with a selector",
        observed=f"broker selected n in {by_broker}",
        expected=f"n in {spec} (int / int is an integer division, JMS 2.0 section 3.8.1.1)",
    )


@fallback("JMS-66", "jmspy's client-side evaluator divides ints as Java does")
def jms66_client_only(ctx: CheckContext) -> Verdict:
    session = ctx.connection().createSession()
    spec = _client_side(ctx, session)
    return passed(f"jmspy's evaluator selects {spec} for {INTEGER_DIVISION!r}")
