"""Rows as Arrow batches (jmspy/spark/_arrow.py) and chunked batch reads, without Spark.

The Arrow batch the source yields must be exactly what PySpark would have built from the
same rows as tuples (pyspark.sql.worker.plan_data_source_read), so both are built here from
messages received from the real broker and compared.
"""

from __future__ import annotations

from typing import Any

from test_reader_nospark import queue_depth, send_texts

import jmspy
from jmspy.spark import JmsOptions
from jmspy.spark._arrow import ARROW_SCHEMA, READ_STRUCT, raw_rows_to_batch
from jmspy.spark._batch import consume_batches
from jmspy.spark._rows import READ_COLUMNS, finish_row, message_to_raw_row


def received_raw_rows(factory: Any, queue: str) -> list[tuple[Any, ...]]:
    """A text, a bytes and a map message with properties, a group and a correlation id."""
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        destination = session.createQueue(queue)
        producer = session.createProducer(destination)
        text = session.createTextMessage("héllo")
        text.setStringProperty("colour", "blue")
        text.setIntProperty("size", 3)
        text.setStringProperty("JMSXGroupID", "g1")
        text.setJMSCorrelationID("c-1")
        producer.send(text)
        data = session.createBytesMessage()
        data.writeBytes(b"\x00\xff")
        producer.send(data, jmspy.DeliveryMode.NON_PERSISTENT, 7, 60_000)
        mapping = session.createMapMessage()
        mapping.setString("k", "v")
        producer.send(mapping)
        consumer = session.createConsumer(destination)
        connection.start()
        rows = []
        for _ in range(3):
            message = consumer.receive(10_000)
            assert message is not None
            rows.append(message_to_raw_row(message))
    return rows


def test_arrow_batch_equals_what_pyspark_builds_from_tuples(factory: Any, unique_name: str) -> None:
    from pyspark.sql.worker.plan_data_source_read import records_to_arrow_batches

    from jmspy.spark.datasource import JmsDataSource

    raw = received_raw_rows(factory, unique_name)
    ours = raw_rows_to_batch(raw)
    (theirs,) = records_to_arrow_batches(
        iter([finish_row(r) for r in raw]), 1000, READ_STRUCT, JmsDataSource({})
    )
    assert ours.schema.equals(ARROW_SCHEMA)
    assert ours.schema.equals(theirs.schema)
    assert ours.equals(theirs), (ours.to_pylist(), theirs.to_pylist())
    kinds = ours.column("message_type").to_pylist()
    assert sorted(kinds) == ["bytes", "map", "text"]  # the broker orders by priority
    text, data = kinds.index("text"), kinds.index("bytes")
    names = [name for name, _ in READ_COLUMNS]
    assert ours.column("text")[text].as_py() == "héllo"
    assert ours.column("body")[data].as_py() == b"\x00\xff"
    properties = dict(zip(names, raw[text], strict=True))["properties"]
    assert properties == {"colour": "blue", "size": "3"}
    assert dict(ours.column("properties")[text].as_py()) == properties
    assert ours.column("group_id")[text].as_py() == "g1"
    assert ours.column("expiration")[text].as_py() is None  # no time to live: null, not 1970
    assert ours.column("expiration")[data].as_py() is not None


def test_no_rows_make_an_empty_batch_with_the_schema() -> None:
    batch = raw_rows_to_batch([])
    assert batch.num_rows == 0
    assert batch.schema.equals(ARROW_SCHEMA)


def test_chunked_consume_settles_only_after_the_last_chunk_was_taken(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    send_texts(factory, unique_name, 5)
    opts = JmsOptions.parse(
        {**jms_options, "destination": unique_name, "mode": "consume", "pollTimeoutMs": "200"}
    )
    chunks = consume_batches(opts, 2)
    assert [len(next(chunks)) for _ in range(3)] == [2, 2, 1]
    chunks.close()  # every row handed over, but the task never asked for more
    assert queue_depth(factory, unique_name) == 5  # nothing was settled

    assert sum(len(chunk) for chunk in consume_batches(opts, 2)) == 5
    assert queue_depth(factory, unique_name) == 0
