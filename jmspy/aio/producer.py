"""The asyncio producer: ``await producer.send(...)`` completes when the broker settled the
message (or the send failed), through the engine's completion path: no thread waits."""

from __future__ import annotations

import asyncio
from typing import Any

from ..destination import Destination
from ..producer import MessageProducer as SyncProducer
from ._bridge import Control, SendCompletion

__all__ = ["MessageProducer"]


class MessageProducer:
    """Sends messages from the event loop.

    ``await send(...)`` takes the arguments of ``MessageProducer.send`` without the
    CompletionListener, and returns once the broker settled the message, whatever its
    delivery mode (bounded by jms.sendTimeout, after which it raises). The send itself starts
    when ``send`` is called; sends awaited together are pipelined and their outcomes come back
    in send order. When jms.maxAsyncSendsInFlight sends are unsettled, a new one waits for a
    slot off the event loop, behind the earlier ones (messages reach the broker in send order);
    that wait ends at jms.sendTimeout with the blocking send's exception. A send not settled by
    then is withdrawn if it was never written (not sent), else its outcome is unknown. A
    cancelled await does not take the message back: it may still reach the broker."""

    def __init__(
        self, producer: SyncProducer, control: Control, loop: asyncio.AbstractEventLoop
    ) -> None:
        self._producer = producer
        self._control = control
        self._loop = loop

    def __repr__(self) -> str:
        return f"aio.{self._producer!r}"

    @property
    def sync(self) -> SyncProducer:
        """The blocking producer underneath (its settings are this producer's settings)."""
        return self._producer

    def send(self, *args: Any) -> asyncio.Future[None]:
        """Start the send at once and return a future of its outcome: ``await
        producer.send(message)``. Awaiting many together (``asyncio.gather``) pipelines them
        without a task per send."""
        future: asyncio.Future[None] = self._loop.create_future()
        # The JMS send forms are checked by MessageProducer.send's overloads at run time; here
        # the arguments pass through unchanged with the completion appended.
        send: Any = self._producer.send
        send(*args, SendCompletion(self._control, future))
        self._control.track_send(future, "an asyncio send")
        return future

    def get_destination(self) -> Destination | None:
        return self._producer.getDestination()

    getDestination = get_destination

    def __getattr__(self, name: str) -> Any:
        # The settings (setDeliveryMode, getPriority, set_time_to_live, ...) do not block:
        # they are the blocking producer's own.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._producer, name)

    async def close(self) -> None:
        """Close the link once outstanding sends are settled (bounded by jms.closeTimeout).
        Sends still waiting for an in-flight slot are given to the link first (or fail at
        their jms.sendTimeout), as a blocking close comes after the sends that returned."""
        # Reach-in kept: the producer's links are what its waiting sends go to.
        await self._control.slot_waits_done(list(self._producer._links.values()))
        await self._control.call(self._producer.close)

    async def __aenter__(self) -> MessageProducer:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
