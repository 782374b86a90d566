"""WM-16 and WM-17: how messages are settled on the wire (the outcome JMS_AMQP_ACK_TYPE
chooses, presettled consumers and producers), read from the frames jmspy sent."""

from __future__ import annotations

from functools import partial

import jmspy

from ..context import CheckContext
from ..model import Verdict, passed
from ..registry import check
from ._support import drain, text_of


def _disposition_state(frame: str) -> str:
    """The outcome of a traced disposition frame, with modified's flags."""
    for outcome in ("accepted", "rejected", "released", "modified"):
        if f"@{outcome}(" in frame:
            break
    else:
        return "none"
    if outcome == "modified":
        if "delivery-failed=true" in frame:
            outcome += "+failed"
        if "undeliverable-here=true" in frame:
            outcome += "+undeliverable"
    return outcome


@check("WM-16")
def wm16(ctx: CheckContext) -> Verdict:
    connection = ctx.traced_connection()
    session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
    # One queue per outcome: a message released or modified goes back to its own queue and
    # cannot come round again to a receive meant for the next one.
    queues = [session.createQueue(ctx.name()) for _ in range(5)]
    producer = session.createProducer(None)
    for ack_type, queue in enumerate(queues, start=1):
        producer.send(queue, session.createTextMessage(str(ack_type)))
    connection.start()

    def dispositions() -> list[str]:
        return [f for f in ctx.frames_sent("@disposition") if "role=true" in f]

    # One acknowledgement at a time, its frame awaited before the next: accepted outcomes
    # are written by the engine thread in ranges, the others as they come, so frames of
    # acknowledgements made back to back need not leave in call order. Closing the consumer
    # may release a message the broker delivered again (released, modified): not counted.
    settled: list[str] = []
    for ack_type, queue in enumerate(queues, start=1):
        consumer = session.createConsumer(queue)
        message = consumer.receive(5000)
        ctx.expect(message is not None, "null", f"message {ack_type}", "receive")
        message.setIntProperty("JMS_AMQP_ACK_TYPE", ack_type)
        before = len(dispositions())
        message.acknowledge()  # the only unacknowledged message of the session

        def written(before: int = before) -> bool:
            return len(dispositions()) > before

        ctx.wait_for(written, 5.0)
        frames = dispositions()
        settled.append(frames[before] if len(frames) > before else "(no disposition)")
        consumer.close()
    for frame in settled:
        ctx.note(frame.split(" -> ", 1)[-1][:160])
    expected = ["accepted", "rejected", "released", "modified+failed"]
    expected.append("modified+failed+undeliverable")
    if not ctx.profile.modified_outcome:
        # The adapter says the broker does not take modified: jmspy sends the nearest outcome
        # it understands (released, or rejected for undeliverable-here).
        expected[3:] = ["released", "rejected"]
        ctx.note(f"{ctx.profile.name}: modified is sent as released / rejected (adapter)")
    ctx.expect_equal(
        [_disposition_state(f) for f in settled],
        expected,
        "disposition outcomes for JMS_AMQP_ACK_TYPE 1..5",
    )
    auto = connection.createSession()
    auto_queue = auto.createQueue(ctx.name())
    auto.createProducer(auto_queue).send(auto.createTextMessage("auto"))
    received = auto.createConsumer(auto_queue).receive(5000)
    ctx.expect(received is not None, "null", "a message", "AUTO_ACKNOWLEDGE receive")
    ctx.expect_raises(
        jmspy.JMSException,
        partial(received.setIntProperty, "JMS_AMQP_ACK_TYPE", 2),
        "JMS_AMQP_ACK_TYPE on an AUTO_ACKNOWLEDGE message",
    )
    session.close()
    reader = connection.createSession()
    left = [text_of(m) for queue in queues for m in drain(reader.createConsumer(queue), 300)]
    ctx.note(f"back on their queues, as the broker treats each outcome: {left}")
    return passed("acknowledge() settled with the outcome JMS_AMQP_ACK_TYPE named")


@check("WM-17")
def wm17(ctx: CheckContext) -> Verdict:
    # One connection per consumer kind, so each one's frames are told apart by link name.
    results = []
    cases = [
        ("NO_ACKNOWLEDGE session", {}, jmspy.NO_ACKNOWLEDGE, True),
        (
            "presettleQueueConsumers, AUTO_ACKNOWLEDGE",
            {"jms.presettlePolicy.presettleQueueConsumers": "true"},
            jmspy.AUTO_ACKNOWLEDGE,
            True,
        ),
        (
            "presettleConsumers, SESSION_TRANSACTED (never presettled)",
            {"jms.presettlePolicy.presettleConsumers": "true"},
            jmspy.SESSION_TRANSACTED,
            False,
        ),
        (
            "presettleTopicConsumers, a queue consumer (not presettled)",
            {"jms.presettlePolicy.presettleTopicConsumers": "true"},
            jmspy.AUTO_ACKNOWLEDGE,
            False,
        ),
    ]

    if not ctx.profile.transactions:
        cases = [case for case in cases if case[2] != jmspy.SESSION_TRANSACTED]
        ctx.note(f"{ctx.profile.name}: no AMQP transactions (adapter), no transacted case")

    def receiver_dispositions() -> list[str]:
        # Outgoing dispositions with role=true are a receiver's: only the consumers'.
        return [f for f in ctx.frames_sent("@disposition") if "role=true" in f]

    for label, options, mode, presettled in cases:
        before = len(receiver_dispositions())
        connection = ctx.traced_connection(**options)
        session = connection.createSession(mode)
        queue = session.createQueue(ctx.name())
        producer = session.createProducer(queue)
        producer.send(session.createTextMessage(label))
        if mode == jmspy.SESSION_TRANSACTED:
            session.commit()
        consumer = session.createConsumer(queue)
        connection.start()
        message = consumer.receive(5000)
        ctx.expect(message is not None, "null", "the message", f"receive ({label})")
        if mode == jmspy.SESSION_TRANSACTED:
            session.commit()
        address = ctx.address(queue)
        attaches = [f for f in ctx.frames_sent("@attach") if "role=true" in f and address in f]
        ctx.expect(len(attaches) == 1, attaches, "one receiver attach", f"attach ({label})")
        settle_mode = "settled" if "snd-settle-mode=0x1" in attaches[0] else "unsettled"

        def acknowledged(before: int = before) -> bool:
            return len(receiver_dispositions()) > before

        disposed = ctx.wait_for(acknowledged, 0.0 if presettled else 5.0)
        if presettled:
            # The engine writes acceptances on its next turn: close the session, which flushes
            # what is queued, before looking for a disposition.
            session.close()
            disposed = acknowledged()
        ctx.note(f"{label}: snd-settle-mode {settle_mode}, disposition sent: {disposed}")
        ctx.expect_equal(
            (settle_mode, disposed),
            ("settled", False) if presettled else ("unsettled", True),
            f"receiver attach and disposition ({label})",
        )
        connection.close()
        results.append(label)
    # Producers: presettleQueueProducers settles the sends to a queue; the broker keeps them.
    connection = ctx.traced_connection(**{"jms.presettlePolicy.presettleQueueProducers": "true"})
    session = connection.createSession()
    queue = session.createQueue(ctx.name())
    producer = session.createProducer(queue)
    texts = ["p1", "p2", "p3"]
    for text in texts:
        producer.send(session.createTextMessage(text))  # persistent: done once written
    producer.close()
    address = ctx.address(queue)
    attaches = [f for f in ctx.frames_sent("@attach") if "role=false" in f and address in f]
    ctx.expect(len(attaches) == 1, attaches, "one sender attach", "producer attach")
    # The earlier cases' producers were not presettled: settled transfers are this one's.
    settled = [f for f in ctx.frames_sent("@transfer") if "settled=true" in f]
    ctx.note(f"producer: {len(settled)} of {len(texts)} transfers settled; {attaches[0][:160]}")
    ctx.expect_equal(
        ("snd-settle-mode=0x1" in attaches[0], len(settled)),
        (True, len(texts)),
        "presettled producer: settled attach, settled transfers",
    )
    reader = ctx.connection()
    reader_session = reader.createSession()
    reader.start()
    kept = drain(reader_session.createConsumer(reader_session.createQueue(queue.name)), 2000)
    ctx.expect_equal([text_of(m) for m in kept], texts, "presettled sends on the queue")
    connection.close()
    return passed(
        "presettled consumers attached settled and sent no disposition, others did; a "
        "presettled producer attached settled, sent settled transfers, and the broker kept them"
    )
