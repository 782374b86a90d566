"""Per-connection views of a ScriptedPeer's records, for reconnect tests.

Every record carries ``conn``, the index of the TCP connection it arrived on; a
:class:`ConnectionView` is the records of one connection, so a test can compare what a
client sent before a drop with what it sends after reconnecting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from .peer_records import DisconnectRecord, Record
from .peer_views import RecordViews

if TYPE_CHECKING:
    from .peer import ScriptedPeer

__all__ = ["ConnectionView"]

R = TypeVar("R")


class ConnectionView(RecordViews):
    """The records of connection ``index`` of ``peer``; live (re-read on every access).

    Every by-kind view of the peer (``attaches``, ``flows``, ...) exists here too, limited to
    this connection."""

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
