"""The asyncio connection and its factory: ``async with aio.connect(url, user, password) as
connection``."""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import Any

from .._modes import AUTO_ACKNOWLEDGE
from ..connection import Connection as SyncConnection
from ..factory import ConnectionFactory as SyncFactory
from ._bridge import Control
from .context import JMSContext
from .session import Session, _close

__all__ = ["Connection", "ConnectionFactory", "connect"]


class Connection:
    """A connection used from the event loop; one engine thread and a small pool of control
    threads (for the engine calls that only exist in a blocking form) serve all its sessions."""

    def __init__(
        self, connection: SyncConnection, control: Control, loop: asyncio.AbstractEventLoop
    ) -> None:
        self._connection = connection
        self._control = control
        self._loop = loop
        self._closed = False

    def __repr__(self) -> str:
        return f"aio.{self._connection!r}"

    @property
    def sync(self) -> SyncConnection:
        """The blocking connection underneath."""
        return self._connection

    async def create_session(self, *args: Any) -> Session:
        """``create_session()``, ``(session_mode)`` or ``(transacted, acknowledge_mode)``, as
        ``Connection.createSession``."""
        session = await self._control.call(
            self._connection.createSession, *args, on_abandoned=_close
        )
        return Session(session, self._control, self._loop)

    createSession = create_session

    async def start(self) -> None:
        await self._control.call(self._connection.start)

    async def stop(self) -> None:
        await self._control.call(self._connection.stop)

    def get_client_id(self) -> str | None:
        return self._connection.getClientID()

    getClientID = get_client_id

    def set_exception_listener(self, listener: Any) -> None:
        self._connection.setExceptionListener(listener)

    setExceptionListener = set_exception_listener

    async def close(self) -> None:
        """Close every session and the connection (bounded by jms.closeTimeout)."""
        if self._closed:
            return
        self._closed = True
        try:
            await self._control.call(self._connection.close)
        finally:
            self._control.shutdown()

    async def __aenter__(self) -> Connection:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


class ConnectionFactory:
    """Creates asyncio connections and contexts; takes what ``jmspy.ConnectionFactory`` takes
    (URL, credentials, options as keywords or in the URL)."""

    def __init__(
        self,
        url: str = "amqp://localhost:5672",
        username: str | None = None,
        password: str | None = None,
        client_id: str | None = None,
        **options: Any,
    ) -> None:
        self._factory = SyncFactory(url, username, password, client_id, **options)

    def __repr__(self) -> str:
        return f"aio.{self._factory!r}"

    @property
    def sync(self) -> SyncFactory:
        return self._factory

    async def create_connection(
        self, username: str | None = None, password: str | None = None
    ) -> Connection:
        """An open connection, not started (JMS: ``await connection.start()`` to receive)."""
        control = Control(asyncio.get_running_loop(), self._factory.options.send_timeout)
        try:
            # Cancelled while it opens: the connection is closed once open (its engine thread
            # and socket would otherwise live on with nobody to close them).
            connection = await control.call(
                self._factory.createConnection, username, password, on_abandoned=_close
            )
        except BaseException:
            control.shutdown()
            raise
        return Connection(connection, control, control.loop)

    createConnection = create_connection

    async def create_context(self, session_mode: int = AUTO_ACKNOWLEDGE) -> JMSContext:
        """A JMS 2.0 style context (connection and session in one, started when a consumer
        is created)."""
        connection = await self.create_connection()
        try:
            session = await connection.create_session(session_mode)
        except BaseException:
            await connection.close()
            raise
        return JMSContext(connection, session)

    createContext = create_context


class _Connecting:
    """What ``connect()`` returns: awaitable (``connection = await aio.connect(...)``) and an
    async context manager that closes the connection on exit."""

    def __init__(self, factory: ConnectionFactory, start: bool) -> None:
        self._factory = factory
        self._start = start
        self._connection: Connection | None = None

    async def _open(self) -> Connection:
        connection = await self._factory.create_connection()
        if self._start:
            try:
                await connection.start()
            except BaseException:
                await connection.close()
                raise
        return connection

    def __await__(self) -> Generator[Any, None, Connection]:
        return self._open().__await__()

    async def __aenter__(self) -> Connection:
        self._connection = await self._open()
        return self._connection

    async def __aexit__(self, *exc_info: object) -> None:
        if self._connection is not None:
            await self._connection.close()


def connect(
    url: str = "amqp://localhost:5672",
    username: str | None = None,
    password: str | None = None,
    *,
    start: bool = True,
    **options: Any,
) -> _Connecting:
    """Open an asyncio connection, started unless ``start=False`` (consumers receive at once):
    ``async with aio.connect(url, user, password) as connection`` or
    ``connection = await aio.connect(...)``."""
    return _Connecting(ConnectionFactory(url, username, password, **options), start)
