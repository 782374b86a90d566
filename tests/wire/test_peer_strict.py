"""Strict mode of the scripted peer fails a test on frames nobody expected (peer_strict.py).

The wire tests all run against a strict peer (tests/wire/conftest.py) and pass; these tests
show that strict mode does fail when a client misbehaves: a hand-written client puts frames on
the wire that jmspy would never send.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from proton import symbol, uint

from .peer import (
    CloseRecord,
    DispositionRecord,
    FlowRecord,
    OpenRecord,
    PeerError,
    ScriptedPeer,
)
from .peer_strict import unexpected_frames
from .peer_wire import _encode_frame

_OPEN, _BEGIN, _FLOW, _DISPOSITION, _CLOSE = 0x10, 0x11, 0x13, 0x15, 0x18


@pytest.fixture
def strict_peer() -> Iterator[ScriptedPeer]:
    peer = ScriptedPeer(strict=True)
    try:
        yield peer
    finally:
        peer.strict = False  # the tests assert the strict failure themselves
        peer.close()


def _raw_client(peer: ScriptedPeer, *frames: bytes) -> socket.socket:
    """A client that skips SASL and writes ``frames`` after open and begin (channel 0).

    Everything goes out in one write, so the peer reads it together: written one frame at a
    time, a frame after a close could reach the peer only after it had answered the close and
    hung up (Nagle's algorithm holds a small write back until the previous one is
    acknowledged), and the peer would never see it."""
    sock = socket.create_connection((peer.host, peer.port), timeout=10)
    sock.sendall(
        b"AMQP\x00\x01\x00\x00"
        + _encode_frame(0, _OPEN, ["raw-client"])
        + _encode_frame(0, _BEGIN, [None, uint(0), uint(100), uint(100)])
        + b"".join(frames)
    )
    return sock


def test_a_flow_on_a_handle_nobody_attached_fails_a_strict_peer(
    strict_peer: ScriptedPeer,
) -> None:
    flow = _encode_frame(0, _FLOW, [uint(0), uint(100), uint(0), uint(100), uint(3), uint(0)])
    with _raw_client(strict_peer, flow):
        strict_peer.wait_for(lambda: strict_peer.flows, what="the flow")
        with pytest.raises(PeerError, match="a flow on handle 3, which is not attached"):
            strict_peer.check()


def test_a_disposition_for_a_delivery_the_peer_never_sent_fails_a_strict_peer(
    strict_peer: ScriptedPeer,
) -> None:
    disposition = _encode_frame(0, _DISPOSITION, [True, uint(7), None, True])
    with _raw_client(strict_peer, disposition):
        strict_peer.wait_for(lambda: strict_peer.dispositions, what="the disposition")
        with pytest.raises(PeerError, match=r"deliveries \[7\] the peer never sent"):
            strict_peer.check()


def test_frames_after_the_close_fail_a_strict_peer(strict_peer: ScriptedPeer) -> None:
    close = _encode_frame(0, _CLOSE, [])
    second_open = _encode_frame(0, _OPEN, [symbol("raw-client")])
    with _raw_client(strict_peer, close, second_open):
        strict_peer.wait_for(lambda: len(strict_peer.opens) == 2, what="the second open")
        with pytest.raises(PeerError, match="open after the client's close"):
            strict_peer.check()


def test_a_lenient_peer_records_the_same_frames_without_failing(make_peer) -> None:  # type: ignore[no-untyped-def]
    peer = make_peer(strict=False)
    flow = _encode_frame(0, _FLOW, [uint(0), uint(100), uint(0), uint(100), uint(3), uint(0)])
    with _raw_client(peer, flow):
        peer.wait_for(lambda: peer.flows, what="the flow")
        peer.check()
        assert len(peer.unexpected_frames()) == 1


def _settle(first: int, last: int | None = None) -> DispositionRecord:
    return DispositionRecord(
        0,
        0,
        role="receiver",
        first=first,
        last=first if last is None else last,
        settled=True,
        outcome=None,
        delivery_tags=[],
    )


def test_a_delivery_settled_twice_is_unexpected() -> None:
    records = [_settle(0, 2), _settle(2)]
    problems = unexpected_frames(records, lambda conn, name: None, lambda c, ch, i: True)
    assert len(problems) == 1 and "deliveries [2] settled a second time" in problems[0]


def test_allow_exempts_what_a_test_provokes_on_purpose() -> None:
    records = [_settle(0), _settle(0)]
    problems = unexpected_frames(
        records, lambda conn, name: None, lambda c, ch, i: True, allow=lambda r: True
    )
    assert problems == []


def test_a_transfer_on_a_link_scripted_without_credit_is_unexpected() -> None:
    from .peer import AttachRecord, TransferRecord

    attach = AttachRecord(
        0, 0, name="l", handle=0, role="sender", snd_settle_mode=None, rcv_settle_mode=None,
        source=None, target=None, initial_delivery_count=0, max_message_size=None,
        offered_capabilities=[], desired_capabilities=[], properties=None,
    )  # fmt: skip
    transfer = TransferRecord(
        0, 0, link_name="l", handle=0, delivery_id=0, delivery_tag=b"t", settled=False,
        message_format=0, payload=b"", sections=[], state=None, aborted=False, frames=1,
    )  # fmt: skip
    scripted = {"l": 0}
    problems = unexpected_frames([attach, transfer], lambda conn, name: scripted[name])
    assert len(problems) == 1 and "scripted with credit=0" in problems[0]
    scripted["l"] = 10
    assert unexpected_frames([attach, transfer], lambda conn, name: scripted[name]) == []


def test_a_well_mannered_connection_is_not_reported() -> None:
    open_ = OpenRecord(
        0, container_id="c", hostname=None, max_frame_size=None, channel_max=None,
        idle_timeout=None, offered_capabilities=[], desired_capabilities=[], properties={},
    )  # fmt: skip
    flow = FlowRecord(
        0, 0, link_name=None, handle=None, delivery_count=None, link_credit=None, drain=False,
        echo=False, available=None, next_incoming_id=0, incoming_window=1, next_outgoing_id=0,
        outgoing_window=1,
    )  # fmt: skip
    assert unexpected_frames([open_, flow, CloseRecord(0, error=None)], lambda c, n: None) == []
