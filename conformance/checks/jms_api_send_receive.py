"""JMS-32..JMS-65, JMS-67 and JMS-68: the JMS 2.0 client rules of producers, JMSProducer,
JMSContext and consumers (numbers from the project's JMS checklist; connections and sessions
are in jms_api), and Qpid JMS's INDIVIDUAL_ACKNOWLEDGE and no-acknowledgement modes."""

from __future__ import annotations

import threading
import time
from functools import partial
from typing import Any

import jmspy
from jmspy import DeliveryMode

from ..context import CheckContext
from ..model import Verdict, passed
from ..registry import check
from ._support import (
    Deliveries,
    drain,
    now_ms,
    queue_session,
    send_texts,
    text_of,
    wait_buffered,
)


@check("JMS-32")
def jms32(ctx: CheckContext) -> Verdict:
    _, session_a, queue = queue_session(ctx)
    message = session_a.createTextMessage("made by session A")
    message.setStringProperty("origin", "A")
    other = ctx.connection()
    session_b = other.createSession()
    session_b.createProducer(session_b.createQueue(queue.name)).send(message)
    other.start()
    received = session_b.createConsumer(session_b.createQueue(queue.name)).receive(5000)
    ctx.expect(received is not None, "null", "the message", "receive")
    assert received is not None
    ctx.expect_equal(
        (received.getText(), received.getStringProperty("origin")),
        ("made by session A", "A"),
        "received body and property",
    )
    return passed("a message created by one session was sent by another connection's session")


@check("JMS-33")
def jms33(ctx: CheckContext) -> Verdict:
    connection, session, queue = queue_session(ctx)
    producer = session.createProducer(queue)
    defaults = (
        producer.getDeliveryMode(),
        producer.getPriority(),
        producer.getTimeToLive(),
        producer.getDeliveryDelay(),
    )
    ctx.expect_equal(defaults, (DeliveryMode.PERSISTENT, 4, 0, 0), "(mode, priority, ttl, delay)")
    producer.send(session.createTextMessage("defaults"))
    connection.start()
    received = session.createConsumer(queue).receive(5000)
    ctx.expect(received is not None, "null", "the message", "receive")
    assert received is not None
    observed = (
        received.getJMSDeliveryMode(),
        received.getJMSPriority(),
        received.getJMSExpiration(),
    )
    ctx.expect_equal(observed, (DeliveryMode.PERSISTENT, 4, 0), "received (mode, priority, exp)")
    return passed("defaults PERSISTENT, 4, 0, 0; received PERSISTENT, 4, no expiration")


@check("JMS-34")
def jms34(ctx: CheckContext) -> Verdict:
    connection, session, queue = queue_session(ctx)
    producer = session.createProducer(queue)
    for bad in (-1, 0, 3):
        ctx.expect_raises(
            jmspy.JMSException,
            partial(producer.setDeliveryMode, bad),
            f"setDeliveryMode({bad})",
        )
    ctx.expect_raises(jmspy.JMSException, lambda: producer.setPriority(-1), "setPriority(-1)")
    message = session.createTextMessage("never")
    ctx.expect_raises(jmspy.JMSException, lambda: producer.send(message, -1, 4, 0), "send(mode=-1)")
    ctx.expect_raises(
        jmspy.JMSException, lambda: producer.send(message, 2, -1, 0), "send(priority=-1)"
    )
    connection.start()
    ctx.expect_equal(drain(session.createConsumer(queue), 300), [], "messages sent")
    return passed("invalid delivery modes and priorities refused; nothing sent")


@check("JMS-36")
def jms36(ctx: CheckContext) -> Verdict:
    _, session, queue = queue_session(ctx)
    anonymous = session.createProducer(None)
    message = session.createTextMessage("x")
    ctx.expect_raises(
        jmspy.UnsupportedOperationException,
        lambda: anonymous.send(message),
        "send(message) on an anonymous producer",
    )
    ctx.expect_raises(
        jmspy.UnsupportedOperationException,
        lambda: anonymous.send(message, 2, 4, 0),
        "send(message, mode, priority, ttl) on an anonymous producer",
    )
    fixed = session.createProducer(queue)
    ctx.expect_raises(
        jmspy.UnsupportedOperationException,
        lambda: fixed.send(queue, message),
        "send(destination, message) on a producer with a destination",
    )
    return passed("mismatched send overloads refused with UnsupportedOperationException")


@check("JMS-37")
def jms37(ctx: CheckContext) -> Verdict:
    _, session, _ = queue_session(ctx)
    anonymous = session.createProducer(None)
    ctx.expect_raises(
        jmspy.InvalidDestinationException,
        lambda: anonymous.send(None, session.createTextMessage("x")),
        "send(null, message)",
    )
    return passed("send(null, message) refused with InvalidDestinationException")


@check("JMS-38")
def jms38(ctx: CheckContext) -> Verdict:
    _, session, queue = queue_session(ctx)
    producer = session.createProducer(queue)
    ctx.expect_raises(jmspy.MessageFormatException, lambda: producer.send(None), "send(null)")
    anonymous = session.createProducer(None)
    ctx.expect_raises(
        jmspy.MessageFormatException,
        lambda: anonymous.send(queue, None),
        "send(destination, null)",
    )
    return passed("a null message refused with MessageFormatException")


class _HalfListener:
    """Has onCompletion but no onException: not a CompletionListener."""

    def onCompletion(self, message: Any) -> None:
        pass


@check("JMS-39")
def jms39(ctx: CheckContext) -> Verdict:
    connection, session, queue = queue_session(ctx)
    fixed, anonymous = session.createProducer(queue), session.createProducer(None)
    message = session.createTextMessage("never")
    calls: list[tuple[str, Any]] = [
        ("send(message, null)", lambda: fixed.send(message, None)),
        ("send(message, 2, 4, 0, null)", lambda: fixed.send(message, 2, 4, 0, None)),
        ("send(destination, message, null)", lambda: anonymous.send(queue, message, None)),
        (
            "send(destination, message, 2, 4, 0, null)",
            lambda: anonymous.send(queue, message, 2, 4, 0, None),
        ),
        ("send(message, <no onException>)", lambda: fixed.send(message, _HalfListener())),
        (
            "JMSProducer.setAsync(<no onException>)",
            lambda: ctx.context().createProducer().setAsync(_HalfListener()),
        ),
    ]
    for what, call in calls:
        ctx.expect_raises(jmspy.IllegalArgumentException, call, what)
    connection.start()
    ctx.expect_equal(drain(session.createConsumer(queue), 300), [], "messages sent")
    return passed(
        "a null listener and an object without onException refused with "
        "IllegalArgumentException; nothing sent"
    )


@check("JMS-41")
def jms41(ctx: CheckContext) -> Verdict:
    connection = ctx.traced_connection()
    session = connection.createSession()
    queue = session.createQueue(ctx.name())
    producer = session.createProducer(queue)
    producer.setDisableMessageID(True)
    producer.setDisableMessageTimestamp(True)
    message = session.createTextMessage("anonymous")
    producer.send(message)
    ctx.expect_equal(
        (message.getJMSMessageID(), message.getJMSTimestamp()), (None, 0), "sent message"
    )
    connection.start()
    received = session.createConsumer(queue).receive(5000)
    ctx.expect(received is not None, "null", "the message", "receive")
    assert received is not None
    assigned = received.getJMSMessageID()
    sent = [m for m in ctx.sent_messages() if m is not None]
    if assigned is not None and len(sent) == 1 and "message-id" not in sent[0].properties:
        ctx.note(f"jmspy sent: {sent[0].describe()}")
        ctx.note(f"received message-id {assigned!r}")
        return ctx.broker_deviation(
            "jmspy sent no message-id; the broker assigned one of its own",
            observed=f"received JMSMessageID {assigned!r}",
            expected="no JMSMessageID (none was sent)",
        )
    ctx.expect_equal(
        (received.getJMSMessageID(), received.getJMSTimestamp()), (None, 0), "received message"
    )
    return passed("no JMSMessageID and JMSTimestamp 0 when disabled")


@check("JMS-43")
def jms43(ctx: CheckContext) -> Verdict:
    context = ctx.context()
    producer = context.createProducer()
    reply = context.createQueue(ctx.name())
    chain = [
        ("setDeliveryMode", lambda: producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)),
        ("setPriority", lambda: producer.setPriority(6)),
        ("setTimeToLive", lambda: producer.setTimeToLive(60_000)),
        ("setDisableMessageID", lambda: producer.setDisableMessageID(False)),
        ("setDisableMessageTimestamp", lambda: producer.setDisableMessageTimestamp(False)),
        ("setProperty", lambda: producer.setProperty("p", 1)),
        ("clearProperties", producer.clearProperties),
        ("setJMSCorrelationID", lambda: producer.setJMSCorrelationID("c")),
        ("setJMSType", lambda: producer.setJMSType("t")),
        ("setJMSReplyTo", lambda: producer.setJMSReplyTo(reply)),
        ("setAsync", lambda: producer.setAsync(None)),
    ]
    for name, call in chain:
        ctx.expect(call() is producer, f"{name} returned something else", "the producer", name)
    return passed(f"{len(chain)} setters returned the same JMSProducer")


@check("JMS-44")
def jms44(ctx: CheckContext) -> Verdict:
    producer = ctx.context().createProducer()
    ctx.expect_raises(
        jmspy.JMSRuntimeException, lambda: producer.setPriority(-1), "setPriority(-1)"
    )
    ctx.expect_raises(
        jmspy.JMSRuntimeException, lambda: producer.setDeliveryMode(-1), "setDeliveryMode(-1)"
    )
    return passed("JMSProducer setters refused invalid values with JMSRuntimeException")


@check("JMS-45")
def jms45(ctx: CheckContext) -> Verdict:
    producer = ctx.context().createProducer()
    for name in ("", None):
        ctx.expect_raises(
            jmspy.IllegalArgumentException,
            partial(producer.setProperty, name, 1),
            f"setProperty({name!r}, 1)",
        )
    ctx.expect_raises(
        jmspy.MessageFormatRuntimeException,
        lambda: producer.setProperty("bad", object()),
        "setProperty('bad', object())",
    )
    ctx.expect_equal(producer.getPropertyNames(), set(), "properties after the refusals")
    return passed("bad names and values refused")


@check("JMS-46")
def jms46(ctx: CheckContext) -> Verdict:
    context = ctx.context()
    queue = context.createQueue(ctx.name())
    reply = context.createQueue(ctx.name("reply"))
    message = context.createTextMessage("x")
    message.setJMSCorrelationID("from-message")
    message.setJMSType("message-type")
    message.setJMSReplyTo(context.createQueue("message-reply"))
    producer = context.createProducer().setJMSCorrelationID("from-producer")
    producer.setJMSType("producer-type").setJMSReplyTo(reply)
    ctx.expect_raises(
        jmspy.InvalidDestinationRuntimeException,
        lambda: producer.setJMSReplyTo(ctx.name("reply")),
        "setJMSReplyTo(a queue name)",
    )
    ctx.expect_raises(jmspy.JMSRuntimeException, lambda: producer.setJMSType(7), "setJMSType(7)")
    producer.send(queue, message)
    received = context.createConsumer(queue).receive(5000)
    ctx.expect(received is not None, "null", "the message", "receive")
    observed = (received.getJMSCorrelationID(), received.getJMSType(), received.getJMSReplyTo())
    ctx.expect_equal(observed, ("from-producer", "producer-type", reply), "received headers")
    return passed("the producer's JMSCorrelationID, JMSType and JMSReplyTo won")


@check("JMS-47")
def jms47(ctx: CheckContext) -> Verdict:
    producer = ctx.context().createProducer()
    ctx.expect_raises(
        jmspy.InvalidDestinationRuntimeException,
        lambda: producer.send(None, "x"),
        "JMSProducer.send(null, 'x')",
    )
    ctx.expect_raises(
        jmspy.InvalidDestinationRuntimeException,
        lambda: producer.send(ctx.name(), "x"),
        "JMSProducer.send(a queue name, 'x')",
    )
    return passed(
        "a null destination or a queue name refused with InvalidDestinationRuntimeException"
    )


@check("JMS-48")
def jms48(ctx: CheckContext) -> Verdict:
    context = ctx.context()
    queue = context.createQueue(ctx.name())
    producer = context.createProducer()
    bodies: list[Any] = ["text", b"\x01\x02", {"k": 7}, [1, 2], None]
    for body in bodies:
        producer.send(queue, body)
    consumer = context.createConsumer(queue)
    got = [consumer.receive(5000) for _ in bodies]
    ctx.expect(all(m is not None for m in got), got, "five messages", "receives")
    kinds = [type(m).__name__ for m in got]
    expected = ["TextMessage", "BytesMessage", "MapMessage", "ObjectMessage", "Message"]
    ctx.expect_equal(kinds, expected, "message types")
    ctx.expect_equal(got[0].getText(), "text", "text body")
    ctx.expect_equal(got[1].getBody(bytes), b"\x01\x02", "bytes body")
    ctx.expect_equal(got[2].getInt("k"), 7, "map body")
    ctx.expect_equal(got[4].getBody(object), None, "empty body")
    return passed("str, bytes, dict, other and None bodies sent as the matching types")


@check("JMS-52")
def jms52(ctx: CheckContext) -> Verdict:
    context = ctx.context()
    queue = context.createQueue(ctx.name())
    context.createProducer().send(queue, "auto")
    consumer = context.createConsumer(queue)
    ctx.expect(consumer.receive(5000) is not None, "null", "delivery (auto-started)", "receive")
    manual = ctx.context()
    manual.setAutoStart(False)
    queue2 = manual.createQueue(ctx.name())
    manual.createProducer().send(queue2, "manual")
    held = manual.createConsumer(queue2)
    ctx.expect(held.receive(300) is None, "a message", "null until start()", "autoStart off")
    manual.start()
    ctx.expect(held.receive(5000) is not None, "null", "the message after start()", "start()")
    return passed("createConsumer started the context; with autoStart off only start() did")


@check("JMS-54")
def jms54(ctx: CheckContext) -> Verdict:
    context = ctx.factory().createContext(jmspy.CLIENT_ACKNOWLEDGE)
    context.close()
    ctx.expect_raises(
        jmspy.IllegalStateRuntimeException, context.acknowledge, "acknowledge() after close()"
    )
    return passed("acknowledge() on a closed JMSContext refused")


@check("JMS-59")
def jms59(ctx: CheckContext) -> Verdict:
    connection, session, queue = queue_session(ctx)
    connection.start()
    consumer = session.createConsumer(queue)
    with ctx.timed() as elapsed:
        ctx.expect(consumer.receive(300) is None, "a message", "null", "receive(300)")
        waited = elapsed()
    ctx.expect(0.28 <= waited < 2.0, f"{waited * 1000:.0f} ms", "about 300 ms", "receive(300)")
    with ctx.timed() as elapsed:
        ctx.expect(consumer.receiveNoWait() is None, "a message", "null", "receiveNoWait()")
        quick = elapsed()
    ctx.expect(quick < 1.0, f"{quick * 1000:.0f} ms", "at once", "receiveNoWait()")
    session.createProducer(queue).send(session.createTextMessage("there"))
    if ctx.profile.drain:
        # A drain fetches what the broker holds, so the message just sent is seen at once.
        ctx.expect(consumer.receiveNoWait() is not None, "null", "the message", "receiveNoWait()")
    else:
        ctx.note("the broker cannot drain: receiveNoWait sees only what already arrived")
    ctx.note(
        f"receive(300) returned null after {waited * 1000:.0f} ms; receiveNoWait after "
        f"{quick * 1000:.0f} ms"
    )
    return passed("receive(t) waited about t; receiveNoWait returned at once")


@check("JMS-60")
def jms60(ctx: CheckContext) -> Verdict:
    _, session, queue = queue_session(ctx)
    consumer = session.createConsumer(queue)
    consumer.setMessageListener(lambda m: None)
    ctx.expect_raises(
        jmspy.IllegalStateException, lambda: consumer.receive(10), "receive() with a listener"
    )
    ctx.expect_raises(
        jmspy.IllegalStateException, consumer.receiveNoWait, "receiveNoWait() with a listener"
    )
    return passed("synchronous receive refused on a consumer with a listener")


@check("JMS-61")
def jms61(ctx: CheckContext) -> Verdict:
    connection, session, queue = queue_session(ctx)
    listener = Deliveries(expected=1)
    consumer = session.createConsumer(queue)
    consumer.setMessageListener(listener)
    connection.start()
    send_texts(connection.createSession(), queue, ["to the listener"])
    ctx.expect(listener.done.wait(5), listener.seen, "the listener called", "listener")
    consumer.setMessageListener(None)
    send_texts(connection.createSession(), queue, ["to receive()"])
    received = consumer.receive(5000)
    ctx.expect(received is not None, "null", "the message via receive()", "after removal")
    assert received is not None
    ctx.expect_equal(received.getText(), "to receive()", "received text")
    ctx.expect_equal(len(listener.seen), 1, "listener calls")
    return passed("after setMessageListener(null) the listener was not called; receive() worked")


@check("JMS-62")
def jms62(ctx: CheckContext) -> Verdict:
    connection, session, queue = queue_session(ctx)
    consumer = session.createConsumer(queue)
    calls: list[str] = []
    done = threading.Event()

    def on_message(message: Any) -> None:
        consumer.close()
        calls.append(message.getText())
        done.set()

    consumer.setMessageListener(on_message)
    send_texts(session, queue, ["1", "2", "3"])
    connection.start()
    ctx.expect(done.wait(5), "no call", "onMessage", "listener")
    # No sleep to see whether more calls come: the other two messages go to a second
    # consumer (of another session: this one has a listener). Once it has them, the closed
    # consumer can never be handed them.
    others = connection.createSession().createConsumer(queue)
    rest = [others.receive(5000), others.receive(5000)]
    ctx.expect_equal(
        sorted(m.getText() for m in rest if m is not None), ["2", "3"], "left for another consumer"
    )
    ctx.expect_equal(calls, ["1"], "onMessage calls (close inside the first)")
    return passed("close() inside onMessage returned; no further message delivered")


@check("JMS-63")
def jms63(ctx: CheckContext) -> Verdict:
    connection, session, queue = queue_session(ctx)
    auto = Deliveries(expected=3, fail=("a",), fail_times=1)
    session.createConsumer(queue).setMessageListener(auto)
    send_texts(session, queue, ["a", "b"])
    connection.start()
    ctx.expect(auto.done.wait(5), auto.seen, "three deliveries", "AUTO listener")
    ctx.expect_equal(auto.flags("a"), [(False, 1), (True, 2)], "AUTO: 'a' (redelivered, count)")
    ctx.expect_equal(auto.flags("b"), [(False, 1)], "AUTO: 'b' (redelivered, count)")
    ctx.note(f"AUTO delivery order: {[d[0] for d in auto.seen]}")
    client_connection = ctx.connection()
    client_session = client_connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
    queue2 = client_session.createQueue(ctx.name())
    client = Deliveries(expected=2, fail=("a",), fail_times=1)
    client_session.createConsumer(queue2).setMessageListener(client)
    send_texts(client_session, queue2, ["a", "b"])
    client_connection.start()
    ctx.expect(client.done.wait(5), client.seen, "two deliveries", "CLIENT listener")
    ctx.expect_equal(
        [(d[0], d[2]) for d in client.seen], [("a", False), ("b", False)], "CLIENT: next message"
    )
    return passed("AUTO redelivered the failed message with JMSRedelivered; CLIENT went on")


@check("JMS-64")
def jms64(ctx: CheckContext) -> Verdict:
    context = ctx.context()
    queue = context.createQueue(ctx.name())
    context.createProducer().send(queue, "text body")
    consumer = context.createConsumer(queue)
    ctx.expect_raises(
        jmspy.MessageFormatRuntimeException,
        lambda: consumer.receiveBody(bytes, 5000),
        "receiveBody(bytes) for a TextMessage",
    )
    again = consumer.receive(5000)
    ctx.expect(again is not None, "null", "the same message", "next receive")
    observed = (
        again.getText(),
        again.getJMSRedelivered(),
        again.getIntProperty("JMSXDeliveryCount"),
    )
    ctx.expect_equal(observed, ("text body", False, 1), "(text, redelivered, count)")
    if not ctx.has("amqp:local-transactions"):
        return passed(
            "wrong body type refused; the message came next, not counted as redelivered "
            "(no transactions on this broker: the transacted case is not checked)"
        )
    transacted = ctx.context(jmspy.SESSION_TRANSACTED)
    queue = transacted.createQueue(ctx.name("tx"))
    producer = transacted.createProducer()
    producer.send(queue, "first")
    producer.send(queue, "second")
    transacted.commit()
    in_transaction = transacted.createConsumer(queue)
    ctx.expect_raises(
        jmspy.MessageFormatRuntimeException,
        lambda: in_transaction.receiveBody(bytes, 5000),
        "receiveBody(bytes) for a TextMessage in a transaction",
    )
    following = in_transaction.receiveBody(str, 5000)
    ctx.expect_equal(following, "second", "the next receive in the transaction")
    transacted.commit()
    in_transaction.close()
    left = drain(ctx.context().createConsumer(queue), 300)
    ctx.expect_equal([text_of(m) for m in left], [], "left on the queue after the commit")
    return passed(
        "wrong body type refused; in AUTO_ACKNOWLEDGE the message came next, not counted as "
        "redelivered; in a transaction it counted as received and the commit consumed it"
    )


@check("JMS-65")
def jms65(ctx: CheckContext) -> Verdict:
    connection, session, _ = queue_session(ctx)
    active = [0]
    overlaps: list[int] = []
    threads: set[str] = set()
    lock = threading.Lock()
    done = threading.Event()
    total = [0]

    def on_message(message: Any) -> None:
        with lock:
            active[0] += 1
            if active[0] > 1:
                overlaps.append(now_ms())
            threads.add(threading.current_thread().name)
        time.sleep(0.005)
        with lock:
            active[0] -= 1
            total[0] += 1
            if total[0] >= 40:
                done.set()

    queues = [session.createQueue(ctx.name()) for _ in range(2)]
    for queue in queues:
        session.createConsumer(queue).setMessageListener(on_message)
    connection.start()
    sender = connection.createSession()
    for queue in queues:
        send_texts(sender, queue, [str(i) for i in range(20)])
    ctx.expect(done.wait(10), total[0], "40 listener calls", "listener calls")
    ctx.expect_equal(len(overlaps), 0, "overlapping listener calls")
    ctx.note(f"listener threads: {sorted(threads)}")
    return passed("40 calls across two consumers of one session, never concurrent")


@check("JMS-67")
def jms67(ctx: CheckContext) -> Verdict:
    connection, session, queue = queue_session(ctx, jmspy.INDIVIDUAL_ACKNOWLEDGE)
    ctx.expect_equal(session.getAcknowledgeMode(), 101, "getAcknowledgeMode()")
    send_texts(session, queue, ["a", "b", "c"])
    consumer = session.createConsumer(queue)
    connection.start()
    first = [consumer.receive(5000) for _ in range(3)]
    ctx.expect(all(m is not None for m in first), first, "a, b and c", "first receives")
    ctx.expect_equal([m.getText() for m in first], ["a", "b", "c"], "first delivery order")
    first[1].acknowledge()  # b only
    session.recover()
    again = [consumer.receive(5000) for _ in range(2)]
    ctx.expect(all(m is not None for m in again), again, "a and c again", "after recover()")
    observed = [(m.getText(), m.getJMSRedelivered()) for m in again]
    ctx.expect_equal(observed, [("a", True), ("c", True)], "after recover(): (text, redelivered)")
    again[1].acknowledge()  # c; a stays unacknowledged, failed when the consumer closes
    consumer.close()
    other = ctx.connection()
    other_session = other.createSession()
    other.start()
    remaining = other_session.createConsumer(other_session.createQueue(queue.getQueueName()))
    left = [remaining.receive(5000), *drain(remaining)]
    ctx.expect_equal([text_of(m) for m in left], ["a"], "left on the queue after close")
    context = ctx.context(jmspy.INDIVIDUAL_ACKNOWLEDGE)
    context.acknowledge()  # nothing to do in this mode: no error, no effect
    ctx.expect_equal(context.getSessionMode(), 101, "JMSContext.getSessionMode()")
    return passed("acknowledge() settled only its message; recover() gave back only the rest")


@check("JMS-68")
def jms68(ctx: CheckContext) -> Verdict:
    observed = []
    for mode in (jmspy.NO_ACKNOWLEDGE, jmspy.ARTEMIS_PRE_ACKNOWLEDGE):
        connection, session, queue = queue_session(ctx, mode)
        ctx.expect_equal(session.getAcknowledgeMode(), mode, "getAcknowledgeMode()")
        send_texts(session, queue, ["a", "b", "c", "d"])
        consumer = session.createConsumer(queue)
        connection.start()
        first = consumer.receive(5000)
        ctx.expect(first is not None, "null", "a", f"receive in mode {mode}")
        first.acknowledge()  # nothing to acknowledge: no error, no effect
        session.recover()  # nothing to deliver again
        second = consumer.receive(5000)
        ctx.expect_equal(
            [text_of(m) for m in (first, second) if m is not None], ["a", "b"], "first receives"
        )
        # c and d were sent by the broker settled: once they are here, closing the consumer
        # leaves nothing on the queue (in AUTO_ACKNOWLEDGE they would be released back).
        ctx.expect(wait_buffered(consumer, 2), "fewer", "c and d prefetched", "prefetch")
        consumer.close()
        reader = ctx.connection()
        reader_session = reader.createSession()
        reader.start()
        left = drain(reader_session.createConsumer(reader_session.createQueue(queue.name)), 1000)
        ctx.expect_equal([text_of(m) for m in left], [], f"left on the queue (mode {mode})")
        observed.append(mode)
    context = ctx.context(jmspy.NO_ACKNOWLEDGE)
    ctx.expect_equal(context.getSessionMode(), 257, "JMSContext.getSessionMode()")
    context.acknowledge()  # nothing to do in this mode
    return passed(
        f"modes {observed}: consumed as sent; acknowledge() and recover() did nothing, and "
        "prefetched messages were not returned on close"
    )
