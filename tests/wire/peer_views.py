"""The scripted peer's records by kind: ``peer.attaches``, ``peer.flows``, ...

A mixin of ScriptedPeer (peer.py), which provides ``_of(kind)``: every record of that kind so
far, in arrival order.
"""

from __future__ import annotations

from typing import TypeVar

from .peer_records import (
    AttachRecord,
    BeginRecord,
    CloseRecord,
    ConnectRecord,
    DetachRecord,
    DisconnectRecord,
    DispositionRecord,
    EndRecord,
    FlowRecord,
    OpenRecord,
    SaslRecord,
    TransferRecord,
)

R = TypeVar("R")


class RecordViews:
    def _of(self, kind: type[R]) -> list[R]:
        raise NotImplementedError

    @property
    def sasl(self) -> list[SaslRecord]:
        return self._of(SaslRecord)

    @property
    def opens(self) -> list[OpenRecord]:
        return self._of(OpenRecord)

    @property
    def begins(self) -> list[BeginRecord]:
        return self._of(BeginRecord)

    @property
    def attaches(self) -> list[AttachRecord]:
        return self._of(AttachRecord)

    @property
    def flows(self) -> list[FlowRecord]:
        return self._of(FlowRecord)

    @property
    def transfers(self) -> list[TransferRecord]:
        return self._of(TransferRecord)

    @property
    def dispositions(self) -> list[DispositionRecord]:
        return self._of(DispositionRecord)

    @property
    def detaches(self) -> list[DetachRecord]:
        return self._of(DetachRecord)

    @property
    def ends(self) -> list[EndRecord]:
        return self._of(EndRecord)

    @property
    def closes(self) -> list[CloseRecord]:
        return self._of(CloseRecord)

    @property
    def connects(self) -> list[ConnectRecord]:
        return self._of(ConnectRecord)

    @property
    def disconnects(self) -> list[DisconnectRecord]:
        return self._of(DisconnectRecord)
