"""jmspy on the wire: Qpid JMS's jms.redeliveryPolicy.outcome decides the disposition a message
over the redelivery limit is settled with; without it the adapter's dead-letter outcome stays.

Expected values: Qpid JMS's JmsDefaultRedeliveryPolicy (the outcomes and their numbers) and
JmsMessageConsumer.applyRedeliveryPolicyOutcome (the consumer settles a message whose count is
over maxRedeliveries with the policy's outcome); AmqpSupport's MODIFIED_FAILED and
MODIFIED_FAILED_UNDELIVERABLE (delivery-failed, and undeliverable-here for the latter).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from proton import Message as AmqpMessage

from jmspy import AUTO_ACKNOWLEDGE, Connection, Message, TextMessage
from jmspy.redelivery import RedeliveryPolicy

from .client_support import Clients, clients_fixture, wait_for_disposition, wire_barrier
from .peer import DispositionRecord, ScriptedPeer

# Bounds a wait that, with the client right, ends as soon as the peer's transfer is read.
WAIT_S = 10.0

# Each outcome as the peer records it: (kind, delivery-failed, undeliverable-here).
ON_THE_WIRE = {
    "ACCEPTED": ("accepted", False, False),
    "REJECTED": ("rejected", False, False),
    "RELEASED": ("released", False, False),
    "MODIFIED_FAILED": ("modified", True, False),
    "MODIFIED_FAILED_UNDELIVERABLE": ("modified", True, True),
}
NUMBERS = {"ACCEPTED": 1, "REJECTED": 2, "RELEASED": 3, "MODIFIED_FAILED": 4}
NUMBERS["MODIFIED_FAILED_UNDELIVERABLE"] = 5


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _wire(record: DispositionRecord) -> tuple[str | None, bool, bool]:
    assert record.outcome is not None
    assert record.settled
    return record.kind, record.outcome.delivery_failed, record.outcome.undeliverable_here


def _receive_past_an_over_limit_message(
    peer: ScriptedPeer, clients: Clients, query: str, address: str = "q"
) -> tuple[Connection, DispositionRecord]:
    """A message whose header delivery-count is 5 (JMSXDeliveryCount 6, five redeliveries)
    under maxRedeliveries=1, then one within the limit: receive() returns the second, and the
    first is settled without reaching the application. ``address``: the queue q's address
    under the adapter."""
    peer.enqueue(address, AmqpMessage(body="over"), delivery_count=5, tag=b"over")
    peer.enqueue(address, AmqpMessage(body="next"), tag=b"next")
    connection = clients.connect(
        peer, start=True, query="jms.redeliveryPolicy.maxRedeliveries=1" + query
    )
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("q"))

    received = consumer.receive(int(WAIT_S * 1000))

    assert isinstance(received, TextMessage)
    assert received.getText() == "next"
    return connection, wait_for_disposition(peer, b"over", timeout=WAIT_S)


@pytest.mark.parametrize("outcome", list(ON_THE_WIRE))
@pytest.mark.parametrize("spelling", ["name", "lower case", "number"])
def test_a_message_over_the_limit_is_settled_with_the_chosen_outcome(
    peer: ScriptedPeer, clients: Clients, outcome: str, spelling: str
) -> None:
    given = {"name": outcome, "lower case": outcome.lower(), "number": str(NUMBERS[outcome])}
    connection, over = _receive_past_an_over_limit_message(
        peer, clients, f"&jms.redeliveryPolicy.outcome={given[spelling]}"
    )

    assert _wire(over) == ON_THE_WIRE[outcome]
    wire_barrier(connection)
    # Settled once, and with nothing else: no forward, no second disposition.
    assert [d for d in peer.dispositions if b"over" in d.delivery_tags] == [over]


@pytest.mark.parametrize(
    ("adapter", "expected"),
    [
        ("generic", ("rejected", False, False)),
        ("artemis", ("rejected", False, False)),
        ("qpid_broker_j", ("modified", True, True)),
    ],
)
def test_without_the_option_the_adapter_outcome_stays(
    peer: ScriptedPeer, clients: Clients, adapter: str, expected: tuple[str, bool, bool]
) -> None:
    _, over = _receive_past_an_over_limit_message(peer, clients, f"&jmspy.adapter={adapter}")

    assert _wire(over) == expected


def test_the_outcome_replaces_the_adapter_outcome_of_broker_j(
    peer: ScriptedPeer, clients: Clients
) -> None:
    _, over = _receive_past_an_over_limit_message(
        peer, clients, "&jmspy.adapter=qpid_broker_j&jms.redeliveryPolicy.outcome=REJECTED"
    )

    assert _wire(over) == ("rejected", False, False)


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        # RabbitMQ 3.x ends the session on a modified outcome: the nearest it knows instead.
        ("MODIFIED_FAILED", ("released", False, False)),
        ("MODIFIED_FAILED_UNDELIVERABLE", ("rejected", False, False)),
        # Settled as chosen, not forwarded to the dead-letter queue (no attach to it).
        ("REJECTED", ("rejected", False, False)),
    ],
)
def test_on_rabbitmq_3_the_outcome_is_sent_instead_of_the_forward(
    peer: ScriptedPeer, clients: Clients, outcome: str, expected: tuple[str, bool, bool]
) -> None:
    connection, over = _receive_past_an_over_limit_message(
        peer,
        clients,
        f"&jmspy.adapter=rabbitmq&jms.redeliveryPolicy.outcome={outcome}",
        address="/queue/q",
    )

    assert _wire(over) == expected
    wire_barrier(connection)
    assert [a.address for a in peer.attaches if a.role == "sender"] == []


def test_a_listener_failing_its_last_attempt_settles_with_the_chosen_outcome(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """The other way a message reaches the limit: its last allowed attempt fails."""
    # delivery-count 1: JMSXDeliveryCount 2, the last attempt maxRedeliveries=1 allows.
    peer.enqueue("q", AmqpMessage(body="last"), delivery_count=1, tag=b"last")
    connection = clients.connect(
        peer,
        start=True,
        query="jms.redeliveryPolicy.maxRedeliveries=1&jms.redeliveryPolicy.outcome=RELEASED",
    )
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("q"))
    seen: list[int | None] = []

    def fail(message: Message) -> None:
        seen.append(message.getIntProperty("JMSXDeliveryCount"))
        raise RuntimeError("cannot process it")

    consumer.setMessageListener(fail)

    assert _wire(wait_for_disposition(peer, b"last", timeout=WAIT_S)) == ON_THE_WIRE["RELEASED"]
    assert seen == [2]


def test_a_destination_policy_carries_its_own_outcome(peer: ScriptedPeer, clients: Clients) -> None:
    """Qpid JMS asks its policy for the outcome per destination; a destination's policy
    replaces the factory's, its outcome included."""
    peer.enqueue("q", AmqpMessage(body="over"), delivery_count=5, tag=b"over")
    peer.enqueue("q", AmqpMessage(body="next"), tag=b"next")
    connection = clients.connect(
        peer,
        start=True,
        query="jms.redeliveryPolicy.maxRedeliveries=1&jms.redeliveryPolicy.outcome=REJECTED",
    )
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    policy = RedeliveryPolicy.create(max_delivery_attempts=2, outcome="MODIFIED_FAILED")
    consumer = session.createConsumer(session.createQueue("q", redelivery=policy))

    received = consumer.receive(int(WAIT_S * 1000))

    assert isinstance(received, TextMessage) and received.getText() == "next"
    assert _wire(wait_for_disposition(peer, b"over", timeout=WAIT_S)) == ("modified", True, False)


def test_on_rabbitmq_3_without_the_option_the_forward_stays(
    peer: ScriptedPeer, clients: Clients
) -> None:
    """The adapter's handling unchanged: a copy goes to /queue/DLQ, then the original is
    accepted once the broker accepted the copy."""
    connection, over = _receive_past_an_over_limit_message(
        peer, clients, "&jmspy.adapter=rabbitmq", address="/queue/q"
    )

    assert _wire(over) == ("accepted", False, False)
    wire_barrier(connection)
    forwards = [a for a in peer.attaches if a.role == "sender"]
    assert [a.address for a in forwards] == ["/queue/DLQ"]
    assert len([t for t in peer.transfers if t.link_name == forwards[0].name]) == 1
