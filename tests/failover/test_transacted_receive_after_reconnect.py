"""A transacted receive() after a reconnect declares a new transaction (the broker lost the
old one with the transport). That declare waits for the engine thread, which must still be
able to hand the consumer the messages arriving meanwhile: waiting while holding the lock
the engine thread needs to buffer an arrival froze the whole connection until
jms.requestTimeout, and the message taken was lost to the receive() that then failed."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from jmspy.conformance.faultproxy import FaultProxy

import jmspy

from .failover_support import Events, drain_bodies, failover_url, unique_name, wait_until

pytestmark = pytest.mark.timeout(600)

REQUEST_TIMEOUT_MS = 60_000


def test_declare_after_a_reconnect_lets_arrivals_in(
    failover_artemis: Any, fault_proxy: FaultProxy
) -> None:
    """After a reconnect, with one message prefetched, the proxy holds the broker's replies
    back while five more are sent to the queue and receive() takes the first and declares:
    when the replies are let through, the engine thread reads those transfers before the
    declare's answer. receive() returns the first message well within jms.requestTimeout,
    the rest follow and the transaction commits (the connection kept working)."""
    info = failover_artemis
    queue = unique_name("declare-after-reconnect")
    events = Events()
    url = failover_url(fault_proxy.url, jms__requestTimeout=REQUEST_TIMEOUT_MS)
    factory = jmspy.ConnectionFactory(url, info.username, info.password)
    plain = jmspy.ConnectionFactory(info.url, info.username, info.password)
    with factory.createConnection() as connection, plain.createConnection() as feeding:
        connection.setConnectionListener(events)
        session = connection.createSession(jmspy.SESSION_TRANSACTED)
        consumer = session.createConsumer(session.createQueue(queue))
        feed_session = feeding.createSession(jmspy.AUTO_ACKNOWLEDGE)
        feed = feed_session.createProducer(feed_session.createQueue(queue))
        connection.start()
        feed.send(feed_session.createTextMessage("before"))
        before = consumer.receive(20_000)
        assert before is not None and before.getBody(str) == "before"
        session.commit()  # the next transaction is declared at once, on this transport

        fault_proxy.cut()
        events.wait("restored")
        feed.send(feed_session.createTextMessage("first"))
        wait_until(lambda: consumer.getPrefetchedCount() == 1, what="the first message")

        fault_proxy.freeze_replies()
        held = fault_proxy.bytes_held
        for i in range(5):
            feed.send(feed_session.createTextMessage(f"more-{i}"))
        wait_until(lambda: fault_proxy.bytes_held > held, what="transfers held by the proxy")
        sent = fault_proxy.bytes_to_target
        outcome: list[object] = []
        took: list[float] = []

        def receive() -> None:
            started = time.monotonic()
            try:
                outcome.append(consumer.receive(REQUEST_TIMEOUT_MS * 2))
            except BaseException as exc:  # noqa: BLE001 - returned to the test
                outcome.append(exc)
            took.append(time.monotonic() - started)

        receiver = threading.Thread(target=receive)
        receiver.start()
        wait_until(lambda: fault_proxy.bytes_to_target > sent, what="the declare")
        fault_proxy.thaw()
        receiver.join(REQUEST_TIMEOUT_MS / 1000 * 3)
        assert not receiver.is_alive(), "receive() did not return"
        message = outcome[0]
        assert isinstance(message, jmspy.Message), repr(message)
        assert message.getBody(str) == "first"
        # Before the fix: a JMSException after the full jms.requestTimeout (60 s).
        assert took[0] < REQUEST_TIMEOUT_MS / 1000 / 3, f"receive() took {took[0]:.1f} s"

        rest = []
        for _ in range(5):
            more = consumer.receive(20_000)
            assert more is not None, f"only {len(rest)} of 5 further messages arrived"
            rest.append(more.getBody(str))
        assert sorted(rest) == [f"more-{i}" for i in range(5)]
        session.commit()
    assert not drain_bodies(plain, queue, quiet_ms=1500), "a committed message came back"
