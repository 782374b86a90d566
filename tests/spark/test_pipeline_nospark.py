"""The streaming source with option ``pipeline`` (jmspy/spark/_ahead.py), driven directly (no
Spark) against the real broker, in the order Spark's micro-batch engine calls it: messages
received ahead of the batch being run are never settled with it, a recorded batch is settled
at once, and nothing is lost when the runner stops or dies."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import pytest
from test_reader_nospark import drain, options, queue_depth, row_dict, send_texts

from jmspy.spark import JmsOptionError, JmsOptions
from jmspy.spark._stream import StreamConsumer


def pipelined(jms_options: dict[str, str], **extra: str) -> JmsOptions:
    return options(jms_options, pipeline="true", **extra)


@pytest.mark.parametrize("batch2_recorded", [False, True])
def test_received_ahead_is_not_settled_with_the_recorded_batch(
    factory: Any, jms_options: dict[str, str], unique_name: str, batch2_recorded: bool
) -> None:
    ids = send_texts(factory, unique_name, 10)
    consumer = StreamConsumer(pipelined(jms_options, destination=unique_name))
    try:
        assert consumer.pipelined and not consumer.transacted
        start = consumer.offset(0)
        end1 = consumer.latest(start, 4)
        assert end1 == consumer.offset(4)
        assert [row_dict(r)["message_id"] for r in consumer.rows_between(start, end1)] == ids[:4]
        end2 = consumer.latest(end1, 4)  # batch 1 recorded: settled, batch 2 planned
        assert end2 == consumer.offset(8)
        assert consumer.acknowledged == 4
        if batch2_recorded:
            # commit(end of batch 2) settles it at once, though m8 and m9 came after it.
            assert consumer.acknowledge_through(8) is True
    finally:
        consumer.close()
    # Settled: batch 1, and batch 2 once recorded; never what was received ahead of it.
    back = ids[8:] if batch2_recorded else ids[4:]
    assert sorted(str(m.getJMSMessageID()) for m in drain(factory, unique_name)) == sorted(back)


def test_a_stream_keeps_up_with_a_producer(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    """Batches planned while a producer keeps sending: every message in exactly one batch,
    in order; each recorded batch settled."""
    total = 3000
    producer = threading.Thread(target=send_texts, args=(factory, unique_name, total))
    producer.start()
    consumer = StreamConsumer(pipelined(jms_options, destination=unique_name))
    texts: list[str] = []
    deadline = time.monotonic() + 120
    try:
        end = consumer.offset(0)
        while len(texts) < total:
            assert time.monotonic() < deadline, f"{len(texts)} of {total} in 120 s"
            new_end = consumer.latest(end, 500)
            if new_end is None:
                continue
            texts.extend(row_dict(r)["text"] for r in consumer.rows_between(end, new_end))
            consumer.acknowledge_through(int(new_end["n"]))  # Spark's commit(end)
            end = new_end
        producer.join(60)
    finally:
        consumer.close()
    assert texts == [f"m{i}" for i in range(total)]
    assert queue_depth(factory, unique_name) == 0


def test_stop_before_the_batch_is_recorded_loses_nothing(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    ids = send_texts(factory, unique_name, 6)
    opts = pipelined(jms_options, destination=unique_name)
    first = StreamConsumer(opts)
    end1 = first.latest(first.offset(0), 3)
    end2 = first.latest(end1, 3)  # batch 1 recorded and settled; batch 2 planned
    assert end2 is not None and first.acknowledged == 3
    first.close()
    second = StreamConsumer(opts)
    try:
        assert second.rows_between(end1, end2) == []  # a replay of a dead process's batch
        end3 = second.latest(end2, 10)
        rows = [row_dict(r) for r in second.rows_between(end2, end3)]
        assert [r["message_id"] for r in rows] == ids[3:]
        assert all(r["redelivered"] for r in rows)
        second.acknowledge_through(int(end3["n"]))
    finally:
        second.close()
    assert queue_depth(factory, unique_name) == 0


def test_killed_runner_loses_nothing(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    ids = send_texts(factory, unique_name, 5)
    script = textwrap.dedent(
        f"""
        import os
        from jmspy.spark import JmsOptions
        from jmspy.spark._stream import StreamConsumer
        opts = JmsOptions.parse({dict(jms_options, destination=unique_name, pipeline="true")!r})
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
    # The acknowledgements of batch 1 were written before the exit? Not confirmed by the
    # broker: if one was still in the process, its message comes back too (at-least-once).
    assert set(ids[2:]) <= {str(m.getJMSMessageID()) for m in rest} <= set(ids)


def test_an_idle_stream_waits_poll_timeout_ms_and_then_plans_nothing(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    send_texts(factory, unique_name, 2)
    consumer = StreamConsumer(pipelined(jms_options, destination=unique_name))
    try:
        end = consumer.latest(consumer.offset(0), 10)
        assert end == consumer.offset(2)  # the queue was found empty: the batch ends there
        assert consumer.latest(end, 10) is None
        send_texts(factory, unique_name, 1, prefix="late")
        later = None
        for _ in range(50):  # Spark polls again and again; each poll waits up to 200 ms
            later = consumer.latest(end, 10)
            if later is not None:
                break
        assert later == consumer.offset(3)
        assert [row_dict(r)["text"] for r in consumer.rows_between(end, later)] == ["late0"]
    finally:
        consumer.close()


def test_available_now_with_pipeline_reads_what_is_there(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    send_texts(factory, unique_name, 7)
    consumer = StreamConsumer(pipelined(jms_options, destination=unique_name))
    try:
        consumer.prepare_available_now()
        offsets = [consumer.offset(0)]
        while (end := consumer.latest(offsets[-1], 3)) is not None:
            offsets.append(end)
        assert [o["n"] for o in offsets] == [0, 3, 6, 7]
        consumer.acknowledge_through(7)
    finally:
        consumer.close()
    assert queue_depth(factory, unique_name) == 0


def test_pipeline_and_transacted_true_exclude_each_other() -> None:
    with pytest.raises(JmsOptionError, match="'pipeline' and 'transacted=true'"):
        JmsOptions.parse({"url": "amqp://h", "pipeline": "true", "transacted": "true"})
    with pytest.raises(JmsOptionError, match="'pipeline'"):
        JmsOptions.parse({"url": "amqp://h", "pipeline": "maybe"})
