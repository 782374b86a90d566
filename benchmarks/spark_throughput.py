"""Throughput of the Spark ``jms`` data source next to jmspy's plain producer and consumer,
on the same broker, in the same run.

    python benchmarks/spark_throughput.py [-n 20000] [--size 256] [--per-trigger 10000]
                                          [--read-partitions 2] [--rounds 3]

Rows of the result (every one moves N persistent messages of ``--size`` bytes):

* ``jmspy producer``: one transacted session, one commit at the end (what the sink does per
  task).
* ``jmspy consumer (transacted)``: ``receive()`` loop, a commit every ``--per-trigger``
  messages (what the streaming source does per batch).
* ``jmspy consumer (auto ack)``: the plain ``receive()`` loop in AUTO_ACKNOWLEDGE.
* ``spark sink``: ``df.write.format("jms")`` of N rows in 2 partitions (``local[2]``).
* ``spark source``: ``readStream.format("jms")`` with ``trigger(availableNow=True)`` into the
  ``noop`` sink, timed from ``load()`` until the query ends: every batch planned, read and
  settled, and the query's fixed costs (Spark plans the query and starts the source's runner
  process, about 0.9 s on the 2-core machine; the run ends when the broker answers a drain
  with nothing more). The consumer rows are timed from opening the connection to the last
  commit; they know N, so they wait for no end of the data.
* ``spark source -> sink``: the same source into ``writeStream.format("jms")`` (queue to
  queue).
* ``spark batch read``: ``spark.read.format("jms")`` with ``mode=consume`` and ``count()``,
  timed from the action until Spark has the count: ``--read-partitions`` tasks side by side
  (``minPartitions``, by default 2, one per core of the session) consume the queue to its
  end (the broker's answer to a drain), each in one transaction it commits once Spark has
  its rows.

Then ``--rounds`` interleaved rounds of the transacted jmspy consumer, the spark source and
the batch read on fresh queues of N messages each, one right after the other, and the
median of the source's and the batch read's ratio to the consumer: on a machine shared with
other work, single measurements minutes apart see different loads. The source's ratio is
printed twice: for the whole query, and within its micro-batches (from the start of the
first to the end of the last, from Spark's progress reports), which is what a long-running
query approaches.

Spark's start-up and a small warm-up query of each kind are not timed (the first streaming
query of a session pays several seconds of one-off cost). Without JMSPY_BROKER_URL a local
Apache Artemis is started for the run. Nothing is asserted about speed; the run fails only
when a message is lost or a count does not match.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

try:
    from _common import (
        BenchmarkError,
        BrokerInfo,
        broker,
        broker_identity,
        drain_queue,
        format_rate,
        format_table,
        fresh_queue,
        versions_line,
    )

    import jmspy
except ImportError as exc:  # pragma: no cover - a broken environment, said plainly
    print(f"spark throughput benchmark cannot start: {exc}", file=sys.stderr)
    raise SystemExit(2) from exc

Row = tuple[str, int, float]


def timed(name: str, count: int, work: Callable[[], Any]) -> Row:
    started = time.perf_counter()
    work()
    return name, count, time.perf_counter() - started


def factory_for(info: BrokerInfo) -> jmspy.ConnectionFactory:
    return jmspy.ConnectionFactory(info.url, info.username, info.password)


def produce(info: BrokerInfo, queue: str, count: int, body: bytes) -> None:
    with factory_for(info).createConnection() as connection:
        session = connection.createSession(jmspy.SESSION_TRANSACTED)
        producer = session.createProducer(session.createQueue(queue))
        for _ in range(count):
            message = session.createBytesMessage()
            message.writeBytes(body)
            producer.send(message)
        session.commit()


def consume(info: BrokerInfo, queue: str, count: int, commit_every: int | None) -> None:
    mode = jmspy.AUTO_ACKNOWLEDGE if commit_every is None else jmspy.SESSION_TRANSACTED
    with factory_for(info).createConnection() as connection:
        session = connection.createSession(mode)
        consumer = session.createConsumer(session.createQueue(queue))
        connection.start()
        for received in range(1, count + 1):
            if consumer.receive(30_000) is None:
                raise BenchmarkError(f"{queue}: only {received - 1} of {count} messages arrived")
            if commit_every is not None and received % commit_every == 0:
                session.commit()
        if commit_every is not None:
            session.commit()


def start_spark() -> Any:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import jmspy.spark

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("jmspy-spark-throughput")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    jmspy.spark.register(spark)
    return spark


def spark_write(spark: Any, jms: dict[str, str], queue: str, count: int, size: int) -> None:
    frame = spark.range(0, count, 1, 2).selectExpr(f"unhex(repeat('ab', {size})) AS body")
    frame.write.format("jms").options(**jms, destination=queue).mode("append").save()


def spark_stream(
    spark: Any,
    jms: dict[str, str],
    queue: str,
    count: int,
    per_trigger: int,
    checkpoint: str,
    to_queue: str | None = None,
) -> float:
    """Run an availableNow query over ``count`` messages; returns :func:`batches_seconds`."""
    source = (
        spark.readStream.format("jms")
        .options(**jms, destination=queue, maxMessagesPerTrigger=str(per_trigger))
        .load()
    )
    if to_queue is None:
        writer = source.writeStream.format("noop")
    else:
        writer = (
            source.select("body").writeStream.format("jms").options(**jms, destination=to_queue)
        )
    query = writer.option("checkpointLocation", checkpoint).trigger(availableNow=True).start()
    query.awaitTermination()
    if query.exception() is not None:
        raise BenchmarkError(f"streaming query failed: {query.exception()}")
    progress = query.recentProgress
    rows = sum(p["numInputRows"] for p in progress)
    if rows != count:
        raise BenchmarkError(f"the source read {rows} of {count} messages from {queue}")
    return batches_seconds(progress)


def spark_batch_read(
    spark: Any, jms: dict[str, str], queue: str, count: int, partitions: int = 1
) -> None:
    """``spark.read.format("jms")``, mode=consume, counted: every message of ``queue`` (the
    caller checks the queue is empty afterwards, i.e. the read committed), read by
    ``partitions`` tasks side by side (``minPartitions``)."""
    frame = (
        spark.read.format("jms")
        .options(**jms, destination=queue, mode="consume", minPartitions=str(partitions))
        .load()
    )
    rows = frame.count()
    if rows != count:
        raise BenchmarkError(f"the batch read counted {rows} of {count} messages from {queue}")


def batches_seconds(progress: list[Any]) -> float:
    """Seconds from the start of the query's first micro-batch to the end of its last, from
    Spark's progress reports: the query without its start-up and its end."""
    import datetime

    def started(p: Any) -> float:
        return datetime.datetime.fromisoformat(p["timestamp"].replace("Z", "+00:00")).timestamp()

    batches = [p for p in progress if p["numInputRows"]]
    last = batches[-1]
    return started(last) + last["durationMs"]["triggerExecution"] / 1000 - started(batches[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20_000, help="messages per measurement")
    parser.add_argument("--size", type=int, default=256, help="body bytes")
    parser.add_argument("--per-trigger", type=int, default=10_000, help="maxMessagesPerTrigger")
    parser.add_argument(
        "--read-partitions",
        type=int,
        default=2,
        help="tasks that consume the queue side by side in the batch read (minPartitions; "
        "2: one per core of the local[2] session)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="interleaved rounds of (jmspy consumer, spark source) for the ratio",
    )
    args = parser.parse_args()
    n, size, per_trigger = args.n, args.size, args.per_trigger
    body = b"\xab" * size

    work = tempfile.mkdtemp(prefix="jmspy-spark-bench-")
    with broker() as info:
        jms = {"url": info.url, "user": info.username, "password": info.password}
        rows: list[Row] = []

        plain_a, plain_b = fresh_queue("plain"), fresh_queue("plain")
        rows.append(
            timed("jmspy producer (transacted)", n, lambda: produce(info, plain_a, n, body))
        )
        rows.append(
            timed(
                "jmspy consumer (transacted)",
                n,
                lambda: consume(info, plain_a, n, per_trigger),
            )
        )
        produce(info, plain_b, n, body)
        rows.append(timed("jmspy consumer (auto ack)", n, lambda: consume(info, plain_b, n, None)))

        started = time.perf_counter()
        spark = start_spark()
        spark_start = time.perf_counter() - started
        try:
            warm, warm_read = fresh_queue("warm"), fresh_queue("warm")
            spark_write(spark, jms, warm, 200, size)
            spark_stream(spark, jms, warm, 200, per_trigger, os.path.join(work, "warm"))
            spark_write(spark, jms, warm_read, 200, size)
            spark_batch_read(spark, jms, warm_read, 200)

            sink_queue = fresh_queue("sink")
            rows.append(
                timed("spark sink", n, lambda: spark_write(spark, jms, sink_queue, n, size))
            )
            rows.append(
                timed(
                    "spark source",
                    n,
                    lambda: spark_stream(
                        spark, jms, sink_queue, n, per_trigger, os.path.join(work, "source")
                    ),
                )
            )
            batch_queue = fresh_queue("batch")
            produce(info, batch_queue, n, body)
            rows.append(
                timed(
                    "spark batch read (consume)",
                    n,
                    lambda: spark_batch_read(spark, jms, batch_queue, n, args.read_partitions),
                )
            )
            ratios = interleaved_rounds(spark, info, jms, args, body, work)
            piped_in, piped_out = fresh_queue("pipe-in"), fresh_queue("pipe-out")
            produce(info, piped_in, n, body)
            rows.append(
                timed(
                    "spark source -> sink",
                    n,
                    lambda: spark_stream(
                        spark,
                        jms,
                        piped_in,
                        n,
                        per_trigger,
                        os.path.join(work, "pipe"),
                        to_queue=piped_out,
                    ),
                )
            )
        finally:
            spark.stop()
        arrived = drain_queue(info, piped_out, n)
        if arrived != n:
            raise BenchmarkError(f"the pipeline delivered {arrived} of {n} messages")
        for queue in (plain_a, plain_b, sink_queue, piped_in, batch_queue):
            left = drain_queue(info, queue)
            if left:
                raise BenchmarkError(f"{left} messages were left on {queue}")

        import pyspark

        print()
        print(f"broker: {broker_identity(info)} ({info.description})")
        print(f"{versions_line()}, pyspark {pyspark.__version__}")
        print(
            f"{n} persistent messages of {size} bytes per row; maxMessagesPerTrigger "
            f"{per_trigger}; SparkSession local[2] started in {spark_start:.1f} s (not timed)"
        )
        print()
        table = [
            (name, f"{count:,}", f"{seconds:.2f}", format_rate(count / seconds))
            for name, count, seconds in rows
        ]
        print(format_table(("path", "messages", "seconds", "msgs/s"), table))
        print()
        print(
            f"interleaved rounds (consumer, source, batch read, on fresh queues of {n}): "
            + ", ".join(
                f"{c:,.0f} / {s:,.0f} / {r:,.0f} msg/s = {s / c:.2f}x, {r / c:.2f}x"
                for c, s, _, r in ratios
            )
        )
        median = statistics.median(s / c for c, s, _, _ in ratios)
        print(f"spark source / jmspy consumer (transacted), median of {len(ratios)}: {median:.2f}x")
        read_ratios = [r / c for c, _, _, r in ratios]
        print(
            f"spark batch read / jmspy consumer (transacted), median of {len(ratios)}: "
            f"{statistics.median(read_ratios):.2f}x "
            f"[{min(read_ratios):.2f}-{max(read_ratios):.2f}]"
        )
        in_batches = [b / c for c, _, b, _ in ratios]
        print(
            "the same within the query's micro-batches (first batch start to last batch end, "
            "without the query's start-up and end), median: "
            f"{statistics.median(in_batches):.2f}x [{min(in_batches):.2f}-{max(in_batches):.2f}]"
        )
        print(f"load average at the end: {os.getloadavg()}")
    return 0


def interleaved_rounds(
    spark: Any, info: BrokerInfo, jms: dict[str, str], args: Any, body: bytes, work: str
) -> list[tuple[float, float, float, float]]:
    """(jmspy consumer msg/s, spark source msg/s, the source's msg/s in its micro-batches,
    the batch read's msg/s) per round, one right after the other, so that all see the same
    load on a shared machine."""
    n, per_trigger = args.n, args.per_trigger
    out: list[tuple[float, float, float, float]] = []
    for round_ in range(args.rounds):
        # Each queue is filled just before it is read: the broker holds one run's messages at
        # a time (several runs' worth of large N would fill its memory and stop the senders).
        plain, streamed, read = fresh_queue("round"), fresh_queue("round"), fresh_queue("round")
        produce(info, plain, n, body)
        started = time.perf_counter()
        consume(info, plain, n, per_trigger)
        consumer_s = time.perf_counter() - started
        checkpoint = os.path.join(work, f"round-{round_}")
        produce(info, streamed, n, body)
        started = time.perf_counter()
        in_batches_s = spark_stream(spark, jms, streamed, n, per_trigger, checkpoint)
        source_s = time.perf_counter() - started
        produce(info, read, n, body)
        started = time.perf_counter()
        spark_batch_read(spark, jms, read, n, args.read_partitions)
        read_s = time.perf_counter() - started
        left = drain_queue(info, read)
        if left:
            raise BenchmarkError(f"the batch read left {left} messages on {read}")
        out.append((n / consumer_s, n / source_s, n / in_batches_s, n / read_s))
        print(
            f"round {round_ + 1}: consumer {n / consumer_s:,.0f}, source {n / source_s:,.0f} "
            f"msg/s ({n / in_batches_s:,.0f} within its micro-batches), batch read "
            f"{n / read_s:,.0f}"
        )
    return out


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchmarkError as exc:
        print(f"benchmark failed: {exc}", file=sys.stderr)
        sys.exit(1)
