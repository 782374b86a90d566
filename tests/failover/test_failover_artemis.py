"""Failover against a real Artemis that is killed (-9) and restarted on the same journal.

Every test counts: what the application sent and had accepted against what consumers took; 0
lost, and a message seen twice by a consumer always flagged ``JMSRedelivered``.
"""

from __future__ import annotations

import collections
import random
import threading
import time
from typing import Any

import pytest

import jmspy

from .failover_support import (
    LONG,
    Crash,
    Events,
    drain_bodies,
    failover_url,
    preload,
    unique_name,
    wait_until,
)

pytestmark = pytest.mark.timeout(900)


def _factory(info: Any, **options: Any) -> jmspy.ConnectionFactory:
    return jmspy.ConnectionFactory(failover_url(info.url, **options), info.username, info.password)


# ---- sends --------------------------------------------------------------------------------


def test_sync_persistent_sends_survive_a_kill_exactly_once(failover_artemis: Any) -> None:
    """(a) 5,000 persistent synchronous sends with kill -9 at a random point: every send
    returns normally, and the queue holds each message exactly once (duplicate detection)."""
    info = failover_artemis
    queue = unique_name("sync")
    total = 5000
    crash = Crash(info.broker, at=random.randint(500, 4000))
    events = Events()
    with _factory(info).createConnection() as connection:
        connection.setConnectionListener(events)
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        producer = session.createProducer(session.createQueue(queue))
        for i in range(total):
            producer.send(session.createTextMessage(str(i)))
            crash.tick()
        crash.join()
        events.wait("restored")  # notified just after the held sends were released
        assert events.count("interrupted") >= 1
        assert connection.getConnectedURI() == info.url
    found = drain_bodies(_factory(info), queue)
    assert set(found) == {str(i) for i in range(total)}, "messages lost"
    assert max(found.values()) == 1, f"stored twice: {[b for b, n in found.items() if n > 1]}"


def test_async_sends_with_completion_listeners_complete_exactly_once(
    failover_artemis: Any,
) -> None:
    """(b) Asynchronous sends with CompletionListeners across a kill: each listener is called
    exactly once, with success, and every message is on the queue once."""
    info = failover_artemis
    queue = unique_name("async")
    total = 3000
    crash = Crash(info.broker, at=random.randint(300, 2500))
    calls: collections.Counter[str] = collections.Counter()
    failures: list[str] = []
    lock = threading.Lock()

    class Listener:
        def onCompletion(self, message: jmspy.Message) -> None:
            with lock:
                calls[str(message.getBody(str))] += 1

        def onException(self, message: jmspy.Message, exception: Exception) -> None:
            with lock:
                calls[str(message.getBody(str))] += 1
                failures.append(f"{message.getBody(str)}: {exception}")

    listener = Listener()
    with _factory(info).createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        producer = session.createProducer(session.createQueue(queue))
        for i in range(total):
            producer.send(session.createTextMessage(str(i)), listener)
            crash.tick()
        crash.join()
        wait_until(lambda: sum(calls.values()) >= total, what="every CompletionListener call")
    assert not failures, failures[:5]
    assert all(calls[str(i)] == 1 for i in range(total)), "a listener was called twice or never"
    found = drain_bodies(_factory(info), queue)
    assert set(found) == {str(i) for i in range(total)}
    assert max(found.values()) == 1


# ---- consumers ------------------------------------------------------------------------------

MODES = {
    "auto": jmspy.AUTO_ACKNOWLEDGE,
    "client": jmspy.CLIENT_ACKNOWLEDGE,
    "dups-ok": jmspy.DUPS_OK_ACKNOWLEDGE,
    "transacted": jmspy.SESSION_TRANSACTED,
    "individual": jmspy.INDIVIDUAL_ACKNOWLEDGE,
}


def _acknowledge_each(messages: list[jmspy.Message]) -> None:
    """INDIVIDUAL_ACKNOWLEDGE: every message on its own, newest first; one delivered before
    the drop raises (it comes back redelivered) and the others are still acknowledged."""
    lost = 0
    for message in reversed(messages):
        try:
            message.acknowledge()
        except jmspy.IllegalStateException:
            lost += 1
    if lost:
        raise jmspy.IllegalStateException(f"{lost} acknowledgement(s) did not reach the broker")


@pytest.mark.parametrize("mode_name", list(MODES))
def test_consumers_resume_and_flag_redeliveries(failover_artemis: Any, mode_name: str) -> None:
    """(c) A consumer of each acknowledgement mode across a kill: nothing lost; a message
    taken again after the reconnect is flagged JMSRedelivered."""
    info = failover_artemis
    mode = MODES[mode_name]
    queue = unique_name(f"consume-{mode_name}")
    total = 1500
    preload(info, queue, total)
    crash = Crash(info.broker, at=random.randint(200, 1000))
    seen: collections.Counter[str] = collections.Counter()
    unflagged: list[str] = []
    events = Events()
    with _factory(info).createConnection() as connection:
        connection.setConnectionListener(events)
        session = connection.createSession(mode)
        consumer = session.createConsumer(session.createQueue(queue))
        connection.start()
        batch: list[str] = []
        batch_messages: list[jmspy.Message] = []
        last: jmspy.Message | None = None
        quiet = 0
        deadline = time.monotonic() + LONG
        # Until every message was seen, the connection is restored (not only the broker
        # process back: the reconnect may still be in its backoff), and nothing more arrives.
        # What the old transport delivered after the kill was never acknowledged and comes
        # back on the restored link, so stopping before the restore would leave it queued.
        while not (
            len(seen) == total and not batch and quiet >= 2 and events.count("restored") >= 1
        ):
            assert time.monotonic() < deadline, f"saw {len(seen)} of {total}"
            message = consumer.receive(1000)
            if message is None:
                # Quiet receives count only once the connection is restored.
                quiet = quiet + 1 if events.count("restored") else 0
            else:
                quiet = 0
                body = str(message.getBody(str))
                seen[body] += 1
                if seen[body] > 1 and not message.getJMSRedelivered():
                    unflagged.append(body)
                batch.append(body)
                batch_messages.append(message)
                last = message
                crash.tick()
            if batch and (message is None or len(batch) >= 10):
                try:
                    if mode == jmspy.SESSION_TRANSACTED:
                        session.commit()
                    elif mode == jmspy.CLIENT_ACKNOWLEDGE and last is not None:
                        last.acknowledge()
                    elif mode == jmspy.INDIVIDUAL_ACKNOWLEDGE:
                        _acknowledge_each(batch_messages)
                except jmspy.TransactionRolledBackException:
                    pass  # certainly rolled back: the batch comes back redelivered
                except jmspy.TransactionInDoubtException:
                    pass  # the kill hit the commit: what did not commit comes back
                except jmspy.IllegalStateException:
                    pass  # some were delivered before the drop: those come back redelivered
                batch = []
                batch_messages = []
        crash.join()
        events.wait("restored")  # the broker was lost and the connection restored
    assert set(seen) == {str(i) for i in range(total)}
    assert not unflagged, f"seen again without JMSRedelivered: {unflagged[:10]}"
    # Nothing is left behind on the queue once every message was processed.
    assert not drain_bodies(_factory(info), queue, quiet_ms=1500)


def test_listener_keeps_running_on_its_session_thread(failover_artemis: Any) -> None:
    """(d) A MessageListener across a kill: every message arrives, redeliveries flagged, all on
    one session thread; the ConnectionListener hears interrupted then restored, never on an
    engine thread; the ExceptionListener hears nothing."""
    info = failover_artemis
    queue = unique_name("listener")
    total = 1500
    preload(info, queue, total)
    crash = Crash(info.broker, at=random.randint(200, 1000))
    seen: collections.Counter[str] = collections.Counter()
    unflagged: list[str] = []
    threads: set[str] = set()
    exceptions: list[Exception] = []
    lock = threading.Lock()

    def on_message(message: jmspy.Message) -> None:
        with lock:
            body = str(message.getBody(str))
            seen[body] += 1
            if seen[body] > 1 and not message.getJMSRedelivered():
                unflagged.append(body)
            threads.add(threading.current_thread().name)
        crash.tick()

    events = Events()
    with _factory(info).createConnection() as connection:
        connection.setExceptionListener(exceptions.append)
        connection.setConnectionListener(events)
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        session.createConsumer(session.createQueue(queue)).setMessageListener(on_message)
        connection.start()
        wait_until(lambda: len(seen) >= total, what=f"{total} messages (have {len(seen)})")
        crash.join()
        events.wait("restored")
    assert not unflagged, unflagged[:10]
    assert len(threads) == 1, threads
    kinds = [kind for kind, _, _ in events.events]
    assert kinds.index("interrupted") < kinds.index("restored")
    assert not any(name.startswith("jmspy-engine") for name in events.threads())
    assert not exceptions


def test_durable_subscription_resumes(failover_artemis: Any) -> None:
    """(f) A durable subscriber across a kill: same subscription, nothing lost."""
    info = failover_artemis
    topic_name = unique_name("topic")
    total = 1000
    client_id = f"fo-durable-{time.monotonic_ns()}"
    factory = _factory(info, jms__clientID=client_id)
    crash = Crash(info.broker, at=random.randint(100, 800))
    seen: collections.Counter[str] = collections.Counter()
    unflagged: list[str] = []
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        topic = session.createTopic(topic_name)
        subscriber = session.createDurableConsumer(topic, "sub")
        producer = session.createProducer(topic)
        for i in range(total):
            producer.send(session.createTextMessage(str(i)))
        connection.start()
        deadline = time.monotonic() + LONG
        while len(seen) < total:
            assert time.monotonic() < deadline, f"received {len(seen)} of {total}"
            message = subscriber.receive(1000)
            if message is None:
                continue
            body = str(message.getBody(str))
            seen[body] += 1
            if seen[body] > 1 and not message.getJMSRedelivered():
                unflagged.append(body)
            crash.tick()
        crash.join()
        subscriber.close()
        session.unsubscribe("sub")
    assert not unflagged


def test_temporary_queue_consumer_fails_clearly_after_failover(failover_artemis: Any) -> None:
    info = failover_artemis
    events = Events()
    with _factory(info).createConnection() as connection:
        connection.setConnectionListener(events)
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        temporary = session.createTemporaryQueue()
        consumer = session.createConsumer(temporary)
        connection.start()
        info.broker.kill()
        info.broker.restart()
        events.wait("restored")
        with pytest.raises(jmspy.JMSException) as raised:
            consumer.receive(1000)
            consumer.receive(1000)
        assert "temporary destination" in str(raised.value)
        producer = session.createProducer(None)
        with pytest.raises(jmspy.IllegalStateException, match="lost with the connection"):
            producer.send(temporary, session.createTextMessage("reply"))
        # The connection itself is fine.
        queue = session.createQueue(unique_name("after-temp"))
        session.createProducer(queue).send(session.createTextMessage("ok"))
        assert session.createConsumer(queue).receive(10_000) is not None


def test_failover_to_a_second_broker(failover_artemis: Any, second_artemis: Any) -> None:
    """failover:(A,B) with A killed and never restarted: the application goes on against B."""
    a, b = failover_artemis, second_artemis
    factory = jmspy.ConnectionFactory(failover_url(a.url, b.url), a.username, a.password)
    queue = unique_name("two-brokers")
    events = Events()
    with factory.createConnection() as connection:
        connection.setConnectionListener(events)
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        producer = session.createProducer(session.createQueue(queue))
        producer.send(session.createTextMessage("on A"))
        assert connection.getConnectedURI() == a.url
        a.broker.kill()
        producer.send(session.createTextMessage("on B"))  # blocks through the reconnect
        assert connection.getConnectedURI() == b.url
        events.wait("restored")
        assert events.of("restored") == [b.url]
        consumer = session.createConsumer(session.createQueue(queue))
        connection.start()
        message = consumer.receive(20_000)
        assert message is not None and message.getBody(str) == "on B"
