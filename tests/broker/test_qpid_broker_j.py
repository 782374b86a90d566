"""The jmspy client against a real Apache Qpid Broker-J 9.2.1 (the session's ``qpid_broker_j``
broker, provisioned by jmspy.conformance.brokers.qpid_broker_j): the facts the
``qpid_broker_j`` adapter states, re-checked.

Broker-J releases a held (delayed) message 8-13 s after it falls due, so delay tests bound
only the early side tightly and give the late side a minute.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from jmspy.adapters import qpid_broker_j as profile

import jmspy
from jmspy.redelivery import RedeliveryPolicy

EARLY_MS = 50

# The session's Broker-J start (set-up of the first test here) takes up to a minute under load,
# and held messages come 8-30 s late: more than the default 120 s per test.
pytestmark = pytest.mark.timeout(300)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _name(tag: str) -> str:
    return f"jmspy.bj.{tag}.{uuid.uuid4().hex[:10]}"


@pytest.fixture
def bj_factory(qpid_broker_j: Any) -> jmspy.ConnectionFactory:
    return jmspy.ConnectionFactory(
        qpid_broker_j.url, qpid_broker_j.username, qpid_broker_j.password, connect_timeout=15000
    )


@pytest.fixture
def bj_connection(bj_factory: jmspy.ConnectionFactory) -> Iterator[Any]:
    connection = bj_factory.createConnection()
    try:
        yield connection
    finally:
        connection.close()


def _provisioned(info: Any) -> Any:
    """The QpidBrokerJ (REST API) behind the fixture; skip for an external broker."""
    if info.broker is None:
        pytest.skip("needs the Broker-J provisioned by the session (its management API)")
    return info.broker


class AlwaysFails:
    """A listener that raises on every message and records each delivery's count."""

    def __init__(self) -> None:
        self.counts: list[int] = []
        self.lock = threading.Lock()

    def onMessage(self, message: Any) -> None:
        with self.lock:
            self.counts.append(message.getIntProperty("JMSXDeliveryCount"))
        raise RuntimeError("this listener always fails")

    def seen(self) -> list[int]:
        with self.lock:
            return list(self.counts)


def _wait_until(condition: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return bool(condition())
        time.sleep(0.05)
    return True


def test_adapter_is_detected_from_the_product_broker_j_sends(bj_connection: Any) -> None:
    meta = bj_connection.getMetaData()
    assert meta.getBrokerProduct() == "Apache Qpid Broker-J Core"
    assert meta.getAdapter() == "qpid_broker_j"
    offered = set(meta.getOfferedCapabilities())
    assert profile.PROFILE.expected_capabilities <= offered
    # Not on the connection: Broker-J offers it on each sending link instead.
    assert "DELAYED_DELIVERY" not in offered


def test_delivery_delay_is_accepted_per_link_and_never_early(bj_connection: Any) -> None:
    session = bj_connection.createSession()
    queue = session.createQueue(_name("delay"))
    fixed = session.createProducer(queue)
    fixed.setDeliveryDelay(1500)  # DD-1 passes: the link's target offers DELAYED_DELIVERY
    message = session.createTextMessage("fixed")
    fixed.send(message)
    anonymous = session.createProducer(None)
    anonymous.setDeliveryDelay(1500)
    anonymous.send(queue, session.createTextMessage("anonymous"))
    due = message.getJMSDeliveryTime()
    assert due - message.getJMSTimestamp() == 1500
    bj_connection.start()
    consumer = session.createConsumer(queue)
    got: dict[str, int] = {}
    deadline = time.monotonic() + 90
    while len(got) < 2 and time.monotonic() < deadline:
        received = consumer.receive(1000)
        if received is not None:
            got[received.getText()] = _now_ms()
    assert sorted(got) == ["anonymous", "fixed"], f"delayed messages within 90 s: {got}"
    for text, arrived in got.items():
        assert arrived >= due - EARLY_MS, f"{text!r} arrived {due - arrived} ms early"


def test_failing_listener_stops_at_the_default_limit_and_ends_in_dlq(bj_connection: Any) -> None:
    """No redelivery policy configured: the adapter's default (5 attempts, 200 ms apart)
    applies, and the provisioned queue's maximumDeliveryAttempts (also 5) moves the message
    to DLQ after the fifth failure."""
    limit = profile.DEFAULT_MAX_DELIVERY_ATTEMPTS
    session = bj_connection.createSession()
    queue = session.createQueue(_name("poison"))
    consumer = session.createConsumer(queue)
    assert consumer.getRedeliveryPolicy().max_delivery_attempts == limit
    listener = AlwaysFails()
    consumer.setMessageListener(listener)
    marker = uuid.uuid4().hex
    poison = session.createTextMessage("poison")
    poison.setStringProperty("marker", marker)
    session.createProducer(queue).send(poison)
    bj_connection.start()
    assert _wait_until(lambda: len(listener.seen()) >= limit, 60), listener.seen()
    dlq_session = bj_connection.createSession()
    dead = dlq_session.createConsumer(
        dlq_session.createQueue(profile.PROFILE.dead_letter_queue or "DLQ"), f"marker = '{marker}'"
    ).receive(30000)
    assert dead is not None, "the message did not reach DLQ"
    assert dead.getJMSMessageID() == poison.getJMSMessageID()
    # The message left the queue: no further attempt however long we look.
    time.sleep(1.0)
    assert listener.seen() == list(range(1, limit + 1))


def test_default_policy_cannot_loop_on_a_queue_without_a_limit(
    bj_factory: jmspy.ConnectionFactory, qpid_broker_j: Any
) -> None:
    """A queue with Broker-J's default (no maximumDeliveryAttempts, no alternate binding):
    the client stops after its attempt limit, and the message is still on the queue for
    other consumers, not lost."""
    broker = _provisioned(qpid_broker_j)
    name = _name("nolimit")
    broker.create_queue(name, maximumDeliveryAttempts=0)
    limit = profile.DEFAULT_MAX_DELIVERY_ATTEMPTS
    connection = bj_factory.createConnection()
    try:
        session = connection.createSession()
        queue = session.createQueue(name)
        listener = AlwaysFails()
        session.createConsumer(queue).setMessageListener(listener)
        session.createProducer(queue).send(session.createTextMessage("poison"))
        connection.start()
        assert _wait_until(lambda: len(listener.seen()) >= limit, 60), listener.seen()
        # Without the client limit Broker-J redelivers about a thousand times a second.
        time.sleep(2.0)
        assert listener.seen() == list(range(1, limit + 1))
        assert broker.queue_depth(name) == 1
    finally:
        connection.close()
    with bj_factory.createConnection() as later:
        later.start()
        session = later.createSession()
        again = session.createConsumer(session.createQueue(name))
        # Over the default limit it would be given up on arrival (rule RD-10): an explicit
        # unlimited policy is the application's choice and takes it.
        again.setRedeliveryPolicy(RedeliveryPolicy.create(max_delivery_attempts=-1))
        message = again.receive(15000)
        assert message is not None, "the message was lost"
        assert message.getIntProperty("JMSXDeliveryCount") == limit + 1
    assert _wait_until(lambda: broker.queue_depth(name) == 0, 30)


def test_topic_subscribers_each_get_a_copy_and_reply_to_stays_a_topic(
    bj_connection: Any,
) -> None:
    session = bj_connection.createSession()
    topic = session.createTopic(_name("topic"))
    first, second = session.createConsumer(topic), session.createConsumer(topic)
    message = session.createTextMessage("news")
    message.setJMSReplyTo(topic)
    session.createProducer(topic).send(message)
    bj_connection.start()
    one, two = first.receive(10000), second.receive(10000)
    assert one is not None and two is not None, "each subscriber gets its own copy"
    assert one.getText() == two.getText() == "news"
    assert one.getJMSDestination() == topic
    assert one.getJMSReplyTo() == topic


def test_refused_plain_names_the_offered_mechanisms_and_scram_works(qpid_broker_j: Any) -> None:
    """Broker-J's default provider allows PLAIN only over TLS: forcing PLAIN over TCP fails
    with an error naming what the server offered; the default choice (SCRAM) logs in."""
    url = _provisioned(qpid_broker_j).add_secure_only_port("strict-user", "strict-pass")
    plain_only = jmspy.ConnectionFactory(
        url, "strict-user", "strict-pass", connect_timeout=15000, **{"amqp.saslMechanisms": "PLAIN"}
    )
    connection = plain_only.createConnection()  # the AMQP open waits for the first use
    with pytest.raises(jmspy.JMSSecurityException) as refused:
        connection.start()
    connection.close()
    text = str(refused.value)
    assert "SCRAM-SHA-256" in text and "PLAIN" in text, text
    with jmspy.ConnectionFactory(
        url, "strict-user", "strict-pass", connect_timeout=15000
    ).createConnection() as scram:
        assert scram.getMetaData().getAdapter() == "qpid_broker_j"


# Two Broker-J starts of its own: 15-20 s each on an idle machine, a minute under load.
@pytest.mark.timeout(600)
def test_kill_and_restart_keep_a_persistent_message() -> None:
    """kill() is a crash (SIGKILL, work directory kept); restart() brings the broker back on
    the same port and store, and a persistent message sent before the crash is still there."""
    from jmspy.conformance.brokers.qpid_broker_j import QpidBrokerJ

    broker = QpidBrokerJ()
    try:
        broker.start()
        factory = jmspy.ConnectionFactory(
            broker.url, broker.username, broker.password, connect_timeout=15000
        )
        name = _name("crash")
        with factory.createConnection() as connection:
            session = connection.createSession()
            session.createProducer(session.createQueue(name)).send(
                session.createTextMessage("survives")
            )
        port = broker.port
        broker.kill()
        assert not broker.running
        broker.restart()
        assert broker.port == port
        with factory.createConnection() as connection:
            connection.start()
            session = connection.createSession()
            message = session.createConsumer(session.createQueue(name)).receive(30000)
            assert message is not None and message.getText() == "survives"
    finally:
        broker.stop()
