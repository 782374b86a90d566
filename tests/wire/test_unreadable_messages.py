"""Messages from other clients that jmspy cannot fully read.

A message whose ``x-opt-delivery-time`` annotation has the wrong type is delivered with the
annotation ignored and a WARNING (Qpid JMS ignores annotations it cannot use); one that cannot
be decoded at all is settled modified(delivery-failed, undeliverable-here) and the WARNING says
which section was wrong and how, not proton's bare ``DataException: [-4]: None``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from proton import Message as AmqpMessage
from proton import symbol

from jmspy import AUTO_ACKNOWLEDGE, Connection, MessageConsumer, Session, TextMessage

from .client_support import Clients, clients_fixture, wait_for_disposition
from .peer import ScriptedPeer

RECEIVE_MS = 5000


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _consume(peer: ScriptedPeer, clients: Clients) -> tuple[Connection, Session, MessageConsumer]:
    connection = clients.connect(peer, start=True)
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    return connection, session, session.createConsumer(session.createQueue("q"))


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and r.name.startswith("jmspy")
    ]


@pytest.mark.parametrize(
    "bad_value", ["2026-01-01T00:00:00Z", True, ["a", "list"], {"a": "map"}, b"\x01\x02"]
)
def test_delivery_time_annotation_of_the_wrong_type_is_ignored_with_a_warning(
    peer: ScriptedPeer, clients: Clients, caplog: pytest.LogCaptureFixture, bad_value: object
) -> None:
    caplog.set_level(logging.WARNING, logger="jmspy")
    message = AmqpMessage(body="still readable", id="ID:odd-1")
    message.creation_time = 1_700_000_000.0
    message.annotations = {symbol("x-opt-delivery-time"): bad_value}
    peer.enqueue("q", message, tag=b"odd")
    _, _, consumer = _consume(peer, clients)

    received = consumer.receive(RECEIVE_MS)

    assert isinstance(received, TextMessage)
    assert received.getText() == "still readable"
    assert received.getJMSDeliveryTime() == received.getJMSTimestamp() == 1_700_000_000_000
    assert wait_for_disposition(peer, b"odd").kind == "accepted"
    (warning,) = [w for w in _warnings(caplog) if "x-opt-delivery-time" in w]
    assert type(bad_value).__name__ in warning
    assert "ID:odd-1" in warning


def _section(code: int, encoded_value: bytes) -> bytes:
    return b"\x00\x53" + bytes([code]) + encoded_value


# properties list8 claiming 10 bytes with 1 field, then the payload ends
TRUNCATED_PROPERTIES = _section(0x73, b"\xc0\x0a\x01\xa1\x08abc")
# a valid header then an amqp-value str8 claiming 200 bytes of which 3 are present
TRUNCATED_BODY = _section(0x70, b"\x45") + _section(0x77, b"\xa1\xc8abc")


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (TRUNCATED_PROPERTIES, ["section 0 (properties)", "truncated"]),
        (TRUNCATED_BODY, ["section 1 (amqp-value)", "truncated"]),
        # header holding a map instead of a list
        (
            _section(0x70, b"\xc1\x03\x02\x41\x41") + _section(0x77, b"\xa1\x01x"),
            ["header section must hold a list", "not a map"],
        ),
        # header.priority holding a string (list8 of [true, "hi"])
        (
            _section(0x70, b"\xc0\x05\x02\x41\xa1\x02hi") + _section(0x77, b"\xa1\x01x"),
            ["header.priority holds a string"],
        ),
        # properties.message-id holding a list0
        (
            _section(0x73, b"\xc0\x02\x01\x45") + _section(0x77, b"\xa1\x01x"),
            ["properties.message-id", "list"],
        ),
        # application-properties holding a string
        (
            _section(0x74, b"\xa1\x02hi") + _section(0x77, b"\xa1\x01x"),
            ["application-properties section must hold a map", "not a string"],
        ),
    ],
)
def test_undecodable_message_warning_says_what_was_wrong(
    peer: ScriptedPeer,
    clients: Clients,
    caplog: pytest.LogCaptureFixture,
    payload: bytes,
    expected: list[str],
) -> None:
    caplog.set_level(logging.WARNING, logger="jmspy")
    peer.enqueue("q", payload, tag=b"bad")
    peer.enqueue("q", AmqpMessage(body="good"), tag=b"good")
    _, _, consumer = _consume(peer, clients)

    received = consumer.receive(RECEIVE_MS)

    assert isinstance(received, TextMessage) and received.getText() == "good"
    bad = wait_for_disposition(peer, b"bad")
    assert bad.kind == "modified"
    assert bad.outcome is not None and bad.outcome.undeliverable_here is True
    (warning,) = [w for w in _warnings(caplog) if "could not decode" in w]
    for text in expected:
        assert text in warning
    assert "None" not in warning.split(":", 1)[1]
