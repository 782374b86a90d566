"""Failover through a TCP proxy that cuts, freezes or holds back the broker's answers: the
faults that are hard to time with a real crash (a commit in doubt, a silent peer, a refused
login after a reconnect, many reconnects in a row)."""

from __future__ import annotations

import collections
import threading
import time
from typing import Any

import pytest
from jmspy.conformance.faultproxy import FaultProxy

import jmspy

from .failover_support import (
    Events,
    drain_bodies,
    failover_url,
    jmspy_threads,
    open_fds,
    preload,
    unique_name,
    wait_until,
)

pytestmark = pytest.mark.timeout(600)


def _through(proxy: FaultProxy, info: Any, **options: Any) -> jmspy.ConnectionFactory:
    return jmspy.ConnectionFactory(failover_url(proxy.url, **options), info.username, info.password)


@pytest.fixture(params=[False, True], ids=["own-engine-thread", "shared-event-loop"])
def shared_loop(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Options for the run: an engine thread per connection (the default), or the connection
    served by a shared event loop (transport.sharedEventLoopThreads), with which every
    failover and timeout behaviour must hold the same."""
    if not request.param:
        return {}
    return {"failover__nested__transport__sharedEventLoopThreads": 2}


def _plain_options(shared_loop: dict[str, Any]) -> dict[str, Any]:
    """The same choice for a connection without failover (keyword options)."""
    return {"transport.sharedEventLoopThreads": 2} if shared_loop else {}


def _take(consumer: jmspy.MessageConsumer, count: int) -> list[jmspy.Message]:
    taken = []
    while len(taken) < count:
        message = consumer.receive(20_000)
        assert message is not None, f"only {len(taken)} of {count} messages arrived"
        taken.append(message)
    return taken


def _commit_losing_the_answer(
    session: jmspy.Session | jmspy.JMSContext, proxy: FaultProxy
) -> BaseException | None:
    """commit() while the proxy holds the broker's answers: once the discharge went out and the
    broker answered it, the connection is cut. Returns what commit() raised (None: returned)."""
    sent_before = proxy.bytes_to_target
    proxy.freeze_replies()
    outcome: list[BaseException | None] = []

    def commit() -> None:
        try:
            session.commit()
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - returned to the test
            outcome.append(exc)

    committer = threading.Thread(target=commit)
    committer.start()
    wait_until(lambda: proxy.bytes_to_target > sent_before, what="the discharge")
    wait_until(lambda: proxy.bytes_held > 0, what="the broker's answer")
    proxy.cut()
    proxy.thaw()
    committer.join(120)
    assert outcome, "commit() did not return"
    return outcome[0]


def test_commit_whose_answer_is_lost_is_in_doubt(
    failover_artemis: Any, fault_proxy: FaultProxy, shared_loop: dict[str, Any]
) -> None:
    """(e) The discharge reaches the broker, which commits and answers; the answer never
    reaches the client (the proxy holds it, then the connection is cut). commit() raises
    TransactionInDoubtException, not TransactionRolledBackException, and indeed the broker
    committed: the messages consumed in the transaction never come back."""
    info = failover_artemis
    queue = unique_name("in-doubt")
    preload(info, queue, 10)
    events = Events()
    factory = _through(fault_proxy, info, jms__requestTimeout=120000, **shared_loop)
    with factory.createConnection() as connection:
        connection.setConnectionListener(events)
        session = connection.createSession(jmspy.SESSION_TRANSACTED)
        consumer = session.createConsumer(session.createQueue(queue))
        connection.start()
        _take(consumer, 10)
        error = _commit_losing_the_answer(session, fault_proxy)
        assert isinstance(error, jmspy.TransactionInDoubtException), repr(error)
        assert not isinstance(error, jmspy.TransactionRolledBackException)
        events.wait("restored")
        # The session goes on with a new transaction.
        session.createProducer(session.createQueue(queue + ".after")).send(
            session.createTextMessage("next")
        )
        session.commit()
    assert not drain_bodies(jmspy.ConnectionFactory(info.url, info.username, info.password), queue)


def test_transaction_interrupted_before_commit_is_rolled_back_for_certain(
    failover_artemis: Any, fault_proxy: FaultProxy
) -> None:
    info = failover_artemis
    queue = unique_name("rolled-back")
    preload(info, queue, 10)
    events = Events()
    with _through(fault_proxy, info).createConnection() as connection:
        connection.setConnectionListener(events)
        session = connection.createSession(jmspy.SESSION_TRANSACTED)
        consumer = session.createConsumer(session.createQueue(queue))
        producer = session.createProducer(session.createQueue(queue + ".out"))
        connection.start()
        first = _take(consumer, 10)
        producer.send(session.createTextMessage("sent in the lost transaction"))
        fault_proxy.cut()
        events.wait("restored")
        with pytest.raises(jmspy.TransactionRolledBackException):
            session.commit()
        again = _take(consumer, 10)
        assert sorted(m.getBody(str) for m in again) == sorted(m.getBody(str) for m in first)
        assert all(m.getJMSRedelivered() for m in again)
        session.commit()
    plain = jmspy.ConnectionFactory(info.url, info.username, info.password)
    assert not drain_bodies(plain, queue, quiet_ms=1500)
    assert not drain_bodies(plain, queue + ".out", quiet_ms=1500), "a discarded send arrived"


def test_jmscontext_commits_raise_the_runtime_twins(
    failover_artemis: Any, fault_proxy: FaultProxy
) -> None:
    info = failover_artemis
    queue = unique_name("context")
    preload(info, queue, 3)
    factory = _through(fault_proxy, info)
    with factory.createContext(jmspy.SESSION_TRANSACTED) as context:
        consumer = context.createConsumer(context.createQueue(queue))
        for _ in range(3):
            assert consumer.receive(20_000) is not None
        error = _commit_losing_the_answer(context, fault_proxy)
        assert isinstance(error, jmspy.TransactionInDoubtRuntimeException), repr(error)
        # A transaction whose connection was lost before commit() was called: rolled back.
        preload(info, queue, 3)
        for _ in range(3):
            assert consumer.receive(20_000) is not None
        connections = fault_proxy.accepted
        fault_proxy.cut()
        # The client noticed the loss once it connects again through the proxy.
        wait_until(lambda: fault_proxy.accepted > connections, what="the reconnect")
        with pytest.raises(jmspy.TransactionRolledBackRuntimeException):
            context.commit()


def test_wrong_password_on_reconnect_stops_at_once(
    failover_artemis: Any, fault_proxy: FaultProxy
) -> None:
    """A reconnect that meets a refused login does not keep trying: the ExceptionListener and
    the ConnectionListener hear JMSSecurityException after the first refused attempt."""
    from wire.peer import ScriptedPeer

    info = failover_artemis
    exceptions: list[jmspy.JMSException] = []
    events = Events()
    with ScriptedPeer(require_sasl=True, reject_credentials=True) as refusing:
        factory = _through(fault_proxy, info, failover__maxReconnectAttempts=50)
        with factory.createConnection() as connection:
            connection.setExceptionListener(exceptions.append)
            connection.setConnectionListener(events)
            connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
            fault_proxy.retarget(refusing.host, refusing.port)
            fault_proxy.cut()
            events.wait("failure", timeout=60)
            wait_until(lambda: exceptions, timeout=30, what="the ExceptionListener")
            assert isinstance(exceptions[0], jmspy.JMSSecurityException), repr(exceptions[0])
            assert isinstance(events.of("failure")[0], jmspy.JMSSecurityException)
            assert len(refusing.connects) == 1, "it tried again after a refused login"
            with pytest.raises(jmspy.JMSException):
                connection.createSession(jmspy.AUTO_ACKNOWLEDGE)


def test_silent_broker_is_detected_by_the_idle_timeout(
    failover_artemis: Any, fault_proxy: FaultProxy, shared_loop: dict[str, Any]
) -> None:
    """A broker that stops answering (TCP open, nothing flowing) is detected by
    amqp.idleTimeout and handled like a dropped connection."""
    info = failover_artemis
    queue = unique_name("idle")
    events = Events()
    factory = _through(fault_proxy, info, failover__nested__amqp__idleTimeout=2000, **shared_loop)
    with factory.createConnection() as connection:
        connection.setConnectionListener(events)
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        producer = session.createProducer(session.createQueue(queue))
        producer.send(session.createTextMessage("before"))
        fault_proxy.freeze()
        frozen_at = time.monotonic()
        events.wait("interrupted", timeout=60)
        detected = time.monotonic() - frozen_at
        fault_proxy.thaw()
        events.wait("restored")
        producer.send(session.createTextMessage("after"))
        consumer = session.createConsumer(session.createQueue(queue))
        connection.start()
        bodies = sorted(m.getBody(str) for m in _take(consumer, 2))
    assert bodies == ["after", "before"]
    assert detected < 60


def test_twenty_reconnects_leave_threads_and_fds_as_they_were(
    failover_artemis: Any, fault_proxy: FaultProxy, shared_loop: dict[str, Any]
) -> None:
    info = failover_artemis
    queue = unique_name("leaks")
    events = Events()
    received: collections.Counter[str] = collections.Counter()

    def on_message(message: jmspy.Message) -> None:
        received[str(message.getBody(str))] += 1

    with _through(fault_proxy, info, **shared_loop).createConnection() as connection:
        connection.setConnectionListener(events)
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        producer = session.createProducer(session.createQueue(queue))
        listening = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        listening.createConsumer(listening.createQueue(queue)).setMessageListener(on_message)
        connection.start()
        producer.send(session.createTextMessage("0"))
        wait_until(lambda: received["0"] >= 1, what="the first message")
        threads, fds = jmspy_threads(), open_fds()
        for round_ in range(1, 21):
            fault_proxy.cut()
            events.wait("restored", count=round_)
            producer.send(session.createTextMessage(str(round_)))
        wait_until(lambda: all(received[str(i)] for i in range(21)), what="every message")
        # No thread beyond those of before (a shared loop thread an earlier test left may end
        # meanwhile: it ends once it serves no connection, later on a busy machine).
        wait_until(
            lambda: (
                not collections.Counter(jmspy_threads()) - collections.Counter(threads)
                and open_fds() <= fds
            ),
            timeout=60,
            what=f"threads {threads} and {fds} fds (now {jmspy_threads()}, {open_fds()} fds)",
        )
    assert events.count("interrupted") == 20


@pytest.mark.parametrize("mode", [jmspy.NO_ACKNOWLEDGE, jmspy.CLIENT_ACKNOWLEDGE])
def test_a_presettled_consumer_keeps_its_prefetched_messages_across_a_cut(
    failover_artemis: Any, fault_proxy: FaultProxy, shared_loop: dict[str, Any], mode: int
) -> None:
    """A presettled consumer's broker settled what it sent and will not send it again (rules
    JMS-68, WM-17): what the consumer held when the connection was cut is handed over after
    the reconnect (Qpid JMS drops it), in order, and nothing of it stays on the queue. In
    CLIENT_ACKNOWLEDGE (presettled by the policy) acknowledging what was delivered before the
    cut raises nothing: there was nothing for the broker to redeliver."""
    info = failover_artemis
    queue = unique_name("presettled")
    preload(info, queue, 20)
    events = Events()
    options = {**shared_loop, "jms__presettlePolicy__presettleConsumers": "true"}
    with _through(fault_proxy, info, **options).createConnection() as connection:
        connection.setConnectionListener(events)
        session = connection.createSession(mode)
        consumer = session.createConsumer(session.createQueue(queue))
        connection.start()
        first = _take(consumer, 5)
        wait_until(lambda: consumer.getPrefetchedCount() == 15, what="15 messages prefetched")
        fault_proxy.cut()
        events.wait("restored")
        rest = _take(consumer, 15)
        bodies = [m.getBody(str) for m in first + rest]
        assert bodies == [str(i) for i in range(20)]
        rest[-1].acknowledge()  # CLIENT_ACKNOWLEDGE: all of them, the first five included
        assert consumer.receive(500) is None
    assert (
        drain_bodies(jmspy.ConnectionFactory(info.url, info.username, info.password), queue, 1000)
        == {}
    )


# ---- without failover: the same honesty (hardening) ------------------------------------------


def test_plain_connection_commit_whose_answer_is_lost_is_in_doubt(
    failover_artemis: Any, fault_proxy: FaultProxy
) -> None:
    """Without failover too, a commit whose outcome never came back is reported as unknown
    (TransactionInDoubtException), never as a rollback: here the broker did commit."""
    info = failover_artemis
    queue = unique_name("plain-in-doubt")
    preload(info, queue, 5)
    factory = jmspy.ConnectionFactory(fault_proxy.url, info.username, info.password)
    with factory.createConnection() as connection:
        connection.setExceptionListener(lambda exc: None)
        session = connection.createSession(jmspy.SESSION_TRANSACTED)
        consumer = session.createConsumer(session.createQueue(queue))
        connection.start()
        _take(consumer, 5)
        error = _commit_losing_the_answer(session, fault_proxy)
        assert isinstance(error, jmspy.TransactionInDoubtException), repr(error)
    plain = jmspy.ConnectionFactory(info.url, info.username, info.password)
    assert not drain_bodies(plain, queue, quiet_ms=1500), "the broker had committed"


@pytest.mark.parametrize("mode", [jmspy.CLIENT_ACKNOWLEDGE, jmspy.INDIVIDUAL_ACKNOWLEDGE])
def test_plain_connection_acknowledge_after_the_connection_died_raises(
    failover_artemis: Any, fault_proxy: FaultProxy, shared_loop: dict[str, Any], mode: int
) -> None:
    """CLIENT_ and INDIVIDUAL_ACKNOWLEDGE acknowledge() on a dead connection says the
    acknowledgement did not reach the broker (the messages come back), instead of returning
    as if it had."""
    info = failover_artemis
    queue = unique_name("plain-ack")
    preload(info, queue, 3)
    failures: list[jmspy.JMSException] = []
    factory = jmspy.ConnectionFactory(
        fault_proxy.url, info.username, info.password, **_plain_options(shared_loop)
    )
    with factory.createConnection() as connection:
        connection.setExceptionListener(failures.append)
        session = connection.createSession(mode)
        consumer = session.createConsumer(session.createQueue(queue))
        connection.start()
        messages = _take(consumer, 3)
        fault_proxy.cut()
        wait_until(lambda: failures, timeout=60, what="the connection failure")
        with pytest.raises(jmspy.IllegalStateException, match="did not reach the broker"):
            messages[-1].acknowledge()
        if mode == jmspy.INDIVIDUAL_ACKNOWLEDGE:
            with pytest.raises(jmspy.IllegalStateException, match="did not reach the broker"):
                messages[0].acknowledge()  # each message is its own acknowledgement
    plain = jmspy.ConnectionFactory(info.url, info.username, info.password)
    assert sorted(drain_bodies(plain, queue, quiet_ms=1500)) == ["0", "1", "2"]
