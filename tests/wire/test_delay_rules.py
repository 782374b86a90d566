"""Delivery-delay rules and broker adapters on the wire: what is refused before anything is
written, and how each profile expresses a delay, an address and the annotations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from proton import timestamp

import jmspy
from jmspy import DeliveryMode, ReasonCode

from .client_support import Clients, clients_fixture, prop, sections_of, wire_barrier
from .peer import (
    APPLICATION_PROPERTIES,
    MESSAGE_ANNOTATIONS,
    PROPERTIES,
    LinkScript,
    Outcome,
    ScriptedPeer,
)

ARTEMIS_CAPS = (
    "sole-connection-for-container",
    "DELAYED_DELIVERY",
    "SHARED-SUBS",
    "ANONYMOUS-RELAY",
)
NO_DELAY_CAPS = ("sole-connection-for-container", "SHARED-SUBS", "ANONYMOUS-RELAY")


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _no_transfers(peer: ScriptedPeer, connection: Any) -> None:
    wire_barrier(connection)
    assert peer.transfers == [], "a refused send must not reach the wire"


# ---- DD-1: no delayed delivery ---------------------------------------------------------------


def test_dd1_message_producer_set_delivery_delay_without_capability(
    make_peer: Any, clients: Clients
) -> None:
    peer = make_peer(offered_capabilities=NO_DELAY_CAPS)
    connection = clients.connect(peer)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("q"))
    producer.setDeliveryDelay(0)  # always allowed
    with pytest.raises(jmspy.JMSException) as info:
        producer.setDeliveryDelay(1000)
    assert info.value.getErrorCode() == "MQRC_FUNCTION_NOT_SUPPORTED"
    assert info.value.reason_number == 2298
    assert info.value.rule_id == "DD-1"
    assert "1000" in str(info.value)
    producer.send(session.createTextMessage("no delay is fine"))
    assert len(peer.wait_for_transfers(1)) == 1


def test_dd1_jms_producer_raises_runtime_exception(make_peer: Any, clients: Clients) -> None:
    peer = make_peer(offered_capabilities=NO_DELAY_CAPS)
    factory = clients.factory(peer)
    with factory.createContext() as context:
        producer = context.createProducer()
        with pytest.raises(jmspy.JMSRuntimeException) as info:
            producer.setDeliveryDelay(500)
        assert info.value.getErrorCode() == "MQRC_FUNCTION_NOT_SUPPORTED"
        assert info.value.rule_id == "DD-1"
        assert producer.setDeliveryDelay(0) is producer


def test_dd1_link_level_capability_allows_delay(make_peer: Any, clients: Clients) -> None:
    """A broker offering DELAYED_DELIVERY only on the producer's link target (Qpid Broker-J)."""
    peer = make_peer(
        offered_capabilities=NO_DELAY_CAPS,
        links={"delayed": LinkScript(extra_capabilities=("DELAYED_DELIVERY",))},
    )
    connection = clients.connect(peer)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("delayed"))
    producer.setDeliveryDelay(2000)
    message = session.createTextMessage("later")
    producer.send(message)
    transfer = peer.wait_for_transfers(1)[0]
    annotations = sections_of(transfer)[MESSAGE_ANNOTATIONS]
    assert annotations["x-opt-delivery-time"] == message.getJMSDeliveryTime()


def test_dd1_anonymous_producer_checks_at_send(make_peer: Any, clients: Clients) -> None:
    """Without anonymous relay the producer's per-destination links are made at send, so the
    rule is checked there, before the transfer is written."""
    peer = make_peer(offered_capabilities=("sole-connection-for-container",))
    connection = clients.connect(peer)
    session = connection.createSession()
    producer = session.createProducer(None)
    producer.setDeliveryDelay(1000)  # support is not known yet
    with pytest.raises(jmspy.JMSException) as info:
        producer.send(session.createQueue("q"), session.createTextMessage("x"))
    assert info.value.rule_id == "DD-1"
    _no_transfers(peer, connection)


# ---- DD-2, DD-11, DD-12 on setters and send -----------------------------------------------


def test_dd2_checked_at_set_time_to_live_and_set_delivery_delay(
    peer: ScriptedPeer, clients: Clients
) -> None:
    session = clients.connect(peer).createSession()
    producer = session.createProducer(session.createQueue("q"))
    producer.setDeliveryDelay(5000)
    with pytest.raises(jmspy.JMSException) as info:
        producer.setTimeToLive(1000)
    assert info.value.reason_code is ReasonCode.MQRC_EXPIRY_ERROR
    assert "setTimeToLive" in str(info.value)
    producer.setTimeToLive(0)  # unlimited never conflicts
    producer.setDeliveryDelay(0)
    producer.setTimeToLive(1000)
    with pytest.raises(jmspy.JMSException) as info:
        producer.setDeliveryDelay(1001)
    assert info.value.rule_id == "DD-2"
    assert producer.getDeliveryDelay() == 0


def test_dd2_checked_at_send_with_per_send_time_to_live(
    peer: ScriptedPeer, clients: Clients
) -> None:
    connection = clients.connect(peer)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("q"))
    producer.setDeliveryDelay(5000)
    with pytest.raises(jmspy.JMSException) as info:
        producer.send(session.createTextMessage("x"), DeliveryMode.PERSISTENT, 4, 100)
    assert info.value.reason_code is ReasonCode.MQRC_EXPIRY_ERROR
    _no_transfers(peer, connection)


def test_dd12_ttl_shorter_than_a_queue_default_delay(peer: ScriptedPeer, clients: Clients) -> None:
    connection = clients.connect(peer)
    session = connection.createSession()
    queue = session.createQueue("q", default_delivery_delay=60_000)
    producer = session.createProducer(queue)
    producer.setTimeToLive(1000)
    with pytest.raises(jmspy.JMSException) as info:
        producer.send(session.createTextMessage("would never be claimed"))
    assert info.value.reason_code is ReasonCode.MQRC_EXPIRY_ERROR
    _no_transfers(peer, connection)


def test_dd2_jms_producer_setters(peer: ScriptedPeer, clients: Clients) -> None:
    with clients.factory(peer).createContext() as context:
        producer = context.createProducer().setDeliveryDelay(3000)
        with pytest.raises(jmspy.JMSRuntimeException) as info:
            producer.setTimeToLive(10)
        assert info.value.getErrorCode() == "MQRC_EXPIRY_ERROR"
        assert info.value.rule_id == "DD-2"


def test_dd11_maximum_delay_on_factory_and_destination(
    peer: ScriptedPeer, clients: Clients
) -> None:
    connection = clients.connect(peer, query="jmspy.maxDeliveryDelay=900000")
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("q"))
    producer.setDeliveryDelay(900_000)
    with pytest.raises(jmspy.JMSException) as info:
        producer.setDeliveryDelay(900_001)
    assert info.value.rule_id == "DD-11"
    capped = session.createProducer(session.createQueue("capped", max_delivery_delay=1000))
    with pytest.raises(jmspy.JMSException):
        capped.setDeliveryDelay(1001)
    anonymous = session.createProducer(None)
    anonymous.setDeliveryDelay(2000)
    with pytest.raises(jmspy.JMSException) as info:
        anonymous.send(
            session.createQueue("capped", max_delivery_delay=1000), session.createMessage()
        )
    assert info.value.rule_id == "DD-11"
    _no_transfers(peer, connection)


# ---- DD-3..DD-6: message and destination checks at send ------------------------------------


@pytest.mark.parametrize(
    ("prepare", "rule", "code"),
    [
        (
            lambda m: m.setIntProperty(jmspy.JMS_IBM_RETAIN, jmspy.RETAIN_PUBLICATION),
            "DD-3",
            "MQRC_OPTIONS_ERROR",
        ),
        (lambda m: m.setStringProperty("JMSXGroupID", "orders-1"), "DD-4", "MQRC_OPTIONS_ERROR"),
        (lambda m: m.setIntProperty("JMSXGroupSeq", 1), "DD-4", "MQRC_OPTIONS_ERROR"),
    ],
)
def test_dd3_dd4_message_restrictions(
    peer: ScriptedPeer, clients: Clients, prepare: Any, rule: str, code: str
) -> None:
    connection = clients.connect(peer)
    session = connection.createSession()
    producer = session.createProducer(session.createTopic("news"))
    message = session.createTextMessage("x")
    prepare(message)
    producer.send(message)  # without a delay it is fine
    producer.setDeliveryDelay(1000)
    with pytest.raises(jmspy.JMSException) as info:
        producer.send(message)
    assert info.value.rule_id == rule
    assert info.value.getErrorCode() == code
    wire_barrier(connection)
    assert len(peer.transfers) == 1


def test_dd5_clustered_destination(peer: ScriptedPeer, clients: Clients) -> None:
    connection = clients.connect(peer)
    session = connection.createSession()
    fixed = session.createProducer(session.createQueue("clustered", cluster_bind="on_open"))
    fixed.setDeliveryDelay(100)
    with pytest.raises(jmspy.JMSException) as info:
        fixed.send(session.createMessage())
    assert info.value.rule_id == "DD-5"
    assert info.value.getErrorCode() == "MQRC_OPTIONS_ERROR"
    ok = session.createProducer(session.createQueue("clustered2", cluster_bind="not_fixed"))
    ok.setDeliveryDelay(100)
    ok.send(session.createMessage())
    assert len(peer.wait_for_transfers(1)) == 1


def test_dd6_publication_failure_and_ibmmq_defaults(peer: ScriptedPeer, clients: Clients) -> None:
    connection = clients.connect(peer)
    session = connection.createSession()
    topic = session.createTopic("prices", persistent_delivery="all_durable")
    producer = session.createProducer(topic)
    producer.setDeliveryDelay(100)
    with pytest.raises(jmspy.JMSException) as info:
        producer.send(session.createMessage())
    assert info.value.rule_id == "DD-6"
    assert info.value.reason_number == 2502
    producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)
    producer.send(session.createMessage())  # non-persistent option unset: allowed
    assert len(peer.wait_for_transfers(1)) == 1


def test_dd6_through_jms_context_is_a_runtime_exception(
    peer: ScriptedPeer, clients: Clients
) -> None:
    with clients.factory(peer).createContext() as context:
        topic = context.createTopic("prices", persistent_delivery="all")
        with pytest.raises(jmspy.JMSRuntimeException) as info:
            context.createProducer().setDeliveryDelay(10).send(topic, "body")
        assert info.value.getErrorCode() == "MQRC_PUBLICATION_FAILURE"


# ---- DD-7, DD-10, DD-13, DD-16 on the wire ----------------------------------------------------


def test_dd7_expiration_counts_from_send_not_delivery(peer: ScriptedPeer, clients: Clients) -> None:
    session = clients.connect(peer).createSession()
    producer = session.createProducer(session.createQueue("q"))
    producer.setDeliveryDelay(5000)
    producer.setTimeToLive(20000)
    message = session.createTextMessage("x")
    producer.send(message)
    sent = message.getJMSTimestamp()
    assert message.getJMSDeliveryTime() == sent + 5000
    assert message.getJMSExpiration() == sent + 20000
    sections = sections_of(peer.wait_for_transfers(1)[0])
    assert prop(sections[PROPERTIES], 8) == timestamp(sent + 20000)  # absolute-expiry-time
    assert sections[MESSAGE_ANNOTATIONS]["x-opt-delivery-time"] == sent + 5000


def test_dd10_queue_default_delay_and_override(peer: ScriptedPeer, clients: Clients) -> None:
    session = clients.connect(peer).createSession()
    queue = session.createQueue("delayed", default_delivery_delay=30_000)
    producer = session.createProducer(queue)
    default = session.createTextMessage("default")
    producer.send(default)
    producer.setDeliveryDelay(1000)
    own = session.createTextMessage("own")
    producer.send(own)
    first, second = peer.wait_for_transfers(2)
    assert sections_of(first)[MESSAGE_ANNOTATIONS]["x-opt-delivery-time"] == (
        default.getJMSTimestamp() + 30_000
    )
    assert sections_of(second)[MESSAGE_ANNOTATIONS]["x-opt-delivery-time"] == (
        own.getJMSTimestamp() + 1000
    )


def test_dd13_delay_zero_adds_no_annotation(peer: ScriptedPeer, clients: Clients) -> None:
    session = clients.connect(peer).createSession()
    producer = session.createProducer(session.createQueue("q"))
    message = session.createTextMessage("now")
    producer.send(message)
    annotations = sections_of(peer.wait_for_transfers(1)[0])[MESSAGE_ANNOTATIONS]
    assert "x-opt-delivery-time" not in annotations
    assert message.getJMSDeliveryTime() == message.getJMSTimestamp()


def test_dd16_destination_default_priority(peer: ScriptedPeer, clients: Clients) -> None:
    session = clients.connect(peer).createSession()
    queue = session.createQueue("q", default_priority=8)
    default_producer = session.createProducer(queue)
    default_producer.send(session.createTextMessage("queue's priority"))
    explicit = session.createProducer(queue)
    explicit.setPriority(4)
    explicit.send(session.createTextMessage("producer's priority"))
    first, second = peer.wait_for_transfers(2)
    assert first.section(0x70)[1] == 8
    header = second.sections[0]
    assert header[0] == 0x70 and (len(header[1]) < 2 or header[1][1] is None)


def test_dd9_refused_delayed_send_names_destination(make_peer: Any, clients: Clients) -> None:
    peer = make_peer(
        links={
            "full": LinkScript(
                outcome=Outcome.rejected("amqp:resource-limit-exceeded", "address full")
            )
        }
    )
    session = clients.connect(peer).createSession()
    producer = session.createProducer(session.createQueue("full"))
    producer.setDeliveryDelay(1000)
    with pytest.raises(jmspy.ResourceAllocationException) as info:
        producer.send(session.createTextMessage("x"))
    assert "full" in str(info.value) and "address full" in str(info.value)
    assert len(peer.transfers) == 1, "nothing is retried silently"


# ---- adapters -----------------------------------------------------------------------------


def test_adapter_detected_from_product_and_shown_in_metadata(
    make_peer: Any, clients: Clients
) -> None:
    peer = make_peer(
        properties={"product": "apache-activemq-artemis"}, offered_capabilities=ARTEMIS_CAPS
    )
    assert clients.connect(peer).getMetaData().getAdapter() == "artemis"
    other = make_peer(properties={"product": "something-else"})
    assert clients.connect(other).getMetaData().getAdapter() == "generic"


def test_unknown_adapter_option_is_an_error() -> None:
    with pytest.raises(jmspy.IllegalArgumentException) as info:
        jmspy.ConnectionFactory("amqp://localhost:5672?jmspy.adapter=nope")
    assert "nope" in str(info.value)


def test_servicebus_adapter_writes_scheduled_enqueue_time(make_peer: Any, clients: Clients) -> None:
    peer = make_peer(offered_capabilities=("ANONYMOUS-RELAY",))
    session = clients.connect(peer, query="jmspy.adapter=servicebus").createSession()
    producer = session.createProducer(session.createQueue("sb"))
    producer.setDeliveryDelay(60_000)
    message = session.createTextMessage("scheduled")
    producer.send(message)
    annotations = sections_of(peer.wait_for_transfers(1)[0])[MESSAGE_ANNOTATIONS]
    assert annotations["x-opt-scheduled-enqueue-time"] == timestamp(message.getJMSDeliveryTime())
    assert "x-opt-delivery-time" not in annotations


def test_ibmmq_adapter_sends_no_annotations_and_refuses_delay(
    make_peer: Any, clients: Clients
) -> None:
    peer = make_peer(offered_capabilities=ARTEMIS_CAPS)
    connection = clients.connect(peer, query="jmspy.adapter=ibmmq")
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("DEV.QUEUE.1"))
    message = session.createTextMessage("x")
    message.setStringProperty("k", "v")
    producer.send(message)
    transfer = peer.wait_for_transfers(1)[0]
    assert MESSAGE_ANNOTATIONS not in transfer.section_codes
    assert sections_of(transfer)[APPLICATION_PROPERTIES] == {"k": "v"}
    # The profile overrides the broker's (here: Artemis-like) capability list.
    with pytest.raises(jmspy.JMSException) as info:
        producer.setDeliveryDelay(10)
    assert info.value.rule_id == "DD-1"


def test_ibmmq_adapter_topic_defaults_apply_to_dd6(make_peer: Any, clients: Clients) -> None:
    peer = make_peer()
    connection = clients.connect(peer, query="jmspy.adapter=ibmmq")
    session = connection.createSession()
    producer = session.createProducer(session.createTopic("prices"))
    with pytest.raises(jmspy.JMSException):
        producer.setDeliveryDelay(10)  # DD-1 first: MQ over AMQP has no delay at all


def test_rabbitmq_adapter_addresses(make_peer: Any, clients: Clients) -> None:
    peer = make_peer(offered_capabilities=(), properties={"product": "RabbitMQ"})
    connection = clients.connect(peer)
    assert connection.getMetaData().getAdapter() == "rabbitmq"
    session = connection.createSession()
    session.createProducer(session.createQueue("orders")).send(session.createTextMessage("x"))
    attach = peer.wait_for_attach(role="sender")
    assert attach.target.address == "/queue/orders"
    transfer = peer.wait_for_transfers(1)[0]
    assert prop(sections_of(transfer)[PROPERTIES], 2) == "/queue/orders"
    session.createConsumer(session.createTopic("prices.#"))
    receiver = peer.wait_for_attach(role="receiver")
    assert receiver.source.address == "/topic/prices.#"
    with pytest.raises(jmspy.JMSException) as info:
        session.createProducer(session.createQueue("q2")).setDeliveryDelay(1)
    assert info.value.getErrorCode() == "MQRC_FUNCTION_NOT_SUPPORTED"


def test_dd9_a_refused_send_through_the_anonymous_relay_names_a_short_destination(
    make_peer: Any, clients: Clients
) -> None:
    # The relay link knows no destination, so the producer adds its name to the error; a
    # name found anywhere in the reason as a substring ("a" in "address full") was taken for
    # already named.
    peer = make_peer(
        links=lambda attach: LinkScript(
            outcome=Outcome.rejected("amqp:resource-limit-exceeded", "address full")
        )
    )
    session = clients.connect(peer).createSession()
    producer = session.createProducer(None)
    producer.setDeliveryDelay(1000)
    with pytest.raises(jmspy.ResourceAllocationException) as info:
        producer.send(session.createQueue("a"), session.createTextMessage("x"))
    assert str(info.value) == (
        "send to a failed: send to the anonymous relay rejected: "
        "amqp:resource-limit-exceeded (address full)"
    )
