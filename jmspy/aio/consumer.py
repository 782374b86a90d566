"""The asyncio consumer: ``await consumer.receive(timeout)``, ``async for message in
consumer`` and coroutine listeners, over the same prefetch buffer as the blocking consumer."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from .._async_receive import FinalDrains
from .._limits import check_receive_timeout
from ..consumer import MessageConsumer as SyncConsumer
from ..destination import Destination
from ..errors import IllegalStateException
from ..message import Message
from ._bridge import LISTENER_RUNNER, Control, ListenerRunner, asyncio_message, resolve

AsyncListener = Callable[[Message], Awaitable[Any] | Any]
AsyncBatchListener = Callable[[list[Message]], Awaitable[Any] | Any]


__all__ = ["MessageConsumer"]


class MessageConsumer:
    """Receives messages from one destination on the event loop.

    A receive waits on a future that the consumer's delivery path completes (through
    ``loop.call_soon_threadsafe``) when a message arrives: no thread is blocked. A message is
    taken from the buffer only by a receive that returns it at once, so a cancelled receive
    leaves every message for the next one."""

    def __init__(
        self, consumer: SyncConsumer, control: Control, loop: asyncio.AbstractEventLoop
    ) -> None:
        self._consumer = consumer
        self._control = control
        self._loop = loop
        self._waiters: list[asyncio.Future[None]] = []
        self._wake_pending = False
        self._closed = False
        consumer.set_arrival_hook(self._on_arrival)

    def __repr__(self) -> str:
        return f"aio.{self._consumer!r}"

    @property
    def sync(self) -> SyncConsumer:
        """The blocking consumer underneath (same buffer, same link)."""
        return self._consumer

    # ---- engine thread -----------------------------------------------------------------------

    def _on_arrival(self) -> None:
        # One wake-up per batch of arrivals, and none while nobody waits: a consumer drained
        # by immediate receives costs the engine nothing more than the blocking one.
        if self._waiters and not self._wake_pending:
            self._wake_pending = True
            self._consumer.after_engine_events(self._wake_loop)

    def _wake_loop(self) -> None:
        try:
            self._loop.call_soon_threadsafe(self._wake_all)
        except RuntimeError:
            self._wake_pending = False  # the loop is closed: nobody is left to wake

    # ---- event loop thread -------------------------------------------------------------------

    def _wake_all(self) -> None:
        self._wake_pending = False
        for waiter in self._waiters:
            resolve(waiter)

    async def receive(self, timeout: int | None = None) -> Message | None:
        """The next message; ``timeout`` in ms (None or 0: wait until one arrives or the
        consumer is closed). As the blocking receive, once the time is up the broker is asked
        for what it still holds (a drain) before None is returned."""
        timeout_s = check_receive_timeout(timeout)
        return await self._receive(timeout_s, no_wait=False)

    async def receive_no_wait(self) -> Message | None:
        """A message held locally or fetched by one drain, else None."""
        return await self._receive(0.0, no_wait=True)

    receiveNoWait = receive_no_wait

    async def _receive(self, timeout_s: float | None, no_wait: bool) -> Message | None:
        if self._closed:
            # As the blocking receive on a closed consumer (this one's close may still be on
            # its way to the engine); a receive already waiting returns None instead.
            raise IllegalStateException("The MessageConsumer is closed")
        # Raises as the blocking receive does (closed, failed link, listener on the session).
        message = await self._take_local()
        if message is not None:
            return asyncio_message(message)
        return await self._wait(timeout_s, no_wait)

    async def _take_local(self, drains: FinalDrains | None = None) -> Message | None:
        """A message held locally, handed over at once. When handing it over waits for the
        broker (a transaction to declare), that wait is made on a control thread first,
        never on the event loop, and without taking the message: a receive cancelled then
        leaves it in the buffer. ``drains``: the receive's, told of skipped messages."""
        consumer = self._consumer
        while consumer.hand_over_waits_for_broker():
            # Again when a reconnect lost the transaction just declared.
            await self._control.call(consumer.prepare_hand_over)
        return consumer.take_local(drains)

    async def _wait(self, timeout_s: float | None, no_wait: bool) -> Message | None:
        loop = self._loop
        consumer = self._consumer
        deadline = None if timeout_s is None else loop.time() + timeout_s
        # Once the time is up: drains, another one after each that brought only messages the
        # take skipped (as the blocking receive, see FinalDrains).
        drains = consumer.final_drains()
        # A receiveNoWait asks the broker with its drain, as the blocking one does.
        pulled = no_wait
        while True:
            if self._closed or consumer.is_closed():
                return None
            waiter: asyncio.Future[None] = loop.create_future()
            # Registered before the buffer is looked at: an arrival in between wakes it.
            self._waiters.append(waiter)
            try:
                message = await self._take_local(drains)
                if message is not None:
                    return asyncio_message(message)
                if consumer.is_closed():
                    continue
                if not pulled:
                    pulled = consumer.pull_for_receive()
                remaining = None if deadline is None else deadline - loop.time()
                if remaining is not None and remaining <= 0:
                    if not await self._control.call(consumer.drain_remote, no_wait, drains):
                        return None
                    continue
                timer = None if remaining is None else loop.call_later(remaining, resolve, waiter)
                try:
                    await waiter
                finally:
                    if timer is not None:
                        timer.cancel()
            finally:
                self._waiters.remove(waiter)

    def __aiter__(self) -> AsyncIterator[Message]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Message]:
        """``async for message in consumer``: until the consumer is closed."""
        while not (self._closed or self._consumer.is_closed()):
            message = await self.receive()
            if message is None:
                return
            yield message

    # ---- listeners ----------------------------------------------------------------------------

    def set_message_listener(self, listener: AsyncListener | None) -> None:
        """A coroutine function (or plain function) called for each message on the event
        loop. The session's dispatch thread waits for it, so acknowledgement and redelivery
        follow the listener's outcome exactly as for a blocking listener."""
        if listener is None:
            self._consumer.setMessageListener(None)
            return
        loop = self._loop

        def on_message(message: Message) -> None:
            _run_on_loop(loop, listener, asyncio_message(message))

        self._consumer.setMessageListener(on_message)

    setMessageListener = set_message_listener

    def set_batch_message_listener(
        self, listener: AsyncBatchListener | None, batch_size: int = 1, batch_timeout: int = 0
    ) -> None:
        """A coroutine function called with lists of at most ``batch_size`` messages (see
        ``MessageConsumer.setBatchMessageListener``)."""
        if listener is None:
            self._consumer.setBatchMessageListener(None)
            return
        loop = self._loop

        def on_messages(messages: list[Message]) -> None:
            _run_on_loop(loop, listener, [asyncio_message(m) for m in messages])

        self._consumer.setBatchMessageListener(on_messages, batch_size, batch_timeout)

    setBatchMessageListener = set_batch_message_listener

    def get_destination(self) -> Destination:
        return self._consumer.getDestination()

    getDestination = get_destination

    def get_message_selector(self) -> str | None:
        return self._consumer.getMessageSelector()

    getMessageSelector = get_message_selector

    async def close(self) -> None:
        """Close the link (bounded by jms.closeTimeout); waiting receives return None."""
        if self._closed:
            return
        self._closed = True
        self._wake_all()
        await self._control.call(self._consumer.close)
        self._consumer.set_arrival_hook(None)

    async def __aenter__(self) -> MessageConsumer:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


def _run_on_loop(loop: asyncio.AbstractEventLoop, listener: Callable[[Any], Any], arg: Any) -> None:
    """Session dispatch thread: run ``listener(arg)`` on the event loop and wait for it; an
    exception (of the coroutine too) is the listener's failure. While waiting, the thread runs
    the blocking calls the listener awaits (commit, rollback, recover, close)."""
    if loop.is_closed():
        raise IllegalStateException("the event loop of this asyncio consumer is closed")
    runner = ListenerRunner()

    async def call() -> None:
        LISTENER_RUNNER.set(runner)  # this task's context only
        result = listener(arg)
        if inspect.isawaitable(result):
            await result

    future = asyncio.run_coroutine_threadsafe(call(), loop)
    if not runner.serve_until(future, loop):
        # Raised as the listener's own failure: the message is settled as for a listener
        # that raised, and the dispatch thread lets go of the session.
        raise IllegalStateException(
            "the event loop of this asyncio consumer stopped before the listener finished"
        )
    future.result()
