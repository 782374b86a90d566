"""Batch reads (``spark.read.format("jms")``), run inside one Spark task on an executor.

``browse`` (the default) looks at a queue with a QueueBrowser and changes nothing, so Spark
may run it again for every action. ``consume`` takes the messages: they are settled (a
transaction commit, or an acknowledgement without transactions) once the task has handed
every row to Spark, so a job that fails after that has consumed them (at most once with
respect to the job); a task that fails before reading to the end settles nothing and the
messages are delivered again.

Both yield raw rows (``_rows.message_to_raw_row``); the reader hands them to Spark as Arrow
batches (``_arrow``).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import jmspy

from ._options import JmsOptionError, JmsOptions, use_transactions
from ._rows import message_to_raw_row
from ._stream import next_message, open_consumer

Rows = list[tuple[Any, ...]]


def browse_rows(opts: JmsOptions) -> Generator[tuple[Any, ...], None, None]:
    for chunk in browse_batches(opts, 1):
        yield from chunk


def consume_rows(opts: JmsOptions) -> Generator[tuple[Any, ...], None, None]:
    for chunk in consume_batches(opts, 1):
        yield from chunk


def browse_batches(opts: JmsOptions, size: int) -> Generator[Rows, None, None]:
    """The queue's messages as raw rows, in lists of at most ``size``."""
    destination = opts.require_destination()
    if not isinstance(destination, jmspy.Queue):
        raise JmsOptionError(
            f"cannot browse {opts.destination}: only queues can be browsed; use mode=consume "
            "for a durable subscription, or readStream"
        )
    with opts.factory().createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        with session.createBrowser(destination, opts.selector) as browser:
            chunk: Rows = []
            for count, message in enumerate(browser.getEnumeration(), 1):
                chunk.append(message_to_raw_row(message))
                if count >= opts.max_messages:
                    break
                if len(chunk) >= size:
                    yield chunk
                    chunk = []
            if chunk:
                yield chunk


def consume_batches(opts: JmsOptions, size: int) -> Generator[Rows, None, None]:
    """Received messages as raw rows, in lists of at most ``size``; settled when the caller
    asks for more after the last list (the chunks are gathered here, not by the caller, so
    that settling still follows the hand-over of the last row)."""
    with opts.factory(reading=True).createConnection() as connection:
        transacted = use_transactions(opts, connection)
        drains = connection.adapter.drain
        session = connection.createSession(
            jmspy.SESSION_TRANSACTED if transacted else jmspy.CLIENT_ACKNOWLEDGE
        )
        consumer = open_consumer(opts, session)
        connection.start()
        last: jmspy.Message | None = None
        count = 0
        chunk: Rows = []
        while count < opts.max_messages:
            # The end of the data: the broker's answer to a drain, or pollTimeoutMs without
            # a message where the broker cannot drain (see _stream.next_message).
            message = next_message(consumer, drains, opts.poll_timeout_ms, idle_wait=False)
            if message is None:
                break
            last = message
            count += 1
            chunk.append(message_to_raw_row(message))
            if len(chunk) >= size:
                yield chunk
                chunk = []
        if chunk:
            yield chunk
        # Reached only when Spark took every row; an abandoned or failed task closes the
        # connection with nothing settled.
        if transacted:
            session.commit()
        elif last is not None:
            last.acknowledge()
