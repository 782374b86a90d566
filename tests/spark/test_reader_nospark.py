"""The source's receiving side driven directly (no Spark) against the real broker.

The calls follow the order Spark's micro-batch engine uses (see jmspy/spark/_stream.py):
``latestOffset(start)`` for batch N+1 comes before ``commit(end of N)``, and the batch that
ended at ``start`` is in the checkpoint's commit log when ``latestOffset(start)`` runs.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from typing import Any

import pytest

import jmspy
from jmspy.spark import JmsOptionError, JmsOptions
from jmspy.spark._batch import browse_rows, consume_rows
from jmspy.spark._rows import READ_COLUMNS, finish_row
from jmspy.spark._stream import StreamConsumer

COLUMNS = [name for name, _ in READ_COLUMNS]


def send_texts(factory: Any, destination: str, count: int, prefix: str = "m") -> list[str]:
    """Send ``count`` text messages; returns their JMSMessageIDs in send order."""
    ids: list[str] = []
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        producer = session.createProducer(session.createQueue(destination))
        for i in range(count):
            message = session.createTextMessage(f"{prefix}{i}")
            producer.send(message)
            ids.append(str(message.getJMSMessageID()))
    return ids


def queue_depth(factory: Any, queue: str) -> int:
    """Messages still on the queue, counted by browsing (acknowledged ones are gone)."""
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        with session.createBrowser(session.createQueue(queue)) as browser:
            return sum(1 for _ in browser.getEnumeration())


def drain(factory: Any, queue: str) -> list[Any]:
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        consumer = session.createConsumer(session.createQueue(queue))
        connection.start()
        received = []
        while (message := consumer.receive(1000)) is not None:
            received.append(message)
        return received


def options(jms_options: dict[str, str], **extra: str) -> JmsOptions:
    return JmsOptions.parse({**jms_options, "pollTimeoutMs": "200", **extra})


def row_dict(row: tuple[Any, ...]) -> dict[str, Any]:
    """A row of the stream consumer as Spark gets it (finished on the executor)."""
    return dict(zip(COLUMNS, finish_row(row), strict=True))


def test_batches_are_acknowledged_only_once_spark_recorded_them(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    ids = send_texts(factory, unique_name, 10)
    consumer = StreamConsumer(options(jms_options, destination=unique_name))
    try:
        start = consumer.offset(0)
        end1 = consumer.latest(start, 4)
        assert end1 == consumer.offset(4)
        batch1 = consumer.rows_between(start, end1)
        assert [row_dict(r)["message_id"] for r in batch1] == ids[:4]
        assert consumer.acknowledged == 0

        # Spark plans batch 2 (after writing commits/0), then calls commit(end of batch 1).
        end2 = consumer.latest(end1, 4)
        assert end2 == consumer.offset(8)
        assert consumer.acknowledged == 4
        assert consumer.acknowledge_through(4) is False  # batch 2 is not recorded yet
        assert [row_dict(r)["text"] for r in consumer.rows_between(end1, end2)] == [
            f"m{i}" for i in range(4, 8)
        ]
    finally:
        consumer.close()
    # Batch 2 was planned but never recorded, and m8, m9 were only prefetched: all back.
    assert sorted(str(m.getJMSMessageID()) for m in drain(factory, unique_name)) == sorted(ids[4:])


def test_commit_of_an_idle_stream_acknowledges(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    send_texts(factory, unique_name, 5)
    consumer = StreamConsumer(options(jms_options, destination=unique_name))
    try:
        end = consumer.latest(consumer.offset(0), 10)
        assert end == consumer.offset(5)
        # commit(end) with nothing received after end: acknowledged at once.
        assert consumer.acknowledge_through(5) is True
        assert consumer.rows_between(consumer.offset(0), end) == []  # rows released
        # No new data: latestOffset returns None (the reader then returns start unchanged).
        assert consumer.latest(end, 10) is None
    finally:
        consumer.close()
    assert drain(factory, unique_name) == []


@pytest.mark.parametrize("transacted", ["true", "false"])
def test_restart_loses_nothing_and_replays_of_a_dead_process_are_empty(
    factory: Any, jms_options: dict[str, str], unique_name: str, transacted: str
) -> None:
    ids = send_texts(factory, unique_name, 6)
    opts = options(jms_options, destination=unique_name, transacted=transacted)
    first = StreamConsumer(opts)
    end1 = first.latest(first.offset(0), 3)
    end2 = first.latest(end1, 3)  # batch 1 recorded and acknowledged; batch 2 planned
    assert end2 is not None and first.acknowledged == 3
    first.close()  # stopped before batch 2 was recorded

    second = StreamConsumer(opts)
    try:
        # Spark replays batch 2 (planned by the dead process): it comes back empty ...
        assert second.rows_between(end1, end2) == []
        # ... and its messages come back as new deliveries in the next batch, marked.
        end3 = second.latest(end2, 10)
        rows = [row_dict(r) for r in second.rows_between(end2, end3)]
        assert [r["message_id"] for r in rows] == ids[3:]
        assert all(r["redelivered"] and r["delivery_count"] == 2 for r in rows)
        assert second.latest(end3, 10) is None
    finally:
        second.close()
    assert queue_depth(factory, unique_name) == 0


def test_stopping_with_a_batch_spark_did_not_confirm_says_it_comes_back(
    factory: Any,
    jms_options: dict[str, str],
    unique_name: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Trigger.Once plans one batch, Spark records it and the query stops without another
    # latestOffset or commit(end): its messages are never settled and come back in the next
    # run, every run. Nothing can settle them safely here; the log must say so.
    send_texts(factory, unique_name, 3)
    consumer = StreamConsumer(options(jms_options, destination=unique_name))
    assert consumer.latest(consumer.offset(0), 10) is not None
    with caplog.at_level("WARNING", logger="jmspy.spark"):
        consumer.close()
    (record,) = [r for r in caplog.records if "not settled" in r.getMessage()]
    assert "3 message(s)" in record.getMessage() and "Trigger.Once" in record.getMessage()
    assert queue_depth(factory, unique_name) == 3

    settled = StreamConsumer(options(jms_options, destination=unique_name))
    end = settled.latest(settled.offset(0), 10)
    assert end is not None and settled.acknowledge_through(settled.position(end))
    caplog.clear()
    with caplog.at_level("WARNING", logger="jmspy.spark"):
        settled.close()
    assert not [r for r in caplog.records if "not settled" in r.getMessage()]


def test_killed_runner_loses_nothing(
    factory: Any, broker: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    """A process that dies with a batch planned (no close, no SIGTERM handler) gives the
    broker its unsettled messages back. The settled batch stays settled (a transaction
    commit is confirmed by the broker). Whether the copies are marked JMSRedelivered depends
    on whether the broker had seen them accepted in the open transaction before the process
    died, so the JMSMessageID is what identifies them."""
    ids = send_texts(factory, unique_name, 5)
    script = textwrap.dedent(
        f"""
        import os
        from jmspy.spark import JmsOptions
        from jmspy.spark._stream import StreamConsumer
        opts = JmsOptions.parse({dict(jms_options, destination=unique_name)!r})
        consumer = StreamConsumer(opts)
        end1 = consumer.latest(consumer.offset(0), 2)
        end2 = consumer.latest(end1, 2)
        print(consumer.acknowledged, flush=True)
        os._exit(9)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 9, result.stderr
    assert result.stdout.strip() == "2"
    rest = drain(factory, unique_name)
    assert sorted(str(m.getJMSMessageID()) for m in rest) == sorted(ids[2:])


def test_available_now_stops_when_the_destination_is_empty(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    send_texts(factory, unique_name, 7)
    consumer = StreamConsumer(options(jms_options, destination=unique_name))
    try:
        consumer.prepare_available_now()
        offsets = [consumer.offset(0)]
        while (end := consumer.latest(offsets[-1], 3)) is not None:
            offsets.append(end)
        assert [o["n"] for o in offsets] == [0, 3, 6, 7]
        send_texts(factory, unique_name, 2, prefix="late")
        assert consumer.latest(offsets[-1], 3) is None  # the run is over
    finally:
        consumer.close()
    assert [m.getText() for m in drain(factory, unique_name)] == ["late0", "late1"]


def test_available_now_ends_on_the_brokers_answer_not_the_poll_timeout(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    """Artemis answers a drain, so the end of the data is its answer: a run with a two-minute
    pollTimeoutMs still ends as soon as the queue is empty."""
    send_texts(factory, unique_name, 5)
    consumer = StreamConsumer(options(jms_options, destination=unique_name, pollTimeoutMs="120000"))
    try:
        assert consumer.drains
        consumer.prepare_available_now()
        started = time.monotonic()
        end = consumer.latest(consumer.offset(0), 10)
        assert end == consumer.offset(5)
        assert consumer.latest(end, 10) is None
        # Waiting out pollTimeoutMs would take 120 s; the drains take milliseconds.
        assert time.monotonic() - started < 60, "the end of the data waited for pollTimeoutMs"
    finally:
        consumer.close()


def test_a_batch_consume_ends_on_the_brokers_answer_not_the_poll_timeout(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    send_texts(factory, unique_name, 3)
    opts = options(jms_options, destination=unique_name, mode="consume", pollTimeoutMs="120000")
    started = time.monotonic()
    rows = list(consume_rows(opts))
    assert sorted(row_dict(r)["text"] for r in rows) == ["m0", "m1", "m2"]
    # Waiting out pollTimeoutMs would take 120 s; the drains take milliseconds.
    assert time.monotonic() - started < 60, "the end of the data waited for pollTimeoutMs"
    assert queue_depth(factory, unique_name) == 0  # consumed and settled


def test_without_drain_the_end_of_the_data_is_poll_timeout_ms_of_quiet(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    """The path of brokers that cannot drain (RabbitMQ 3.x classic queues), on Artemis."""
    send_texts(factory, unique_name, 4)
    consumer = StreamConsumer(options(jms_options, destination=unique_name))
    try:
        consumer.drains = False
        consumer.prepare_available_now()
        started = time.monotonic()
        end = consumer.latest(consumer.offset(0), 10)
        assert end == consumer.offset(4)
        assert time.monotonic() - started >= 0.2  # the 200 ms of quiet that ended the poll
        assert consumer.latest(end, 10) is None
    finally:
        consumer.close()


@pytest.mark.parametrize(
    ("given", "window"),
    [
        ({}, 10_000),  # one micro-batch
        ({"maxMessagesPerTrigger": "2500"}, 2500),
        ({"maxMessagesPerTrigger": "100000"}, 32767),  # the largest prefetch
        ({"maxMessagesPerTrigger": "100000", "prefetch": "500"}, 500),
    ],
)
def test_the_streaming_credit_window_is_one_micro_batch_unless_prefetch_is_given(
    given: dict[str, str], window: int
) -> None:
    assert JmsOptions.parse({"url": "amqp://h", **given}).stream_prefetch() == window


def test_rows_carry_body_headers_and_properties(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        queue = session.createQueue(unique_name)
        producer = session.createProducer(queue)
        text = session.createTextMessage("héllo")
        text.setJMSCorrelationID("corr-1")
        text.setJMSType("order")
        text.setJMSReplyTo(session.createTopic("replies"))
        text.setStringProperty("JMSXGroupID", "g1")
        text.setIntProperty("count", 3)
        text.setBooleanProperty("flag", True)
        producer.send(text, jmspy.DeliveryMode.NON_PERSISTENT, 7, 60_000)
        data = session.createBytesMessage()
        data.writeBytes(b"\x00\x01")
        producer.send(data)
        mapped = session.createMapMessage()
        mapped.setInt("a", 1)
        producer.send(mapped)
        stream = session.createStreamMessage()
        stream.writeString("x")
        stream.writeInt(2)
        producer.send(stream)
        producer.send(session.createObjectMessage({"k": 1}))
        producer.send(session.createMessage())
        sent_ids = [text.getJMSMessageID()]
    consumer = StreamConsumer(options(jms_options, destination=unique_name))
    try:
        end = consumer.latest(consumer.offset(0), 10)
        rows = [row_dict(r) for r in consumer.rows_between(consumer.offset(0), end)]
    finally:
        consumer.close()
    first = rows[0]
    assert first["message_id"] == sent_ids[0]
    assert (first["body"], first["text"], first["message_type"]) == (
        "héllo".encode(),
        "héllo",
        "text",
    )
    assert first["correlation_id"] == "corr-1" and first["type"] == "order"
    assert (first["priority"], first["delivery_mode"]) == (7, jmspy.DeliveryMode.NON_PERSISTENT)
    assert first["reply_to"] == "topic://replies"
    assert first["destination"] == f"queue://{unique_name}"
    assert first["group_id"] == "g1"
    assert first["properties"] == {"count": "3", "flag": "true"}
    lifetime = first["expiration"] - first["timestamp"]
    assert lifetime.total_seconds() == pytest.approx(60, abs=0.01)
    assert first["delivery_time"] == first["timestamp"]
    assert (first["redelivered"], first["delivery_count"]) == (False, 1)
    kinds = [(r["message_type"], r["body"], r["text"]) for r in rows[1:]]
    assert kinds[0] == ("bytes", b"\x00\x01", None)
    assert kinds[1] == ("map", b'{"a": 1}', None)
    assert kinds[2] == ("stream", b'["x", 2]', None)
    assert kinds[3][0] == "object" and isinstance(kinds[3][1], bytes)
    assert kinds[4] == ("message", None, None)


def test_durable_subscription_keeps_what_was_published_while_stopped(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    opts = options(
        jms_options,
        destination=f"topic://{unique_name}",
        clientId=f"{unique_name}-client",
        subscription="spark",
    )

    def publish(*texts: str) -> None:
        with factory.createConnection() as connection:
            session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
            producer = session.createProducer(session.createTopic(unique_name))
            for text in texts:
                producer.send(session.createTextMessage(text))

    first = StreamConsumer(opts)  # creates the subscription
    end = first.latest(first.offset(0), 10)
    assert end is None
    publish("a", "b")
    end = first.latest(first.offset(0), 10)
    assert [r[1] for r in first.rows_between(first.offset(0), end)] == ["a", "b"]
    assert first.latest(end, 10) is None  # acknowledges a and b
    first.close()

    publish("c")  # nobody connected: the durable subscription keeps it
    second = StreamConsumer(opts)
    try:
        end = second.latest(second.offset(0), 10)
        assert [r[1] for r in second.rows_between(second.offset(0), end)] == ["c"]
        assert second.latest(end, 10) is None
    finally:
        second.close()
    with factory.createConnection() as connection:
        connection.setClientID(f"{unique_name}-client")
        connection.createSession(jmspy.AUTO_ACKNOWLEDGE).unsubscribe("spark")


def test_selector_filters_on_the_broker(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        producer = session.createProducer(session.createQueue(unique_name))
        for i in range(6):
            message = session.createTextMessage(f"m{i}")
            message.setIntProperty("i", i)
            producer.send(message)
    consumer = StreamConsumer(options(jms_options, destination=unique_name, selector="i >= 4"))
    try:
        end = consumer.latest(consumer.offset(0), 10)
        assert [r[1] for r in consumer.rows_between(consumer.offset(0), end)] == ["m4", "m5"]
    finally:
        consumer.close()


def test_batch_browse_changes_nothing_and_consume_acknowledges_at_the_end(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    send_texts(factory, unique_name, 5)
    opts = options(jms_options, destination=unique_name)
    assert [r[1] for r in browse_rows(opts)] == [f"m{i}" for i in range(5)]
    assert len(list(browse_rows(options(jms_options, destination=unique_name, maxMessages="2"))))
    assert queue_depth(factory, unique_name) == 5

    consuming = options(jms_options, destination=unique_name, mode="consume")
    abandoned = consume_rows(consuming)
    assert next(abandoned)[1] == "m0"
    abandoned.close()  # a task that stops early acknowledges nothing
    assert queue_depth(factory, unique_name) == 5

    rows = list(consume_rows(consuming))
    assert sorted(r[1] for r in rows) == [f"m{i}" for i in range(5)]
    assert queue_depth(factory, unique_name) == 0


def test_more_messages_than_the_credit_window(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    """2,500 messages through a window of 1,000: streaming batches, browsing, consuming."""
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.SESSION_TRANSACTED)
        producer = session.createProducer(session.createQueue(unique_name))
        for i in range(2500):
            producer.send(session.createTextMessage(f"m{i}"))
        session.commit()
    opts = options(jms_options, destination=unique_name, prefetch="1000")
    assert sum(1 for _ in browse_rows(opts)) == 2500
    consumer = StreamConsumer(opts)
    try:
        consumer.prepare_available_now()
        ends = [consumer.offset(0)]
        while (end := consumer.latest(ends[-1], 1000)) is not None:
            ends.append(end)
        assert [e["n"] for e in ends] == [0, 1000, 2000, 2500]
    finally:
        consumer.close()
    assert sum(1 for _ in consume_rows(options(jms_options, destination=unique_name))) == 0


@pytest.mark.parametrize(
    ("given", "complaint"),
    [
        ({}, "'url' is required"),
        ({"url": "amqp://h", "colour": "red"}, "unknown option 'colour'"),
        ({"url": "amqp://h", "maxMessagesPerTrigger": "0"}, "maxMessagesPerTrigger"),
        ({"url": "amqp://h", "destination": "exchange://x"}, "queue://name or topic://name"),
        ({"url": "amqp://h", "destination": "topic://t", "subscription": "s"}, "clientId"),
        ({"url": "amqp://h", "mode": "steal"}, "browse or consume"),
        ({"url": "amqp://h", "minPartitions": "0"}, "minPartitions"),
        ({"url": "amqp://h", "duplicateDetection": "true", "transacted": "true"}, "exclude"),
        ({"url": "amqp://h", "user": "a", "username": "b"}, "'user' and 'username'"),
        ({"url": "amqp://h", "destination": "q1", "path": "q2"}, "'destination' and 'path'"),
        # Checked on the driver, not first by a task on an executor (four attempts later).
        ({"url": "amqp://h?jms.prefetchPolicy.all=many"}, "jms.prefetchPolicy.all='many'"),
        ({"url": "amqp://h?jms.colour=red"}, "unknown connection option 'jms.colour'"),
        ({"url": "amqps://h:70000"}, "invalid port"),
        ({"url": "amqp://h", "adapter": "kafka"}, "jmspy.adapter='kafka'"),
        ({"url": "amqp://h", "selector": "price >"}, "option 'selector' is invalid"),
        ({"url": "amqp://h", "selector": "JMSPriority = 'x' AND"}, "option 'selector'"),
    ],
)
def test_option_errors_name_the_option(given: dict[str, str], complaint: str) -> None:
    with pytest.raises(JmsOptionError, match=complaint):
        JmsOptions.parse(given)


def test_two_names_of_one_option_agreeing_are_fine_and_a_password_is_never_echoed() -> None:
    opts = JmsOptions.parse({"url": "amqp://h", "destination": "q", "path": "q"})
    assert opts.destination == "q"
    with pytest.raises(JmsOptionError) as raised:
        JmsOptions.parse({"url": "amqp://h", "password": "s3cret-1", "PASSWORD": "s3cret-2"})
    assert "s3cret" not in str(raised.value)
    with pytest.raises(JmsOptionError, match="closeTimeout") as raised:
        JmsOptions.parse({"url": "amqp://h?jms.password=s3cret-3&jms.closeTimeout=soon"})
    assert "s3cret" not in str(raised.value)


@pytest.mark.parametrize(
    ("rows", "given", "sizes"),
    [
        (10_000, {}, [5000, 5000]),
        (10_001, {}, [3334, 3334, 3333]),
        (10, {"minPartitions": "4"}, [3, 3, 3, 1]),
        (3, {"minPartitions": "8"}, [1, 1, 1]),
        (9, {"minPartitions": "2", "rowsPerPartition": "2"}, [2, 2, 2, 2, 1]),
        (0, {"minPartitions": "2"}, []),
    ],
)
def test_micro_batches_are_split_by_rows_per_partition_and_min_partitions(
    rows: int, given: dict[str, str], sizes: list[int]
) -> None:
    from jmspy.spark.datasource import split_rows

    opts = JmsOptions.parse({"url": "amqp://h", **given})
    data = [(i,) for i in range(rows)]
    chunks = split_rows(data, opts)
    assert [len(c) for c in chunks] == sizes
    assert [r for c in chunks for r in c] == data  # every row once, in order


def test_password_is_not_in_repr() -> None:
    opts = JmsOptions.parse({"url": "amqp://h", "user": "u", "password": "s3cret"})
    assert "s3cret" not in repr(opts)


def test_a_batch_consume_is_shared_by_min_partitions_consumers_on_a_queue_only() -> None:
    """``minPartitions`` consumers read a queue side by side, each taking at most its share
    of ``maxMessages``; a topic (one subscriber) stays in one partition."""
    from jmspy.spark.datasource import consume_partitions

    def caps(**extra: str) -> list[int]:
        opts = {"url": "amqp://127.0.0.1:5672", "mode": "consume", **extra}
        return consume_partitions(JmsOptions.parse(opts))

    assert caps(destination="orders") == [1_000_000]
    assert caps(destination="orders", minPartitions="3", maxMessages="10") == [4, 3, 3]
    assert caps(destination="queue://orders", minPartitions="5", maxMessages="2") == [1, 1]
    assert caps(destination="topic://prices", minPartitions="3", maxMessages="10") == [10]


@pytest.mark.parametrize("mode", ["browse", "BROWSE"])
def test_a_stream_refuses_mode_browse_instead_of_consuming(mode: str) -> None:
    # readStream always consumes and settles: a stream given mode=browse would take the
    # messages its user asked only to look at.
    from jmspy.spark.datasource import JmsDataSource

    source = JmsDataSource({"url": "amqp://h", "destination": "q", "Mode": mode})
    with pytest.raises(JmsOptionError, match="option 'mode' is for batch reads"):
        source.streamReader(None)  # type: ignore[arg-type]
    consuming = JmsDataSource({"url": "amqp://h", "destination": "q", "mode": "consume"})
    assert type(consuming.streamReader(None)).__name__ == "JmsStreamReader"  # type: ignore[arg-type]
