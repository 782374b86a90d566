"""Bad input gives the documented JMS exception naming the option or value, at the setter or
factory, never a raw Python error (OverflowError, ValueError, AttributeError, TypeError)
later at connect or send."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import jmspy
from jmspy import ConnectionFactory, DeliveryMode
from jmspy._limits import JAVA_LONG_MAX, MAX_TIMEOUT_MS, UINT_MAX
from jmspy.errors import (
    IllegalArgumentException,
    JMSException,
    JMSRuntimeException,
    MessageFormatException,
)

from .client_support import P_ABSOLUTE_EXPIRY, Clients, clients_fixture
from .peer import ScriptedPeer


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


# ---- the factory and its URL ---------------------------------------------------------------


@pytest.mark.parametrize("url", [None, 5, b"amqp://localhost:5672"])
def test_url_that_is_not_a_str(url: Any) -> None:
    with pytest.raises(IllegalArgumentException, match="connection URL must be a str"):
        ConnectionFactory(url)


def test_unclosed_ipv6_bracket() -> None:
    with pytest.raises(IllegalArgumentException, match=r"invalid connection URL 'amqp://\[::1'"):
        ConnectionFactory("amqp://[::1")


def test_duplicated_url_option_is_refused_naming_it() -> None:
    with pytest.raises(IllegalArgumentException, match="jms.sendTimeout.*more than once"):
        ConnectionFactory("amqp://localhost?jms.sendTimeout=1000&jms.sendTimeout=2000")


def test_option_under_both_its_names_is_refused() -> None:
    with pytest.raises(IllegalArgumentException, match="jms.sendTimeout.*twice.*send_timeout"):
        ConnectionFactory("amqp://localhost?send_timeout=1000&jms.sendTimeout=2000")
    with pytest.raises(IllegalArgumentException, match="given twice"):
        ConnectionFactory("amqp://localhost", send_timeout=1000, **{"jms.sendTimeout": 2000})


def test_keyword_option_still_overrides_the_url() -> None:
    factory = ConnectionFactory("amqp://localhost?jms.sendTimeout=2000", send_timeout=1000)
    assert factory.options.send_timeout == 1000


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("amqp.idleTimeout", 10**12),
        ("amqp.idleTimeout", UINT_MAX + 1),
        ("amqp.maxFrameSize", 10**12),
        ("amqp.maxFrameSize", UINT_MAX + 1),
        ("jms.sendTimeout", 10**13),
        ("jms.connectTimeout", MAX_TIMEOUT_MS + 1),
        ("jms.closeTimeout", 10**13),
        ("jms.requestTimeout", 10**13),
        ("amqp.drainTimeout", 10**13),
        ("transport.sendBufferSize", 2**31),
        ("transport.receiveBufferSize", 2**31),
        ("jms.maxAsyncSendsInFlight", 2**31),
        ("jmspy.maxDeliveryDelay", 2**63),
        ("jms.redeliveryPolicy.maxRedeliveries", 2**31),
        ("amqp.idleTimeout", 1),
        ("amqp.idleTimeout", 999),
        ("amqp.idleTimeout", -1),
    ],
)
def test_numeric_option_out_of_bounds_names_the_option(option: str, value: int) -> None:
    for make in (
        lambda: ConnectionFactory(f"amqp://localhost?{option}={value}"),
        lambda: ConnectionFactory("amqp://localhost", **{option: value}),
    ):
        with pytest.raises(IllegalArgumentException) as caught:
            make()
        assert option in str(caught.value)
        assert str(value) in str(caught.value)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("amqp.idleTimeout", 0),
        ("amqp.idleTimeout", 1000),
        ("amqp.idleTimeout", UINT_MAX),
        ("amqp.maxFrameSize", UINT_MAX),
        ("jms.sendTimeout", MAX_TIMEOUT_MS),
    ],
)
def test_numeric_option_at_its_bound_is_accepted(option: str, value: int) -> None:
    ConnectionFactory(f"amqp://localhost?{option}={value}")


def test_largest_idle_timeout_and_frame_size_connect(peer: ScriptedPeer, clients: Clients) -> None:
    # These used to raise OverflowError from proton at connect.
    connection = clients.connect(peer, query=f"amqp.idleTimeout={UINT_MAX}")
    connection.start()
    connection = clients.connect(peer, query=f"amqp.maxFrameSize={UINT_MAX}")
    connection.start()


# ---- receive timeouts ----------------------------------------------------------------------


@pytest.mark.parametrize("timeout", [10**13, MAX_TIMEOUT_MS + 1, "5", -1, float("nan")])
def test_receive_timeout_out_of_range(peer: ScriptedPeer, clients: Clients, timeout: Any) -> None:
    connection = clients.connect(peer, start=True)
    session = connection.createSession()
    consumer = session.createConsumer(session.createQueue("q"))
    with pytest.raises(JMSException, match="receive timeout"):
        consumer.receive(timeout)
    context_consumer = clients.factory(peer).createContext()
    try:
        jms_consumer = context_consumer.createConsumer(context_consumer.createQueue("q"))
        with pytest.raises(JMSRuntimeException, match="receive timeout"):
            jms_consumer.receive(timeout)
        with pytest.raises(JMSRuntimeException, match="receive timeout"):
            jms_consumer.receiveBody(str, timeout)
    finally:
        context_consumer.close()


# ---- time to live and delivery delay -------------------------------------------------------


def test_time_to_live_beyond_a_java_long_is_refused_at_every_setter(
    peer: ScriptedPeer, clients: Clients
) -> None:
    connection = clients.connect(peer, start=True)
    session = connection.createSession()
    queue = session.createQueue("q")
    producer = session.createProducer(queue)
    with pytest.raises(JMSException, match=r"timeToLive 100000000000000000000 is too large"):
        producer.setTimeToLive(10**20)
    with pytest.raises(JMSException, match="deliveryDelay .* is too large"):
        producer.setDeliveryDelay(10**20)
    with pytest.raises(JMSException, match="timeToLive .* is too large"):
        producer.send(session.createTextMessage("x"), DeliveryMode.PERSISTENT, 4, 10**20)
    context = clients.factory(peer).createContext()
    try:
        jms_producer = context.createProducer()
        with pytest.raises(JMSRuntimeException, match="timeToLive .* is too large"):
            jms_producer.setTimeToLive(10**20)
        with pytest.raises(JMSRuntimeException, match="deliveryDelay .* is too large"):
            jms_producer.setDeliveryDelay(10**20)
    finally:
        context.close()
    assert peer.transfers == []


def test_largest_time_to_live_is_sent_with_the_expiry_capped(
    peer: ScriptedPeer, clients: Clients
) -> None:
    connection = clients.connect(peer, start=True)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("q"))
    message = session.createTextMessage("x")
    producer.send(message, DeliveryMode.PERSISTENT, 4, JAVA_LONG_MAX)
    assert message.getJMSExpiration() == JAVA_LONG_MAX
    (transfer,) = peer.wait_for_transfers(1)
    # header.ttl is a uint: a longer time to live is carried by absolute-expiry-time only.
    header = transfer.section(0x70)
    assert len(header) < 3 or header[2] is None
    assert transfer.section(0x73)[P_ABSOLUTE_EXPIRY] == JAVA_LONG_MAX


@pytest.mark.parametrize("setter", ["setJMSExpiration", "setJMSTimestamp", "setJMSDeliveryTime"])
@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, "x", 1.5, None])
def test_message_time_headers_are_java_longs(setter: str, value: Any) -> None:
    message = jmspy.TextMessage("x")
    with pytest.raises(JMSException, match=setter[3:]):
        getattr(message, setter)(value)


def test_send_with_a_destination_and_half_the_qos_arguments(
    peer: ScriptedPeer, clients: Clients
) -> None:
    connection = clients.connect(peer, start=True)
    session = connection.createSession()
    producer = session.createProducer(None)
    with pytest.raises(JMSException, match="deliveryMode, priority and timeToLive"):
        producer.send(session.createQueue("q"), session.createTextMessage("x"), 2, 4)


# ---- byte values ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["text", 5])
def test_byte_setters_refuse_non_bytes(value: Any) -> None:
    with pytest.raises(MessageFormatException, match="writeBytes needs bytes"):
        jmspy.BytesMessage().writeBytes(value)
    with pytest.raises(MessageFormatException, match="writeBytes needs bytes"):
        jmspy.StreamMessage().writeBytes(value)
    with pytest.raises(MessageFormatException, match="setBytes needs bytes"):
        jmspy.MapMessage().setBytes("k", value)
    message = jmspy.TextMessage("x")
    with pytest.raises(JMSException, match="setJMSCorrelationIDAsBytes needs bytes"):
        message.setJMSCorrelationIDAsBytes(value)
    assert message.getJMSCorrelationIDAsBytes() is None
