"""RD-1..RD-12: redelivery and dead letters."""

from __future__ import annotations

import uuid
from functools import partial
from typing import Any

import jmspy
from jmspy.redelivery import RedeliveryPolicy, redelivery_delay

from ..context import CheckContext
from ..model import Verdict, passed
from ..registry import check, fallback
from ..settings import (
    RD_DELAY_PREFIX,
    RD_DLA_PREFIX,
    RD_LIMIT2_PREFIX,
    RD_LIMIT3_PREFIX,
)
from ._evidence import uncounted_failures
from ._support import EARLY_MS, LATE_MS, Deliveries


def _gaps(times: list[int]) -> list[int]:
    return [b - a for a, b in zip(times, times[1:], strict=False)]


def _dead_letter(ctx: CheckContext, marker: str, queue: str | None = None) -> Any:
    """The dead-lettered copy carrying property ``conformance`` = marker, or None (from
    ``queue``, by default where the adapter says the broker keeps dead letters)."""
    connection = ctx.connection()
    session = connection.createSession()
    where = session.createQueue(queue or ctx.dead_letter_queue)
    if not ctx.profile.filters_selectors:
        # A broker that cannot filter a queue (RabbitMQ): read the shared queue until it comes.
        consumer = session.createConsumer(where)
        connection.start()
        while (message := consumer.receive(5000)) is not None:
            if message.getStringProperty("conformance") == marker:
                return message
        return None
    consumer = session.createConsumer(where, f"conformance = '{marker}'")
    connection.start()
    return consumer.receive(5000)


@check("RD-1")
def rd1(ctx: CheckContext) -> Verdict:
    listener = Deliveries(expected=2, fail=("poison",), fail_times=1)
    connection = ctx.connection()
    session = connection.createSession()
    queue = session.createQueue(ctx.name())
    session.createConsumer(queue).setMessageListener(listener)
    session.createProducer(queue).send(session.createTextMessage("poison"))
    connection.start()
    ctx.expect(listener.done.wait(10), listener.seen, "two deliveries within 10 s", "deliveries")
    ctx.expect_equal(listener.flags("poison"), [(False, 1), (True, 2)], "(JMSRedelivered, count)")
    return passed("the failed delivery came again with JMSRedelivered=true, JMSXDeliveryCount 2")


@check("RD-2")
def rd2(ctx: CheckContext) -> Verdict:
    connection = ctx.connection()
    session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
    queue = session.createQueue(ctx.name())
    producer = session.createProducer(queue)
    for i in range(3):
        producer.send(session.createTextMessage(f"m{i}"))
    connection.start()
    consumer = session.createConsumer(queue)
    first = [consumer.receive(5000) for _ in range(2)]
    ctx.expect(all(first), first, "m0 and m1", "first receives")
    session.recover()
    again = [consumer.receive(5000) for _ in range(3)]
    ctx.expect(all(again), again, "three messages after recover()", "receives after recover")
    observed = [
        (m.getText(), m.getJMSRedelivered(), m.getIntProperty("JMSXDeliveryCount")) for m in again
    ]
    expected = [("m0", True, 2), ("m1", True, 2), ("m2", False, 1)]
    ctx.expect_equal(observed, expected, "(text, JMSRedelivered, JMSXDeliveryCount)")
    again[-1].acknowledge()
    return passed("recover() redelivered m0, m1 in order, counted; m2 stayed a first delivery")


@check("RD-3")
def rd3(ctx: CheckContext) -> Verdict:
    connection = ctx.connection()
    setup = connection.createSession()
    queue = setup.createQueue(ctx.name())
    producer = setup.createProducer(queue)
    for i in range(3):
        producer.send(setup.createTextMessage(f"m{i}"))
    tx = connection.createSession(jmspy.SESSION_TRANSACTED)
    consumer = tx.createConsumer(queue)
    connection.start()
    first = [consumer.receive(5000) for _ in range(2)]
    ctx.expect(all(first), first, "m0 and m1", "receives in the transaction")
    tx.rollback()
    again = [consumer.receive(5000) for _ in range(3)]
    ctx.expect(all(again), again, "three messages after rollback()", "receives after rollback")
    observed = [
        (m.getText(), m.getJMSRedelivered(), m.getIntProperty("JMSXDeliveryCount")) for m in again
    ]
    expected = [("m0", True, 2), ("m1", True, 2), ("m2", False, 1)]
    ctx.expect_equal(observed, expected, "(text, JMSRedelivered, JMSXDeliveryCount)")
    tx.commit()
    return passed("rollback() redelivered the received messages in order, counted")


@check("RD-4")
def rd4(ctx: CheckContext) -> Verdict:
    connection = ctx.traced_connection()
    session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
    queue = session.createQueue(ctx.name())
    session.createProducer(queue).send(session.createTextMessage("unacknowledged"))
    connection.start()
    consumer = session.createConsumer(queue)
    first = consumer.receive(5000)
    ctx.expect(first is not None, "nothing", "the message", "first receive")
    consumer.close()
    reader = connection.createSession()
    again = reader.createConsumer(queue).receive(5000)
    ctx.expect(again is not None, "nothing after the close", "the message again", "redelivery")
    assert again is not None
    observed = (again.getJMSRedelivered(), again.getIntProperty("JMSXDeliveryCount"))
    if observed == (False, 1):
        uncounted = uncounted_failures(ctx, 1)
        if uncounted is not None:
            return uncounted
    ctx.expect_equal(observed, (True, 2), "(JMSRedelivered, JMSXDeliveryCount)")
    return passed("the unacknowledged message came back redelivered and counted")


@fallback("RD-4", "the unacknowledged message is delivered again after the close")
def rd4_without_broker_count(ctx: CheckContext) -> Verdict:
    connection = ctx.connection()
    session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
    queue = session.createQueue(ctx.name())
    session.createProducer(queue).send(session.createTextMessage("unacknowledged"))
    connection.start()
    consumer = session.createConsumer(queue)
    ctx.expect(consumer.receive(5000) is not None, "nothing", "the message", "first receive")
    consumer.close()
    again = connection.createSession().createConsumer(queue).receive(5000)
    ctx.expect(again is not None, "nothing after the close", "the message again", "redelivery")
    assert again is not None
    ctx.note(
        f"JMSRedelivered={again.getJMSRedelivered()} "
        f"JMSXDeliveryCount={again.getIntProperty('JMSXDeliveryCount')} (broker's count)"
    )
    return passed("delivered again")


class _ScriptedRandom:
    def __init__(self, draws: list[tuple[bool, float]]) -> None:
        self.draws = list(draws)
        self._sign = True

    def next_boolean(self) -> bool:
        self._sign, value = self.draws[0]
        return self._sign

    def next_double(self) -> float:
        _, value = self.draws.pop(0)
        return value


@check("RD-5")
def rd5(ctx: CheckContext) -> Verdict:
    doubling = RedeliveryPolicy.create(
        redelivery_delay=5000, redelivery_delay_multiplier=2, max_redelivery_delay=15000
    )
    ctx.expect_equal(
        [redelivery_delay(doubling, n) for n in (1, 2, 3)],
        [5000, 10000, 15000],
        "Artemis documentation example 1 (5000 ms, x2, max 15000)",
    )
    scripted = _ScriptedRandom([(False, 0.25), (True, 0.75), (False, 0.05)])
    varied = RedeliveryPolicy.create(
        redelivery_delay=1000,
        redelivery_delay_multiplier=1,
        max_redelivery_delay=15000,
        collision_avoidance_factor=0.5,
    )
    ctx.expect_equal(
        [redelivery_delay(varied, n, scripted) for n in (1, 2, 3)],
        [875, 1375, 975],
        "Artemis documentation example 2 (1000 ms, factor 0.5, draws -.25, +.75, -.05)",
    )
    default_cap = RedeliveryPolicy.create(redelivery_delay=100, redelivery_delay_multiplier=4)
    ctx.expect_equal(
        [redelivery_delay(default_cap, n) for n in (1, 2, 3)],
        [100, 400, 1000],
        "default max_redelivery_delay = delay x 10",
    )
    return passed("both worked examples of Artemis's documentation and the default cap reproduced")


@check("RD-6")
def rd6(ctx: CheckContext) -> Verdict:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"collision_avoidance_factor": 1.5}, "1.5"),
        ({"collision_avoidance_factor": -0.1}, "-0.1"),
        ({"redelivery_delay": -1}, "-1"),
        ({"max_delivery_attempts": 0}, "0"),
        ({"max_delivery_attempts": -2}, "-2"),
    ]
    for settings, value in cases:
        ((name, _),) = settings.items()
        ctx.expect_raises(
            jmspy.IllegalArgumentException,
            partial(RedeliveryPolicy.create, **settings),
            f"RedeliveryPolicy.create({name}={value})",
            contains=value,
        )
    url = f"{ctx.target.url}?jmspy.redeliveryPolicy.collisionAvoidanceFactor=2"

    def from_url() -> Any:
        factory = jmspy.ConnectionFactory(url, ctx.target.username, ctx.target.password)
        connection = factory.createConnection()
        ctx.on_close(connection.close)
        connection.createSession()
        return connection

    ctx.expect_raises(
        jmspy.IllegalArgumentException,
        from_url,
        "URL option jmspy.redeliveryPolicy.collisionAvoidanceFactor=2",
        contains="2",
    )
    RedeliveryPolicy.create(collision_avoidance_factor=1.0, max_delivery_attempts=-1)
    return passed("invalid settings refused naming the value; the limits 1.0 and -1 accepted")


@check("RD-7")
def rd7(ctx: CheckContext) -> Verdict:
    listener = Deliveries(expected=3, fail=("poison",), fail_times=2)
    connection = ctx.connection(
        **{
            "jmspy.redeliveryPolicy.redeliveryDelay": 200,
            "jmspy.redeliveryPolicy.redeliveryDelayMultiplier": 2,
        }
    )
    session = connection.createSession()
    queue = session.createQueue(ctx.name())
    session.createConsumer(queue).setMessageListener(listener)
    session.createProducer(queue).send(session.createTextMessage("poison"))
    connection.start()
    ctx.expect(listener.done.wait(10), listener.seen, "three deliveries within 10 s", "deliveries")
    gaps = _gaps([d[1] for d in listener.of("poison")])
    ctx.note(f"gaps between attempts: {gaps} ms (policy 200 ms x2)")
    for gap, expected in zip(gaps, [200, 400], strict=True):
        ctx.expect(
            expected - EARLY_MS <= gap <= expected + LATE_MS,
            f"gaps {gaps}",
            "gaps of 200 and 400 ms (not earlier)",
            "redelivery delays",
        )
    ctx.expect_equal([c for _, c in listener.flags("poison")], [1, 2, 3], "JMSXDeliveryCount")
    return passed(f"redelivered after {gaps} ms (policy: 200, 400)")


@check("RD-8")
def rd8(ctx: CheckContext) -> Verdict:
    name = f"{RD_DELAY_PREFIX}{uuid.uuid4().hex[:8]}"
    marker = uuid.uuid4().hex
    listener = Deliveries(expected=5, fail=("poison",), fail_times=10)
    connection = ctx.connection()
    session = connection.createSession()
    queue = session.createQueue(name)
    session.createConsumer(queue).setMessageListener(listener)
    producer = session.createProducer(queue)
    poison = session.createTextMessage("poison")
    poison.setStringProperty("conformance", marker)
    producer.send(poison)
    producer.send(session.createTextMessage("healthy"))
    connection.start()
    ctx.expect(listener.done.wait(8), listener.seen, "5 deliveries within 8 s", "deliveries")
    dead = _dead_letter(ctx, marker)
    attempts = listener.of("poison")
    gaps = _gaps([d[1] for d in attempts])
    ctx.note(f"gaps between attempts: {gaps} ms (settings: 400, 800, 1000)")
    ctx.expect_equal([c for _, c in listener.flags("poison")], [1, 2, 3, 4], "JMSXDeliveryCount")
    ctx.expect_equal(
        [r for r, _ in listener.flags("poison")], [False, True, True, True], "JMSRedelivered"
    )
    for gap, expected in zip(gaps, [400, 800, 1000], strict=True):
        ctx.expect(
            expected - EARLY_MS <= gap <= expected + LATE_MS,
            f"gaps {gaps}",
            "400, 800 and 1000 ms (delay, x2, capped)",
            "redelivery delays",
        )
    ctx.expect(dead is not None, "nothing on DLQ", "the message on DLQ", "dead letter")
    assert dead is not None
    ctx.expect_equal(dead.getJMSMessageID(), poison.getJMSMessageID(), "dead letter's JMSMessageID")
    ctx.expect_equal(
        dead.getStringProperty("JMSPY_ORIGINAL_DESTINATION"), name, "JMSPY_ORIGINAL_DESTINATION"
    )
    return passed(f"attempts 1..4 {gaps} ms apart, then on DLQ with its origin")


@check("RD-9")
def rd9(ctx: CheckContext) -> Verdict:
    marker = uuid.uuid4().hex
    listener, queue_name, message_id = _client_limit(ctx, marker)
    dlq = ctx.dead_letter_queue
    dead = _dead_letter(ctx, marker, dlq)
    ctx.expect(dead is not None, f"nothing on {dlq}", f"the message on {dlq}", "dead letter")
    assert dead is not None
    if ctx.profile.forward_dead_letters:
        # jmspy itself sent the copy (RabbitMQ): a new JMSMessageID, the old one kept.
        dead_id = dead.getStringProperty("JMSPY_ORIGINAL_MESSAGE_ID")
        ctx.expect_equal(dead_id, message_id, "dead letter's JMSPY_ORIGINAL_MESSAGE_ID")
    else:
        ctx.expect_equal(dead.getJMSMessageID(), message_id, "dead letter's JMSMessageID")
    origin = dead.getStringProperty("JMSPY_ORIGINAL_DESTINATION")
    if origin is None and ctx.profile.name != "artemis":
        # jmspy reads the origin from Artemis's x-opt-ORIG-ADDRESS; a broker that moves the
        # message unchanged (ActiveMQ to ActiveMQ.DLQ, Broker-J to the queue's alternate
        # binding) adds nothing. jmspy's last settlement is the evidence of its part.
        settled = ctx.frames_sent("@rejected") or ctx.frames_sent("@modified")
        if settled:
            ctx.note(f"jmspy sent: {settled[-1].split('FRAME: ')[-1]}")
        where = dead.getJMSDestination()
        ctx.note(f"dead letter on {dlq}: no origin annotation; JMSDestination {where}")
        return ctx.broker_deviation(
            f"dead-lettered to {dlq} with its JMSMessageID, but the broker records no original "
            f"destination (the message's own JMSDestination says {where})",
            observed="JMSPY_ORIGINAL_DESTINATION: None",
            expected=f"JMSPY_ORIGINAL_DESTINATION: {queue_name}",
        )
    ctx.expect_equal(origin, queue_name, "JMSPY_ORIGINAL_DESTINATION")
    return passed(f"handed out twice, then dead-lettered to {dlq} with its id and origin")


def _client_limit(ctx: CheckContext, marker: str) -> tuple[Deliveries, str, str]:
    listener = Deliveries(expected=2, fail=("poison",), fail_times=10)
    connection = ctx.traced_connection()
    session = connection.createSession()
    # A queue whose own limit is 2 where the broker dead-letters only at its queue's limit.
    name = ctx.name(prefix=RD_LIMIT2_PREFIX)
    queue = session.createQueue(name)
    consumer = session.createConsumer(queue)
    consumer.setRedeliveryPolicy(RedeliveryPolicy.create(max_delivery_attempts=2))
    consumer.setMessageListener(listener)
    poison = session.createTextMessage("poison")
    poison.setStringProperty("conformance", marker)
    session.createProducer(queue).send(poison)
    connection.start()
    ctx.expect(listener.done.wait(10), listener.seen, "two deliveries within 10 s", "deliveries")
    listener.done.clear()
    listener.expected = 3
    third = listener.done.wait(0.5)
    ctx.expect(not third, listener.seen, "no third delivery (limit 2)", "deliveries")
    ctx.expect_equal([c for _, c in listener.flags("poison")], [1, 2], "JMSXDeliveryCount")
    return listener, name, poison.getJMSMessageID() or ""


@fallback("RD-9", "the message is handed to the application exactly max_delivery_attempts times")
def rd9_without_dlq(ctx: CheckContext) -> Verdict:
    _client_limit(ctx, uuid.uuid4().hex)
    return passed("handed out twice and never again")


@check("RD-10")
def rd10(ctx: CheckContext) -> Verdict:
    connection = ctx.traced_connection()
    setup = connection.createSession()
    # A queue whose own limit is 3 where the broker dead-letters only at its queue's limit.
    queue = setup.createQueue(ctx.name(prefix=RD_LIMIT3_PREFIX))
    setup.createProducer(queue).send(setup.createTextMessage("failed elsewhere"))
    connection.start()
    for attempt in (1, 2):
        session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
        message = session.createConsumer(queue).receive(5000)
        ctx.expect(message is not None, "nothing", f"attempt {attempt}", "receive")
        session.close()  # not acknowledged: a failed attempt the broker counts
    limited = connection.createSession()
    consumer = limited.createConsumer(queue)
    consumer.setRedeliveryPolicy(RedeliveryPolicy.create(max_delivery_attempts=2))
    over = consumer.receive(1000)
    if over is not None and over.getIntProperty("JMSXDeliveryCount") == 1:
        uncounted = uncounted_failures(ctx, 2)
        if uncounted is not None:
            return uncounted
    ctx.expect(
        over is None,
        f"handed out with JMSXDeliveryCount {over and over.getIntProperty('JMSXDeliveryCount')}",
        "never handed out (count 3 > limit 2)",
        "receive with the limited policy",
    )
    consumer.close()
    later = connection.createSession().createConsumer(queue).receive(500)
    ctx.expect(later is None, "still on the queue", "dead-lettered, not released", "queue")
    return passed("the message over the limit was dead-lettered on arrival, never handed out")


@check("RD-11")
def rd11(ctx: CheckContext) -> Verdict:
    listener = Deliveries(expected=3, fail=("poison",), fail_times=1)
    connection = ctx.connection(**{"jmspy.redeliveryPolicy.redeliveryDelay": 600})
    session = connection.createSession()
    queue = session.createQueue(ctx.name())
    session.createConsumer(queue).setMessageListener(listener)
    producer = session.createProducer(queue)
    producer.send(session.createTextMessage("poison"))
    producer.send(session.createTextMessage("healthy"))
    connection.start()
    ctx.expect(listener.done.wait(10), listener.seen, "three deliveries within 10 s", "deliveries")
    order = [d[0] for d in listener.seen]
    ctx.expect_equal(order, ["poison", "healthy", "poison"], "delivery order")
    first, healthy, second = listener.seen
    ctx.expect(
        second[1] - first[1] >= 600 - EARLY_MS,
        f"redelivered after {second[1] - first[1]} ms",
        "after the 600 ms delay",
        "redelivery",
    )
    ctx.note(f"healthy delivered {healthy[1] - first[1]} ms after the failure")
    return passed("the healthy message went ahead while the failed one waited 600 ms")


@check("RD-12")
def rd12(ctx: CheckContext) -> Verdict:
    name = f"{RD_DLA_PREFIX}{uuid.uuid4().hex[:8]}"
    listener = Deliveries(expected=3, fail=("poison",), fail_times=10)
    connection = ctx.connection()
    session = connection.createSession()
    queue = session.createQueue(name)
    session.createConsumer(queue).setMessageListener(listener)
    session.createProducer(queue).send(session.createTextMessage("poison"))
    connection.start()
    ctx.expect(listener.done.wait(10), listener.seen, "three deliveries", "deliveries")
    reader = ctx.connection()
    rsession = reader.createSession()
    reader.start()
    dead = rsession.createConsumer(rsession.createQueue(f"DLA::DLQ.{name}")).receive(5000)
    ctx.expect_equal([c for _, c in listener.flags("poison")], [1, 2, 3], "JMSXDeliveryCount")
    ctx.expect(dead is not None, "nothing", f"the message on DLA::DLQ.{name}", "dead letter")
    assert dead is not None
    ctx.expect_equal(
        dead.getStringProperty("JMSPY_ORIGINAL_DESTINATION"), name, "JMSPY_ORIGINAL_DESTINATION"
    )
    return passed(f"dead-lettered to DLA::DLQ.{name} after 3 attempts")
