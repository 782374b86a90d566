"""End to end: a local[2] SparkSession and the project's Artemis, through ``format("jms")``.

These tests need pyspark (the ``spark`` fixture fails, never skips, without it). Every
streaming query uses ``trigger(availableNow=True)`` so it ends on its own.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

import jmspy
from jmspy.spark import ROW_ID_PROPERTY

QUERY_TIMEOUT_S = 120


def send_texts(factory: Any, queue: str, count: int) -> list[str]:
    ids: list[str] = []
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.SESSION_TRANSACTED)
        producer = session.createProducer(session.createQueue(queue))
        for i in range(count):
            message = session.createTextMessage(f"order {i}")
            message.setIntProperty("amount", i)
            producer.send(message)
            ids.append(str(message.getJMSMessageID()))
        session.commit()
    return ids


def receive_all(
    factory: Any, queue: str, wait_ms: int = 1000, expected: int | None = None
) -> list[tuple[int, Any]]:
    """(arrival epoch ms, message) of everything on the queue (or of the first ``expected``)."""
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        consumer = session.createConsumer(session.createQueue(queue))
        connection.start()
        received: list[tuple[int, Any]] = []
        while len(received) != expected and (message := consumer.receive(wait_ms)) is not None:
            received.append((time.time_ns() // 1_000_000, message))
        return received


def source_runners() -> list[int]:
    """PIDs of the Python streaming-source runners started by this test process's Spark."""
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if b"python_streaming_source_runner" not in cmdline:
            continue
        pid = int(entry)
        while pid > 1:  # keep only descendants of this process
            try:
                pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                break
            if pid == me:
                found.append(int(entry))
                break
    return found


def test_available_now_reads_every_message_once(
    spark: Any, factory: Any, jms_options: dict[str, str], unique_name: str, tmp_path: Path
) -> None:
    ids = send_texts(factory, unique_name, 200)
    query = (
        spark.readStream.format("jms")
        .options(**jms_options, destination=unique_name, maxMessagesPerTrigger="50")
        .load()
        .writeStream.format("parquet")
        .option("path", str(tmp_path / "out"))
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(QUERY_TIMEOUT_S)
    assert query.exception() is None
    assert [p["numInputRows"] for p in query.recentProgress] == [50, 50, 50, 50]
    out = spark.read.parquet(str(tmp_path / "out"))
    assert out.count() == 200
    assert {r.message_id for r in out.select("message_id").collect()} == set(ids)
    row = out.where("text = 'order 7'").first()
    assert row.properties["amount"] == "7" and row.message_type == "text"
    assert row.destination == f"queue://{unique_name}" and not row.redelivered
    assert receive_all(factory, unique_name, wait_ms=300) == []  # all settled


def test_trigger_once_is_refused_before_anything_is_received(
    spark: Any, factory: Any, jms_options: dict[str, str], unique_name: str, tmp_path: Path
) -> None:
    # Trigger.Once's one micro-batch is never confirmed to the source within its run, so
    # every run would read the same messages again: the query must fail with the reason,
    # and the messages stay on the queue untouched (not even counted as a delivery).
    ids = send_texts(factory, unique_name, 5)
    query = (
        spark.readStream.format("jms")
        .options(**jms_options, destination=unique_name)
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(once=True)
        .start()
    )
    with pytest.raises(Exception) as failure:
        query.awaitTermination(QUERY_TIMEOUT_S)
    assert "trigger(once=True)" in str(failure.value)
    assert "availableNow" in str(failure.value)
    messages = [m for _, m in receive_all(factory, unique_name, wait_ms=300)]
    assert [m.getJMSMessageID() for m in messages] == ids
    assert not any(m.getJMSRedelivered() for m in messages)


def test_restart_after_killing_the_source_mid_stream_loses_nothing(
    spark: Any, factory: Any, jms_options: dict[str, str], unique_name: str, tmp_path: Path
) -> None:
    """SIGKILL the driver-side process that holds the consumer at the worst moment: the
    at-least-once sink (foreachBatch appending Parquet) has written batch 2, whose messages
    are not settled yet. Restarted from its checkpoint, the query delivers every message;
    the copies are that one batch, identifiable by message_id (and marked redelivered)."""
    total, per_batch = 150, 25
    ids = send_texts(factory, unique_name, total)
    out = str(tmp_path / "out")
    killed: list[int] = []
    earlier = set(source_runners())  # runners of earlier queries may still be ending

    def sink(batch: Any, batch_id: int) -> None:
        batch.write.mode("append").parquet(out)
        if batch_id == 2 and not killed:
            runners = set(source_runners()) - earlier
            assert len(runners) == 1, runners
            (runner,) = runners
            os.kill(runner, signal.SIGKILL)
            killed.append(runner)

    def start() -> Any:
        return (
            spark.readStream.format("jms")
            .options(**jms_options, destination=unique_name, maxMessagesPerTrigger=str(per_batch))
            .load()
            .writeStream.foreachBatch(sink)
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )

    from pyspark.errors import StreamingQueryException  # pyspark is optional: imported here

    query = start()
    # A query that ends normally (or times out) although its source was killed fails here
    # with "DID NOT RAISE"; any other exception fails the test with its own traceback.
    with pytest.raises(StreamingQueryException):
        query.awaitTermination(QUERY_TIMEOUT_S)
    query.stop()
    assert killed, "the sink never reached batch 2"
    written_before = spark.read.parquet(out).count()
    assert written_before == 3 * per_batch

    restarted = start()
    assert restarted.awaitTermination(QUERY_TIMEOUT_S)
    assert restarted.exception() is None
    rows = spark.read.parquet(out).select("message_id", "redelivered").collect()
    seen = [r.message_id for r in rows]
    assert set(seen) == set(ids)  # nothing lost
    duplicates = len(seen) - len(set(seen))
    marked = sum(1 for r in rows if r.redelivered)
    print(f"killed after {written_before} rows; {duplicates} copies; {marked} marked redelivered")
    assert duplicates <= per_batch, f"{duplicates} copies, more than one batch"
    assert receive_all(factory, unique_name, wait_ms=300) == []


def test_stop_and_restart_loses_nothing(
    spark: Any, factory: Any, jms_options: dict[str, str], unique_name: str, tmp_path: Path
) -> None:
    """query.stop() in the middle of a run (Spark ends the source's process with stop() or
    SIGTERM), then a restart from the checkpoint: every message, copies at most one batch."""
    total, per_batch = 100, 20
    ids = send_texts(factory, unique_name, total)
    out = str(tmp_path / "out")

    def sink(batch: Any, batch_id: int) -> None:
        batch.write.mode("append").parquet(out)

    def start() -> Any:
        return (
            spark.readStream.format("jms")
            .options(**jms_options, destination=unique_name, maxMessagesPerTrigger=str(per_batch))
            .load()
            .writeStream.foreachBatch(sink)
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )

    query = start()
    deadline = time.monotonic() + QUERY_TIMEOUT_S
    while (query.lastProgress or {}).get("batchId", -1) < 1:
        assert time.monotonic() < deadline and query.isActive, "the stream never got going"
        time.sleep(0.05)
    query.stop()
    written_before = spark.read.parquet(out).count()
    assert written_before < total

    restarted = start()
    assert restarted.awaitTermination(QUERY_TIMEOUT_S)
    seen = [r.message_id for r in spark.read.parquet(out).select("message_id").collect()]
    assert set(seen) == set(ids)
    duplicates = len(seen) - len(set(seen))
    print(f"stopped after {written_before} rows; {duplicates} copies")
    assert duplicates <= per_batch
    assert receive_all(factory, unique_name, wait_ms=300) == []


def test_write_with_per_row_delivery_delay(
    spark: Any, factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    delays = {"now": 0, "soon": 1500, "later": 3000}
    rows = [(text, delay, {"k": text}) for text, delay in delays.items()]
    frame = spark.createDataFrame(
        rows, "body string, delivery_delay long, properties map<string,string>"
    )
    frame.coalesce(1).write.format("jms").options(**jms_options, destination=unique_name).mode(
        "append"
    ).save()
    received = receive_all(factory, unique_name, wait_ms=5000, expected=3)
    assert sorted(m.getText() for _, m in received) == sorted(delays)
    for arrived, message in received:
        delay = delays[message.getText()]
        assert message.getJMSDeliveryTime() - message.getJMSTimestamp() == delay
        assert arrived >= message.getJMSDeliveryTime(), "delivered before its JMSDeliveryTime"
        assert message.getStringProperty(ROW_ID_PROPERTY).endswith(
            f":0:0:{list(delays).index(message.getText())}"
        )


def test_a_row_breaking_a_rule_fails_the_write_with_the_rules_error(
    spark: Any, factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    frame = spark.createDataFrame(
        [("fine", None, None), ("expires before it is due", 5000, 1000)],
        "body string, delivery_delay long, time_to_live long",
    )
    with pytest.raises(Exception) as caught:  # noqa: B017 - Spark wraps the task's error
        frame.coalesce(1).write.format("jms").options(**jms_options, destination=unique_name).mode(
            "append"
        ).save()
    text = str(caught.value)
    assert "JmsWriteError" in text and "rule DD-2" in text, text[-2000:]
    # The task's transaction rolled back: not even the fine row was delivered.
    assert receive_all(factory, unique_name, wait_ms=300) == []


def test_batch_read_browses_by_default_and_consumes_on_request(
    spark: Any, factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    ids = send_texts(factory, unique_name, 20)
    reader = spark.read.format("jms").options(**jms_options, destination=unique_name)
    browsed = reader.load()
    assert browsed.count() == 20
    assert browsed.count() == 20  # browsing took nothing
    consumed = reader.option("mode", "consume").load().select("message_id").collect()
    assert sorted(r.message_id for r in consumed) == sorted(ids)
    assert browsed.count() == 0


def test_a_batch_consume_with_min_partitions_reads_the_queue_in_that_many_tasks(
    spark: Any, factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    ids = send_texts(factory, unique_name, 120)
    options = {**jms_options, "destination": unique_name, "mode": "consume", "minPartitions": "2"}
    capped = spark.read.format("jms").options(**options, maxMessages="30").load()
    assert capped.rdd.getNumPartitions() == 2
    first = [r.message_id for r in capped.select("message_id").collect()]
    # Each of the two consumers took at most its 15, and committed what it took.
    assert len(first) == 30 and len(set(first)) == 30
    rest_frame = spark.read.format("jms").options(**options).load()
    rest = [r.message_id for r in rest_frame.select("message_id").collect()]
    assert sorted(first + rest) == sorted(ids)
    assert receive_all(factory, unique_name, wait_ms=300) == []


def test_stream_from_a_queue_into_another_queue(
    spark: Any, factory: Any, jms_options: dict[str, str], unique_name: str, tmp_path: Path
) -> None:
    send_texts(factory, f"{unique_name}-in", 40)
    query = (
        spark.readStream.format("jms")
        .options(**jms_options, destination=f"{unique_name}-in", maxMessagesPerTrigger="25")
        .load()
        .selectExpr(
            "upper(text) AS body",
            "message_id AS correlation_id",
            "map('amount', properties['amount']) AS properties",
        )
        .writeStream.format("jms")
        .options(**jms_options, destination=f"{unique_name}-out")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(QUERY_TIMEOUT_S)
    assert query.exception() is None
    received = [m for _, m in receive_all(factory, f"{unique_name}-out")]
    assert sorted(m.getText() for m in received) == sorted(f"ORDER {i}" for i in range(40))
    row_ids = {m.getStringProperty(ROW_ID_PROPERTY) for m in received}
    assert len(row_ids) == 40
    assert all(r.startswith(f"{query.id}:") for r in row_ids)  # <query>:<batch>:<part>:<row>
    assert {r.split(":")[1] for r in row_ids} == {"0", "1"}
