"""The ``jms`` Python data source for Spark 4.x (``pyspark.sql.datasource``).

Where each piece runs (see docs/spark.md):

* ``JmsDataSource`` methods, ``JmsBatchReader.partitions``: driver-side planner processes;
* ``JmsStreamReader`` offsets, ``partitions``, ``commit``, ``stop``: one runner process on the
  driver per query run, which owns the consumer (``_stream.StreamConsumer``);
* ``read`` and the writers' ``write``: executor Python workers.
"""

from __future__ import annotations

import dataclasses
import logging
import signal
import threading
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.types import (
    BinaryType,
    ByteType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

import jmspy
from jmspy.options import ConnectionOptions

from ._arrow import raw_rows_to_batch
from ._batch import browse_batches, consume_batches
from ._options import JmsOptionError, JmsOptions
from ._rows import READ_SCHEMA
from ._stream import Offset, StreamConsumer
from ._writer import RowWriter

if TYPE_CHECKING:
    from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow as _AvailableNow
else:
    try:  # Spark 4.2+: admission control and Trigger.AvailableNow for Python sources
        from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow as _AvailableNow
    except ImportError:  # Spark 4.0 / 4.1

        class _AvailableNow:
            pass


__all__ = [
    "WRITE_TYPES",
    "JmsDataSource",
    "JmsBatchReader",
    "JmsStreamReader",
    "JmsCommitMessage",
    "JmsBatchWriter",
    "JmsStreamWriter",
]


log = logging.getLogger("jmspy.spark")

# jmspy's default credit window of a queue consumer (jms.prefetchPolicy.queuePrefetch).
QUEUE_PREFETCH: int = ConnectionOptions.model_fields["queue_prefetch"].default

# Rows per Arrow batch of a batch read: bounded memory in the task, few enough batches that
# the per-batch cost does not matter.
ARROW_BATCH_ROWS = 2000

_INTEGRAL = (ByteType, ShortType, IntegerType, LongType)
WRITE_TYPES: dict[str, tuple[type, ...]] = {
    "body": (StringType, BinaryType),
    "properties": (MapType,),
    "priority": _INTEGRAL,
    "time_to_live": _INTEGRAL,
    "delivery_delay": _INTEGRAL,
    "delivery_time": (TimestampType, TimestampNTZType),
    "delivery_mode": _INTEGRAL,
    "correlation_id": (StringType,),
    "type": (StringType,),
    "group_id": (StringType,),
    "destination": (StringType,),
}


class JmsDataSource(DataSource):
    """``format("jms")``: read a queue, topic or durable subscription; write to any of them."""

    @classmethod
    def name(cls) -> str:
        return "jms"

    def schema(self) -> str:
        return READ_SCHEMA

    def _opts(self) -> JmsOptions:
        return JmsOptions.parse(self.options)

    def reader(self, schema: StructType) -> DataSourceReader:
        opts = self._opts()
        opts.require_destination()
        return JmsBatchReader(opts)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        opts = self._opts()
        opts.require_destination()
        if opts.read_mode == "browse" and any(str(k).lower() == "mode" for k in self.options):
            # The default is browse too, so only a given option can be refused: a stream
            # consumes (and settles after Spark's commit); it cannot browse.
            raise JmsOptionError(
                "option 'mode' is for batch reads (spark.read): a stream always consumes; "
                "drop mode=browse, or read the queue with spark.read to browse it"
            )
        return JmsStreamReader(opts)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        opts = self._opts()
        _check_overwrite(overwrite)
        return JmsBatchWriter(_row_writer(opts, schema), opts.write_id or uuid.uuid4().hex)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        opts = self._opts()
        _check_overwrite(overwrite)
        return JmsStreamWriter(_row_writer(opts, schema), opts.write_id)


def _check_overwrite(overwrite: bool) -> None:
    if overwrite:
        raise JmsOptionError(
            "a JMS destination can only be appended to: use mode('append') / outputMode('append')"
        )


def _row_writer(opts: JmsOptions, schema: StructType) -> RowWriter:
    writer = RowWriter(opts, schema.names)  # checks the column names
    for field in schema.fields:
        allowed = WRITE_TYPES[field.name]
        if not isinstance(field.dataType, allowed):
            kinds = " or ".join(k.typeName() for k in allowed)  # type: ignore[attr-defined]
            raise JmsOptionError(
                f"column {field.name!r} is {field.dataType.simpleString()}; "
                f"format 'jms' needs {kinds}"
            )
    return writer


# ---- reading ---------------------------------------------------------------------------------


class JmsBatchReader(DataSourceReader):
    """A QueueBrowser (mode=browse) in one partition, or consumers (mode=consume): one, or
    ``minPartitions`` competing ones on a queue (see :func:`consume_partitions`)."""

    def __init__(self, opts: JmsOptions) -> None:
        self.opts = opts

    def partitions(self) -> Sequence[InputPartition]:
        if self.opts.read_mode == "browse":
            return [InputPartition(0)]
        return [InputPartition(cap) for cap in consume_partitions(self.opts)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        if self.opts.read_mode == "browse":
            chunks = browse_batches(self.opts, ARROW_BATCH_ROWS)
        else:
            # A consume is settled only when Spark asks for more after the last batch (see
            # _batch). Each partition's consumer takes at most its share of maxMessages, and
            # its credit window is no larger than that share: a consumer holding prefetched
            # messages it will never take would leave the others nothing to read.
            cap = partition.value
            window = self.opts.prefetch
            if window is not None:
                window = min(window, cap)
            elif cap < QUEUE_PREFETCH:
                window = cap  # else the URL's prefetch, or jmspy's default, applies
            share = dataclasses.replace(self.opts, max_messages=cap, prefetch=window)
            chunks = consume_batches(share, ARROW_BATCH_ROWS)
        for chunk in chunks:
            yield raw_rows_to_batch(chunk)


def consume_partitions(opts: JmsOptions) -> list[int]:
    """The input partitions of a batch consume, as the most messages each may take.

    A queue is read by ``minPartitions`` tasks side by side (Kafka's name for "at least this
    many partitions"), each with its own connection, consumer and transaction: competing
    consumers, so each takes what the broker gives it until a drain says the queue has
    nothing more, and together they take at most ``maxMessages``. The order of the queue holds
    within a partition, not across them. A topic or a durable subscription has one consumer
    (a subscription's client id admits one connection), so one partition."""
    wanted = opts.min_partitions
    if not isinstance(opts.require_destination(), jmspy.Queue) or opts.subscription is not None:
        wanted = 1
    wanted = max(1, min(wanted, opts.max_messages))
    share, extra = divmod(opts.max_messages, wanted)
    return [share + (1 if index < extra else 0) for index in range(wanted)]


class JmsStreamReader(DataSourceStreamReader, _AvailableNow):
    """Micro-batch source; at-least-once (see ``_stream`` for how settlement follows Spark's
    commit log). ``__init__`` holds only options: it also runs in a planner process, and the
    executors get a pickled copy."""

    def __init__(self, opts: JmsOptions) -> None:
        self.opts = opts
        self._consumer: StreamConsumer | None = None
        self._last_end: Offset | None = None  # Spark < 4.2 calls latestOffset() without start

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_consumer"] = None
        return state

    def _ensure(self) -> StreamConsumer:
        if self._consumer is None:
            self._consumer = StreamConsumer(self.opts)
            _close_on_sigterm(self._consumer)
        return self._consumer

    def initialOffset(self) -> Offset:
        return self._ensure().offset(0)

    def getDefaultReadLimit(self) -> Any:
        from pyspark.sql.streaming.datasource import ReadMaxRows

        return ReadMaxRows(self.opts.max_messages_per_trigger)

    def prepareForTriggerAvailableNow(self) -> None:
        self._ensure().prepare_available_now()

    def latestOffset(self, start: Offset | None = None, limit: Any = None) -> Offset:
        if type(limit).__name__ == "ReadAllAvailable":
            # Spark 4.2+ asks for everything only under Trigger.Once (availableNow and
            # processing-time triggers pass getDefaultReadLimit). Its one micro-batch is never
            # confirmed to the source in the run (see docs/spark.md, Guarantees), so every run
            # would read the same messages again: refuse before receiving anything.
            raise JmsOptionError(
                "trigger(once=True) cannot be used with format 'jms': the run's one micro-batch "
                "is never confirmed to the source, so its messages would be settled by no run "
                "and read again by every run; use trigger(availableNow=True)"
            )
        consumer = self._ensure()
        if start is None:
            start = self._last_end or consumer.offset(0)
        max_rows = getattr(limit, "max_rows", None) or self.opts.max_messages_per_trigger
        end = consumer.latest(start, min(max_rows, self.opts.max_messages_per_trigger))
        self._last_end = end if end is not None else start
        return self._last_end

    def partitions(self, start: Offset, end: Offset) -> Sequence[InputPartition]:
        rows = self._ensure().rows_between(start, end)
        return [InputPartition(chunk) for chunk in split_rows(rows, self.opts)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        # The driver ships raw rows (timestamps as epoch ms); the executors turn them into one
        # Arrow batch per partition, in parallel, column by column (see _arrow).
        return iter([raw_rows_to_batch(partition.value)])

    def commit(self, end: Offset) -> None:
        consumer = self._consumer
        if consumer is not None and consumer.owns(end):
            consumer.acknowledge_through(consumer.position(end))

    def stop(self) -> None:
        if self._consumer is not None:
            self._consumer.close()


def split_rows(rows: list[tuple[Any, ...]], opts: JmsOptions) -> list[list[tuple[Any, ...]]]:
    """A micro-batch's rows as input partitions: at most ``rowsPerPartition`` rows each and at
    least ``minPartitions`` of them (when there are that many rows), in order."""
    if not rows:
        return []
    wanted = min(len(rows), max(opts.min_partitions, -(-len(rows) // opts.rows_per_partition)))
    size = -(-len(rows) // wanted)
    return [rows[i : i + size] for i in range(0, len(rows), size)]


def _close_on_sigterm(consumer: StreamConsumer) -> None:
    """Spark often ends the runner with SIGTERM instead of calling stop(): close the
    connection first (a bounded wait), so the broker gets the unacknowledged messages back
    at once and counts the attempt.

    The signal is then handed back to the disposition it had before: the process ends (or
    carries on) exactly as it would have without this handler, only after the close. With
    the default disposition, which Spark's Python workers use, SIGTERM ends the process.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)

    def close() -> None:
        # The signal is handed back whatever happens here; a failed close is logged, not left
        # to the thread's excepthook.
        try:
            consumer.close()
        except BaseException:  # noqa: BLE001 - this thread must not end silently
            log.exception("closing the JMS source on SIGTERM failed")

    def on_term(signum: int, frame: Any) -> None:
        closer = threading.Thread(target=close, name="jmspy-spark-close", daemon=True)
        closer.start()
        closer.join(5.0)
        # None: a handler installed outside Python, which cannot be reinstated; the default
        # disposition is what such a process would most likely have had.
        restored = signal.SIG_DFL if previous is None else previous
        signal.signal(signal.SIGTERM, restored)
        if restored is signal.SIG_DFL:
            signal.raise_signal(signal.SIGTERM)
        elif callable(restored):
            restored(signum, frame)

    signal.signal(signal.SIGTERM, on_term)


# ---- writing ---------------------------------------------------------------------------------


@dataclass
class JmsCommitMessage(WriterCommitMessage):
    partition: int
    sent: int


def _task_row_prefix(write_id: str | None) -> tuple[str, int]:
    """``<write id>:<batch>:<partition>`` for this task; the write id of a streaming query is
    its id, which stays the same across restarts from the checkpoint."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:
        return f"{write_id or 'local'}:0:0", 0
    query = context.getLocalProperty("sql.streaming.queryId")
    batch = context.getLocalProperty("streaming.sql.batchId")
    partition = context.partitionId()
    return f"{write_id or query or 'write'}:{batch or 0}:{partition}", partition


class JmsBatchWriter(DataSourceWriter):
    def __init__(self, writer: RowWriter, write_id: str) -> None:
        self.writer = writer
        self.write_id = write_id

    def write(self, iterator: Iterator[Any]) -> JmsCommitMessage:
        prefix, partition = _task_row_prefix(self.write_id)
        return JmsCommitMessage(partition, self.writer.write(iterator, prefix))

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        sent = sum(m.sent for m in messages if isinstance(m, JmsCommitMessage))
        log.info("write %s: %d messages sent", self.write_id, sent)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        sent = sum(m.sent for m in messages if isinstance(m, JmsCommitMessage))
        log.warning(
            "write %s aborted; %d messages of finished tasks were sent", self.write_id, sent
        )


class JmsStreamWriter(DataSourceStreamWriter):
    def __init__(self, writer: RowWriter, write_id: str | None) -> None:
        self.writer = writer
        self.write_id = write_id

    def write(self, iterator: Iterator[Any]) -> JmsCommitMessage:
        prefix, partition = _task_row_prefix(self.write_id)
        return JmsCommitMessage(partition, self.writer.write(iterator, prefix))

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        sent = sum(m.sent for m in messages if isinstance(m, JmsCommitMessage))
        log.debug("batch %d: %d messages sent", batchId, sent)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        log.warning("batch %d aborted; rows of finished tasks were sent", batchId)
