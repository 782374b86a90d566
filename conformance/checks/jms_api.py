"""JMS-n: the JMS 2.0 client rules jmspy implements (numbers from the checklist)."""

from __future__ import annotations

import threading
import time
from functools import partial
from typing import Any

import jmspy
from jmspy import DeliveryMode

from ..context import CheckContext
from ..model import Verdict, passed
from ..registry import check, fallback
from ._support import Deliveries, drain, now_ms, send_texts


def _session(ctx: CheckContext, *args: Any) -> tuple[Any, Any, Any]:
    """(connection, session, queue) on a fresh unique queue."""
    connection = ctx.connection()
    session = connection.createSession(*args)
    return connection, session, session.createQueue(ctx.name())


@check("JMS-1")
def jms1(ctx: CheckContext) -> Verdict:
    wrong = "wrong-" + ctx.name("pw")
    factory = jmspy.ConnectionFactory(ctx.target.url, ctx.target.username or "admin", wrong)
    connection = factory.createConnection()
    ctx.on_close(connection.close)
    error = ctx.expect_raises(
        jmspy.JMSSecurityException, connection.start, "first use with a wrong password"
    )
    ctx.expect(wrong not in str(error), str(error), "a message without the password", "text")
    configured = jmspy.ConnectionFactory(
        ctx.target.url, ctx.target.username or "admin", wrong, client_id=ctx.name("cid")
    )
    ctx.expect_raises(
        jmspy.JMSSecurityException,
        configured.createConnection,
        "createConnection with a client id and a wrong password",
    )
    ctx.expect_raises(
        jmspy.JMSSecurityRuntimeException, factory.createContext, "createContext, wrong password"
    )
    return passed("wrong credentials raised JMSSecurityException / JMSSecurityRuntimeException")


@check("JMS-2")
def jms2(ctx: CheckContext) -> Verdict:
    connection, session, queue = _session(ctx)
    session.createProducer(queue).send(session.createTextMessage("waiting"))
    consumer = session.createConsumer(queue)
    listening = connection.createSession()
    listened = listening.createQueue(ctx.name())
    listener = Deliveries(expected=1)
    listening.createConsumer(listened).setMessageListener(listener)
    send_texts(session, listened, ["for the listener"])
    ctx.expect(consumer.receive(300) is None, "a message", "null while stopped", "receive()")
    ctx.expect_equal(listener.seen, [], "listener calls while stopped")
    connection.start()
    ctx.expect(consumer.receive(5000) is not None, "null", "the message after start()", "receive")
    ctx.expect(listener.done.wait(5), listener.seen, "the listener called after start()", "start")
    return passed("nothing delivered before start(), to receive() or a listener; both after")


@check("JMS-3")
def jms3(ctx: CheckContext) -> Verdict:
    factory = ctx.factory()
    for mode in (4, -1, 7):
        ctx.expect_raises(
            jmspy.JMSRuntimeException,
            partial(factory.createContext, mode),
            f"createContext({mode})",
        )
    context = factory.createContext(jmspy.CLIENT_ACKNOWLEDGE)
    ctx.on_close(context.close)
    ctx.expect_equal(context.getSessionMode(), jmspy.CLIENT_ACKNOWLEDGE, "valid mode accepted")
    return passed("invalid session modes refused with JMSRuntimeException")


@check("JMS-4")
def jms4(ctx: CheckContext) -> Verdict:
    connection = ctx.connection()
    connection.createSession()
    ctx.expect_raises(
        jmspy.IllegalStateException,
        lambda: connection.setClientID(ctx.name("late")),
        "setClientID after createSession",
    )
    context = ctx.context()
    context.createProducer().send(context.createQueue(ctx.name()), "used")
    ctx.expect_raises(
        jmspy.IllegalStateRuntimeException,
        lambda: context.setClientID(ctx.name("late")),
        "JMSContext.setClientID after a send",
    )
    fresh = ctx.connection()
    client_id = ctx.name("cid")
    fresh.setClientID(client_id)
    ctx.expect_equal(fresh.getClientID(), client_id, "setClientID right after creation")
    return passed("late setClientID refused; right after creation accepted")


@check("JMS-5")
def jms5(ctx: CheckContext) -> Verdict:
    configured = ctx.name("cid")
    connection = ctx.factory(client_id=configured).createConnection()
    ctx.on_close(connection.close)
    ctx.expect_raises(
        jmspy.IllegalStateException,
        lambda: connection.setClientID(ctx.name("other")),
        "setClientID with a configured client id",
    )
    ctx.expect_equal(connection.getClientID(), configured, "client id kept")
    return passed("setClientID refused when the factory configures the client id")


def _empty_client_id(ctx: CheckContext) -> None:
    for bad in ("", "   "):
        connection = ctx.connection()
        ctx.expect_raises(
            jmspy.InvalidClientIDException,
            partial(connection.setClientID, bad),
            f"setClientID({bad!r})",
        )


@check("JMS-6")
def jms6(ctx: CheckContext) -> Verdict:
    _empty_client_id(ctx)
    client_id = ctx.name("cid")
    first = ctx.connection()
    first.setClientID(client_id)
    second = ctx.connection()
    ctx.expect_raises(
        jmspy.InvalidClientIDException,
        lambda: second.setClientID(client_id),
        "setClientID with an id in use",
    )
    return passed("empty and duplicate client ids refused with InvalidClientIDException")


@fallback("JMS-6", "an empty client id is refused with InvalidClientIDException")
def jms6_without_broker_check(ctx: CheckContext) -> Verdict:
    _empty_client_id(ctx)
    return passed("empty client id refused")


@check("JMS-8")
def jms8(ctx: CheckContext) -> Verdict:
    connection, session, queue = _session(ctx)
    connection.start()
    connection.start()
    consumer = session.createConsumer(queue)
    connection.stop()
    connection.stop()
    session.createProducer(queue).send(session.createTextMessage("sent while stopped"))
    ctx.expect(consumer.receive(300) is None, "a message", "null while stopped", "receive()")
    connection.start()
    received = consumer.receive(5000)
    ctx.expect(received is not None, "null", "the message sent while stopped", "after start()")
    return passed("repeated start()/stop() ignored; sending worked while stopped")


def _from_listener(ctx: CheckContext, action: str) -> Verdict:
    connection, session, queue = _session(ctx)
    outcome: list[BaseException | None] = []
    done = threading.Event()

    def on_message(message: Any) -> None:
        try:
            getattr(connection, action)()
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)
        done.set()

    session.createConsumer(queue).setMessageListener(on_message)
    session.createProducer(queue).send(session.createTextMessage("x"))
    connection.start()
    ctx.expect(done.wait(5), "the listener was not called", "a listener call", "listener")
    error = outcome[0]
    ctx.expect(
        isinstance(error, jmspy.IllegalStateException),
        f"Connection.{action}() from the listener: "
        + (f"{type(error).__name__}: {error}" if error else "succeeded"),
        "IllegalStateException",
    )
    ctx.note(f"Connection.{action}() from its own listener: {type(error).__name__}: {error}")
    return passed(f"Connection.{action}() from its own listener raised IllegalStateException")


@check("JMS-9")
def jms9(ctx: CheckContext) -> Verdict:
    return _from_listener(ctx, "stop")


@check("JMS-10")
def jms10(ctx: CheckContext) -> Verdict:
    return _from_listener(ctx, "close")


@check("JMS-11")
def jms11(ctx: CheckContext) -> Verdict:
    connection, session, queue = _session(ctx)
    consumer = session.createConsumer(queue)
    connection.start()
    result: list[Any] = []
    finished = threading.Event()

    def receiver() -> None:
        result.append(consumer.receive())
        finished.set()

    threading.Thread(target=receiver, daemon=True, name="blocked-receive").start()
    time.sleep(0.3)
    ctx.expect(not finished.is_set(), result, "a receive still blocked", "before close")
    connection.close()
    ctx.expect(finished.wait(5), "still blocked 5 s after close()", "receive() returned", "close")
    ctx.expect_equal(result, [None], "what the blocked receive returned")
    return passed("close() ended the blocked receive, which returned null")


@check("JMS-12")
def jms12(ctx: CheckContext) -> Verdict:
    connection, session, queue = _session(ctx, jmspy.CLIENT_ACKNOWLEDGE)
    session.createProducer(queue).send(session.createTextMessage("not acknowledged"))
    connection.start()
    message = session.createConsumer(queue).receive(5000)
    ctx.expect(message is not None, "null", "the message", "receive")
    connection.close()
    ctx.expect_raises(
        jmspy.IllegalStateException, message.acknowledge, "acknowledge() after the close"
    )
    reader = ctx.connection()
    rsession = reader.createSession()
    reader.start()
    again = rsession.createConsumer(rsession.createQueue(queue.name)).receive(5000)
    ctx.expect(again is not None, "nothing", "the message again", "after close")
    return passed("close() acknowledged nothing; acknowledge() afterwards refused")


@check("JMS-13")
def jms13(ctx: CheckContext) -> Verdict:
    connection, session, queue = _session(ctx)
    producer = session.createProducer(queue)
    consumer = session.createConsumer(queue)
    message = session.createTextMessage("kept")
    connection.close()
    connection.close()  # idempotent
    calls = {
        "Connection.createSession": lambda: connection.createSession(),
        "Connection.start": connection.start,
        "Connection.getClientID": connection.getClientID,
        "Session.createTextMessage": lambda: session.createTextMessage("x"),
        "Session.createProducer": lambda: session.createProducer(queue),
        "MessageProducer.send": lambda: producer.send(message),
        "MessageProducer.getPriority": producer.getPriority,
        "MessageConsumer.receiveNoWait": consumer.receiveNoWait,
        "MessageConsumer.getMessageSelector": consumer.getMessageSelector,
    }
    for what, call in calls.items():
        ctx.expect_raises(jmspy.IllegalStateException, call, f"{what} after close")
    session.close()
    producer.close()
    consumer.close()
    ctx.expect_equal(message.getText(), "kept", "message still usable")
    message.setStringProperty("still", "writable")
    return passed(f"{len(calls)} calls on closed objects raised IllegalStateException")


@check("JMS-16")
def jms16(ctx: CheckContext) -> Verdict:
    connection = ctx.connection()
    for args in ((9,), (-1,), (False, jmspy.SESSION_TRANSACTED), (False, 7)):
        ctx.expect_raises(
            jmspy.JMSException,
            partial(connection.createSession, *args),
            f"createSession{args}",
        )
    default = connection.createSession()
    ctx.expect_equal(default.getAcknowledgeMode(), jmspy.AUTO_ACKNOWLEDGE, "createSession() mode")
    ctx.expect_equal(default.getTransacted(), False, "createSession() transacted")
    dups = connection.createSession(False, jmspy.DUPS_OK_ACKNOWLEDGE)
    ctx.expect_equal(dups.getAcknowledgeMode(), jmspy.DUPS_OK_ACKNOWLEDGE, "(False, DUPS_OK)")
    return passed("invalid modes refused; createSession() is AUTO_ACKNOWLEDGE")


@check("JMS-17")
def jms17(ctx: CheckContext) -> Verdict:
    connection = ctx.connection()
    session = connection.createSession(True, jmspy.CLIENT_ACKNOWLEDGE)
    ctx.expect_equal(session.getTransacted(), True, "getTransacted()")
    ctx.expect_equal(session.getAcknowledgeMode(), jmspy.SESSION_TRANSACTED, "getAcknowledgeMode()")
    return passed("createSession(true, CLIENT_ACKNOWLEDGE) reports SESSION_TRANSACTED")


@check("JMS-18")
def jms18(ctx: CheckContext) -> Verdict:
    _, session, _ = _session(ctx)
    ctx.expect_raises(jmspy.IllegalStateException, session.commit, "Session.commit()")
    ctx.expect_raises(jmspy.IllegalStateException, session.rollback, "Session.rollback()")
    context = ctx.context()
    ctx.expect_raises(jmspy.IllegalStateRuntimeException, context.commit, "JMSContext.commit()")
    ctx.expect_raises(jmspy.IllegalStateRuntimeException, context.rollback, "JMSContext.rollback()")
    return passed("commit()/rollback() outside a transaction refused")


@check("JMS-19")
def jms19(ctx: CheckContext) -> Verdict:
    _, session, _ = _session(ctx, jmspy.SESSION_TRANSACTED)
    ctx.expect_raises(jmspy.IllegalStateException, session.recover, "Session.recover()")
    context = ctx.context(jmspy.SESSION_TRANSACTED)
    ctx.expect_raises(jmspy.IllegalStateRuntimeException, context.recover, "JMSContext.recover()")
    return passed("recover() on a transacted session refused")


@check("JMS-20")
def jms20(ctx: CheckContext) -> Verdict:
    connection, session, queue = _session(ctx)
    outcome: list[BaseException | None] = []
    done = threading.Event()

    def on_message(message: Any) -> None:
        try:
            session.close()
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)
        done.set()

    session.createConsumer(queue).setMessageListener(on_message)
    session.createProducer(queue).send(session.createTextMessage("x"))
    connection.start()
    ctx.expect(done.wait(5), "the listener was not called", "a listener call", "listener")
    error = outcome[0]
    ctx.expect(
        isinstance(error, jmspy.IllegalStateException),
        f"Session.close() from its listener: {type(error).__name__ if error else 'succeeded'}",
        "IllegalStateException",
    )
    other = connection.createSession()
    other.close()
    other.close()
    ctx.expect_raises(jmspy.IllegalStateException, lambda: other.createQueue("x"), "createQueue")
    ctx.expect_raises(jmspy.IllegalStateException, other.getAcknowledgeMode, "getAcknowledgeMode")
    return passed("close() from own listener refused; close() idempotent; closed session final")


@check("JMS-21")
def jms21(ctx: CheckContext) -> Verdict:
    _, session, queue = _session(ctx)
    session.createConsumer(queue).setMessageListener(lambda m: None)
    other = session.createConsumer(session.createQueue(ctx.name()))
    ctx.expect_raises(
        jmspy.IllegalStateException,
        lambda: other.receive(10),
        "receive() on a listener-less consumer of a session with a listener",
    )
    return passed("receive() refused while another consumer of the session has a listener")


@check("JMS-22")
def jms22(ctx: CheckContext) -> Verdict:
    _, session, queue = _session(ctx)
    ctx.expect_raises(
        jmspy.InvalidDestinationException,
        lambda: session.createConsumer(None),
        "createConsumer(null)",
    )
    for selector in ("colour = ", "a IN ()", "1 +"):
        ctx.expect_raises(
            jmspy.InvalidSelectorException,
            partial(session.createConsumer, queue, selector),
            f"createConsumer(queue, {selector!r})",
        )
    consumer = session.createConsumer(queue, "")
    ctx.expect_equal(consumer.getMessageSelector(), None, "empty selector")
    anonymous = session.createProducer(None)
    ctx.expect_equal(anonymous.getDestination(), None, "createProducer(null) destination")
    return passed("null destination and bad selectors refused; empty selector and anonymous ok")


@check("JMS-32")
def jms32(ctx: CheckContext) -> Verdict:
    _, session_a, queue = _session(ctx)
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
    connection, session, queue = _session(ctx)
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
    connection, session, queue = _session(ctx)
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
    _, session, queue = _session(ctx)
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
    _, session, _ = _session(ctx)
    anonymous = session.createProducer(None)
    ctx.expect_raises(
        jmspy.InvalidDestinationException,
        lambda: anonymous.send(None, session.createTextMessage("x")),
        "send(null, message)",
    )
    return passed("send(null, message) refused with InvalidDestinationException")


@check("JMS-38")
def jms38(ctx: CheckContext) -> Verdict:
    _, session, queue = _session(ctx)
    producer = session.createProducer(queue)
    ctx.expect_raises(jmspy.MessageFormatException, lambda: producer.send(None), "send(null)")
    anonymous = session.createProducer(None)
    ctx.expect_raises(
        jmspy.MessageFormatException,
        lambda: anonymous.send(queue, None),
        "send(destination, null)",
    )
    return passed("a null message refused with MessageFormatException")


@check("JMS-41")
def jms41(ctx: CheckContext) -> Verdict:
    connection, session, queue = _session(ctx)
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
    return passed("a null destination refused with InvalidDestinationRuntimeException")


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
    connection, session, queue = _session(ctx)
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
    _, session, queue = _session(ctx)
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
    connection, session, queue = _session(ctx)
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
    connection, session, queue = _session(ctx)
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
    time.sleep(0.3)
    ctx.expect_equal(calls, ["1"], "onMessage calls (close inside the first)")
    return passed("close() inside onMessage returned; no further message delivered")


@check("JMS-63")
def jms63(ctx: CheckContext) -> Verdict:
    connection, session, queue = _session(ctx)
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
    return passed("wrong body type refused; the message came next, not counted as redelivered")


@check("JMS-65")
def jms65(ctx: CheckContext) -> Verdict:
    connection, session, _ = _session(ctx)
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
