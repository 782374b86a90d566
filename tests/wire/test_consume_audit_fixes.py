"""Consumers: a consumer without prefetch pulls one message for each receive() and for its
listener (it got nothing unless receive() had a timeout, and then only at the timeout's end);
receiveBody with the wrong body type keeps the credit window (it widened by one per call) and,
in a transaction, counts the message as received (JMS 2.0 section 8.6, rule JMS-64); a
DUPS_OK batch listener acknowledges its batches once idle (BL-10), not at a later turn that
may never come; recover() from a batch listener delivers the batch again; a listener that
raises is logged with what becomes of its message in the session's mode."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message as AmqpMessage

import jmspy

from .client_support import (
    FAST_OPTIONS,
    Clients,
    clients_fixture,
    in_thread,
    wait_for_disposition,
    wait_until,
    wire_barrier,
)
from .peer import ScriptedPeer
from .peer_coordinator import Coordinator

NO_PREFETCH = "jms.prefetchPolicy.all=0"


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


@pytest.mark.parametrize("timeout", [None, 60_000], ids=["no-timeout", "60s"])
def test_receive_pulls_a_message_at_once_without_prefetch(
    peer: ScriptedPeer, clients: Clients, timeout: int | None
) -> None:
    """receive() never returned; receive(60000) got the message only from the drain at the
    end of its timeout."""
    peer.enqueue("q", AmqpMessage(body="on the broker"), tag=b"t1")
    connection = clients.connect(peer, start=True, query=NO_PREFETCH)
    session = connection.createSession()
    consumer = session.createConsumer(session.createQueue("q"))
    received: list[Any] = []
    done, errors = in_thread(lambda: received.append(consumer.receive(timeout)))
    if not done.wait(10):
        consumer.close()  # ends the receive that would wait on
    assert done.wait(10) and not errors, errors
    assert received[0] is not None and received[0].getText() == "on the broker"
    attach = peer.wait_for_attach("q", role="receiver")
    assert [f.link_credit for f in peer.flows if f.link_name == attach.name] == [1]


def test_a_listener_pulls_one_message_at_a_time_without_prefetch(
    peer: ScriptedPeer, clients: Clients
) -> None:
    for i in range(3):
        peer.enqueue("q", AmqpMessage(body=f"m{i}"), tag=f"t{i}".encode())
    connection = clients.connect(peer, query=NO_PREFETCH)
    session = connection.createSession()
    consumer = session.createConsumer(session.createQueue("q"))
    got: list[str] = []
    all_three = threading.Event()

    def on_message(message: Any) -> None:
        got.append(message.getText())
        if len(got) == 3:
            all_three.set()

    consumer.setMessageListener(on_message)
    connection.start()
    assert all_three.wait(10), f"the listener got {got}"
    assert got == ["m0", "m1", "m2"]
    attach = peer.wait_for_attach("q", role="receiver")
    assert all(f.link_credit <= 1 for f in peer.flows if f.link_name == attach.name)


def test_receive_body_of_the_wrong_type_keeps_the_credit_window(peer: ScriptedPeer) -> None:
    for i in range(20):
        peer.enqueue("q", AmqpMessage(body=f"m{i}"), tag=f"t{i}".encode())
    factory = jmspy.ConnectionFactory(f"{peer.url}?jms.prefetchPolicy.all=4", **FAST_OPTIONS)
    with factory.createContext(jmspy.AUTO_ACKNOWLEDGE) as context:
        consumer = context.createConsumer(context.createQueue("q"))
        for _ in range(8):
            with pytest.raises(jmspy.MessageFormatRuntimeException):
                consumer.receiveBody(dict, 5000)
            # The credit each failure handed out has brought its transfer in by now.
            wire_barrier(context._connection)
        # Each failed receiveBody granted one more credit: 12 buffered with prefetch 4.
        assert consumer._consumer.getPrefetchedCount() <= 4
        assert consumer.receiveBody(str, 5000) == "m0"


def test_receive_body_of_the_wrong_type_in_a_transaction_counts_as_received(
    peer: ScriptedPeer, coordinator: Coordinator
) -> None:
    peer.enqueue("q", AmqpMessage(body="text-1"), tag=b"t1")
    peer.enqueue("q", AmqpMessage(body="text-2"), tag=b"t2")
    factory = jmspy.ConnectionFactory(peer.url, **FAST_OPTIONS)
    with factory.createContext(jmspy.SESSION_TRANSACTED) as context:
        consumer = context.createConsumer(context.createQueue("q"))
        with pytest.raises(jmspy.MessageFormatRuntimeException):
            consumer.receiveBody(dict, 5000)
        assert consumer.receiveBody(str, 5000) == "text-2"
        context.commit()
    # Both were accepted in the committed transaction.
    assert wait_for_disposition(peer, b"t1").settled


def test_a_dups_ok_batch_listener_acknowledges_once_idle(
    peer: ScriptedPeer, clients: Clients
) -> None:
    connection = clients.connect(peer, start=True)
    session = connection.createSession(jmspy.DUPS_OK_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue("q"))
    got: list[str] = []
    consumer.setBatchMessageListener(lambda ms: got.extend(m.getText() for m in ms), 10, 0)
    for i in range(3):
        peer.enqueue("q", AmqpMessage(body=f"m{i}"), tag=f"t{i}".encode())
    wait_until(lambda: len(got) == 3, timeout=10, what="the three messages delivered")
    for i in range(3):  # no later traffic: the acknowledgement must come by itself
        assert wait_for_disposition(peer, f"t{i}".encode(), timeout=10).settled


@pytest.mark.parametrize("mode", [jmspy.AUTO_ACKNOWLEDGE, jmspy.DUPS_OK_ACKNOWLEDGE])
def test_recover_inside_a_batch_listener_delivers_the_batch_again(
    peer: ScriptedPeer, clients: Clients, mode: int
) -> None:
    # As for onMessage (JMS 2.0 section 6.2.10): in AUTO and DUPS_OK mode a recover() from the
    # listener redelivers what it was given, flagged, instead of acknowledging it.
    connection = clients.connect(peer)
    session = connection.createSession(mode)
    consumer = session.createConsumer(session.createQueue("q"))
    calls: list[list[tuple[str, bool]]] = []

    def on_messages(messages: list[Any]) -> None:
        calls.append([(m.getText(), m.getJMSRedelivered()) for m in messages])
        if len(calls) == 1:
            session.recover()

    consumer.setBatchMessageListener(on_messages, 3, 0)
    for i in range(3):
        peer.enqueue("q", AmqpMessage(body=f"m{i}"), tag=f"t{i}".encode())
    wait_until(lambda: consumer.getPrefetchedCount() == 3, what="three buffered messages")
    connection.start()
    wait_until(lambda: len(calls) == 2, timeout=10, what="the batch delivered again")
    assert calls == [[(f"m{i}", False) for i in range(3)], [(f"m{i}", True) for i in range(3)]]
    for i in range(3):  # acknowledged once, after the second delivery
        assert wait_for_disposition(peer, f"t{i}".encode(), timeout=10).kind == "accepted"


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        (jmspy.AUTO_ACKNOWLEDGE, "redelivered under the redelivery policy"),
        (jmspy.CLIENT_ACKNOWLEDGE, "left unacknowledged"),
        (jmspy.SESSION_TRANSACTED, "commit() or rollback() decides"),
    ],
)
def test_a_listener_that_raises_is_logged_with_what_becomes_of_its_message(
    peer: ScriptedPeer,
    coordinator: Coordinator,
    clients: Clients,
    caplog: pytest.LogCaptureFixture,
    mode: int,
    said: str,
) -> None:
    connection = clients.connect(peer, start=True)
    session = connection.createSession(mode)
    consumer = session.createConsumer(session.createQueue("q"))

    def on_message(message: Any) -> None:
        raise RuntimeError("listener bug")

    with caplog.at_level("ERROR", logger="jmspy.consumer"):
        consumer.setMessageListener(on_message)
        peer.enqueue("q", AmqpMessage(body="m0"))
        wait_until(lambda: _listener_errors(caplog), timeout=10, what="the error logged")
    (record,) = _listener_errors(caplog)[:1]
    assert said in record.getMessage()
    assert ("redelivered" in record.getMessage()) == (mode == jmspy.AUTO_ACKNOWLEDGE)


def _listener_errors(caplog: pytest.LogCaptureFixture) -> list[Any]:
    return [r for r in caplog.records if "MessageListener raised" in r.getMessage()]
