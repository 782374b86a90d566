"""The asyncio session: producers, consumers, transactions and acknowledgement."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from ..destination import (
    Destination,
    Queue,
    TemporaryDestination,
    TemporaryQueue,
    TemporaryTopic,
    Topic,
)
from ..message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
from ..session import Session as SyncSession
from ._bridge import Control
from .consumer import MessageConsumer
from .producer import MessageProducer

__all__ = ["Session"]


class _Closeable(Protocol):
    def close(self) -> None: ...


def _close(created: _Closeable) -> None:
    created.close()


def _delete(created: TemporaryDestination) -> None:
    created.delete()


class Session:
    """A session used from the event loop. Creating links, commit, rollback, recover and
    close wait on the engine through the connection's control threads, each bounded by the
    timeout the blocking call honours; message factories and settings are immediate. A create
    whose await is cancelled closes (a temporary destination: deletes) what it created as soon
    as it exists: nobody would ever hold it, and a consumer would keep taking messages."""

    def __init__(
        self, session: SyncSession, control: Control, loop: asyncio.AbstractEventLoop
    ) -> None:
        self._session = session
        self._control = control
        self._loop = loop

    def __repr__(self) -> str:
        return f"aio.{self._session!r}"

    @property
    def sync(self) -> SyncSession:
        """The blocking session underneath."""
        return self._session

    @property
    def control(self) -> Control:
        """How this session's connection reaches the engine from the event loop."""
        return self._control

    # ---- links ------------------------------------------------------------------------------

    async def create_producer(self, destination: Destination | None = None) -> MessageProducer:
        producer = await self._control.call(
            self._session.createProducer, destination, on_abandoned=_close
        )
        return MessageProducer(producer, self._control, self._loop)

    createProducer = create_producer

    async def create_consumer(
        self,
        destination: Destination,
        message_selector: str | None = None,
        no_local: bool = False,
    ) -> MessageConsumer:
        consumer = await self._control.call(
            self._session.createConsumer,
            destination,
            message_selector,
            no_local,
            on_abandoned=_close,
        )
        return MessageConsumer(consumer, self._control, self._loop)

    createConsumer = create_consumer

    async def create_durable_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None, no_local: bool = False
    ) -> MessageConsumer:
        consumer = await self._control.call(
            self._session.createDurableConsumer,
            topic,
            name,
            message_selector,
            no_local,
            on_abandoned=_close,
        )
        return MessageConsumer(consumer, self._control, self._loop)

    createDurableConsumer = create_durable_consumer

    async def create_shared_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None
    ) -> MessageConsumer:
        consumer = await self._control.call(
            self._session.createSharedConsumer,
            topic,
            name,
            message_selector,
            on_abandoned=_close,
        )
        return MessageConsumer(consumer, self._control, self._loop)

    createSharedConsumer = create_shared_consumer

    async def create_temporary_queue(self) -> TemporaryQueue:
        return await self._control.call(self._session.createTemporaryQueue, on_abandoned=_delete)

    createTemporaryQueue = create_temporary_queue

    async def create_temporary_topic(self) -> TemporaryTopic:
        return await self._control.call(self._session.createTemporaryTopic, on_abandoned=_delete)

    createTemporaryTopic = create_temporary_topic

    async def unsubscribe(self, name: str) -> None:
        await self._control.call(self._session.unsubscribe, name)

    # ---- immediate ------------------------------------------------------------------------

    def create_queue(self, name: str, **options: Any) -> Queue:
        return self._session.createQueue(name, **options)

    createQueue = create_queue

    def create_topic(self, name: str, **options: Any) -> Topic:
        return self._session.createTopic(name, **options)

    createTopic = create_topic

    def create_message(self) -> Message:
        return self._session.createMessage()

    createMessage = create_message

    def create_text_message(self, text: str | None = None) -> TextMessage:
        return self._session.createTextMessage(text)

    createTextMessage = create_text_message

    def create_bytes_message(self) -> BytesMessage:
        return self._session.createBytesMessage()

    createBytesMessage = create_bytes_message

    def create_map_message(self) -> MapMessage:
        return self._session.createMapMessage()

    createMapMessage = create_map_message

    def create_stream_message(self) -> StreamMessage:
        return self._session.createStreamMessage()

    createStreamMessage = create_stream_message

    def create_object_message(self, obj: Any = None) -> ObjectMessage:
        return self._session.createObjectMessage(obj)

    createObjectMessage = create_object_message

    def get_transacted(self) -> bool:
        return self._session.getTransacted()

    getTransacted = get_transacted

    def get_acknowledge_mode(self) -> int:
        return self._session.getAcknowledgeMode()

    getAcknowledgeMode = get_acknowledge_mode

    # ---- transactions and acknowledgement -------------------------------------------------

    async def commit(self) -> None:
        """Commit the transaction (waits for outstanding sends, then the discharge; bounded
        by jms.sendTimeout and jms.requestTimeout as the blocking commit)."""
        await self._control.call(self._session.commit)

    async def rollback(self) -> None:
        await self._control.call(self._session.rollback)

    async def recover(self) -> None:
        await self._control.call(self._session.recover)

    async def close(self) -> None:
        """Close the session and its links (bounded by jms.closeTimeout)."""
        await self._control.call(self._session.close)

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
