"""The JMS 2.0 simplified API on the event loop: a context, its producers and consumers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from ..context import JMSProducer as SyncJMSProducer
from ..destination import Destination, Queue, Topic
from ..errors import IllegalStateRuntimeException, JMSException, to_runtime
from ..message import TextMessage
from ..producer import MessageProducer as SyncProducer
from ._bridge import Control, SendCompletion
from .consumer import MessageConsumer
from .session import _close

if TYPE_CHECKING:
    from .connection import Connection
    from .session import Session


__all__ = ["JMSContext", "JMSProducer"]

T = TypeVar("T")


async def _runtime(call: Awaitable[T]) -> T:
    """``await call``, raising the runtime twin of a checked JMS exception, as every method of
    the blocking JMSContext does (JMS 2.0): code written against it catches
    IllegalStateRuntimeException, TransactionRolledBackRuntimeException, ..."""
    try:
        return await call
    except JMSException as exc:
        raise to_runtime(exc) from exc


def _runtime_outcome(send: asyncio.Future[None], loop: Any) -> asyncio.Future[None]:
    """The outcome of ``send`` with a checked JMS exception as its runtime twin: an awaited
    context send fails as the blocking ``JMSProducer.send`` does (JMSRuntimeException, not a
    JMSException that ``except JMSRuntimeException`` misses). Cancelling it cancels ``send``
    (whose send is still bounded and withdrawn at jms.sendTimeout, see Control.track_send)."""
    outcome: asyncio.Future[None] = loop.create_future()

    def copy(done: asyncio.Future[None]) -> None:
        if outcome.done():
            return
        if done.cancelled():
            outcome.cancel()
            return
        error = done.exception()
        if error is None:
            outcome.set_result(None)
        else:
            outcome.set_exception(to_runtime(error) if isinstance(error, JMSException) else error)

    def cancel_send(done: asyncio.Future[None]) -> None:
        if done.cancelled() and not send.done():
            send.cancel()

    send.add_done_callback(copy)
    outcome.add_done_callback(cancel_send)
    return outcome


class JMSContext:
    """A connection and one session, as ``jmspy.JMSContext``, used from the event loop. Its
    methods raise the runtime exceptions of the blocking JMSContext; the consumers it creates
    are asyncio MessageConsumers, which raise what ``MessageConsumer`` raises."""

    def __init__(self, connection: Connection, session: Session) -> None:
        self._connection = connection
        self._session = session
        self._producer: SyncProducer | None = None
        # Made on first use, on the running loop: concurrent first create_producer() calls
        # wait for the one attaching the context's anonymous link instead of each attaching
        # their own (all but the last would be left open, unused, until the context closes).
        self._producer_lock: asyncio.Lock | None = None
        self._closed = False
        self._started = False

    def _check_closed(self) -> None:
        if self._closed:
            raise IllegalStateRuntimeException("The JMSContext is closed")

    def _anonymous_producer(self) -> SyncProducer:
        if self._producer is None:
            # Attaching the anonymous link blocks once per context, on first send.
            self._producer = self._session.sync.createProducer(None)
        return self._producer

    async def create_producer(self) -> JMSProducer:
        self._check_closed()
        if self._producer is None:
            if self._producer_lock is None:
                self._producer_lock = asyncio.Lock()
            async with self._producer_lock:
                if self._producer is None:
                    created = await _runtime(self._session.create_producer(None))
                    self._producer = created.sync
        return JMSProducer(
            SyncJMSProducer(self._check_closed, self._anonymous_producer), self._session.control
        )

    createProducer = create_producer

    async def create_consumer(
        self, destination: Destination, message_selector: str | None = None, no_local: bool = False
    ) -> MessageConsumer:
        self._check_closed()
        consumer = await _runtime(
            self._session.create_consumer(destination, message_selector, no_local)
        )
        if not self._started:
            try:
                await _runtime(self._connection.start())
            except BaseException:
                # The caller never gets the consumer (the start failed or its await was
                # cancelled): closed, it does not keep messages from other consumers.
                self._session.control.dispose(_close, consumer.sync)
                raise
            self._started = True
        return consumer

    createConsumer = create_consumer

    def create_queue(self, name: str, **options: Any) -> Queue:
        return self._session.create_queue(name, **options)

    createQueue = create_queue

    def create_topic(self, name: str, **options: Any) -> Topic:
        return self._session.create_topic(name, **options)

    createTopic = create_topic

    def create_text_message(self, text: str | None = None) -> TextMessage:
        return self._session.create_text_message(text)

    createTextMessage = create_text_message

    @property
    def session(self) -> Session:
        return self._session

    async def commit(self) -> None:
        await _runtime(self._session.commit())

    async def rollback(self) -> None:
        await _runtime(self._session.rollback())

    async def recover(self) -> None:
        await _runtime(self._session.recover())

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await _runtime(self._connection.close())

    async def __aenter__(self) -> JMSContext:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


class JMSProducer:
    """``await producer.send(destination, body)``: a Message or a str/bytes/dict/object body,
    settled by the broker when the await returns (the send starts when ``send`` is called).
    The chained setters are the blocking JMSProducer's (they return this producer)."""

    def __init__(self, producer: SyncJMSProducer, control: Control) -> None:
        self._producer = producer
        self._control = control

    def send(self, destination: Destination, body: Any) -> asyncio.Future[None]:
        """Start the send at once; the returned future completes when the broker settled it."""
        control = self._control
        future: asyncio.Future[None] = control.loop.create_future()
        producer = self._producer
        previous = producer.getAsync()
        producer.setAsync(SendCompletion(control, future))
        try:
            producer.send(destination, body)
        finally:
            producer.setAsync(previous)
        control.track_send(future, f"an asyncio send to {destination}")
        return _runtime_outcome(future, control.loop)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        attribute = getattr(self._producer, name)
        if not callable(attribute):
            return attribute

        def chained(*args: Any, **kwargs: Any) -> Any:
            result = attribute(*args, **kwargs)
            return self if result is self._producer else result

        return chained
