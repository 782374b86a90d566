"""The pure-Python AMQP reader against proton.Data: message sections, and decode_message with and
without the reader.

The reference is the codec's own proton.Data path (``codec._proton_values``), which is what the
codec used for every message before the reader and still uses for whatever the reader declines.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from amqp_reader_support import (
    U,
    c8,
    same,
    sym8,
)
from proton import (
    Data,
    Described,
    symbol,
    ulong,
)
from proton import Message as ProtonMessage

from jmspy._amqp import amqp_reader, codec
from jmspy._amqp.amqp_reader import (
    AmqpDecodeError,
    read_sections,
)
from jmspy._amqp.codec import CodecError, decode_message, encode_message
from jmspy.destination import Queue, TemporaryQueue, Topic
from jmspy.message import (
    BytesMessage,
    DeliveryMode,
    JChar,
    JFloat,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)

# ---------------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------------


def _proton_pairs(payload: bytes) -> list[tuple[Any, Any]]:
    return list(codec._proton_sections(payload))


def _messages() -> list[bytes]:
    out: list[bytes] = []

    def stamped(m: Message) -> Message:
        m.setJMSDestination(Queue("q"))
        m.setJMSMessageID("ID:conn:1:1:1-1")
        m.setJMSTimestamp(1_700_000_000_000)
        return m

    b = BytesMessage()
    b.writeBytes(bytes(range(256)) * 4)
    out.append(encode_message(stamped(b), ttl=0, delivery_time_transmitted=False))
    t = TextMessage()
    t.setText("hello")
    t.setStringProperty("customer", "acme")
    t.setIntProperty("count", 42)
    t.setBooleanProperty("urgent", True)
    t.setJMSReplyTo(TemporaryQueue("reply"))
    t.setJMSCorrelationID("corr")
    t.setJMSDeliveryMode(DeliveryMode.NON_PERSISTENT)
    t.setJMSPriority(7)
    out.append(encode_message(stamped(t), ttl=5000, delivery_time_transmitted=True))
    m = MapMessage()
    for i in range(10):
        m.setString(f"s{i}", "v" * i)
        m.setDouble(f"d{i}", i / 3)
    m.setBytes("b", b"\x00\x01")
    m.setChar("c", JChar("x"))
    m.setFloat("f", JFloat(1.5))
    out.append(encode_message(stamped(m), ttl=0, delivery_time_transmitted=False))
    s = StreamMessage()
    for v in (1, "two", 3.0, b"four", None, True):
        s.writeObject(v)
    out.append(encode_message(stamped(s), ttl=0, delivery_time_transmitted=False))
    o = ObjectMessage()
    o.setObject({"a": [1, 2, {"b": None}]})
    out.append(encode_message(stamped(o), ttl=0, delivery_time_transmitted=False))
    out.append(encode_message(stamped(TextMessage()), ttl=0, delivery_time_transmitted=False))
    out.append(encode_message(Message(), ttl=0, delivery_time_transmitted=False))
    out.append(
        ProtonMessage(
            id=U,
            correlation_id=ulong(7),
            body={"k": [1, 2]},
            properties={"p": "v"},
            annotations={symbol("x-opt-foo"): "bar"},
            durable=True,
            ttl=1000,
            delivery_count=3,
        ).encode()
    )
    out.append(ProtonMessage(body=b"raw", content_type="text/plain").encode())
    out.append(ProtonMessage(body=["a", 1]).encode())
    return out


@pytest.mark.parametrize("payload", _messages(), ids=lambda p: p[:16].hex())
def test_sections_match_proton(payload: bytes) -> None:
    got = read_sections(payload)
    expected = _proton_pairs(payload)
    assert same([list(p) for p in got], [list(p) for p in expected])
    # and again, from the section cache for the repeating ones
    assert same([list(p) for p in read_sections(payload)], [list(p) for p in expected])


def test_cached_sections_are_fresh_containers() -> None:
    payload = _messages()[1]
    first = dict(read_sections(payload))
    first[ulong(0x70)].append("mutated")
    first[ulong(0x72)][symbol("mutated")] = 1
    second = dict(read_sections(payload))
    assert same(second[ulong(0x70)], dict(_proton_pairs(payload))[ulong(0x70)])
    assert same(second[ulong(0x72)], dict(_proton_pairs(payload))[ulong(0x72)])


def test_section_cache_is_bounded() -> None:
    for i in range(amqp_reader._SECTION_CACHE_SIZE * 2):
        d = Data()
        d.put_py_described(Described(ulong(0x72), {symbol("x-opt-n"): i}))
        read_sections(bytes(d.encode()))
    assert 0 < len(amqp_reader._SECTION_CACHE) <= amqp_reader._SECTION_CACHE_SIZE


def test_sections_with_symbolic_and_8bit_forms() -> None:
    payload = (
        b"\x00\xa3\x10amqp:header:list" + c8(0xC0, 1, b"\x41")
        + b"\x00\x53\x72" + c8(0xC1, 2, sym8("x-opt-jms-msg-type") + b"\x51\x03")
        + b"\x00\x53\x75\xa0\x03abc"
        + b"\x00\x53\x75" + b"\xb0\x00\x00\x00\x01d"
    )  # fmt: skip
    expected = [list(p) for p in _proton_pairs(payload)]
    assert same([list(p) for p in read_sections(payload)], expected)


def test_top_level_value_that_is_not_described_is_left_to_proton() -> None:
    with pytest.raises(AmqpDecodeError, match="not described"):
        read_sections(b"\x00\x53\x75\xa0\x00\x40")


# ---------------------------------------------------------------------------------------------
# decode_message: the same result through the reader and through proton.Data alone
# ---------------------------------------------------------------------------------------------


def _decode_both(payload: bytes, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> tuple[Any, Any]:
    def outcome() -> Any:
        try:
            msg = decode_message(payload, Topic("t"), now_ms=1, **kw)
        except CodecError as exc:
            return ("CodecError", str(exc))
        return (type(msg), vars(msg))

    fast = outcome()
    with monkeypatch.context() as m:

        def declined(data: Any) -> Any:
            raise AmqpDecodeError("forced")

        m.setattr(codec.proton_fallback, "read_sections", declined)
        reference = outcome()
    return fast, reference


@pytest.mark.parametrize("payload", _messages(), ids=lambda p: p[:16].hex())
def test_decode_message_same_with_and_without_reader(
    payload: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, reference = _decode_both(payload, monkeypatch)
    assert fast[0] != "CodecError", fast  # these are valid messages
    assert same(fast[0], reference[0]) and fast[1].keys() == reference[1].keys()
    for key in fast[1]:
        assert same(fast[1][key], reference[1][key]) or fast[1][key] == reference[1][key], key


def test_decode_message_errors_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Malformed and mutated payloads: same CodecError text, or the same message."""
    rng = random.Random(7)
    seeds = _messages()
    for _ in range(1500):
        buf = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 2)):
            if not buf:
                break
            if rng.random() < 0.7:
                buf[rng.randrange(len(buf))] = rng.randrange(256)
            else:
                del buf[rng.randrange(len(buf)) :]
        if not buf:
            continue
        fast, reference = _decode_both(bytes(buf), monkeypatch)
        if fast[0] == "CodecError":
            assert fast == reference, bytes(buf).hex()
        else:
            assert fast[0] is reference[0] and fast[1].keys() == reference[1].keys()
            for key in fast[1]:
                a, b = fast[1][key], reference[1][key]
                assert same(a, b) or a == b, (bytes(buf).hex(), key)


@pytest.mark.parametrize(
    "payload",
    [
        b"\x00\x53\x75\xb0\x00\x00\x04\x00abc",  # truncated data section
        b"\x00\x53\x73\xd0\x00\x00\x00\x10\x00\x00\x00\x02\xa1\x01",
        b"\x00\x53",
        b"\x00",
        b"\x40",
        b"\x00\x53\x77\xa1\x01\xff",
        b"\x00\x53\x70" + c8(0xC0, 5, b"\x40"),
        b"\x00\x53\x72" + c8(0xC1, 2, c8(0xC0, 0, b"") + b"\x40"),
    ],
    ids=lambda p: p.hex(),
)
def test_malformed_payload_raises_codec_error(payload: bytes) -> None:
    with pytest.raises(CodecError):
        decode_message(payload, None)


def test_jms_and_proton_messages_take_the_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    def unexpected(payload: Any) -> Any:
        raise AssertionError("fell back to proton.Data")

    monkeypatch.setattr(codec.proton_fallback, "_proton_sections", unexpected)
    for payload in _messages():
        for kind in (bytes, bytearray, memoryview):
            decode_message(kind(payload), Queue("q"))


@pytest.mark.parametrize(
    "payload",
    [
        # amqp-value holding a described value, then a footer: declined, read by proton.Data
        # (which loses the footer) exactly as before
        b"\x00\x53\x77\x00\xa3\x01x\xa1\x01y" + b"\x00\x53\x78" + c8(0xC1, 0, b""),
        ProtonMessage(body=Described(symbol("x"), "y")).encode(),
        # list sizes that do not match the elements, which proton ignores
        b"\x00\x53\x77" + b"\xc0\x01\x02\x40\x40",
        b"\x00\x53\x77" + b"\xc0\x05\x01\x40\x40\x40\x40",
        b"\x00\x53\x77" + c8(0xC1, 1, b"\x40"),
    ],
    ids=lambda p: p.hex(),
)
def test_declined_payloads_decode_as_before(
    payload: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(AmqpDecodeError):
        read_sections(payload)
    fast, reference = _decode_both(payload, monkeypatch)
    if fast[0] == "CodecError":
        assert fast == reference
        return
    assert fast[0] is reference[0] and fast[1].keys() == reference[1].keys()
    for key in fast[1]:
        assert same(fast[1][key], reference[1][key]) or fast[1][key] == reference[1][key], key
