"""Work bound to one transport (re-creating its links, declaring it lost) is dropped by its
stopped engine, never handed to a failover connection's next transport."""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

from proton import Connection, Event, Transport

from jmspy._amqp.engine import Engine, TransportBound


class _FailoverHandler:
    """Takes the leftover work over, as a failover connection whose transport was lost."""

    def __init__(self) -> None:
        self.taken: list[Callable[[], None]] = []

    def on_proton_event(self, event: Event) -> None:
        pass

    def on_engine_failed(self, error: BaseException) -> None:
        pass

    def take_leftover_work(self, work: collections.deque[Callable[[], None]]) -> bool:
        self.taken.extend(work)
        work.clear()
        return True


def _engine(handler: Any) -> Engine:
    connection = Connection()
    transport = Transport(Transport.CLIENT)
    transport.bind(connection)
    return Engine(
        host="127.0.0.1",
        port=5672,
        connection=connection,
        transport=transport,
        handler=handler,
        connect_timeout_s=1.0,
    )


def test_a_stopped_engine_hands_over_only_work_not_bound_to_its_transport() -> None:
    handler = _FailoverHandler()
    engine = _engine(handler)
    ran: list[str] = []
    recover = TransportBound(lambda: ran.append("recover"))
    send = lambda: ran.append("send")  # noqa: E731 - a plain piece of held work
    declare_lost = TransportBound(lambda: ran.append("declare lost"))
    for work in (recover, send, declare_lost):
        engine.submit(work)
    engine._finish(None)
    assert handler.taken == [send]
    assert ran == []
