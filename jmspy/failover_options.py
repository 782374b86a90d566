"""The ``failover:(uri,uri)?...`` URL and its options, with Qpid JMS's names and defaults.

``failover:(amqp://h1:5672,amqps://h2:5671)?failover.maxReconnectAttempts=20&jms.clientID=c``

* ``failover.*`` options configure reconnection (:class:`FailoverOptions`);
* ``failover.nested.<option>`` is applied to every nested URI (``amqp.*`` and ``transport.*``);
* every other option after the ``?`` applies to the connection, as with a plain URL;
* a nested URI may carry its own ``amqp.*`` / ``transport.*`` options; a ``failover.nested.*``
  option of the same name replaces them, as Qpid JMS's ``FailoverUriPool`` applies the nested
  options over each URI's own (``URISupport.applyParameters``).

The reconnect delay schedule is Qpid JMS's (``ReconnectControls`` in its ``FailoverProvider``):
after a drop the first attempt waits ``initialReconnectDelay`` (0: at once), the next ones start at
``reconnectDelay`` and, with back-off on, multiply it once per attempt from the third on (whole
milliseconds), capped at ``maxReconnectDelay``. :func:`reconnect_delay_ms` is that function; the
failover layer feeds it to ``tenacity`` as its wait strategy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qsl

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._limits import JAVA_INT_MAX, MAX_TIMEOUT_MS
from .errors import IllegalArgumentException
from .options import Endpoint, JavaBool, parse_url, shown_url

__all__ = [
    "FAILOVER_SCHEME",
    "NESTED_PREFIX",
    "PER_URI_PREFIXES",
    "FailoverOptions",
    "reconnect_delay_ms",
    "ServerURI",
    "ConnectionURL",
    "parse_connection_url",
]


FAILOVER_SCHEME = "failover:"
NESTED_PREFIX = "failover.nested."
# Options a nested URI may carry for itself (the transport and AMQP layer of one server).
PER_URI_PREFIXES = ("amqp.", "transport.")


class FailoverOptions(BaseModel):
    """Reconnection settings (``failover.*``); every field is Qpid JMS's option of that name
    but ``failover.maxRecoveryRefusals``, jmspy's own (Qpid JMS retries a refused recovery
    until ``maxReconnectAttempts``, for ever by default)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    # Bounded where the value goes: a delay is waited on (longer than Python can wait is an
    # OverflowError in the reconnect thread, not at the factory), a count is a Java int, and
    # an infinite multiplier cannot be truncated to whole milliseconds.
    initial_reconnect_delay: int = Field(
        0, alias="failover.initialReconnectDelay", ge=0, le=MAX_TIMEOUT_MS
    )
    reconnect_delay: int = Field(10, alias="failover.reconnectDelay", ge=0, le=MAX_TIMEOUT_MS)
    max_reconnect_delay: int = Field(
        30000, alias="failover.maxReconnectDelay", ge=0, le=MAX_TIMEOUT_MS
    )
    use_reconnect_back_off: JavaBool = Field(True, alias="failover.useReconnectBackOff")
    reconnect_back_off_multiplier: float = Field(
        2.0, alias="failover.reconnectBackOffMultiplier", ge=1.0, allow_inf_nan=False
    )
    max_reconnect_attempts: int = Field(
        -1, alias="failover.maxReconnectAttempts", ge=-1, le=JAVA_INT_MAX
    )
    startup_max_reconnect_attempts: int = Field(
        -1, alias="failover.startupMaxReconnectAttempts", ge=-1, le=JAVA_INT_MAX
    )
    warn_after_reconnect_attempts: int = Field(
        10, alias="failover.warnAfterReconnectAttempts", ge=0, le=JAVA_INT_MAX
    )
    randomize: JavaBool = Field(False, alias="failover.randomize")
    # A server that accepts the reconnect but refuses to re-create a consumer or producer it
    # had (a node back before its durable queues are): reconnect again, this many times at
    # most, before failing those links alone and restoring the rest. -1: no bound of its own.
    max_recovery_refusals: int = Field(
        10, alias="failover.maxRecoveryRefusals", ge=-1, le=JAVA_INT_MAX
    )
    amqp_open_server_list_action: Literal["REPLACE", "ADD", "IGNORE"] = Field(
        "REPLACE", alias="failover.amqpOpenServerListAction"
    )

    def attempt_limit(self, first_connect: bool) -> int:
        """How many attempts (each over every URI) before giving up; -1 for no limit."""
        if first_connect and self.startup_max_reconnect_attempts != -1:
            return self.startup_max_reconnect_attempts
        return self.max_reconnect_attempts


_FAILOVER_ALIASES = {f.alias: name for name, f in FailoverOptions.model_fields.items() if f.alias}


def reconnect_delay_ms(options: FailoverOptions, attempt: int, first_connect: bool) -> float:
    """The wait before reconnect attempt ``attempt`` (1-based), in milliseconds.

    Qpid JMS's ``ReconnectControls``: first connect, attempt 1 at once and attempt 2 after
    ``initialReconnectDelay`` when it is set; after a drop, attempt 1 after
    ``initialReconnectDelay``. Every other attempt waits ``reconnectDelay`` multiplied once per
    attempt from the third on. The third attempt is multiplied on a first connect with an
    initial delay too: Qpid JMS counts attempts, not back-off steps. Its delay is a Java
    ``long``, so each product is truncated to whole milliseconds, and only a multiplied delay
    is capped at ``maxReconnectDelay`` (``reconnectDelay`` itself, without back-off or for the
    second attempt, is not).
    """
    if attempt <= 1:
        return 0.0 if first_connect else float(options.initial_reconnect_delay)
    if first_connect and attempt == 2 and options.initial_reconnect_delay > 0:
        return float(options.initial_reconnect_delay)
    delay = options.reconnect_delay
    if not options.use_reconnect_back_off:
        return float(delay)
    cap = options.max_reconnect_delay
    multiplier = options.reconnect_back_off_multiplier
    for _ in range(attempt - 2):
        # Capped before the truncation: a large multiplier makes the product inf, which int()
        # cannot take (Java's long cast saturates, then Math.min caps it).
        product = delay * multiplier
        grown = cap if product >= cap else int(product)
        if grown == delay:
            break  # at the cap, or too small to grow once truncated: it stays there
        delay = grown
    return float(delay)


@dataclass(frozen=True)
class ServerURI:
    """One server of the pool: where to connect and the options that apply to it alone."""

    endpoint: Endpoint
    options: dict[str, str] = field(default_factory=dict)

    def display(self) -> str:
        return self.endpoint.display()


@dataclass(frozen=True)
class ConnectionURL:
    """A parsed connection URL: one server (plain) or a pool (failover)."""

    servers: tuple[ServerURI, ...]
    query: dict[str, str]
    failover: FailoverOptions | None

    @property
    def endpoint(self) -> Endpoint:
        return self.servers[0].endpoint


def parse_connection_url(url: str) -> ConnectionURL:
    """Parse ``amqp[s]://...`` or ``failover:(...)?...`` (errors name the offending part)."""
    if not isinstance(url, str):
        raise IllegalArgumentException(
            "the connection URL must be a string such as 'amqp://localhost:5672', got "
            f"{type(url).__name__}"
        )
    if not url.lower().startswith(FAILOVER_SCHEME):
        endpoint, query = parse_url(url)
        return ConnectionURL((ServerURI(endpoint),), query, None)
    rest = url[len(FAILOVER_SCHEME) :]
    if FAILOVER_SCHEME in rest.lower():
        raise IllegalArgumentException(f"failover URLs cannot be nested: {shown_url(url)!r}")
    if rest.startswith("("):
        close = rest.find(")")
        if close < 0:
            raise IllegalArgumentException(
                f"failover URL {shown_url(url)!r} opens '(' without closing it: "
                "use failover:(amqp://host1:5672,amqp://host2:5672)?options"
            )
        inner, tail = rest[1:close], rest[close + 1 :]
    else:
        inner, _, tail_query = rest.partition("?")
        tail = f"?{tail_query}" if tail_query else ""
    if tail and not tail.startswith("?"):
        raise IllegalArgumentException(
            f"unexpected text {shown_url(tail)!r} after the server list of failover URL "
            f"{shown_url(url)!r}"
        )
    raw_query = _parse_query(tail[1:], url)
    failover_values: dict[str, Any] = {}
    nested: dict[str, str] = {}
    connection_query: dict[str, str] = {}
    for key, value in raw_query.items():
        if key.startswith(NESTED_PREFIX):
            nested[key[len(NESTED_PREFIX) :]] = value
        elif key.startswith("failover."):
            if key not in _FAILOVER_ALIASES:
                raise IllegalArgumentException(
                    f"unknown failover option {key!r}; known options: "
                    + ", ".join(sorted(_FAILOVER_ALIASES))
                    + f", and {NESTED_PREFIX}<amqp.* or transport.* option>"
                )
            failover_values[_FAILOVER_ALIASES[key]] = value
        else:
            connection_query[key] = value
    for key in nested:
        if not key.startswith(PER_URI_PREFIXES):
            raise IllegalArgumentException(
                f"{NESTED_PREFIX}{key}: only amqp.* and transport.* options apply per server"
            )
    servers = []
    for part in inner.split(","):
        part = part.strip()
        if not part:
            continue
        if part.lower().startswith(FAILOVER_SCHEME):
            raise IllegalArgumentException(f"failover URLs cannot be nested: {shown_url(part)!r}")
        endpoint, own = parse_url(part)
        for key in own:
            if not key.startswith(PER_URI_PREFIXES):
                raise IllegalArgumentException(
                    f"option {key!r} in server URI {shown_url(part)!r} of a failover URL: only "
                    "amqp.* and transport.* options apply per server; put the others after "
                    "the closing parenthesis"
                )
        # Qpid JMS applies the nested options over the URI's own: the same URL, the same
        # options per server in both clients.
        servers.append(ServerURI(endpoint, {**own, **nested}))
    if not servers:
        raise IllegalArgumentException(f"failover URL {shown_url(url)!r} names no server")
    try:
        options = FailoverOptions.model_validate(failover_values)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            name = str(err["loc"][0]) if err["loc"] else "?"
            alias = (
                FailoverOptions.model_fields[name].alias
                if name in _FAILOVER_ALIASES.values()
                else name
            )
            problems.append(f"{alias}={err.get('input')!r}: {err['msg']}")
        raise IllegalArgumentException("invalid failover option " + "; ".join(problems)) from None
    return ConnectionURL(tuple(servers), connection_query, options)


def _parse_query(text: str, url: str) -> dict[str, str]:
    result: dict[str, str] = {}
    for key, value in parse_qsl(text, keep_blank_values=True):
        if key in result:
            raise IllegalArgumentException(
                f"option {key!r} is given twice in the connection URL {shown_url(url)!r}"
            )
        result[key] = value
    return result
