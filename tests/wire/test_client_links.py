"""jmspy on the wire: producer and consumer link attaches, refusals and send outcomes.

Expected values: shared/reference/qpid-jms.md section 2.4 (producer and consumer links), 2.2
(type capabilities) and 4 (outcomes on send).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Described, ulong

from jmspy import (
    DeliveryMode,
    InvalidDestinationException,
    JMSException,
    JMSSecurityException,
    ResourceAllocationException,
)

from .client_support import OUTCOMES, Clients, clients_fixture, wire_barrier
from .conftest import PeerFactory
from .peer import EndRecord, LinkScript, Outcome, ScriptedPeer
from .peer_coordinator import Coordinator

JMS_SELECTOR_CODE = 0x0000468C00000004
NO_LOCAL_CODE = 0x0000468C00000003


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


# ---- producer links ---------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "capability"), [("queue", "queue"), ("topic", "topic")])
def test_producer_target_has_the_address_and_type_capability(
    peer: ScriptedPeer, clients: Clients, kind: str, capability: str
):
    session = clients.connect(peer).createSession()
    destination = session.createQueue("orders") if kind == "queue" else session.createTopic("news")

    session.createProducer(destination)

    attach = peer.wait_for_attach(role="sender")
    assert attach.target is not None
    assert attach.target.address == destination.address
    assert attach.target.capabilities == [capability]
    assert attach.target.dynamic is False


def test_producer_source_lists_the_four_outcomes(peer: ScriptedPeer, clients: Clients):
    session = clients.connect(peer).createSession()

    session.createProducer(session.createQueue("q"))

    attach = peer.wait_for_attach("q", role="sender")
    assert attach.source is not None
    assert attach.source.outcomes == OUTCOMES


def test_producer_settle_modes_are_unsettled_and_first(peer: ScriptedPeer, clients: Clients):
    session = clients.connect(peer).createSession()

    session.createProducer(session.createQueue("q"))

    attach = peer.wait_for_attach("q", role="sender")
    assert attach.snd_settle_mode == 0  # unsettled: the peer settles every transfer
    assert attach.rcv_settle_mode in (None, 0)  # first (None: not sent, which means first)


def test_refused_producer_attach_is_invalid_destination(make_peer: PeerFactory, clients: Clients):
    peer = make_peer(links={"missing": LinkScript(refuse=("amqp:not-found", "no such queue"))})
    session = clients.connect(peer).createSession()

    with pytest.raises(InvalidDestinationException) as caught:
        session.createProducer(session.createQueue("missing"))

    assert "amqp:not-found" in str(caught.value)
    # The client answers the peer's closing detach with its own.
    assert peer.wait_for_detach().closed is True


def test_refused_consumer_attach_is_invalid_destination(make_peer: PeerFactory, clients: Clients):
    peer = make_peer(links={"missing": LinkScript(refuse=("amqp:not-found", "no such queue"))})
    session = clients.connect(peer).createSession()

    with pytest.raises(InvalidDestinationException):
        session.createConsumer(session.createQueue("missing"))


def test_refused_consumer_ends_the_session_begun_for_it(make_peer: PeerFactory, clients: Clients):
    """A broker that cannot drain (RabbitMQ 3.x) gets an AMQP session per consumer; when the
    consumer's attach is refused, that session is ended, so an application retrying
    createConsumer on a missing queue does not pile up sessions (broker channels)."""
    peer = make_peer(
        offered_capabilities=(),
        properties={"product": "RabbitMQ"},
        links={"/queue/missing": LinkScript(refuse=("amqp:not-found", "no queue 'missing'"))},
    )
    connection = clients.connect(peer)
    assert connection.getMetaData().getAdapter() == "rabbitmq"
    session = connection.createSession()
    amqp = connection._amqp
    assert amqp is not None
    sessions = len(amqp._sessions)
    for attempt in range(1, 4):
        with pytest.raises(InvalidDestinationException):
            session.createConsumer(session.createQueue("missing"))
        ends = peer.wait_for_records(EndRecord, count=attempt)
        assert len(ends) == attempt
        assert len(peer.begins) == 1 + attempt
        assert ends[-1].channel == peer.begins[-1].channel  # the consumer's own session
    # Its end was written after the session left the connection's set (see AmqpSession.close).
    assert len(amqp._sessions) == sessions


def test_refused_attach_leaves_the_session_usable(make_peer: PeerFactory, clients: Clients):
    peer = make_peer(links={"missing": LinkScript(refuse=("amqp:not-found", None))})
    session = clients.connect(peer).createSession()
    with pytest.raises(InvalidDestinationException):
        session.createProducer(session.createQueue("missing"))

    producer = session.createProducer(session.createQueue("present"))
    producer.send(session.createTextMessage("still works"))

    assert peer.wait_for_transfers(1)[0].link_name == peer.wait_for_attach("present").name


def test_link_refused_for_resource_limit_is_resource_allocation(
    make_peer: PeerFactory, clients: Clients
):
    peer = make_peer(links={"full": LinkScript(refuse=("amqp:resource-limit-exceeded", None))})
    session = clients.connect(peer).createSession()

    with pytest.raises(ResourceAllocationException):
        session.createConsumer(session.createQueue("full"))


# ---- send outcomes ----------------------------------------------------------------------------


def test_send_rejected_with_unauthorized_access_is_a_security_exception(
    make_peer: PeerFactory, clients: Clients
):
    rejected = Outcome.rejected("amqp:unauthorized-access", "not allowed to send")
    peer = make_peer(links={"secure": LinkScript(outcome=rejected)})
    session = clients.connect(peer).createSession()
    producer = session.createProducer(session.createQueue("secure"))

    with pytest.raises(JMSSecurityException) as caught:
        producer.send(session.createTextMessage("x"))  # PERSISTENT by default: a sync send

    assert "amqp:unauthorized-access" in str(caught.value)


def test_send_rejected_with_another_error_is_a_jms_exception(
    make_peer: PeerFactory, clients: Clients
):
    rejected = Outcome.rejected("amqp:internal-error", "disk full")
    peer = make_peer(links={"q": LinkScript(outcome=rejected)})
    session = clients.connect(peer).createSession()
    producer = session.createProducer(session.createQueue("q"))

    with pytest.raises(JMSException) as caught:
        producer.send(session.createTextMessage("x"))

    assert type(caught.value) is JMSException
    assert "amqp:internal-error" in str(caught.value)


@pytest.mark.parametrize("outcome", [Outcome.released(), Outcome.modified()])
def test_send_released_or_modified_fails_the_send(
    make_peer: PeerFactory, clients: Clients, outcome: Outcome
):
    peer = make_peer(links={"q": LinkScript(outcome=outcome)})
    session = clients.connect(peer).createSession()
    producer = session.createProducer(session.createQueue("q"))

    with pytest.raises(JMSException, match=outcome.kind):
        producer.send(session.createTextMessage("x"))


def test_persistent_send_without_credit_times_out(make_peer: PeerFactory, clients: Clients):
    peer = make_peer(links={"stuck": LinkScript(credit=0)})
    session = clients.connect(peer, send_timeout=500, close_timeout=500).createSession()
    producer = session.createProducer(session.createQueue("stuck"))

    with pytest.raises(JMSException, match="jms.sendTimeout"):
        producer.send(session.createTextMessage("x"))

    assert peer.transfers == []  # nothing may be sent without credit


def test_persistent_send_waits_for_the_disposition(make_peer: PeerFactory, clients: Clients):
    peer = make_peer(links={"silent": LinkScript(outcome=None)})  # never settles
    session = clients.connect(peer, send_timeout=500, close_timeout=500).createSession()
    producer = session.createProducer(session.createQueue("silent"))

    with pytest.raises(JMSException, match="jms.sendTimeout"):
        producer.send(session.createTextMessage("x"))

    (transfer,) = peer.transfers
    assert transfer.settled is False


def test_non_persistent_send_does_not_wait_for_the_disposition(
    make_peer: PeerFactory, clients: Clients
):
    peer = make_peer(links={"silent": LinkScript(outcome=None)})  # never settles
    session = clients.connect(peer, send_timeout=500, close_timeout=500).createSession()
    producer = session.createProducer(session.createQueue("silent"))
    producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)

    # A send that waited would fail after send_timeout; this one returns without an outcome.
    producer.send(session.createTextMessage("x"))

    (transfer,) = peer.wait_for_transfers(1)
    assert transfer.settled is False  # still sent unsettled (Qpid JMS does not presettle)


class _Outcomes:
    """A CompletionListener that records what it was told, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.done = threading.Event()

    def onCompletion(self, message: Any) -> None:
        self.calls.append(("completed", message.getText()))
        self.done.set()

    def onException(self, message: Any, exception: BaseException) -> None:
        self.calls.append(("exception: " + str(exception), message.getText()))
        self.done.set()


def test_an_async_send_the_peer_never_settles_is_reported_at_the_send_timeout(
    make_peer: PeerFactory, clients: Clients
):
    peer = make_peer(links={"silent": LinkScript(outcome=None)})  # never settles
    session = clients.connect(peer, send_timeout=500, close_timeout=500).createSession()
    producer = session.createProducer(session.createQueue("silent"))
    outcomes = _Outcomes()

    producer.send(session.createTextMessage("x"), outcomes)

    assert outcomes.done.wait(10), "the CompletionListener was never called"
    ((what, text),) = outcomes.calls
    assert text == "x"
    assert what.startswith("exception: ") and "jms.sendTimeout" in what
    peer.wait_for_transfers(1)


def test_async_sends_the_peer_accepts_complete_in_send_order(peer: ScriptedPeer, clients: Clients):
    session = clients.connect(peer).createSession()
    producer = session.createProducer(session.createQueue("q"))
    outcomes = _Outcomes()

    for i in range(50):
        producer.send(session.createTextMessage(f"m{i}"), outcomes)
    session.close()  # waits for the outstanding callbacks (JMS 2.0)

    assert outcomes.calls == [("completed", f"m{i}") for i in range(50)]
    assert len(peer.transfers) == 50


def test_persistent_send_is_accepted(peer: ScriptedPeer, clients: Clients):
    session = clients.connect(peer).createSession()
    producer = session.createProducer(session.createQueue("q"))

    producer.send(session.createTextMessage("x"))

    (transfer,) = peer.transfers  # the send returned, so the peer had it and accepted it
    assert transfer.settled is False


# ---- consumer links ---------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "capability"), [("queue", "queue"), ("topic", "topic")])
def test_consumer_source_address_capability_and_outcomes(
    peer: ScriptedPeer, clients: Clients, kind: str, capability: str
):
    session = clients.connect(peer).createSession()
    destination = session.createQueue("orders") if kind == "queue" else session.createTopic("news")

    session.createConsumer(destination)

    attach = peer.wait_for_attach(role="receiver")
    source = attach.source
    assert source is not None
    assert source.address == destination.address
    assert source.capabilities == [capability]
    assert source.outcomes == OUTCOMES
    assert source.filter == {}


def test_consumer_source_is_non_durable_and_expires_with_the_link(
    peer: ScriptedPeer, clients: Clients
):
    session = clients.connect(peer).createSession()

    session.createConsumer(session.createQueue("q"))

    source = peer.wait_for_attach("q", role="receiver").source
    assert source is not None
    assert source.durable == 0  # none
    assert source.expiry_policy == "link-detach"
    assert source.distribution_mode is None


def test_consumer_settle_modes(peer: ScriptedPeer, clients: Clients):
    session = clients.connect(peer).createSession()

    session.createConsumer(session.createQueue("q"))

    attach = peer.wait_for_attach("q", role="receiver")
    assert attach.snd_settle_mode == 0  # the peer sends unsettled: the client settles
    assert attach.rcv_settle_mode in (None, 0)


@pytest.mark.parametrize(
    ("query", "mode", "kind", "presettled"),
    [
        ("", 257, "queue", True),  # NO_ACKNOWLEDGE (rule JMS-68)
        ("", 100, "topic", True),  # ARTEMIS_PRE_ACKNOWLEDGE
        ("jms.presettlePolicy.presettleConsumers=true", 1, "topic", True),
        ("jms.presettlePolicy.presettleQueueConsumers=true", 2, "queue", True),
        ("jms.presettlePolicy.presettleQueueConsumers=true", 1, "topic", False),
        ("jms.presettlePolicy.presettleTopicConsumers=true", 3, "topic", True),
        ("jms.presettlePolicy.presettleTopicConsumers=true", 1, "queue", False),
        ("jms.presettlePolicy.presettleConsumers=true", 101, "queue", True),
    ],
)
def test_presettled_consumers_attach_settled(
    peer: ScriptedPeer, clients: Clients, query: str, mode: int, kind: str, presettled: bool
):
    """Rule WM-17: which consumers the no-acknowledgement modes and the presettle policy
    presettle, as Qpid JMS's JmsDefaultPresettlePolicy decides."""
    session = clients.connect(peer, query=query).createSession(mode)
    destination = session.createQueue("d") if kind == "queue" else session.createTopic("d")

    session.createConsumer(destination)

    attach = peer.wait_for_attach("d", role="receiver")
    assert attach.snd_settle_mode == (1 if presettled else 0)


def test_a_transacted_consumer_is_never_presettled(
    peer: ScriptedPeer, clients: Clients, coordinator: Coordinator
):
    connection = clients.connect(peer, query="jms.presettlePolicy.presettleConsumers=true")
    session = connection.createSession(True, 0)

    session.createConsumer(session.createQueue("q"))

    attach = peer.wait_for_attach("q", role="receiver")
    assert attach.snd_settle_mode == 0


@pytest.mark.parametrize(
    ("query", "mode", "kind", "presettled"),
    [
        ("jms.presettlePolicy.presettleAll=true", 1, "queue", True),
        ("jms.presettlePolicy.presettleProducers=true", 0, "topic", True),
        ("jms.presettlePolicy.presettleQueueProducers=true", 1, "queue", True),
        ("jms.presettlePolicy.presettleQueueProducers=true", 1, "topic", False),
        ("jms.presettlePolicy.presettleTopicProducers=true", 2, "topic", True),
        ("jms.presettlePolicy.presettleTransactedProducers=true", 1, "queue", False),
        ("jms.presettlePolicy.presettleConsumers=true", 1, "queue", False),
        ("", 257, "queue", False),  # NO_ACKNOWLEDGE presettles consumers, not producers
    ],
)
def test_presettled_producers_attach_settled(
    peer: ScriptedPeer,
    clients: Clients,
    coordinator: Coordinator,
    query: str,
    mode: int,
    kind: str,
    presettled: bool,
):
    """Rule WM-17: which producers the presettle policy presettles (JmsDefaultPresettlePolicy)."""
    session = clients.connect(peer, query=query).createSession(mode)
    destination = session.createQueue("d") if kind == "queue" else session.createTopic("d")

    session.createProducer(destination)

    attach = peer.wait_for_attach("d", role="sender")
    assert attach.snd_settle_mode == (1 if presettled else 0)


def test_a_presettled_persistent_send_is_settled_and_does_not_wait(
    make_peer: PeerFactory, clients: Clients
):
    peer = make_peer(links={"silent": LinkScript(outcome=None)})  # never settles
    query = "jms.presettlePolicy.presettleProducers=true"
    connection = clients.connect(peer, query=query, send_timeout=500, close_timeout=500)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("silent"))

    # Persistent, so synchronous: unsettled it would fail after send_timeout (see above).
    for text in ("a", "b"):
        producer.send(session.createTextMessage(text))

    transfers = peer.wait_for_transfers(2)
    assert [t.settled for t in transfers] == [True, True]
    # Tagged all the same: proton-c would write an empty tag (Qpid JMS's) as null.
    assert all(t.delivery_tag for t in transfers)
    producer.close()  # nothing unsettled to wait for


def test_an_anonymous_producer_presettles_by_destination(peer: ScriptedPeer, clients: Clients):
    """presettleQueueProducers on an anonymous producer: its relay link stays unsettled, its
    sends to queues go settled and those to topics do not (as Qpid JMS decides per send)."""
    query = "jms.presettlePolicy.presettleQueueProducers=true"
    session = clients.connect(peer, query=query).createSession()
    producer = session.createProducer(None)
    producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)

    producer.send(session.createQueue("q"), session.createTextMessage("to a queue"))
    producer.send(session.createTopic("t"), session.createTextMessage("to a topic"))

    attach = peer.wait_for_attach(role="sender")
    assert attach.snd_settle_mode == 0
    transfers = peer.wait_for_transfers(2)
    assert [t.settled for t in transfers] == [True, False]


def test_consumer_source_default_outcome_is_modified_delivery_failed(
    peer: ScriptedPeer, clients: Clients
):
    session = clients.connect(peer).createSession()

    session.createConsumer(session.createQueue("q"))

    source = peer.wait_for_attach("q", role="receiver").source
    assert source is not None
    assert source.default_outcome is not None
    assert source.default_outcome.kind == "modified"
    assert source.default_outcome.delivery_failed is True
    # The completed attach keeps everything else proton wrote.
    assert source.address == "q" and source.capabilities == ["queue"]
    assert len(source.outcomes) == 4


def test_consumer_selector_filter(peer: ScriptedPeer, clients: Clients):
    session = clients.connect(peer).createSession()

    session.createConsumer(session.createQueue("q"), "color = 'red' AND weight > 2")

    source = peer.wait_for_attach("q", role="receiver").source
    assert source is not None
    assert set(source.filter) == {"jms-selector"}
    described = source.filter["jms-selector"]
    assert isinstance(described, Described)
    assert described.descriptor == ulong(JMS_SELECTOR_CODE)
    assert type(described.descriptor) is ulong
    assert described.value == "color = 'red' AND weight > 2"


def test_blank_selector_sends_no_filter(peer: ScriptedPeer, clients: Clients):
    session = clients.connect(peer).createSession()

    session.createConsumer(session.createQueue("q"), "   ")

    source = peer.wait_for_attach("q", role="receiver").source
    assert source is not None
    assert source.filter == {}


def test_consumer_no_local_filter(peer: ScriptedPeer, clients: Clients):
    session = clients.connect(peer).createSession()

    session.createConsumer(session.createTopic("t"), None, True)

    source = peer.wait_for_attach("t", role="receiver").source
    assert source is not None
    assert set(source.filter) == {"no-local"}
    described = source.filter["no-local"]
    assert isinstance(described, Described)
    assert described.descriptor == ulong(NO_LOCAL_CODE)


def test_consumer_selector_and_no_local_together(peer: ScriptedPeer, clients: Clients):
    session = clients.connect(peer).createSession()

    session.createConsumer(session.createTopic("t"), "a = 1", True)

    source = peer.wait_for_attach("t", role="receiver").source
    assert source is not None
    assert set(source.filter) == {"jms-selector", "no-local"}
    assert source.filter["jms-selector"].value == "a = 1"


def test_no_local_false_sends_no_filter(peer: ScriptedPeer, clients: Clients):
    session = clients.connect(peer).createSession()

    session.createConsumer(session.createTopic("t"), None, False)

    source = peer.wait_for_attach("t", role="receiver").source
    assert source is not None
    assert source.filter == {}


def _initial_credit(peer: ScriptedPeer, link_name: str) -> int | None:
    flow = peer.wait_for_flow(lambda f: f.link_name == link_name)
    return flow.link_credit


def test_initial_credit_is_the_queue_prefetch_from_the_url(peer: ScriptedPeer, clients: Clients):
    session = clients.connect(peer, query="jms.prefetchPolicy.queuePrefetch=7").createSession()

    session.createConsumer(session.createQueue("q"))

    attach = peer.wait_for_attach("q", role="receiver")
    assert _initial_credit(peer, attach.name) == 7


def test_initial_credit_is_the_topic_prefetch_for_a_topic(peer: ScriptedPeer, clients: Clients):
    query = "jms.prefetchPolicy.queuePrefetch=7&jms.prefetchPolicy.topicPrefetch=11"
    session = clients.connect(peer, query=query).createSession()

    session.createConsumer(session.createTopic("t"))

    attach = peer.wait_for_attach("t", role="receiver")
    assert _initial_credit(peer, attach.name) == 11


def test_default_initial_credit_is_1000(peer: ScriptedPeer, clients: Clients):
    session = clients.connect(peer).createSession()

    session.createConsumer(session.createQueue("q"))

    attach = peer.wait_for_attach("q", role="receiver")
    assert _initial_credit(peer, attach.name) == 1000


def test_prefetch_zero_grants_no_credit_until_receive(peer: ScriptedPeer, clients: Clients):
    connection = clients.connect(peer, query="jms.prefetchPolicy.all=0")
    session = connection.createSession()

    session.createConsumer(session.createQueue("q"))
    attach = peer.wait_for_attach("q", role="receiver")
    wire_barrier(connection)

    assert [f for f in peer.flows if f.link_name == attach.name and f.link_credit] == []


def test_consumer_close_detaches_with_closed_true(peer: ScriptedPeer, clients: Clients):
    session = clients.connect(peer).createSession()
    consumer = session.createConsumer(session.createQueue("q"))
    attach = peer.wait_for_attach("q", role="receiver")

    consumer.close()

    detach = peer.wait_for_detach(attach.name)
    assert detach.closed is True
    assert detach.error is None


def test_producer_close_detaches_with_closed_true(peer: ScriptedPeer, clients: Clients):
    session = clients.connect(peer).createSession()
    producer = session.createProducer(session.createQueue("q"))
    attach = peer.wait_for_attach("q", role="sender")

    producer.close()

    detach = peer.wait_for_detach(attach.name)
    assert detach.closed is True
