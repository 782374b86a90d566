"""A tracer provider, span processor or exporter that raises never reaches messaging: a
receive returns its message (it raised after acknowledging it: the message was lost), a
listener call counts as the listener's outcome (it raised after the listener returned: the
message was redelivered), and a provider that cannot give a tracer leaves consumers and
producers untraced instead of failing their creation (createConsumer raised StopIteration
with its link left attached, holding prefetched messages)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import opentelemetry.trace
import pytest
from otel_support import failing_spans
from proton import Message as AmqpMessage

import jmspy

from .client_support import Clients, clients_fixture, wait_for_disposition, wait_until
from .peer import ScriptedPeer


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _consumer(peer: ScriptedPeer, clients: Clients, mode: int = jmspy.AUTO_ACKNOWLEDGE) -> Any:
    peer.enqueue("q", AmqpMessage(body="precious"), tag=b"t1")
    connection = clients.connect(peer, tracing=True)
    session = connection.createSession(mode)
    return connection, session.createConsumer(session.createQueue("q"))


WHERE = pytest.mark.parametrize("where", ["end", "start"], ids=["on_end", "on_start"])


@WHERE
def test_a_receive_returns_its_message_when_spans_fail(
    peer: ScriptedPeer, clients: Clients, where: str
) -> None:
    connection, consumer = _consumer(peer, clients)
    connection.start()
    with failing_spans(where):
        message = consumer.receive(5000)
    assert message is not None and message.getText() == "precious"
    assert wait_for_disposition(peer, b"t1").kind == "accepted"


@WHERE
@pytest.mark.parametrize("batch", [False, True], ids=["listener", "batch-listener"])
def test_a_listener_that_returned_is_a_success_when_spans_fail(
    peer: ScriptedPeer, clients: Clients, batch: bool, where: str
) -> None:
    connection, consumer = _consumer(peer, clients)
    calls: list[str] = []
    called = threading.Event()

    def record(texts: list[str]) -> None:
        calls.extend(texts)
        called.set()

    if batch:
        consumer.setBatchMessageListener(lambda ms: record([m.getText() for m in ms]), 5, 0)
    else:
        consumer.setMessageListener(lambda m: record([m.getText()]))
    with failing_spans(where):
        connection.start()
        assert called.wait(10), "the listener was not called"
        disposition = wait_for_disposition(peer, b"t1")
    assert calls == ["precious"]
    assert disposition.kind == "accepted", disposition


def test_a_provider_that_gives_no_tracer_leaves_consumers_and_producers_untraced(
    peer: ScriptedPeer, clients: Clients, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_tracer(*args: Any, **kwargs: Any) -> Any:
        raise StopIteration  # what a misconfigured OTEL_PYTHON_TRACER_PROVIDER raises

    monkeypatch.setattr(opentelemetry.trace, "get_tracer", no_tracer)
    connection, consumer = _consumer(peer, clients)
    session = connection.createSession()
    session.createProducer(session.createQueue("out")).send(session.createTextMessage("x"))
    connection.start()
    message = consumer.receive(5000)
    assert message is not None and message.getText() == "precious"
    wait_until(lambda: peer.transfers, what="the send")


@WHERE
def test_a_send_succeeds_when_spans_fail(peer: ScriptedPeer, clients: Clients, where: str) -> None:
    connection = clients.connect(peer, tracing=True)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("q"))
    with failing_spans(where):
        producer.send(session.createTextMessage("sent"))  # persistent: the broker's outcome
    assert len(peer.transfers) == 1
