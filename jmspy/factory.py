"""ConnectionFactory: the entry point that makes connections and contexts.

It sits above ``connection`` and ``context`` (it creates both), so that neither of them has to
import the other.
"""

from __future__ import annotations

from typing import Any, overload

from ._twins.factory import ConnectionFactoryTwins
from .connection import Connection
from .context import JMSContext
from .failover_options import ConnectionURL, FailoverOptions, parse_connection_url
from .options import ConnectionOptions, Endpoint, build_options

__all__ = ["ConnectionFactory"]


class ConnectionFactory(ConnectionFactoryTwins):
    """Creates connections to one broker.

    ``ConnectionFactory("amqp://localhost:5672?jms.connectTimeout=5000", "user", "secret")``;
    options may also be given as keyword arguments with their snake_case names
    (``connect_timeout=5000``) or their dotted names (``**{"jms.connectTimeout": 5000}``).
    """

    def __init__(
        self,
        url: str = "amqp://localhost:5672",
        username: str | None = None,
        password: str | None = None,
        client_id: str | None = None,
        **options: Any,
    ) -> None:
        parsed = parse_connection_url(url)
        overrides = dict(options)
        if username is not None:
            overrides["username"] = username
        if password is not None:
            overrides["password"] = password
        if client_id is not None:
            overrides["client_id"] = client_id
        self._url: ConnectionURL = parsed
        self._endpoint: Endpoint = parsed.endpoint
        self._options: ConnectionOptions = build_options(parsed.query, overrides)
        # Each server of a failover pool: the connection options with its own amqp.* and
        # transport.* options on top.
        self._servers: list[tuple[Endpoint, ConnectionOptions]] = [
            (
                server.endpoint,
                build_options({**parsed.query, **server.options}, overrides)
                if server.options
                else self._options,
            )
            for server in parsed.servers
        ]

    @property
    def options(self) -> ConnectionOptions:
        """The validated connection options from the URL and keyword arguments."""
        return self._options

    @property
    def endpoint(self) -> Endpoint:
        """The broker endpoint of the URL (the first server of a ``failover:(...)`` URL)."""
        return self._endpoint

    @property
    def failover(self) -> FailoverOptions | None:
        """The failover settings of a ``failover:(...)`` URL, else None (no reconnect)."""
        return self._url.failover

    def _display(self) -> str:
        if self._url.failover is None:
            return self._endpoint.display()
        return "failover:(" + ",".join(s.display() for s in self._url.servers) + ")"

    def __repr__(self) -> str:
        user = f", username={self._options.username!r}" if self._options.username else ""
        return f"ConnectionFactory({self._display()!r}{user})"

    @overload
    def createContext(self) -> JMSContext: ...
    @overload
    def createContext(self, sessionMode: int, /) -> JMSContext: ...
    @overload
    def createContext(self, userName: str | None, password: str | None, /) -> JMSContext: ...
    @overload
    def createContext(
        self, userName: str | None, password: str | None, sessionMode: int, /
    ) -> JMSContext: ...

    def createContext(self, *args: Any) -> JMSContext:
        """``createContext()``, ``createContext(sessionMode)``,
        ``createContext(userName, password[, sessionMode])`` (JMS 2.0 simplified API)."""
        return JMSContext.create(self, *args)

    def createConnection(
        self, userName: str | None = None, password: str | None = None
    ) -> Connection:
        """Create a connection, stopped until ``start()`` (rule JMS-2).

        The AMQP connection opens here when a client id is configured or ``jms.awaitClientID`` is
        false (so bad credentials raise JMSSecurityException at once, rule JMS-1); otherwise on
        first use, leaving room for ``setClientID``.

        Args:
            userName: Overrides the factory's user name when given.
            password: Overrides the factory's password when given.

        Returns:
            The new connection.
        """
        options = self._options
        if userName is not None or password is not None:
            options = options.model_copy(update={"username": userName})
            if password is not None:
                from pydantic import SecretStr

                options = options.model_copy(update={"password": SecretStr(password)})
        servers = self._servers
        if options is not self._options:
            servers = [
                (endpoint, server_options.model_copy(update=_credentials(options)))
                for endpoint, server_options in servers
            ]
        connection = Connection(self._endpoint, options, servers, self._url.failover)
        if options.client_id is not None or not options.await_client_id:
            connection.connect()
        return connection


def _credentials(options: ConnectionOptions) -> dict[str, Any]:
    return {"username": options.username, "password": options.password}
