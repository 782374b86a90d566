"""BL-1..BL-12: the batch message listener (JMS_SPEC-36)."""

from __future__ import annotations

import threading
import time
from functools import partial
from typing import Any

import jmspy

from ..context import CheckContext
from ..model import Verdict, passed
from ..registry import check
from ._support import LATE_MS, Batches, drain, send_texts, wait_buffered

LATE_S = LATE_MS / 1000.0


def _leftovers(ctx: CheckContext, name: str) -> list[str]:
    connection = ctx.connection()
    session = connection.createSession()
    connection.start()
    return [m.getText() for m in drain(session.createConsumer(session.createQueue(name)), 300)]


@check("BL-1")
def bl1(ctx: CheckContext) -> Verdict:
    total, size = 23, 4
    recorder = Batches(total)
    connection = ctx.connection()
    session = connection.createSession()
    queue = session.createQueue(ctx.name())
    session.createConsumer(queue).setBatchMessageListener(recorder, size, 20)
    connection.start()
    sender = connection.createSession()
    producer = sender.createProducer(queue)
    for i in range(total):
        producer.send(sender.createTextMessage(str(i)))
        if i % 7 == 3:
            time.sleep(0.015)  # uneven arrival
    ctx.expect(recorder.done.wait(10), recorder.sizes, f"{total} messages in batches", "batches")
    flat = [int(x) for batch in recorder.batches for x in batch]
    ctx.expect_equal(flat, list(range(total)), "every message once, in order")
    ctx.expect(
        all(1 <= n <= size for n in recorder.sizes),
        f"batch sizes {recorder.sizes}",
        f"1..{size} messages per batch",
    )
    return passed(f"batch sizes {recorder.sizes} (batchSize {size})")


@check("BL-2")
def bl2(ctx: CheckContext) -> Verdict:
    recorder = Batches(2)
    connection = ctx.connection()
    session = connection.createSession()
    queue = session.createQueue(ctx.name())
    session.createConsumer(queue).setBatchMessageListener(recorder, 10, 500)
    connection.start()
    send_texts(connection.createSession(), queue, ["a", "b"])
    sent = time.monotonic()
    ctx.expect(recorder.done.wait(5), recorder.batches, "one partial batch", "batches")
    waited = recorder.times[0] - sent
    ctx.expect_equal(recorder.batches, [["a", "b"]], "the partial batch")
    ctx.expect(
        0.5 - 0.05 <= waited <= 0.5 + LATE_S,
        f"delivered {waited * 1000:.0f} ms after the send",
        "about batchTimeout (500 ms) after its first message",
        "partial batch",
    )
    # A full batch goes at once, far ahead of a long timeout.
    full = Batches(5)
    queue2 = session.createQueue(ctx.name())
    session.createConsumer(queue2).setBatchMessageListener(full, 5, 5000)
    send_texts(connection.createSession(), queue2, [str(i) for i in range(5)])
    sent2 = time.monotonic()
    ctx.expect(full.done.wait(3), full.sizes, "the full batch well before 5 s", "full batch")
    ctx.note(
        f"partial batch after {waited * 1000:.0f} ms (timeout 500); full batch after "
        f"{(full.times[0] - sent2) * 1000:.0f} ms (timeout 5000)"
    )
    return passed("a partial batch waited for the timeout; a full one did not")


@check("BL-3")
def bl3(ctx: CheckContext) -> Verdict:
    recorder = Batches(1)
    connection = ctx.connection()
    session = connection.createSession()
    queue = session.createQueue(ctx.name())
    session.createConsumer(queue).setBatchMessageListener(recorder, 100, 0)
    connection.start()
    send_texts(connection.createSession(), queue, ["only"])
    sent = time.monotonic()
    ctx.expect(recorder.done.wait(3), recorder.batches, "one batch at once", "batches")
    ctx.expect_equal(recorder.batches[0], ["only"], "the batch")
    ctx.note(f"delivered {(recorder.times[0] - sent) * 1000:.0f} ms after the send")
    return passed("batchTimeout 0 delivered the single available message at once")


@check("BL-4")
def bl4(ctx: CheckContext) -> Verdict:
    recorder = Batches(5)
    connection = ctx.connection(**{"jms.prefetchPolicy.all": 2})
    session = connection.createSession()
    queue = session.createQueue(ctx.name())
    send_texts(session, queue, [str(i) for i in range(5)])
    consumer = session.createConsumer(queue)
    consumer.setBatchMessageListener(recorder, 5, 3000)
    started = time.monotonic()
    connection.start()
    ctx.expect(recorder.done.wait(6), recorder.sizes, "5 messages", "batches")
    ctx.expect_equal(recorder.sizes[0], 5, "first batch size with prefetch 2")
    waited = recorder.times[0] - started
    ctx.expect(
        waited < 2.0,
        f"first batch after {waited:.1f} s",
        "at once (credit for the whole batch), not at the 3 s timeout",
    )
    return passed(f"a batch of 5 with prefetch 2 after {waited * 1000:.0f} ms")


@check("BL-5")
def bl5(ctx: CheckContext) -> Verdict:
    connection = ctx.connection()
    session = connection.createSession()
    queue = session.createQueue(ctx.name())
    consumer = session.createConsumer(queue)
    recorder = Batches(1)
    for bad in (0, -1, 1.5, True):
        ctx.expect_raises(
            jmspy.IllegalArgumentException,
            partial(consumer.setBatchMessageListener, recorder, bad, 10),
            f"batchSize {bad!r}",
            contains=repr(bad),
        )
    ctx.expect_raises(
        jmspy.IllegalArgumentException,
        lambda: consumer.setBatchMessageListener(recorder, 10, -1),
        "batchTimeout -1",
        contains="-1",
    )
    consumer.setBatchMessageListener(recorder, 10, 10)
    ctx.expect_raises(
        jmspy.IllegalStateException,
        lambda: consumer.setMessageListener(lambda m: None),
        "setMessageListener with a BatchMessageListener set",
    )
    ctx.expect_raises(
        jmspy.IllegalStateException, lambda: consumer.receive(10), "receive() with a batch listener"
    )
    consumer.setBatchMessageListener(None)
    consumer.setMessageListener(lambda m: None)
    ctx.expect_raises(
        jmspy.IllegalStateException,
        lambda: consumer.setBatchMessageListener(recorder, 10, 10),
        "setBatchMessageListener with a MessageListener set",
    )
    context = ctx.context()
    jms_consumer = context.createConsumer(context.createQueue(ctx.name()))
    jms_consumer.setMessageListener(lambda m: None)
    ctx.expect_raises(
        jmspy.IllegalStateRuntimeException,
        lambda: jms_consumer.setBatchMessageListener(Batches(1), 5, 0),
        "JMSConsumer.setBatchMessageListener with a MessageListener set",
    )
    return passed("bad arguments and conflicting listeners refused")


@check("BL-6")
def bl6(ctx: CheckContext) -> Verdict:
    recorder = Batches(6)
    recorder.fail_first = True
    connection = ctx.connection()
    session = connection.createSession()
    name = ctx.name()
    queue = session.createQueue(name)
    send_texts(session, queue, ["a", "b", "c"])
    consumer = session.createConsumer(queue)
    consumer.setBatchMessageListener(recorder, 3, 300)
    connection.start()
    ctx.expect(recorder.done.wait(8), recorder.batches, "the batch twice", "batches")
    ctx.expect_equal(recorder.batches[:2], [["a", "b", "c"], ["a", "b", "c"]], "batches")
    ctx.expect_equal(recorder.flags[0], [(False, 1)] * 3, "first batch flags")
    ctx.expect_equal(recorder.flags[1], [(True, 2)] * 3, "redelivered batch flags")
    consumer.close()
    ctx.expect_equal(_leftovers(ctx, name), [], "messages left after the successful batch")
    return passed("the failed batch came back whole, counted; the successful one was acknowledged")


@check("BL-7")
def bl7(ctx: CheckContext) -> Verdict:
    recorder = Batches(6)
    kept: list[Any] = []
    recorder.on_batch = kept.extend
    connection = ctx.connection()
    session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
    acked = ctx.name("acked")
    send_texts(session, session.createQueue(acked), [str(i) for i in range(6)])
    session.createConsumer(session.createQueue(acked)).setBatchMessageListener(recorder, 3, 100)
    connection.start()
    ctx.expect(recorder.done.wait(5), recorder.sizes, "6 messages", "batches")
    kept[0].acknowledge()  # the first message acknowledges all six
    connection.close()
    ctx.expect_equal(_leftovers(ctx, acked), [], "left after acknowledge() on the first message")
    # Without acknowledge(): back after close, redelivered.
    other = Batches(3)
    connection2 = ctx.connection()
    session2 = connection2.createSession(jmspy.CLIENT_ACKNOWLEDGE)
    unacked = ctx.name("unacked")
    send_texts(session2, session2.createQueue(unacked), ["x", "y", "z"])
    session2.createConsumer(session2.createQueue(unacked)).setBatchMessageListener(other, 3, 100)
    connection2.start()
    ctx.expect(other.done.wait(5), other.sizes, "3 messages", "batches")
    connection2.close()
    ctx.expect_equal(_leftovers(ctx, unacked), ["x", "y", "z"], "back after close, unacknowledged")
    return passed("acknowledge() covered every delivered message; unacknowledged ones came back")


@check("BL-8")
def bl8(ctx: CheckContext) -> Verdict:
    recorder = Batches(3)
    connection = ctx.connection()
    session = connection.createSession()
    queue = session.createQueue(ctx.name())
    session.createConsumer(queue).setBatchMessageListener(recorder, 3, 0)
    send_texts(session, queue, ["1", "2", "3"])
    ctx.expect(not recorder.done.wait(0.4), recorder.batches, "no batch while stopped", "stopped")
    connection.start()
    ctx.expect(recorder.done.wait(5), recorder.batches, "the batch after start()", "started")
    connection.stop()
    send_texts(connection.createSession(), queue, ["4"])
    recorder.done.clear()
    recorder.expected = 4
    ctx.expect(
        not recorder.done.wait(0.4), recorder.batches, "no batch after stop()", "stopped again"
    )
    connection.start()
    ctx.expect(recorder.done.wait(5), recorder.batches, "the batch after start()", "restarted")
    return passed("no batch while stopped, before start() and after stop()")


@check("BL-9")
def bl9(ctx: CheckContext) -> Verdict:
    recorder = Batches(3)
    connection = ctx.connection()
    session = connection.createSession()
    name = ctx.name()
    queue = session.createQueue(name)
    consumer = session.createConsumer(queue)
    returned: list[bool] = []

    def close_inside(messages: list[Any]) -> None:
        consumer.close()
        returned.append(True)

    recorder.on_batch = close_inside
    send_texts(session, queue, [str(i) for i in range(1, 7)])
    ctx.expect(wait_buffered(consumer, 6), "not all prefetched", "6 messages prefetched")
    consumer.setBatchMessageListener(recorder, 3, 0)
    connection.start()
    ctx.expect(recorder.done.wait(5), recorder.batches, "the first batch", "batches")
    # stop() returns only once the running onMessages call has returned (JMS 2.0 section
    # 6.1.5), and the deferred close (acknowledgement, prefetch released) runs inside that
    # call's dispatch: after it the outcome is final, with no sleep to guess how long it takes.
    connection.stop()
    ctx.expect_equal(returned, [True], "close() inside onMessages returned")
    ctx.expect_equal(recorder.batches, [["1", "2", "3"]], "batches delivered")
    ctx.expect_equal(_leftovers(ctx, name), ["4", "5", "6"], "messages back on the queue")
    return passed("close() inside onMessages finished the batch; the rest went back")


@check("BL-10")
def bl10(ctx: CheckContext) -> Verdict:
    recorder = Batches(40)
    connection = ctx.connection()
    session = connection.createSession(jmspy.DUPS_OK_ACKNOWLEDGE)
    name = ctx.name()
    queue = session.createQueue(name)
    send_texts(session, queue, [str(i) for i in range(40)])
    consumer = session.createConsumer(queue)
    consumer.setBatchMessageListener(recorder, 10, 50)
    connection.start()
    ctx.expect(recorder.done.wait(8), recorder.sizes, "40 messages", "batches")
    consumer.close()
    connection.close()
    ctx.expect_equal(_leftovers(ctx, name), [], "messages left after close")
    return passed(f"batches {recorder.sizes} all acknowledged by the close")


@check("BL-11")
def bl11(ctx: CheckContext) -> Verdict:
    recorder = Batches(6)
    connection = ctx.connection()
    session = connection.createSession(jmspy.SESSION_TRANSACTED)
    name = ctx.name()
    queue = session.createQueue(name)
    send_texts(connection.createSession(), queue, ["a", "b", "c"])

    def decide(messages: list[Any]) -> None:
        if len(recorder.batches) == 1:
            session.rollback()
        else:
            session.commit()

    recorder.on_batch = decide
    session.createConsumer(queue).setBatchMessageListener(recorder, 3, 300)
    connection.start()
    ctx.expect(recorder.done.wait(8), recorder.batches, "the batch twice", "batches")
    ctx.expect_equal(recorder.batches[0], ["a", "b", "c"], "first batch")
    ctx.expect_equal(sorted(recorder.batches[1]), ["a", "b", "c"], "batch after rollback")
    ctx.expect(
        all(flag == (True, 2) for flag in recorder.flags[1]),
        recorder.flags[1],
        "all (JMSRedelivered=true, 2) after rollback",
    )
    connection.close()
    ctx.expect_equal(_leftovers(ctx, name), [], "messages left after the commit")
    return passed("rollback() brought the batch back; commit() acknowledged it")


@check("BL-12")
def bl12(ctx: CheckContext) -> Verdict:
    first, second = Batches(12), Batches(12)
    for recorder in (first, second):
        recorder.on_batch = lambda messages: time.sleep(0.01)
    connection = ctx.connection()
    session = connection.createSession()
    queues = [session.createQueue(ctx.name()) for _ in range(2)]
    session.createConsumer(queues[0]).setBatchMessageListener(first, 3, 0)
    session.createConsumer(queues[1]).setBatchMessageListener(second, 3, 0)
    running = threading.Lock()
    overlaps: list[int] = []
    for recorder in (first, second):
        inner = recorder.on_batch

        def guarded(messages: list[Any], inner: Any = inner) -> None:
            if not running.acquire(blocking=False):
                overlaps.append(1)
                return
            try:
                inner(messages)
            finally:
                running.release()

        recorder.on_batch = guarded
    connection.start()
    sender = connection.createSession()
    for queue in queues:
        send_texts(sender, queue, [str(i) for i in range(12)])
    ctx.expect(first.done.wait(5) and second.done.wait(5), "not all", "24 messages", "batches")
    threads = first.threads | second.threads
    ctx.expect_equal(len(overlaps), 0, "overlapping onMessages calls")
    ctx.expect_equal(len(threads), 1, "threads running onMessages")
    ctx.expect(
        threading.current_thread().name not in threads,
        threads,
        "not the application's thread",
        "dispatch thread",
    )
    return passed(f"all batches on one dispatch thread {sorted(threads)}, never overlapping")
