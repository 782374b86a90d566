"""A transaction coordinator for the scripted peer, for the tests that need one: the peer
itself records a coordinator attach but does not answer declares or discharges. A test asks
for the ``coordinator`` fixture (tests/wire/conftest.py) and the peer, for that test,
declares transactions ``txn-1``, ``txn-2``, ... and answers discharges."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from proton import Data, Delivery

from .peer_engine import _PeerConnection

__all__ = ["Coordinator", "coordinator"]

DECLARED = 0x33
REJECTED = Delivery.REJECTED


@dataclass
class Coordinator:
    """The peer's transaction coordinator: ``discharges`` records (txn-id, fail) in arrival
    order; ``answer_discharge`` False leaves discharges unanswered; the first
    ``reject_declares`` declares are rejected (a broker that cannot start a transaction), and
    those after the first ``answer_declares`` are never answered."""

    answer_discharge: bool = True
    reject_declares: int = 0
    # Declares after this many are left unanswered (a coordinator that stopped answering).
    answer_declares: int | None = None
    discharges: list[tuple[bytes, bool]] = field(default_factory=list)
    declared: int = 0
    rejected: int = 0


@pytest.fixture
def coordinator(monkeypatch: pytest.MonkeyPatch) -> Coordinator:
    state = Coordinator()
    original = _PeerConnection._on_delivery

    def on_delivery(self: _PeerConnection, delivery: Delivery) -> None:
        link = delivery.link
        script = self.links.get((False, link.name)) if link.is_receiver else None
        target = script.attach.target if script is not None and script.attach else None
        if target is None or not target.coordinator:
            original(self, delivery)
            return
        if delivery.partial or not delivery.readable:
            return
        payload = link.recv(delivery.pending)
        link.advance()
        link.flow(1)
        data = Data()
        data.decode(payload)
        control = data.get_object()  # amqp-value(described(declare|discharge, fields))
        while str(control.descriptor) not in ("amqp:declare:list", "amqp:discharge:list"):
            control = control.value
        if str(control.descriptor) == "amqp:declare:list":
            if state.rejected < state.reject_declares:
                state.rejected += 1
                delivery.update(REJECTED)
                delivery.settle()
                return
            if state.answer_declares is not None and state.declared >= state.answer_declares:
                return
            state.declared += 1
            delivery.local.data = [f"txn-{state.declared}".encode()]
            delivery.update(DECLARED)
            delivery.settle()
            return
        txn_id, fail = bytes(control.value[0]), bool(control.value[1])
        state.discharges.append((txn_id, fail))
        if state.answer_discharge:
            delivery.update(Delivery.ACCEPTED)
            delivery.settle()

    monkeypatch.setattr(_PeerConnection, "_on_delivery", on_delivery)
    return state
