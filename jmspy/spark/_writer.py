"""Writes (``df.write`` / ``df.writeStream`` with ``format("jms")``), one Spark task at a time.

Every row goes through a jmspy ``MessageProducer``, so every delivery-delay, time-to-live and
priority rule applies: a row that breaks one fails the task with that rule's error.

On a broker with transactions (``transacted=auto``, the default, uses the adapter's
profile) a task's rows are sent in one transaction committed after the last row: a task
that fails sends nothing, and only a task whose commit succeeded but which Spark still
retries (or a streaming batch replayed after a restart) sends its rows twice. Without
transactions rows are sent asynchronously and the task waits for every outcome; a failed
task may have sent the rows before the failing one. Either way every message carries
``jmspy_spark_row_id`` = ``<write id>:<batch>:<partition>:<row>`` so a retry's copies are
recognisable. With ``duplicateDetection=true`` (Artemis) the row id is also the message's
``_AMQ_DUPL_ID``, rows are sent one by one (not in a transaction: Artemis refuses a whole
transaction that holds a duplicate), and the broker drops every row it already has.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import jmspy

from ._options import JmsOptionError, JmsOptions, parse_destination, use_transactions
from ._rows import ARTEMIS_DUPLICATE_ID, ROW_ID_PROPERTY, WRITE_COLUMNS, epoch_ms, row_value

log = logging.getLogger("jmspy.spark")


class JmsWriteError(Exception):
    """A row could not be sent; ``rule_id`` names the broken rule when a rule refused it."""

    def __init__(self, message: str, rule_id: str | None = None) -> None:
        super().__init__(message)
        self.rule_id = rule_id


@dataclass
class _Link:
    connection: jmspy.Connection
    session: jmspy.Session
    producer: jmspy.MessageProducer
    transacted: bool
    failed: bool = False
    last_used: float = 0.0  # time.monotonic() when a task last handed it back

    def onException(self, exception: jmspy.JMSException) -> None:
        """ExceptionListener: the connection failed; the next task opens a new one."""
        self.failed = True


# Spark reuses Python worker processes, so a task reuses the connection of the task before.
# A worker serves many queries (and options: a changed password is a new key), so the cache is
# bounded: a connection no task has used for _IDLE_CLOSE_S is closed when the next task
# finishes, and beyond _MAX_CACHED_LINKS the least recently used one is closed.
_LINKS: dict[tuple[Any, ...], _Link] = {}
_LINKS_LOCK = threading.Lock()
_MAX_CACHED_LINKS = 4
_IDLE_CLOSE_S = 300.0


def _link_key(opts: JmsOptions) -> tuple[Any, ...]:
    """Every option that shapes a writer's connection (``factory``) or its link (``_open_link``):
    a task reuses only a connection opened with the same ones."""
    return (
        opts.url,
        opts.user,
        opts.password,
        opts.client_id,
        opts.prefetch,
        opts.adapter,
        opts.transacted,
        opts.duplicate_detection,
    )


def _open_link(opts: JmsOptions) -> _Link:
    connection = opts.factory().createConnection()
    try:
        # Artemis refuses a whole transaction that holds one duplicate: with duplicate
        # detection every message is sent on its own, and a retried row is dropped alone.
        transacted = not opts.duplicate_detection and use_transactions(opts, connection)
        session = connection.createSession(
            jmspy.SESSION_TRANSACTED if transacted else jmspy.AUTO_ACKNOWLEDGE
        )
        producer = session.createProducer(None)
    except BaseException:
        connection.close()
        raise
    link = _Link(connection, session, producer, transacted)
    connection.setExceptionListener(link)
    return link


def close_links() -> None:
    """Close every cached connection of this process (tests and benchmarks)."""
    with _LINKS_LOCK:
        links = list(_LINKS.values())
        _LINKS.clear()
    for link in links:
        _close_quietly(link)


def _close_quietly(link: _Link) -> None:
    try:
        link.connection.close()
    except Exception as exc:  # noqa: BLE001 - the connection is being discarded anyway
        log.debug("closing a writer connection: %s", exc)


def _write_error(what: str, exc: BaseException) -> JmsWriteError:
    rule_id = getattr(exc, "rule_id", None)
    detail = f" (rule {rule_id})" if rule_id else ""
    return JmsWriteError(f"{what}{detail}: {type(exc).__name__}: {exc}", rule_id)


class _Outcomes:
    """CompletionListener for asynchronous (non-transacted) sends: counts the outstanding."""

    def __init__(self) -> None:
        self.cv = threading.Condition()
        self.pending = 0
        self.errors: list[tuple[Any, BaseException]] = []

    def sent(self) -> None:
        with self.cv:
            self.pending += 1

    def onCompletion(self, message: Any) -> None:
        with self.cv:
            self.pending -= 1
            self.cv.notify_all()

    def onException(self, message: Any, exception: BaseException) -> None:
        with self.cv:
            self.pending -= 1
            self.errors.append((message, exception))
            self.cv.notify_all()

    def wait(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        with self.cv:
            while self.pending > 0:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise JmsWriteError(
                        f"{self.pending} sends were not settled within {timeout_s:g} s"
                    )
                self.cv.wait(remaining)
        if self.errors:
            message, exc = self.errors[0]
            row_id = message.getStringProperty(ROW_ID_PROPERTY)
            raise JmsWriteError(
                f"the broker refused {len(self.errors)} message(s); first: row {row_id}: {exc}"
            ) from exc


class RowWriter:
    """Sends rows whose columns are ``columns`` (a subset of WRITE_COLUMNS, "body" needed)."""

    def __init__(self, opts: JmsOptions, columns: Sequence[str]) -> None:
        unknown = [c for c in columns if c not in WRITE_COLUMNS]
        if unknown:
            raise JmsOptionError(
                f"cannot write column(s) {', '.join(unknown)} to format 'jms'; the columns are "
                f"{', '.join(WRITE_COLUMNS)} (select or rename before writing)"
            )
        if "body" not in columns:
            raise JmsOptionError("format 'jms' needs a 'body' column (string or binary)")
        if opts.destination is None and "destination" not in columns:
            raise JmsOptionError(
                "format 'jms' needs option 'destination' or a 'destination' column"
            )
        self.opts = opts
        self.index = {
            name: columns.index(name) if name in columns else None for name in WRITE_COLUMNS
        }
        self.default_destination = (
            parse_destination(opts.destination) if opts.destination is not None else None
        )

    def write(self, rows: Iterable[Sequence[Any]], row_id_prefix: str) -> int:
        """Send every row; returns how many. Raises JmsWriteError naming the failing row."""
        key = _link_key(self.opts)
        with _LINKS_LOCK:
            link = _LINKS.pop(key, None)
        if link is not None and link.failed:
            _close_quietly(link)
            link = None
        if link is None:
            try:
                link = _open_link(self.opts)
            except (jmspy.JMSException, jmspy.JMSRuntimeException) as exc:
                raise _write_error(f"rows {row_id_prefix}:* were not sent", exc) from exc
        try:
            count = self._send_all(link, rows, row_id_prefix)
        except BaseException:
            _close_quietly(link)  # a transaction rolls back with its connection
            raise
        self._cache(key, link)
        return count

    @staticmethod
    def _cache(key: tuple[Any, ...], link: _Link) -> None:
        """Hand ``link`` back for the next task; close what the cache no longer keeps."""
        now = time.monotonic()
        link.last_used = now
        with _LINKS_LOCK:
            spare = _LINKS.setdefault(key, link)
            closing = [link] if spare is not link else []
            for other_key, other in list(_LINKS.items()):
                if now - other.last_used > _IDLE_CLOSE_S:
                    closing.append(_LINKS.pop(other_key))
            while len(_LINKS) > _MAX_CACHED_LINKS:
                oldest = min(_LINKS, key=lambda k: _LINKS[k].last_used)
                closing.append(_LINKS.pop(oldest))
        for stale in closing:  # outside the lock: closing waits for the broker
            _close_quietly(stale)

    def _send_all(self, link: _Link, rows: Iterable[Sequence[Any]], prefix: str) -> int:
        producer = link.producer
        outcomes = None if link.transacted else _Outcomes()
        destinations: dict[str, jmspy.Destination] = {}
        count = 0
        for count, row in enumerate(rows, 1):  # noqa: B007 - count is the result
            row_id = f"{prefix}:{count - 1}"
            try:
                destination, message, mode, priority, ttl, delay = self._message(
                    link.session, row, row_id, destinations
                )
                producer.setDeliveryDelay(delay)
                if outcomes is None:
                    producer.send(destination, message, mode, priority, ttl)
                else:
                    outcomes.sent()
                    producer.send(destination, message, mode, priority, ttl, outcomes)
            except (jmspy.JMSException, jmspy.JMSRuntimeException, ValueError, TypeError) as exc:
                rule_id = getattr(exc, "rule_id", None)
                raise JmsWriteError(
                    f"row {row_id} was not sent"
                    + (f" (rule {rule_id})" if rule_id else "")
                    + f": {type(exc).__name__}: {exc}",
                    rule_id,
                ) from exc
        if outcomes is not None:
            outcomes.wait(link.connection.options.send_timeout / 1000.0 + 5)
        else:
            try:
                link.session.commit()
            except (jmspy.JMSException, jmspy.JMSRuntimeException) as exc:
                rows = f"the {count} row(s) {prefix}:0..{count - 1}"
                if isinstance(exc, jmspy.TransactionRolledBackException):
                    what = f"{rows} were not sent (the broker rolled their transaction back)"
                elif isinstance(exc, jmspy.TransactionInDoubtException):
                    what = f"{rows} may or may not have been sent (the commit's outcome is unknown)"
                else:
                    what = f"{rows} were not confirmed sent (the commit failed)"
                raise _write_error(what, exc) from exc
        return count

    def _message(
        self,
        session: jmspy.Session,
        row: Sequence[Any],
        row_id: str,
        destinations: dict[str, jmspy.Destination],
    ) -> tuple[jmspy.Destination, jmspy.Message, int, int, int, int]:
        index = self.index
        body = row_value(row, index["body"])
        message: jmspy.Message
        if body is None:
            message = session.createMessage()
        elif isinstance(body, str):
            message = session.createTextMessage(body)
        elif isinstance(body, bytes | bytearray | memoryview):
            message = session.createBytesMessage()
            message.writeBytes(bytes(body))
        else:
            raise TypeError(f"body must be a string or binary, got {type(body).__name__}")
        properties = row_value(row, index["properties"])
        if properties:
            for name, value in properties.items():
                message.setObjectProperty(name, value)
        for column, setter in (
            ("correlation_id", message.setJMSCorrelationID),
            ("type", message.setJMSType),
        ):
            value = row_value(row, index[column])
            if value is not None:
                setter(value)
        group = row_value(row, index["group_id"])
        if group is not None:
            message.setStringProperty("JMSXGroupID", group)
        message.setStringProperty(ROW_ID_PROPERTY, row_id)
        if self.opts.duplicate_detection:
            message.setStringProperty(ARTEMIS_DUPLICATE_ID, row_id)

        name = row_value(row, index["destination"])
        destination = self.default_destination
        if name is not None:
            destination = destinations.get(name)
            if destination is None:
                destination = destinations[name] = parse_destination(name)
        if destination is None:
            raise ValueError("the row has no destination and option 'destination' is not set")

        mode = row_value(row, index["delivery_mode"])
        priority = row_value(row, index["priority"])
        ttl = row_value(row, index["time_to_live"])
        delay = row_value(row, index["delivery_delay"])
        at = row_value(row, index["delivery_time"])
        if delay is not None and at is not None:
            raise ValueError("set delivery_delay or delivery_time, not both")
        if at is not None:
            delay = max(0, epoch_ms(at) - time.time_ns() // 1_000_000)
        return (
            destination,
            message,
            jmspy.DeliveryMode.PERSISTENT if mode is None else mode,
            4 if priority is None else priority,
            0 if ttl is None else ttl,
            0 if delay is None else delay,
        )
