"""The receiving side of the streaming source; it lives in Spark's driver-side runner process.

Spark runs ``initialOffset``, ``latestOffset``, ``partitions`` and ``commit`` of a streaming
reader in one long-lived Python process per query run, and ``read`` on executors. AMQP
settlement belongs to the link that received a message, so the one consumer lives here and
the rows ride to the executors inside the input partitions.

Offsets are ``{"session": <uuid of this consumer>, "n": <messages received so far>}``. The
consumer's session is transacted where the broker has transactions (``transacted=auto``),
else CLIENT_ACKNOWLEDGE. Nothing is settled until Spark has recorded the batch that holds
it; a commit (or an acknowledgement) covers every message received so far, so it is only
given when no message of a later batch has been received yet:

* at the top of ``latestOffset(start)``: the batch ending at ``start`` is already in the
  checkpoint's commit log (Spark's micro-batch engine writes ``commits/N`` before it plans
  batch N+1; not a documented contract, see docs/spark.md);
* in ``commit(end)``, when nothing after ``end`` has been received.

The consumer keeps its credit window open (option ``prefetch``, by default one micro-batch)
so the broker pushes what it has, the next batch included while Spark runs the current one.
When the local buffer is empty, a broker that answers a drain is asked whether it has anything
more (``receiveNoWait``: the broker sends what it holds, up to the credit, then says it is
done), and "nothing" ends the batch, and an availableNow run, at once. With a broker that
cannot drain (RabbitMQ 3.x classic queues), ``pollTimeoutMs`` without a message means there
is nothing more for now.

A transaction commit waits for the broker's answer, so a settled batch is settled for good;
a CLIENT_ACKNOWLEDGE acknowledgement is not confirmed, so one still in flight when the
process dies is lost and that batch comes again too. A process that dies leaves its
unsettled messages to the broker, which delivers them again (after a transaction, marked
JMSRedelivered); a batch planned by a dead process is replayed as empty (its messages come
back in a later batch). Nothing is lost; duplicates are limited to one batch (two without
transactions).
"""

from __future__ import annotations

import collections
import logging
import time
import uuid
from typing import Any

import jmspy

from ._options import JmsOptions, use_transactions
from ._rows import message_to_raw_row

log = logging.getLogger("jmspy.spark")

Offset = dict[str, Any]


def next_message(
    consumer: jmspy.MessageConsumer, drains: bool, poll_timeout_ms: int, idle_wait: bool
) -> jmspy.Message | None:
    """The next message for a reader, or None when the destination has nothing more now.

    ``drains``: the broker answers a drain, so the end of the data is its answer
    (``receiveNoWait`` drains when the local buffer is empty, bounded by
    jmspy.receiveDrainTimeout), confirmed by a second drain: one receiveNoWait in a few runs
    has been seen to return null with messages still on Artemis (see
    tests/broker/test_core_messaging.py); two never have. With ``idle_wait`` a null is then
    followed by a local wait of pollTimeoutMs. Without drains the end is pollTimeoutMs
    without a message."""
    if not drains:
        if poll_timeout_ms > 0:
            return consumer.receive(poll_timeout_ms)
        return consumer.receiveNoWait()
    message = consumer.receiveNoWait()
    if message is None:
        message = consumer.receiveNoWait()
    if message is None and idle_wait and poll_timeout_ms > 0:
        message = consumer.receive(poll_timeout_ms)
    return message


def open_consumer(opts: JmsOptions, session: jmspy.Session) -> jmspy.MessageConsumer:
    """The consumer the options describe: a queue, a topic or a durable subscription."""
    destination = opts.require_destination()
    if opts.subscription is not None:
        assert isinstance(destination, jmspy.Topic)
        return session.createDurableSubscriber(destination, opts.subscription, opts.selector)
    return session.createConsumer(destination, opts.selector)


class StreamConsumer:
    """One connection, one transacted (or CLIENT_ACKNOWLEDGE) session, one consumer, and the
    rows received and not yet settled, numbered from 0 in this process."""

    def __init__(self, opts: JmsOptions) -> None:
        self.opts = opts
        self.session_id = uuid.uuid4().hex
        self.connection = opts.factory(
            reading=True, prefetch=opts.stream_prefetch()
        ).createConnection()
        try:
            self.transacted = use_transactions(opts, self.connection)
            # Where the broker answers a drain, its answer ends a poll (see poll()).
            self.drains = self.connection.adapter.drain
            self.session = self.connection.createSession(
                jmspy.SESSION_TRANSACTED if self.transacted else jmspy.CLIENT_ACKNOWLEDGE
            )
            self.consumer = open_consumer(opts, self.session)
            self.connection.start()
        except BaseException:
            self.connection.close()
            raise
        self.received = 0  # messages received; the next one is number `received`
        self.acknowledged = 0  # every message numbered below this is settled
        self.first_held = 0  # number of rows[0]
        self.rows: collections.deque[tuple[Any, ...]] = collections.deque()
        self.last_message: jmspy.Message | None = None
        self.exhausted = False  # availableNow: the destination had nothing more
        self.cutoff_ms: int | None = None  # availableNow: started at
        self.closed = False

    # ---- offsets ----------------------------------------------------------------------------

    def offset(self, n: int) -> Offset:
        return {"session": self.session_id, "n": n}

    def position(self, offset: Offset | None) -> int:
        """An offset as a message number of this process (another process's offsets are 0:
        its unacknowledged messages come back as new deliveries)."""
        if offset and offset.get("session") == self.session_id:
            return int(offset["n"])
        return 0

    def owns(self, offset: Offset | None) -> bool:
        return bool(offset) and offset.get("session") == self.session_id  # type: ignore[union-attr]

    # ---- receiving --------------------------------------------------------------------------

    def prepare_available_now(self) -> None:
        """Trigger.AvailableNow: read what is there now, then report no more data."""
        self.cutoff_ms = time.time_ns() // 1_000_000
        self.exhausted = False

    def poll(self, budget: int) -> int:
        """Receive up to ``budget`` messages. The link keeps its credit window open, so the
        broker pushes what it has. The destination has nothing more for now when a drain
        brings nothing (brokers that drain: ``receiveNoWait`` drains when the local buffer is
        empty, bounded by jmspy.receiveDrainTimeout) or, with a broker that cannot drain, when
        no message comes within pollTimeoutMs. Returns how many."""
        if budget <= 0 or (self.cutoff_ms is not None and self.exhausted):
            return 0
        got = 0
        while got < budget:
            message = self._next(first=got == 0)
            if message is None:
                self.exhausted = True
                break
            self.rows.append(message_to_raw_row(message))
            self.last_message = message
            self.received += 1
            got += 1
            if self.cutoff_ms is not None and message.getJMSTimestamp() > self.cutoff_ms:
                # Sent after the availableNow run started: take it, then stop, so a producer
                # that never pauses cannot keep the run going forever.
                self.exhausted = True
                break
        return got

    def _next(self, first: bool) -> jmspy.Message | None:
        """The next message of a poll, or None when the destination has nothing more now."""
        # An idle stream waits (locally) for its next message at the start of a poll, instead
        # of asking the broker again at every one of Spark's polls, a few milliseconds apart;
        # an availableNow run does not wait.
        idle_wait = first and self.cutoff_ms is None
        return next_message(self.consumer, self.drains, self.opts.poll_timeout_ms, idle_wait)

    def latest(self, start: Offset | None, max_rows: int) -> Offset | None:
        """``latestOffset``: acknowledge the batch that ended at ``start`` (it is committed),
        then receive up to ``max_rows`` beyond it. None: no new data."""
        begin = self.position(start)
        if self.owns(start):
            self.acknowledge_through(begin)
        pending = self.received - begin
        self.poll(max_rows - pending)
        end = begin + min(max_rows, self.received - begin)
        return self.offset(end) if end > begin else None

    def rows_between(self, start: Offset | None, end: Offset | None) -> list[tuple[Any, ...]]:
        """The rows of a batch; empty for a batch planned by another process (a replay after
        a restart: those messages were never acknowledged and are delivered again)."""
        if end is None or not self.owns(end):
            return []
        begin, stop = self.position(start), self.position(end)
        first = max(begin, self.first_held)
        if first > begin:
            log.warning("rows %d..%d were already released from memory", begin, first)
        return [self.rows[i - self.first_held] for i in range(first, stop)]

    def acknowledge_through(self, n: int) -> bool:
        """Spark has recorded every message numbered below ``n``: forget their rows, and
        settle if nothing after them has been received. True when settled."""
        while self.first_held < n and self.rows:
            self.rows.popleft()
            self.first_held += 1
        if self.acknowledged >= self.received or n < self.received:
            return False
        if self.transacted:
            self.session.commit()
        else:
            assert self.last_message is not None
            self.last_message.acknowledge()
        self.acknowledged = self.received
        log.debug("settled %d messages (session %s)", self.received, self.session_id)
        return True

    def close(self) -> None:
        """Close the connection: unsettled messages go back to the broker (counted as a
        failed delivery, so they come back with JMSRedelivered=true)."""
        if self.closed:
            return
        self.closed = True
        unsettled = self.received - self.acknowledged
        if unsettled:
            # Spark confirms a micro-batch's commit to the source only when it plans the next
            # one: a query run's last batch is never confirmed, so its messages come back in
            # the next run. Said here, because with Trigger.Once that is every message of
            # every run (a single batch, never confirmed).
            log.warning(
                "stopping with %d message(s) not settled (session %s): Spark had not confirmed "
                "the batch holding them, so they go back to the broker and the next run reads "
                "them again. A query with Trigger.Once reads the same messages in every run: "
                "use trigger(availableNow=True)",
                unsettled,
                self.session_id,
            )
        try:
            self.connection.close()
        except jmspy.JMSException as exc:
            log.debug("closing the source's connection: %s", exc)
