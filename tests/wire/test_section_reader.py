"""One AMQP section reader: the client's, used by the conformance suite and the test peer.

``jmspy._amqp.codec.read_message_sections`` (the pure-Python reader, proton.Data where it
declines) splits every message the client receives; ``jmspy.conformance.raw.parse_sections``
and the scripted peer's ``decode_sections`` are thin adapters over it that keep their own
record shapes. These tests pin that: the adapters give the reader's values, also on the proton
fallback path, and report what neither can read in their own way.
"""

from __future__ import annotations

import inspect

import pytest
from jmspy.conformance import raw
from proton import Described, Message, byte, symbol, ulong

from jmspy._amqp import amqp_reader
from jmspy._amqp.amqp_reader import AmqpDecodeError
from jmspy._amqp.codec import read_message_sections
from jmspy._native import source_path

from . import peer
from .peer import AMQP_VALUE, APPLICATION_PROPERTIES, HEADER, PROPERTIES, decode_sections

# An amqp-value section whose value is itself described: valid AMQP that the pure-Python
# reader leaves to proton.Data (see amqp_reader's module documentation).
DESCRIBED_IN_A_SECTION = bytes([0x00, 0x53, 0x77, 0x00, 0x53, 0x01, 0x40])


def _payload() -> bytes:
    return bytes(
        Message(
            body="hello",
            durable=True,
            priority=7,
            id=ulong(5),
            annotations={symbol("x-opt-jms-msg-type"): byte(5)},
            properties={"n": 1, "tags": ["a", "b"]},
        ).encode()
    )


def test_the_peer_and_the_conformance_suite_see_the_clients_values() -> None:
    payload = _payload()
    client = list(read_message_sections(payload))
    assert [code for code, _ in decode_sections(payload)] == [int(d) for d, _ in client]
    assert [value for _, value in decode_sections(payload)] == [value for _, value in client]
    parsed = raw.parse_sections(payload)
    assert parsed.sections == [
        "header",
        "message-annotations",
        "properties",
        "application-properties",
        "amqp-value",
    ]
    assert parsed.application_properties == dict(client[3][1])
    assert parsed.body == [("amqp-value", "hello")]
    codes = [code for code, _ in decode_sections(payload)]
    assert HEADER in codes and PROPERTIES in codes and APPLICATION_PROPERTIES in codes


def test_what_the_fast_reader_declines_goes_through_proton_for_everyone() -> None:
    with pytest.raises(AmqpDecodeError):
        amqp_reader.read_sections(DESCRIBED_IN_A_SECTION)
    expected = Described(ulong(1), None)
    assert list(read_message_sections(DESCRIBED_IN_A_SECTION)) == [(ulong(0x77), expected)]
    assert decode_sections(DESCRIBED_IN_A_SECTION) == [(AMQP_VALUE, expected)]
    assert raw.parse_sections(DESCRIBED_IN_A_SECTION).body == [("amqp-value", expected)]


def test_input_neither_path_reads_is_reported_in_each_adapters_way() -> None:
    garbage = b"\x00\x53\x77\xa1\xff"  # a str8 longer than the payload
    with pytest.raises(ValueError, match="undecodable AMQP data"):
        raw.parse_sections(garbage)
    assert decode_sections(garbage) == [(-1, garbage)]
    not_described = b"\x53\x05"  # a bare smallulong, not a section
    with pytest.raises(ValueError, match="is not an AMQP section"):
        raw.parse_sections(not_described)
    assert decode_sections(not_described) == [(-1, ulong(5))]


def test_no_second_section_reader_is_left_in_the_adapters() -> None:
    """The adapters call the client's reader; neither walks proton.Data over a payload."""
    for adapter in (raw.parse_sections, peer.decode_sections):
        source = inspect.getsource(adapter)
        assert "read_message_sections" in source, adapter.__qualname__
        assert "Data(" not in source and ".decode(" not in source, adapter.__qualname__
    # The codec's decode module may be built with mypyc (jmspy._native): read its source file.
    decode_source = source_path("jmspy._amqp.codec.decode").read_text(encoding="utf-8")
    assert "read_message_sections" in decode_source
