"""DD-1..DD-16: delivery delay, time to live and priority (jmspy.rules)."""

from __future__ import annotations

from functools import partial
from typing import Any

import jmspy
from jmspy import DeliveryMode

from ..context import CheckContext
from ..model import Verdict, not_applicable, passed
from ..registry import capability_fallback, check
from ..settings import NO_AUTO_CREATE_PREFIX
from ._evidence import expiry_restamped, sent_priorities
from ._held import LATE_RELEASE_LIMIT_S, late_release
from ._support import EARLY_MS, LATE_MS, drain, now_ms, wait_buffered

DELAY_REFUSED = "a delay is refused before the wire with MQRC_FUNCTION_NOT_SUPPORTED (DD-1)"


def _refuses_delay(ctx: CheckContext) -> None:
    """The broker has no delayed delivery: DD-1 must refuse a delay at the setter of a fixed
    producer and at the send of an anonymous one, and nothing may reach the queue."""
    connection = ctx.connection()
    session = connection.createSession()
    queue = session.createQueue(ctx.name())
    producer = session.createProducer(queue)
    ctx.expect_raises(
        jmspy.JMSException,
        lambda: producer.setDeliveryDelay(1000),
        "setDeliveryDelay(1000) on a fixed producer",
        rule_id="DD-1",
        error_code="MQRC_FUNCTION_NOT_SUPPORTED",
    )
    anonymous = session.createProducer(None)
    anonymous.setDeliveryDelay(1000)  # an anonymous producer's link is not known yet
    ctx.expect_raises(
        jmspy.JMSException,
        lambda: anonymous.send(queue, session.createTextMessage("never")),
        "send with delay 1000 on an anonymous producer",
        rule_id="DD-1",
        error_code="MQRC_FUNCTION_NOT_SUPPORTED",
    )
    producer.setDeliveryDelay(0)  # delay 0 is always allowed
    producer.send(session.createTextMessage("no delay"))
    connection.start()
    got = [m.getText() for m in drain(session.createConsumer(queue), 500)]
    ctx.expect_equal(got, ["no delay"], "messages on the queue")


@capability_fallback("DELAYED_DELIVERY", DELAY_REFUSED)
def _without_delayed_delivery(ctx: CheckContext) -> Verdict:
    _refuses_delay(ctx)
    return passed("DD-1 refused the delay with MQRC_FUNCTION_NOT_SUPPORTED before the wire")


def _delay_scenario_impossible(ctx: CheckContext) -> Verdict | None:
    """For rules whose scenario needs a delay on the wire: N/A with the DD-1 fallback verified
    when the broker has no delayed delivery, else None (run the scenario)."""
    if ctx.has("DELAYED_DELIVERY"):
        return None
    _refuses_delay(ctx)
    return not_applicable(
        f"broker offers no DELAYED_DELIVERY ({ctx.capabilities.missing['DELAYED_DELIVERY']}): "
        "rule DD-1 refuses the delay first with MQRC_FUNCTION_NOT_SUPPORTED, which passed",
        missing=("DELAYED_DELIVERY",),
        fallback=DELAY_REFUSED,
    )


@check("DD-1")
def dd1(ctx: CheckContext) -> Verdict:
    if not ctx.has("DELAYED_DELIVERY"):
        _refuses_delay(ctx)
        return passed(
            "the broker has no delayed delivery and the delay was refused with "
            "MQRC_FUNCTION_NOT_SUPPORTED at setDeliveryDelay; delay 0 was sent"
        )
    # The broker delays: a delay must be accepted ...
    connection = ctx.connection()
    session = connection.createSession()
    queue = session.createQueue(ctx.name())
    producer = session.createProducer(queue)
    producer.setDeliveryDelay(300)
    producer.send(session.createTextMessage("delayed"))
    ctx.note("delay 300 ms accepted and sent: the broker offers DELAYED_DELIVERY")
    # ... and refused where the adapter rules delays out (IBM MQ's profile on this broker).
    refusing = ctx.connection(adapter="ibmmq")
    rsession = refusing.createSession()
    rqueue = rsession.createQueue(ctx.name())
    fixed = rsession.createProducer(rqueue)
    ctx.expect_raises(
        jmspy.JMSException,
        lambda: fixed.setDeliveryDelay(1000),
        "adapter ibmmq: setDeliveryDelay(1000) on a fixed producer",
        rule_id="DD-1",
        error_code="MQRC_FUNCTION_NOT_SUPPORTED",
    )
    anonymous = rsession.createProducer(None)
    anonymous.setDeliveryDelay(1000)
    ctx.expect_raises(
        jmspy.JMSException,
        lambda: anonymous.send(rqueue, rsession.createTextMessage("never")),
        "adapter ibmmq: send with delay 1000 on an anonymous producer",
        rule_id="DD-1",
        error_code="MQRC_FUNCTION_NOT_SUPPORTED",
    )
    refusing.start()
    leaked = drain(rsession.createConsumer(rqueue), 300)
    ctx.expect_equal(len(leaked), 0, "messages that reached the broker after the refusals")
    return passed(
        "delay accepted where supported; refused with MQRC_FUNCTION_NOT_SUPPORTED where not"
    )


@check("DD-2")
def dd2(ctx: CheckContext) -> Verdict:
    connection = ctx.connection()
    session = connection.createSession()
    queue = session.createQueue(ctx.name())
    # Setter order 1: delay first, then a shorter ttl (an anonymous producer checks DD-1 at send,
    # so the pair is observable on every broker).
    producer = session.createProducer(None)
    producer.setDeliveryDelay(2000)
    ctx.expect_raises(
        jmspy.JMSException,
        lambda: producer.setTimeToLive(1000),
        "setTimeToLive(1000) after setDeliveryDelay(2000)",
        rule_id="DD-2",
        error_code="MQRC_EXPIRY_ERROR",
    )
    ctx.expect_equal(producer.getTimeToLive(), 0, "time to live after the refused setter")
    # Setter order 2: ttl first, then a longer delay.
    other = session.createProducer(None)
    other.setTimeToLive(1000)
    ctx.expect_raises(
        jmspy.JMSException,
        lambda: other.setDeliveryDelay(2000),
        "setDeliveryDelay(2000) after setTimeToLive(1000)",
        rule_id="DD-2",
        error_code="MQRC_EXPIRY_ERROR",
    )
    # ttl 0 never conflicts.
    other.setTimeToLive(0)
    other.setDeliveryDelay(2000)
    if not ctx.has("DELAYED_DELIVERY"):
        ctx.note(
            "JMSProducer and send-time parts not run: without DELAYED_DELIVERY DD-1 refuses "
            "any delay there first"
        )
        return passed("the conflicting ttl/delay pair was refused at whichever setter completed it")
    # The simplified API raises the runtime twin with the same code.
    context = ctx.context()
    ctx.expect_raises(
        jmspy.JMSRuntimeException,
        lambda: context.createProducer().setDeliveryDelay(2000).setTimeToLive(1000),
        "JMSProducer.setTimeToLive(1000) after setDeliveryDelay(2000)",
        rule_id="DD-2",
        error_code="MQRC_EXPIRY_ERROR",
    )
    # At send: the per-send ttl completes the pair.
    fixed = session.createProducer(queue)
    fixed.setDeliveryDelay(5000)
    ctx.expect_raises(
        jmspy.JMSException,
        lambda: fixed.send(session.createTextMessage("x"), DeliveryMode.PERSISTENT, 4, 10),
        "send(ttl=10) with delivery delay 5000",
        rule_id="DD-2",
        error_code="MQRC_EXPIRY_ERROR",
    )
    connection.start()
    leaked = drain(session.createConsumer(queue), 300)
    ctx.expect_equal(len(leaked), 0, "messages that reached the broker")
    return passed("refused at setTimeToLive, setDeliveryDelay and send; nothing reached the broker")


def _refused_send(
    ctx: CheckContext,
    rule_id: str,
    error_code: str,
    make_destination: Any,
    make_message: Any,
    what: str,
    allowed: list[tuple[Any, Any, str]] | None = None,
    persistent: bool = True,
) -> Verdict:
    """Send ``make_message`` with a delay to ``make_destination``: refused with the rule;
    the ``allowed`` variants are sent fine."""
    impossible = _delay_scenario_impossible(ctx)
    if impossible is not None:
        return impossible
    connection = ctx.connection()
    session = connection.createSession()
    destination = make_destination(session)
    producer = session.createProducer(None)
    producer.setDeliveryDelay(400)
    mode = DeliveryMode.PERSISTENT if persistent else DeliveryMode.NON_PERSISTENT
    producer.setDeliveryMode(mode)
    ctx.expect_raises(
        jmspy.JMSException,
        lambda: producer.send(destination, make_message(session)),
        what,
        rule_id=rule_id,
        error_code=error_code,
    )
    for make_ok_destination, make_ok_message, ok_what in allowed or []:
        producer.send(make_ok_destination(session), make_ok_message(session))
        ctx.note(f"allowed: {ok_what}")
    return passed(f"refused with {error_code}; the allowed variants were sent")


@check("DD-3")
def dd3(ctx: CheckContext) -> Verdict:
    name = ctx.name()

    def retained(session: Any, value: int = 1) -> Any:
        message = session.createTextMessage("retained")
        message.setIntProperty(jmspy.JMS_IBM_RETAIN, value)
        return message

    return _refused_send(
        ctx,
        "DD-3",
        "MQRC_OPTIONS_ERROR",
        lambda s: s.createQueue(name),
        retained,
        "delayed send of a message with JMS_IBM_Retain=1",
        [(lambda s: s.createQueue(name), lambda s: retained(s, 0), "JMS_IBM_Retain=0 with delay")],
    )


@check("DD-4")
def dd4(ctx: CheckContext) -> Verdict:
    name = ctx.name()

    def grouped(session: Any) -> Any:
        message = session.createTextMessage("grouped")
        message.setStringProperty("JMSXGroupID", "g1")
        return message

    verdict = _refused_send(
        ctx,
        "DD-4",
        "MQRC_OPTIONS_ERROR",
        lambda s: s.createQueue(name),
        grouped,
        "delayed send of a message with JMSXGroupID",
    )
    if ctx.has("DELAYED_DELIVERY"):

        def sequenced(session: Any) -> Any:
            message = session.createTextMessage("sequenced")
            message.setIntProperty("JMSXGroupSeq", 2)
            return message

        _refused_send(
            ctx,
            "DD-4",
            "MQRC_OPTIONS_ERROR",
            lambda s: s.createQueue(name),
            sequenced,
            "delayed send of a message with JMSXGroupSeq only",
        )
    return verdict


@check("DD-5")
def dd5(ctx: CheckContext) -> Verdict:
    name = ctx.name()
    return _refused_send(
        ctx,
        "DD-5",
        "MQRC_OPTIONS_ERROR",
        lambda s: s.createQueue(name, cluster_bind="on_open"),
        lambda s: s.createTextMessage("bound"),
        "delayed send to a destination with cluster_bind='on_open'",
        [
            (
                lambda s: s.createQueue(name, cluster_bind="not_fixed"),
                lambda s: s.createTextMessage("free"),
                "cluster_bind='not_fixed' with delay",
            )
        ],
    )


@check("DD-6")
def dd6(ctx: CheckContext) -> Verdict:
    name = ctx.name("t")
    verdict = _refused_send(
        ctx,
        "DD-6",
        "MQRC_PUBLICATION_FAILURE",
        lambda s: s.createTopic(name, persistent_delivery="all_durable"),
        lambda s: s.createTextMessage("publication"),
        "delayed persistent publication to a topic delivering all_durable",
        [
            (
                lambda s: s.createTopic(name, persistent_delivery="all_available"),
                lambda s: s.createTextMessage("ok"),
                "persistent_delivery='all_available' with delay",
            )
        ],
    )
    if verdict.outcome.value == "passed":
        _refused_send(
            ctx,
            "DD-6",
            "MQRC_PUBLICATION_FAILURE",
            lambda s: s.createTopic(name, non_persistent_delivery="all"),
            lambda s: s.createTextMessage("publication"),
            "delayed non-persistent publication to a topic delivering 'all'",
            persistent=False,
        )
    return verdict


@check("DD-7", time_limit=LATE_RELEASE_LIMIT_S)
def dd7(ctx: CheckContext) -> Verdict:
    connection = ctx.traced_connection()
    session = connection.createSession()
    queue = session.createQueue(ctx.name())
    producer = session.createProducer(queue)
    producer.setDeliveryDelay(600)
    producer.setTimeToLive(5000)
    kept = session.createTextMessage("kept")
    producer.send(kept)
    stamp = kept.getJMSTimestamp()
    ctx.expect_equal(kept.getJMSDeliveryTime() - stamp, 600, "JMSDeliveryTime - JMSTimestamp")
    ctx.expect_equal(kept.getJMSExpiration() - stamp, 5000, "JMSExpiration - JMSTimestamp")
    # Due and expired at the same instant: never delivered.
    producer.setDeliveryDelay(300)
    producer.setTimeToLive(300)
    producer.send(session.createTextMessage("expires while delayed"))
    connection.start()
    consumer = session.createConsumer(queue)
    received = consumer.receive(5000)
    arrived = now_ms()
    due = kept.getJMSDeliveryTime()
    if received is None or arrived - due >= LATE_MS:
        seen = "nothing within 5 s" if received is None else f"arrived {arrived - due} ms late"
        late = late_release(ctx, 600, f"the kept message (delay 600 ms, ttl 5000 ms): {seen}")
        if late is not None:
            return late
    ctx.expect(received is not None, "nothing within 5 s", "the delayed message", "receive")
    assert received is not None
    if received.getText() != "kept":
        restamped = expiry_restamped(ctx, received)
        if restamped is not None:
            return restamped
    ctx.expect_equal(received.getText(), "kept", "first message received")
    ctx.expect(
        arrived >= due - EARLY_MS, f"arrived {due - arrived} ms early", "not before JMSDeliveryTime"
    )
    ctx.expect(arrived - due < LATE_MS, f"{arrived - due} ms late", f"< {LATE_MS} ms late")
    ctx.expect_equal(received.getJMSDeliveryTime(), due, "received JMSDeliveryTime")
    if received.getJMSExpiration() != kept.getJMSExpiration():
        # The same scheduler behaviour seen on the kept message (whichever comes first).
        restamped = expiry_restamped(ctx, received, "kept", delay_ms=600, ttl_ms=5000)
        if restamped is not None:
            return restamped
    ctx.expect_equal(received.getJMSExpiration(), kept.getJMSExpiration(), "received JMSExpiration")
    rest = [m.getText() for m in drain(consumer, 400)]
    ctx.expect_equal(rest, [], "messages after the kept one (the expired one must not come)")
    ctx.note(f"delivered {arrived - due} ms after JMSDeliveryTime")
    return passed(
        "JMSExpiration and JMSDeliveryTime count from the send; expired-while-delayed "
        "never delivered"
    )


@check("DD-8", time_limit=LATE_RELEASE_LIMIT_S)
def dd8(ctx: CheckContext) -> Verdict:
    connection = ctx.traced_connection()
    tx = connection.createSession(jmspy.SESSION_TRANSACTED)
    queue = tx.createQueue(ctx.name())
    producer = tx.createProducer(queue)
    producer.setDeliveryDelay(1000)
    message = tx.createTextMessage("delayed in a transaction")
    producer.send(message)
    due = message.getJMSDeliveryTime()
    ctx.expect_equal(due - message.getJMSTimestamp(), 1000, "JMSDeliveryTime - JMSTimestamp")
    observer = connection.createSession()
    connection.start()
    consumer = observer.createConsumer(queue)
    early = consumer.receive(700)
    ctx.expect(early is None, "visible before the commit", "invisible until the commit")
    tx.commit()
    committed = now_ms()
    received = consumer.receive(5000)
    arrived = now_ms()
    if received is None or arrived >= committed + 1000 - 100:
        seen = "nothing" if received is None else f"arrived {arrived - committed} ms"
        late = late_release(
            ctx,
            1000,
            f"{seen} after the commit (with releases that late, whether the delay counts from "
            "the send or the commit cannot be told)",
        )
        if late is not None:
            return late
    ctx.expect(received is not None, "nothing within 5 s of the commit", "the message")
    ctx.expect(
        arrived >= due - EARLY_MS,
        f"arrived {due - arrived} ms before JMSDeliveryTime",
        "not before JMSDeliveryTime (send time + delay)",
    )
    # Counting from the commit would put it at commit + 1000 ms.
    if arrived >= committed + 1000 - 100:
        sent = [m for m in ctx.sent_messages() if m is not None]
        annotated = [m.annotations.get("x-opt-delivery-time") for m in sent]
        # The coordinator's declare and discharge are transfers too: no annotation there. The
        # trace may hold other transfers of the connection; the evidence is that the one jmspy
        # sent for this message carried send time + delay.
        if due in annotated:
            ctx.note(f"jmspy sent x-opt-delivery-time {due} (send time + 1000 ms), then the commit")
            ctx.note(f"committed {committed - due + 1000} ms after the send")
            return ctx.broker_deviation(
                "the broker counts a transacted message's delivery delay from the commit, not "
                "from the x-opt-delivery-time jmspy sent",
                observed=f"arrived {arrived - committed} ms after the commit "
                f"({arrived - due} ms after x-opt-delivery-time)",
                expected="at x-opt-delivery-time (send time + delay), well before commit + delay",
            )
    ctx.expect(
        arrived < committed + 1000 - 100,
        f"arrived {arrived - committed} ms after the commit",
        "at send time + delay, well before commit + delay",
    )
    ctx.note(
        f"committed {committed - message.getJMSTimestamp()} ms after send; "
        f"delivered {arrived - due} ms after JMSDeliveryTime"
    )
    return passed("invisible before commit; delivered at send time + delay")


@check("DD-9")
def dd9(ctx: CheckContext) -> Verdict:
    if not ctx.has("refused-destination"):
        return not_applicable(
            "no destination this broker is known to refuse: "
            + ctx.capabilities.missing.get("refused-destination", "not probed"),
            missing=("refused-destination",),
        )
    impossible = _delay_scenario_impossible(ctx)
    if impossible is not None:
        return impossible
    connection = ctx.connection()
    session = connection.createSession()
    name = ctx.name(prefix=NO_AUTO_CREATE_PREFIX)
    producer = session.createProducer(None)
    producer.setDeliveryDelay(500)
    with ctx.timed() as elapsed:
        error = ctx.expect_raises(
            jmspy.JMSException,
            lambda: producer.send(session.createQueue(name), session.createTextMessage("x")),
            f"delayed send to the missing destination {name}",
        )
    ctx.expect(
        name in str(error),
        f"the message does not name the destination: {error}",
        f"a message naming {name}",
        "exception text",
    )
    ctx.expect(
        "not" in str(error).lower() or "exist" in str(error).lower(),
        f"no reason given: {error}",
        "the broker's reason (not found)",
        "exception text",
    )
    ctx.expect(elapsed() < 5.0, f"{elapsed():.1f} s", "a prompt failure, no retries", "send time")
    connection.start()
    return passed("refused send raised a JMSException naming the destination and the reason")


@check("DD-10", time_limit=LATE_RELEASE_LIMIT_S)
def dd10(ctx: CheckContext) -> Verdict:
    impossible = _delay_scenario_impossible(ctx)
    if impossible is not None:
        return impossible
    connection = ctx.connection()
    session = connection.createSession()
    name = ctx.name()
    queue = session.createQueue(name, default_delivery_delay=700)
    producer = session.createProducer(queue)
    by_default = session.createTextMessage("queue default")
    producer.send(by_default)
    ctx.expect_equal(
        by_default.getJMSDeliveryTime() - by_default.getJMSTimestamp(),
        700,
        "JMSDeliveryTime - JMSTimestamp with the queue's default",
    )
    producer.setDeliveryDelay(300)
    own = session.createTextMessage("own delay")
    producer.send(own)
    ctx.expect_equal(
        own.getJMSDeliveryTime() - own.getJMSTimestamp(), 300, "producer delay overrides"
    )
    connection.start()
    consumer = session.createConsumer(session.createQueue(name))
    arrivals: dict[str, int] = {}
    for _ in range(2):
        received = consumer.receive(5000)
        if received is None:
            late = late_release(ctx, 700, f"{len(arrivals)} of the 2 delayed messages within 5 s")
            if late is not None:
                return late
        ctx.expect(received is not None, "nothing within 5 s", "both delayed messages")
        assert received is not None
        arrivals[received.getText()] = now_ms()
    for message in (by_default, own):
        due = message.getJMSDeliveryTime()
        arrived = arrivals[message.getText()]
        ctx.expect(
            arrived >= due - EARLY_MS,
            f"{message.getText()!r} arrived {due - arrived} ms early",
            "not before its JMSDeliveryTime",
        )
    ctx.expect_equal(list(arrivals), ["own delay", "queue default"], "arrival order")
    return passed("the queue's default delay applied; the producer's own delay overrode it")


@check("DD-11")
def dd11(ctx: CheckContext) -> Verdict:
    connection = ctx.connection(**{"jmspy.maxDeliveryDelay": 1000})
    session = connection.createSession()
    producer = session.createProducer(None)
    ctx.expect_raises(
        jmspy.JMSException,
        lambda: producer.setDeliveryDelay(1500),
        "setDeliveryDelay(1500) with jmspy.maxDeliveryDelay=1000",
        rule_id="DD-11",
        error_code="MQRC_OPTIONS_ERROR",
    )
    producer.setDeliveryDelay(800)
    capped = session.createQueue(ctx.name(), max_delivery_delay=500)
    ctx.expect_raises(
        jmspy.JMSException,
        lambda: producer.send(capped, session.createTextMessage("x")),
        "send with delay 800 to a destination with max_delivery_delay=500",
        rule_id="DD-11",
        error_code="MQRC_OPTIONS_ERROR",
    )
    ctx.expect_equal(producer.getDeliveryDelay(), 800, "delay within the factory maximum kept")
    return passed("delays above the factory's and the destination's maximum were refused")


@check("DD-12")
def dd12(ctx: CheckContext) -> Verdict:
    impossible = _delay_scenario_impossible(ctx)
    if impossible is not None:
        return impossible
    connection = ctx.connection()
    session = connection.createSession()
    queue = session.createQueue(ctx.name(), default_delivery_delay=2000)
    producer = session.createProducer(queue)
    producer.setTimeToLive(1000)  # fine so far: the producer itself has no delay
    ctx.expect_raises(
        jmspy.JMSException,
        lambda: producer.send(session.createTextMessage("would expire unclaimed")),
        "send with ttl 1000 to a queue with default delay 2000",
        rule_id="DD-2",
        error_code="MQRC_EXPIRY_ERROR",
    )
    connection.start()
    leaked = drain(session.createConsumer(session.createQueue(queue.name)), 300)
    ctx.expect_equal(len(leaked), 0, "messages that reached the broker")
    return passed("ttl shorter than the queue's default delay refused at send (DD-2's error)")


@check("DD-13")
def dd13(ctx: CheckContext) -> Verdict:
    connection = ctx.connection()
    session = connection.createSession()
    queue = session.createQueue(ctx.name())
    producer = session.createProducer(queue)
    if ctx.has("DELAYED_DELIVERY"):
        producer.setDeliveryDelay(500)
    producer.setDeliveryDelay(0)
    message = session.createTextMessage("no delay")
    producer.send(message)
    ctx.expect_equal(
        message.getJMSDeliveryTime(), message.getJMSTimestamp(), "JMSDeliveryTime with delay 0"
    )
    raw = ctx.raw().receive(ctx.address(queue), 5.0)
    ctx.expect(raw is not None, "nothing arrived", "the message, at once", "raw receive")
    assert raw is not None
    ctx.note(raw.describe())
    ctx.expect(
        "x-opt-delivery-time" not in raw.annotations,
        raw.annotations,
        "no x-opt-delivery-time annotation",
        "message-annotations",
    )
    return passed("delay 0 (after a non-zero delay was reset) adds no delivery-time annotation")


@check("DD-14")
def dd14(ctx: CheckContext) -> Verdict:
    connection = ctx.connection()
    session = connection.createSession()
    queue = session.createQueue(ctx.name())
    producer = session.createProducer(queue)
    for bad in (10, -1, True, "5"):
        ctx.expect_raises(
            jmspy.JMSException,
            partial(producer.setPriority, bad),
            f"setPriority({bad!r})",
            rule_id="DD-14",
            contains=repr(bad),
        )
    ctx.expect_raises(
        jmspy.JMSException,
        lambda: producer.send(session.createTextMessage("x"), DeliveryMode.PERSISTENT, 10, 0),
        "send(priority=10)",
        rule_id="DD-14",
    )
    raw = ctx.raw()
    seen = {}
    for priority in (0, 9):
        producer.send(
            session.createTextMessage(str(priority)), DeliveryMode.PERSISTENT, priority, 0
        )
        received = raw.receive(ctx.address(queue), 5.0)
        ctx.expect(received is not None, "nothing arrived", f"the priority {priority} message")
        assert received is not None
        seen[priority] = (received.header or {}).get("priority")
    ctx.expect_equal(seen, {0: 0, 9: 9}, "header.priority on the wire")
    return passed("priorities outside 0..9 refused at the setter and at send; 0 and 9 on the wire")


@check("DD-15")
def dd15(ctx: CheckContext) -> Verdict:
    order = [2, 7, 4, 9, 0, 7]
    results: dict[str, list[int]] = {}
    arrival: list[int] = []
    for sequence in ("fifo", "priority"):
        connection = ctx.traced_connection()
        session = connection.createSession()
        name = ctx.name(sequence)
        consumer = session.createConsumer(session.createQueue(name, delivery_sequence=sequence))
        producer = session.createProducer(session.createQueue(name))
        # One at a time, each in the prefetch buffer before the next is sent: a broker that
        # reorders by priority what is pending for a consumer (ActiveMQ) then has nothing
        # pending to reorder, so the arrival order is the send order on every broker run after
        # run, and the check is of the client's sequence alone.
        for count, priority in enumerate(order, start=1):
            producer.send(
                session.createTextMessage(str(priority)), DeliveryMode.NON_PERSISTENT, priority, 0
            )
            ctx.expect(
                wait_buffered(consumer, count),
                f"message {count} of {len(order)} did not reach the prefetch buffer",
                "each prefetched before the next is sent and before the first receive",
            )
        connection.start()
        got = []
        for _ in order:
            message = consumer.receive(5000)
            ctx.expect(message is not None, "a receive timed out", "every message")
            assert message is not None
            got.append(message.getJMSPriority())
        results[sequence] = got
        if sequence == "fifo":
            arrival = [
                int((m.header or {}).get("priority", 4)) for m in ctx.received_messages() if m
            ]
    if results["fifo"] != order and results["fifo"] == arrival and sent_priorities(ctx, order):
        ctx.note(f"jmspy sent priorities {order}; the broker delivered them as {arrival}")
        ctx.expect_equal(results["priority"], sorted(order, reverse=True), "priority")
        return ctx.broker_deviation(
            "the broker reorders by priority what is pending for a consumer before it "
            "delivers (jmspy handed the messages out in their arrival order)",
            observed=f"arrival order {arrival}",
            expected=f"arrival in send order {order}",
        )
    ctx.expect_equal(results["fifo"], order, "fifo: arrival order")
    ctx.expect_equal(results["priority"], sorted(order, reverse=True), "priority: highest first")
    return passed(f"fifo {results['fifo']}, priority {results['priority']}")


@check("DD-16")
def dd16(ctx: CheckContext) -> Verdict:
    connection = ctx.connection()
    session = connection.createSession()
    name = ctx.name()
    queue = session.createQueue(name, default_priority=7)
    producer = session.createProducer(queue)
    producer.send(session.createTextMessage("default"))
    producer.setPriority(3)
    producer.send(session.createTextMessage("explicit"))
    connection.start()
    consumer = session.createConsumer(session.createQueue(name))
    got = {m.getText(): m.getJMSPriority() for m in drain(consumer, 300)}
    ctx.expect_equal(got, {"default": 7, "explicit": 3}, "JMSPriority received")
    return passed("the destination's default priority replaced the producer default only")
