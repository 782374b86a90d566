"""The engine handler of one transport of a connection that may fail over."""
# Shares underscore members with the other modules of one provider (see jmspy/_amqp/__init__.py).

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from proton import Connection, Event

from .proton_internals import DeliveryRef

if TYPE_CHECKING:
    from .provider import AmqpConnection


class TransportEvents:
    """The engine handler of one transport (one TCP connection) of an :class:`AmqpConnection`.

    A connection that fails over outlives its transports: events of a transport that has been
    declared lost (or replaced) are dropped here, so a dying engine thread can never touch the
    links and sessions that a newer transport now serves.
    """

    __slots__ = ("conn", "gen", "proton", "on_delivery_fast")

    def __init__(self, conn: AmqpConnection, gen: int, proton: Connection) -> None:
        self.conn = conn
        self.gen = gen
        self.proton = proton
        self.on_delivery_fast = self._delivery

    def _delivery(self, ref: DeliveryRef) -> None:
        if self.conn._live_gen == self.gen:
            self.conn.on_delivery_fast(ref)

    def on_proton_event(self, event: Event) -> None:
        if self.conn._live_gen == self.gen:
            self.conn.on_proton_event(event)

    def on_engine_failed(self, error: BaseException) -> None:
        if self.conn._live_gen == self.gen:
            self.conn.on_engine_failed(error)
        else:
            # A transport failover already replaced: only its proton objects to let go.
            self.conn._release_proton(self.proton)

    def take_leftover_work(self, work: Any) -> bool:
        return self.conn._take_leftover_work(self.gen, work)
