"""JMSMessageID / JMSCorrelationID <-> AMQP id conversions and id generation (Qpid JMS rules)."""

from __future__ import annotations

import re
import threading
import uuid
from typing import Any

import pytest
from proton import symbol, ulong

from jmspy._amqp.ids import (
    IdConversionError,
    IdGenerator,
    MessageIdGenerator,
    MessageIdPolicy,
    consumer_id,
    producer_id,
    session_id,
    to_correlation_id_string,
    to_id_object,
    to_message_id_string,
)

U = uuid.UUID("0e8a4a1c-8d2c-4a0e-9b51-3b0f2a6f9e11")

# (AMQP id, JMSMessageID string, JMSCorrelationID string)
ID_TABLE: list[tuple[Any, str, str]] = [
    (U, f"ID:AMQP_UUID:{U}", f"ID:AMQP_UUID:{U}"),
    (ulong(0), "ID:AMQP_ULONG:0", "ID:AMQP_ULONG:0"),
    (ulong(2**64 - 1), f"ID:AMQP_ULONG:{2**64 - 1}", f"ID:AMQP_ULONG:{2**64 - 1}"),
    (b"\x01\xab\xff", "ID:AMQP_BINARY:01ABFF", "ID:AMQP_BINARY:01ABFF"),
    (b"", "ID:AMQP_BINARY:", "ID:AMQP_BINARY:"),
    ("plain", "ID:AMQP_NO_PREFIX:plain", "plain"),
    ("", "ID:AMQP_NO_PREFIX:", ""),
    ("ID:abc:1:1:1-1", "ID:abc:1:1:1-1", "ID:abc:1:1:1-1"),
    ("ID:", "ID:", "ID:"),
    (f"ID:AMQP_UUID:{U}", f"ID:AMQP_STRING:ID:AMQP_UUID:{U}", f"ID:AMQP_STRING:ID:AMQP_UUID:{U}"),
    ("ID:AMQP_ULONG:5", "ID:AMQP_STRING:ID:AMQP_ULONG:5", "ID:AMQP_STRING:ID:AMQP_ULONG:5"),
    ("ID:AMQP_BINARY:AB", "ID:AMQP_STRING:ID:AMQP_BINARY:AB", "ID:AMQP_STRING:ID:AMQP_BINARY:AB"),
    ("ID:AMQP_STRING:x", "ID:AMQP_STRING:ID:AMQP_STRING:x", "ID:AMQP_STRING:ID:AMQP_STRING:x"),
    (
        "ID:AMQP_NO_PREFIX:x",
        "ID:AMQP_STRING:ID:AMQP_NO_PREFIX:x",
        "ID:AMQP_STRING:ID:AMQP_NO_PREFIX:x",
    ),
    # An AMQP_ tag that is not one of the five prefixes is an ordinary ID: string.
    ("ID:AMQP_OTHER:x", "ID:AMQP_OTHER:x", "ID:AMQP_OTHER:x"),
    # The tag must directly follow ID:.
    ("ID:x:AMQP_UUID:y", "ID:x:AMQP_UUID:y", "ID:x:AMQP_UUID:y"),
    ("id:lowercase", "ID:AMQP_NO_PREFIX:id:lowercase", "id:lowercase"),
]


@pytest.mark.parametrize(("amqp_id", "message_id", "correlation_id"), ID_TABLE)
def test_to_strings(amqp_id: Any, message_id: str, correlation_id: str) -> None:
    assert to_message_id_string(amqp_id) == message_id
    assert to_correlation_id_string(amqp_id) == correlation_id


@pytest.mark.parametrize(("amqp_id", "message_id", "correlation_id"), ID_TABLE)
def test_round_trips_back_to_the_amqp_id(
    amqp_id: Any, message_id: str, correlation_id: str
) -> None:
    for text in (message_id, correlation_id):
        back = to_id_object(text)
        assert back == amqp_id
        assert type(back) is type(amqp_id)


def test_symbol_and_plain_int_ids() -> None:
    assert to_message_id_string(symbol("sym")) == "ID:AMQP_NO_PREFIX:sym"
    assert type(to_message_id_string(symbol("ID:x"))) is str
    assert to_message_id_string(7) == "ID:AMQP_ULONG:7"
    assert to_message_id_string(None) is None
    assert to_correlation_id_string(None) is None
    assert to_id_object(None) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"ID:AMQP_UUID:{str(U).upper()}", U),
        ("ID:AMQP_BINARY:0aff", b"\x0a\xff"),
        ("ID:AMQP_STRING:", ""),
        ("ID:AMQP_NO_PREFIX:", ""),
        ("no-prefix", "no-prefix"),
        ("ID:generated-1", "ID:generated-1"),
    ],
)
def test_to_id_object(text: str, expected: Any) -> None:
    assert to_id_object(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "ID:AMQP_UUID:not-a-uuid",
        "ID:AMQP_UUID:",
        "ID:AMQP_ULONG:abc",
        "ID:AMQP_ULONG:-1",
        "ID:AMQP_ULONG:+1",
        "ID:AMQP_ULONG: 1",
        f"ID:AMQP_ULONG:{2**64}",
        "ID:AMQP_ULONG:",
        "ID:AMQP_BINARY:ABC",
        "ID:AMQP_BINARY:GG",
        "ID:AMQP_BINARY:AB CD",
    ],
)
def test_bad_id_strings(text: str) -> None:
    with pytest.raises(IdConversionError):
        to_id_object(text)
    assert issubclass(IdConversionError, ValueError)


@pytest.mark.parametrize("bad", [-1, 2**64, 1.5, object(), True])
def test_unsupported_amqp_ids(bad: Any) -> None:
    with pytest.raises(IdConversionError):
        to_message_id_string(bad)


def test_connection_ids() -> None:
    gen = IdGenerator()
    first = gen.generate_id()
    second = gen.next_connection_id()
    m = re.fullmatch(r"ID:([0-9a-f-]{36}):1", first)
    assert m is not None
    uuid.UUID(m.group(1))
    assert second == first[:-1] + "2"
    assert IdGenerator().generate_id() != first
    assert IdGenerator(prefix="X-").generate_id().startswith("X-")


def test_session_producer_consumer_ids() -> None:
    s = session_id("ID:u:1", 3)
    assert s == "ID:u:1:3"
    assert producer_id(s, 2) == "ID:u:1:3:2"
    assert consumer_id(s, 5) == "ID:u:1:3:5"


def test_default_message_ids() -> None:
    gen = MessageIdGenerator("ID:u:1:3:2")
    assert gen.next() == "ID:u:1:3:2-1"
    assert gen() == "ID:u:1:3:2-2"
    # "ID:" is added only when the producer id lacks it.
    assert MessageIdGenerator("u:1:1:1").next() == "ID:u:1:1:1-1"
    # A generated id is sent as the same AMQP string.
    assert to_id_object("ID:u:1:3:2-1") == "ID:u:1:3:2-1"


def test_message_ids_are_unique_across_threads() -> None:
    gen = MessageIdGenerator("ID:p")
    seen: list[str] = []
    lock = threading.Lock()

    def work() -> None:
        ids = [gen.next() for _ in range(2000)]
        with lock:
            seen.extend(ids)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(seen)) == 8000


@pytest.mark.parametrize(
    ("policy", "pattern", "amqp_type"),
    [
        (MessageIdPolicy.UUID, r"ID:AMQP_UUID:[0-9a-f-]{36}", uuid.UUID),
        (MessageIdPolicy.UUID_STRING, r"ID:AMQP_NO_PREFIX:[0-9a-f-]{36}", str),
        (MessageIdPolicy.PREFIXED_UUID_STRING, r"ID:[0-9a-f-]{36}", str),
    ],
)
def test_uuid_message_id_policies(policy: MessageIdPolicy, pattern: str, amqp_type: type) -> None:
    gen = MessageIdGenerator("ID:p", policy)
    value = gen.next()
    assert re.fullmatch(pattern, value)
    assert gen.next() != value
    wire = to_id_object(value)
    assert type(wire) is amqp_type
    assert to_message_id_string(wire) == value
