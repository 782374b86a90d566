"""The options of the ``jms`` Spark data source, parsed once into a picklable value.

Spark hands a data source its options as a case-insensitive mapping of strings; everything
here runs without pyspark so the reader and writer cores can be tested on their own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import jmspy
from jmspy.selector import parse_selector

# option name (lower case, as Spark's case-insensitive mapping stores it) -> field
_OPTION_FIELDS = {
    "url": "url",
    "user": "user",
    "username": "user",
    "password": "password",
    "adapter": "adapter",
    "destination": "destination",
    "path": "destination",
    "selector": "selector",
    "prefetch": "prefetch",
    "maxmessagespertrigger": "max_messages_per_trigger",
    "clientid": "client_id",
    "subscription": "subscription",
    "polltimeoutms": "poll_timeout_ms",
    "rowsperpartition": "rows_per_partition",
    "minpartitions": "min_partitions",
    "mode": "read_mode",
    "maxmessages": "max_messages",
    "transacted": "transacted",
    "duplicatedetection": "duplicate_detection",
    "writeid": "write_id",
}
# Options Spark itself passes to a data source along with the user's.
_SPARK_OPTIONS = frozenset({"checkpointlocation", "queryname"})
_INT_FIELDS = {
    "prefetch": (0, 32767),
    "max_messages_per_trigger": (1, 10_000_000),
    "poll_timeout_ms": (0, 600_000),
    "rows_per_partition": (1, 10_000_000),
    "min_partitions": (1, 10_000),
    "max_messages": (1, 100_000_000),
}
_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


class JmsOptionError(ValueError):
    """An option of the ``jms`` data source is missing, unknown or invalid (names it)."""


@dataclasses.dataclass(frozen=True)
class JmsOptions:
    """Connection, destination and tuning options; see docs/spark.md."""

    # Not in the repr: the URL's query may carry jms.password.
    url: str = dataclasses.field(repr=False)
    user: str | None = None
    password: str | None = dataclasses.field(default=None, repr=False)
    adapter: str | None = None
    destination: str | None = None
    selector: str | None = None
    prefetch: int | None = None
    max_messages_per_trigger: int = 10_000
    client_id: str | None = None
    subscription: str | None = None
    poll_timeout_ms: int = 500
    rows_per_partition: int = 5_000
    # Kafka source's name: split each micro-batch into at least this many input partitions
    # (as many tasks in parallel), however few rows it has.
    min_partitions: int = 1
    read_mode: str = "browse"
    max_messages: int = 1_000_000
    transacted: str = "auto"
    duplicate_detection: bool = False
    write_id: str | None = None

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> JmsOptions:
        values: dict[str, Any] = {}
        given: dict[str, tuple[str, str]] = {}  # field -> (option, text) that set it
        for key, raw in options.items():
            name = _OPTION_FIELDS.get(str(key).lower())
            if name is None and str(key).lower() in _SPARK_OPTIONS:
                continue
            if name is None:
                known = ", ".join(sorted({k for k in _OPTION_FIELDS if k != "path"}))
                raise JmsOptionError(f"unknown option {key!r} for format 'jms'; known: {known}")
            if raw is None:
                continue
            text = str(raw)
            # Two names of one option (user and username, destination and load()'s path) that
            # disagree: neither silently wins.
            earlier = given.setdefault(name, (str(key), text))
            if earlier[1] != text:
                what = "<hidden>" if name == "password" else f"{earlier[1]!r} and {text!r}"
                raise JmsOptionError(
                    f"options {earlier[0]!r} and {key!r} name the same setting with different "
                    f"values ({what}): give one"
                )
            if name in _INT_FIELDS:
                low, high = _INT_FIELDS[name]
                try:
                    number = int(text)
                except ValueError:
                    raise JmsOptionError(
                        f"option {key!r} must be an integer, got {text!r}"
                    ) from None
                if not low <= number <= high:
                    raise JmsOptionError(f"option {key!r} must be in {low}..{high}, got {number}")
                values[name] = number
            elif name == "duplicate_detection":
                values[name] = _boolean(key, text)
            elif name == "transacted":
                values[name] = (
                    "auto" if text.lower() == "auto" else str(_boolean(key, text)).lower()
                )
            elif name == "read_mode":
                if text.lower() not in ("browse", "consume"):
                    raise JmsOptionError(f"option 'mode' must be browse or consume, got {text!r}")
                values[name] = text.lower()
            else:
                values[name] = text
        if not values.get("url"):
            raise JmsOptionError("option 'url' is required (e.g. amqp://localhost:5672)")
        opts = cls(**values)
        if opts.destination is not None:
            parse_destination(opts.destination)  # fail on the driver, with the option's name
        if opts.duplicate_detection and opts.transacted == "true":
            raise JmsOptionError(
                "options 'duplicateDetection' and 'transacted=true' exclude each other: Artemis "
                "refuses a whole transaction that holds a duplicate"
            )
        if opts.subscription is not None:
            if opts.client_id is None:
                raise JmsOptionError(
                    "option 'subscription' needs a stable 'clientId' (a durable subscription "
                    "belongs to one client id)"
                )
            if opts.destination is None or not parse_destination(opts.destination).is_topic:
                raise JmsOptionError(
                    "option 'subscription' needs a topic destination, e.g. topic://prices"
                )
        # The URL's own options, the adapter and the selector are otherwise checked only when
        # a task opens its connection: on the executors, after Spark has retried the task.
        # Building a factory validates them and opens nothing.
        try:
            opts.factory()
        except (ValueError, jmspy.JMSException) as error:
            # The message names the option and its value; a password's never.
            raise JmsOptionError(f"the connection options are invalid: {error}") from None
        try:
            parse_selector(opts.selector)
        except jmspy.InvalidSelectorException as error:
            raise JmsOptionError(f"option 'selector' is invalid: {error}") from None
        return opts

    def require_destination(self) -> jmspy.Destination:
        if self.destination is None:
            raise JmsOptionError("option 'destination' is required (queue://name or topic://name)")
        return parse_destination(self.destination)

    def factory(
        self, *, reading: bool = False, prefetch: int | None = None
    ) -> jmspy.ConnectionFactory:
        """A connection factory with these options (client id and prefetch included).

        ``reading``: the consumer of a stream or a batch consume. ``receive(timeout)`` never
        drains the link (the credit window keeps messages flowing), and ``receiveNoWait``
        drains, which is how a reader asks a broker that can drain whether it has anything
        more (see ``_stream.next_message``). ``prefetch``: the credit window, instead of the
        ``prefetch`` option (the stream's is :meth:`stream_prefetch`)."""
        extra: dict[str, Any] = {}
        window = self.prefetch if prefetch is None else prefetch
        if window is not None:
            extra["prefetch_all"] = window
        if reading:
            extra["receive_local_only"] = True
            extra["receive_no_wait_local_only"] = False  # whatever the URL says
        if self.adapter is not None:
            extra["adapter"] = self.adapter
        return jmspy.ConnectionFactory(
            self.url, self.user, self.password, client_id=self.client_id, **extra
        )

    def stream_prefetch(self) -> int:
        """The streaming consumer's credit window: the ``prefetch`` option, else one
        micro-batch (``maxMessagesPerTrigger``, at most the largest prefetch, 32767), so the
        broker sends the next batch while Spark runs the current one. The source holds at most
        a batch of rows and a batch of prefetched messages."""
        if self.prefetch is not None:
            return self.prefetch
        return min(self.max_messages_per_trigger, _INT_FIELDS["prefetch"][1])


def use_transactions(opts: JmsOptions, connection: jmspy.Connection) -> bool:
    """``transacted``: true, false, or auto (the broker adapter's profile decides)."""
    if opts.transacted != "auto":
        return opts.transacted == "true"
    from jmspy.adapters import PROFILES

    profile = PROFILES.get(connection.getMetaData().getAdapter())
    return bool(profile is not None and profile.transactions)


def _boolean(key: str, text: str) -> bool:
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    raise JmsOptionError(f"option {key!r} must be true or false, got {text!r}")


def parse_destination(text: str, default_kind: str = "queue") -> jmspy.Destination:
    """``queue://name``, ``topic://name`` or a bare name (a queue by default)."""
    if not isinstance(text, str) or not text.strip():
        raise JmsOptionError(f"invalid destination {text!r}: expected queue://name or topic://name")
    kind, sep, name = text.partition("://")
    if not sep:
        kind, name = default_kind, text
    kind = kind.lower()
    if not name:
        raise JmsOptionError(f"invalid destination {text!r}: the name is empty")
    if kind == "queue":
        return jmspy.Queue(name)
    if kind == "topic":
        return jmspy.Topic(name)
    raise JmsOptionError(f"invalid destination {text!r}: expected queue://name or topic://name")


def format_destination(destination: jmspy.Destination | None) -> str | None:
    """The inverse of :func:`parse_destination` for received messages (``queue://orders``)."""
    if destination is None:
        return None
    kind = "topic" if destination.is_topic else "queue"
    return f"{kind}://{destination.name}"
