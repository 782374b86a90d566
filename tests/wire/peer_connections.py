"""Per-connection views of a ScriptedPeer's records, for reconnect tests.

Every record carries ``conn``, the index of the TCP connection it arrived on; a
:class:`ConnectionView` is the records of one connection, so a test can compare what a
client sent before a drop with what it sends after reconnecting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from .peer import (
    AttachRecord,
    BeginRecord,
    CloseRecord,
    DetachRecord,
    DisconnectRecord,
    DispositionRecord,
    FlowRecord,
    OpenRecord,
    Record,
    TransferRecord,
)

if TYPE_CHECKING:
    from .peer import ScriptedPeer

__all__ = ["ConnectionView"]

R = TypeVar("R")


class ConnectionView:
    """The records of connection ``index`` of ``peer``; live (re-read on every access)."""

    def __init__(self, peer: ScriptedPeer, index: int) -> None:
        self.peer = peer
        self.index = index

    def __repr__(self) -> str:
        state = "disconnected" if self.disconnected else "connected"
        return f"<ConnectionView {self.index} {state}, {len(self.records)} records>"

    @property
    def records(self) -> list[Record]:
        return [r for r in self.peer.records() if r.conn == self.index]

    def _of(self, kind: type[R]) -> list[R]:
        return [r for r in self.records if isinstance(r, kind)]

    @property
    def disconnected(self) -> bool:
        return bool(self._of(DisconnectRecord))

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
    def closes(self) -> list[CloseRecord]:
        return self._of(CloseRecord)
