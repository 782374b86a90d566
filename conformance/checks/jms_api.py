"""JMS-1..JMS-22: the JMS 2.0 client rules of connection factories, connections and sessions
(numbers from the project's JMS checklist; producers and consumers are in jms_api_send_receive)."""

from __future__ import annotations

import threading
from functools import partial
from typing import Any

import jmspy

from ..context import CheckContext
from ..model import Verdict, passed
from ..registry import check, fallback
from ._support import Deliveries, queue_session, send_texts, wait_blocked_in_receive


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
    connection, session, queue = queue_session(ctx)
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
    for mode in (4, -1, 7, 1.0, True):
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
    connection, session, queue = queue_session(ctx)
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
    connection, session, queue = queue_session(ctx)
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
    connection, session, queue = queue_session(ctx)
    consumer = session.createConsumer(queue)
    connection.start()
    result: list[Any] = []
    finished = threading.Event()

    def receiver() -> None:
        result.append(consumer.receive())
        finished.set()

    thread = threading.Thread(target=receiver, daemon=True, name="blocked-receive")
    thread.start()
    blocked = wait_blocked_in_receive(thread)
    ctx.expect(blocked and not finished.is_set(), result, "a receive blocked", "before close")
    connection.close()
    ctx.expect(finished.wait(5), "still blocked 5 s after close()", "receive() returned", "close")
    ctx.expect_equal(result, [None], "what the blocked receive returned")
    return passed("close() ended the blocked receive, which returned null")


@check("JMS-12")
def jms12(ctx: CheckContext) -> Verdict:
    connection, session, queue = queue_session(ctx, jmspy.CLIENT_ACKNOWLEDGE)
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
    connection, session, queue = queue_session(ctx)
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
    for args in ((9,), (-1,), (False, jmspy.SESSION_TRANSACTED), (False, 7), (1.0,), ([1],)):
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
    _, session, _ = queue_session(ctx)
    ctx.expect_raises(jmspy.IllegalStateException, session.commit, "Session.commit()")
    ctx.expect_raises(jmspy.IllegalStateException, session.rollback, "Session.rollback()")
    context = ctx.context()
    ctx.expect_raises(jmspy.IllegalStateRuntimeException, context.commit, "JMSContext.commit()")
    ctx.expect_raises(jmspy.IllegalStateRuntimeException, context.rollback, "JMSContext.rollback()")
    return passed("commit()/rollback() outside a transaction refused")


@check("JMS-19")
def jms19(ctx: CheckContext) -> Verdict:
    _, session, _ = queue_session(ctx, jmspy.SESSION_TRANSACTED)
    ctx.expect_raises(jmspy.IllegalStateException, session.recover, "Session.recover()")
    context = ctx.context(jmspy.SESSION_TRANSACTED)
    ctx.expect_raises(jmspy.IllegalStateRuntimeException, context.recover, "JMSContext.recover()")
    return passed("recover() on a transacted session refused")


@check("JMS-20")
def jms20(ctx: CheckContext) -> Verdict:
    connection, session, queue = queue_session(ctx)
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
    _, session, queue = queue_session(ctx)
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
    _, session, queue = queue_session(ctx)
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
