"""Rows of the ``jms`` data source: received messages to rows, rows to messages to send.

Column names are snake_case; docs/spark.md maps each one to its JMS header.
"""

from __future__ import annotations

import base64
import datetime
import json
from collections.abc import Sequence
from typing import Any

import jmspy

from ._options import format_destination

# (name, Spark SQL type) of every column a read produces, in row order.
READ_COLUMNS: tuple[tuple[str, str], ...] = (
    ("body", "binary"),
    ("text", "string"),
    ("message_type", "string"),
    ("message_id", "string"),
    ("correlation_id", "string"),
    ("type", "string"),
    ("priority", "int"),
    ("delivery_mode", "int"),
    ("timestamp", "timestamp"),
    ("expiration", "timestamp"),
    ("delivery_time", "timestamp"),
    ("redelivered", "boolean"),
    ("delivery_count", "int"),
    ("group_id", "string"),
    ("reply_to", "string"),
    ("destination", "string"),
    ("properties", "map<string,string>"),
)
READ_SCHEMA = ", ".join(f"`{name}` {kind}" for name, kind in READ_COLUMNS)

# Columns a write understands; only "body" is required. Value kinds are checked by the data
# source on the driver (see datasource.WRITE_TYPES).
WRITE_COLUMNS = (
    "body",
    "properties",
    "priority",
    "time_to_live",
    "delivery_delay",
    "delivery_time",
    "delivery_mode",
    "correlation_id",
    "type",
    "group_id",
    "destination",
)
# The property every written message carries: "<write id>:<batch>:<partition>:<row>".
ROW_ID_PROPERTY = "jmspy_spark_row_id"
# Artemis drops a second message with the same value of this property (duplicate detection).
ARTEMIS_DUPLICATE_ID = "_AMQ_DUPL_ID"

_OWN_COLUMNS = ("JMSXDeliveryCount", "JMSXGroupID")
_UTC = datetime.UTC


def _time(ms: int) -> datetime.datetime | None:
    return datetime.datetime.fromtimestamp(ms / 1000.0, tz=_UTC) if ms else None


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    return str(value)


def _body(message: jmspy.Message) -> tuple[bytes | None, str | None, str]:
    if isinstance(message, jmspy.TextMessage):
        text = message.getText()
        return (None if text is None else text.encode("utf-8")), text, "text"
    if isinstance(message, jmspy.BytesMessage):
        return message.getBody(bytes), None, "bytes"
    if isinstance(message, jmspy.MapMessage):
        mapping = message.getBody(dict)
        data = None if mapping is None else json.dumps(mapping, default=_json_default)
        return (None if data is None else data.encode("utf-8")), None, "map"
    if isinstance(message, jmspy.StreamMessage):
        message.reset()
        items: list[Any] = []
        while True:
            try:
                items.append(message.readObject())
            except jmspy.MessageEOFException:
                break
        return json.dumps(items, default=_json_default).encode("utf-8"), None, "stream"
    if isinstance(message, jmspy.ObjectMessage):
        return message.getSerializedBytes(), None, "object"
    return None, None, "message"


def message_to_row(message: jmspy.Message) -> tuple[Any, ...]:
    """One received message as a row in READ_COLUMNS order."""
    return finish_row(message_to_raw_row(message))


# Positions of the timestamp columns: a raw row holds them as epoch ms (0: none).
_TIME_COLUMNS = (8, 9, 10)


def message_to_raw_row(message: jmspy.Message) -> tuple[Any, ...]:
    """A row with its timestamps still as epoch milliseconds: what the streaming source keeps
    on the driver and ships to the executors. Building the datetimes there (``finish_row``,
    in parallel on the executors) instead of in the one process that receives, and pickling
    three ints instead of three aware datetimes, is a third of the per-message cost."""
    body, text, kind = _body(message)
    properties = {
        name: message.getStringProperty(name)
        for name in message.getPropertyNames()
        if name not in _OWN_COLUMNS
    }
    count = message.getStringProperty("JMSXDeliveryCount")
    return (
        body,
        text,
        kind,
        message.getJMSMessageID(),
        message.getJMSCorrelationID(),
        message.getJMSType(),
        message.getJMSPriority(),
        message.getJMSDeliveryMode(),
        message.getJMSTimestamp(),
        message.getJMSExpiration(),
        message.getJMSDeliveryTime(),
        message.getJMSRedelivered(),
        int(count) if count else 1,
        message.getStringProperty("JMSXGroupID"),
        format_destination(message.getJMSReplyTo()),
        format_destination(message.getJMSDestination()),
        properties,
    )


def finish_row(raw: tuple[Any, ...]) -> tuple[Any, ...]:
    """A raw row (``message_to_raw_row``) as the row Spark gets."""
    row = list(raw)
    for index in _TIME_COLUMNS:
        row[index] = _time(row[index])
    return tuple(row)


def epoch_ms(value: Any) -> int:
    """A timestamp column value (naive local or aware datetime) in epoch milliseconds."""
    if isinstance(value, datetime.datetime):
        return int(round(value.timestamp() * 1000))
    raise TypeError(f"expected a timestamp, got {type(value).__name__}")


def row_value(row: Sequence[Any], index: int | None) -> Any:
    return None if index is None else row[index]
