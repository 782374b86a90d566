"""FO-1..FO-6: a failover connection across a broker crash (Qpid JMS's failover semantics).

Each check opens a ``failover:(url)`` connection and crashes the broker the suite started
(``kill()``: SIGKILL of its process group, data kept) and starts it again on the same data and
port (``restart()``), except FO-5, which loses a commit's answer in the suite's fault proxy.
A restart takes 5-20 s (Artemis on a busy machine), so each check does one crash and moves a
few hundred messages at most; every wait is bounded.

Queues must survive the crash: on Artemis an auto-created queue is durable; on a broker whose
handle can declare queues (RabbitMQ 3.x, where ``/queue/NAME`` declares a non-durable queue)
the check declares a durable one and reaches it as ``/amq/queue/NAME``.
"""

from __future__ import annotations

import collections
import threading
import time
import uuid
import weakref
from typing import Any
from urllib.parse import urlsplit

import jmspy

from ..context import CheckContext, _factory
from ..faultproxy import FaultProxy
from ..model import BrokerDeviation, CheckFailure, Verdict, deviation, passed
from ..registry import check
from ._support import send_texts, text_of

#: Seconds a broker restart may take on a busy two-core machine.
RESTART_S = 120.0
#: Seconds the runner allows each FO check (one crash, one restart, a reconnect).
FO_LIMIT_S = 300.0
#: How long the client may take to reconnect once the broker is back.
RECONNECT_S = 60.0
#: A bound for receiving what is expected after the reconnect.
RECEIVE_S = 60.0
#: How long a durable queue the broker lists as not running after its restart may take to
#: come back before the check ends as the broker's deviation.
RECOVERY_S = 30.0


class _Events:
    """A ConnectionListener counting each event."""

    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()
        self._cond = threading.Condition()

    def _add(self, kind: str) -> None:
        with self._cond:
            self.counts[kind] += 1
            self._cond.notify_all()

    def onConnectionEstablished(self, uri: str) -> None:
        self._add("established")

    def onConnectionInterrupted(self, uri: str) -> None:
        self._add("interrupted")

    def onConnectionRestored(self, uri: str) -> None:
        self._add("restored")

    def onConnectionFailure(self, exception: Exception) -> None:
        self._add("failure")

    def wait(self, kind: str, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self.counts[kind] > 0, timeout)


def _failover_connection(
    ctx: CheckContext, events: _Events, url: str | None = None, **options: Any
) -> Any:
    """A ``failover:`` connection to the broker (or ``url``), listened to by ``events``,
    whose blocking calls outlast a broker restart; closed when the check ends."""
    nested = url or ctx.target.url.split("?", 1)[0]
    # Reconnect attempts every 500 ms at most, for quick checks. A broker back before its
    # durable queues are refuses the consumers' links, and each refusal costs one of
    # failover.maxRecoveryRefusals: the default 10 lasts about 10 s with the default back-off
    # (up to 30 s between attempts) but under 3 s at 500 ms, which a RabbitMQ restarted on a
    # busy machine outlasted. 60 give it about 30 s, as long as a restart may take here.
    target = ctx.target.model_copy(
        update={
            "url": f"failover:({nested})?failover.maxReconnectDelay=500"
            "&failover.maxRecoveryRefusals=60"
        }
    )
    options.setdefault("send_timeout", int(RESTART_S * 1000) + 60000)
    options.setdefault("request_timeout", int(RESTART_S * 1000) + 60000)
    connection = _factory(target, **options).createConnection()
    ctx.on_close(connection.close)
    connection.setConnectionListener(events)
    return connection


def _crash(ctx: CheckContext) -> None:
    """Kill -9 the broker and start it again on its data; the evidence says how long."""
    broker = ctx.target.broker

    def running_again() -> None:
        # Whatever happened in the check, the next check needs the broker up.
        if not broker.running:
            broker.restart(timeout=RESTART_S)

    ctx.on_close(running_again)
    broker.kill()
    broker.restart(timeout=RESTART_S)
    timings = getattr(broker, "timings", {})
    ctx.note(
        f"broker killed in {timings.get('kill', 0.0):.1f} s and restarted in "
        f"{timings.get('restart', 0.0):.1f} s"
    )
    _check_queues_survived(ctx)


def _expect_reconnect(ctx: CheckContext, events: _Events) -> None:
    ctx.expect(
        events.wait("restored", RECONNECT_S),
        f"events {dict(events.counts)}",
        f"onConnectionRestored within {RECONNECT_S:.0f} s of the restart",
        "reconnect",
    )


def _durable_queue(ctx: CheckContext, tag: str = "q") -> str:
    """A queue name whose queue and persistent messages survive a broker crash."""
    name = ctx.name(tag)
    broker = ctx.target.broker
    declare = getattr(broker, "declare_queue", None)
    if declare is None:
        return name  # Artemis: auto-created queues are durable
    declare(name, durable=True)
    ctx.on_close(lambda: broker.delete_queue(name))
    _DECLARED.setdefault(ctx, []).append(name)
    return f"/amq/queue/{name}"


# The durable queues each check declared through the broker's own tools (RabbitMQ): after a
# crash, _crash asks the broker whether they are still there.
_DECLARED: weakref.WeakKeyDictionary[CheckContext, list[str]] = weakref.WeakKeyDictionary()


def _check_queues_survived(ctx: CheckContext) -> None:
    """A durable queue the broker did not bring back after its restart is the broker's loss:
    every later step of the check would fail on it (NOT_FOUND), so the check ends there as a
    deviation, with the broker's own word (its queue listing) as evidence.

    RabbitMQ lists a queue it recovered as ``running``; one whose process did not come back
    (``down``, ``stopped``) is refused like a missing one, and one that crashed is not listed
    at all. A queue still restarting gets until RECOVERY_S to come back."""
    state_of = getattr(ctx.target.broker, "queue_state", None)
    if state_of is None:
        return
    declared = _DECLARED.get(ctx, [])
    deadline = time.monotonic() + RECOVERY_S
    while True:
        states = {name: state_of(name) for name in declared}
        unrecovered = {name: state for name, state in states.items() if state != "running"}
        if not unrecovered or time.monotonic() > deadline:
            break
        if all(state is None for state in unrecovered.values()):
            break  # missing queues do not come back by themselves
        time.sleep(0.5)  # polled against the deadline: the node gives no event for it
    if not unrecovered:
        return
    lost = sorted(name for name, state in unrecovered.items() if state is None)
    down = {name: state for name, state in unrecovered.items() if state is not None}
    observed = []
    if lost:
        observed.append(f"missing after the restart: {lost}")
    if down:
        observed.append(f"listed but not running {RECOVERY_S:.0f} s after the restart: {down}")
    # RabbitMQ leaves a crashed queue out of its listing: its log says what happened.
    trouble = getattr(ctx.target.broker, "recovery_trouble", None)
    if trouble is not None and (lines := trouble()):
        observed.append(f"node log since the restart: {lines}")
    raise BrokerDeviation(
        deviation(
            f"the broker did not recover {len(unrecovered)} durable queue(s) declared before "
            "the kill -9, so what was on them and what was sent to them since is gone with "
            "them",
            observed="; ".join(observed),
            expected="durable queues and their persistent messages survive a crash",
        )
    )


def _send(ctx: CheckContext, queue: str, texts: list[str]) -> None:
    """Persistent sends on a plain connection of their own."""
    connection = ctx.connection()
    session = connection.createSession()
    send_texts(session, session.createQueue(queue), texts, persistent=True)
    connection.close()


def _left_on(
    ctx: CheckContext, queue: str, quiet_ms: int = 1500, first_ms: int | None = None
) -> collections.Counter[str]:
    """Every message on ``queue`` by body (a plain connection, AUTO_ACKNOWLEDGE). Where
    messages are expected, ``first_ms`` lets the first one take longer than the quiet period:
    a broker just restarted on a busy machine (Broker-J) can take seconds to start delivering
    to a new consumer."""
    found: collections.Counter[str] = collections.Counter()
    connection = ctx.connection()
    session = connection.createSession()
    consumer = session.createConsumer(session.createQueue(queue))
    connection.start()
    wait = quiet_ms if first_ms is None else first_ms
    while (message := consumer.receive(wait)) is not None:
        found[text_of(message)] += 1
        wait = quiet_ms
    connection.close()
    return found


def _take(ctx: CheckContext, consumer: Any, count: int, what: str) -> list[Any]:
    taken: list[Any] = []
    while len(taken) < count:
        message = consumer.receive(10_000)
        ctx.expect(message is not None, f"{len(taken)} messages", f"{count} messages", what)
        taken.append(message)
    return taken


def _receive_all(ctx: CheckContext, consumer: Any, wanted: set[str], what: str) -> list[Any]:
    """Receive until every body in ``wanted`` was seen (bounded by RECEIVE_S)."""
    got: list[Any] = []
    seen: set[str] = set()
    deadline = time.monotonic() + RECEIVE_S
    while not wanted <= seen and time.monotonic() < deadline:
        message = consumer.receive(1000)
        if message is not None:
            got.append(message)
            seen.add(text_of(message))
    missing = sorted(wanted - seen)
    ctx.expect(
        not missing,
        f"{len(missing)} never arrived within {RECEIVE_S:.0f} s: {missing[:10]}",
        f"all {len(wanted)} messages",
        what,
    )
    return got


def crash_failure(error: BaseException) -> Exception:
    """What a crash run on a thread of its own ended with, raised by the check: a broker
    deviation found there (a durable queue the broker did not recover, with the queue states
    and node log as evidence) stays one; anything else means the fault itself failed."""
    if isinstance(error, BrokerDeviation):
        return error
    return CheckFailure(f"crashing the broker failed: {error}", "a kill and a restart")


@check("FO-1", time_limit=FO_LIMIT_S)
def fo1(ctx: CheckContext) -> Verdict:
    queue = _durable_queue(ctx)
    events = _Events()
    connection = _failover_connection(ctx, events)
    session = connection.createSession()
    producer = session.createProducer(session.createQueue(queue))
    producer.setDeliveryMode(jmspy.DeliveryMode.PERSISTENT)
    crashed = threading.Event()
    failure: list[BaseException] = []

    def crash() -> None:
        try:
            _crash(ctx)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failure.append(exc)
        finally:
            crashed.set()

    crasher = threading.Thread(target=crash, name="fo1-crash", daemon=True)
    # The crash lands while sends go on: one of them is in flight, or the next one blocks
    # through the reconnect. Keep sending until the broker is back (bounded).
    minimum, cap, sent, longest = 200, 2000, 0, (0.0, -1)
    while sent < cap and (sent < minimum or not crashed.is_set()):
        began = time.monotonic()
        producer.send(session.createTextMessage(str(sent)))
        took = time.monotonic() - began
        longest = max(longest, (took, sent))
        sent += 1
        if sent == 60:
            crasher.start()
    crashed.wait(RESTART_S + 30)
    if failure:
        raise crash_failure(failure[0])
    _expect_reconnect(ctx, events)
    ctx.note(f"{sent} sends; send #{longest[1]} blocked {longest[0]:.1f} s through the reconnect")
    connection.close()
    found = _left_on(ctx, queue, first_ms=10_000)
    lost = [str(i) for i in range(sent) if found[str(i)] == 0]
    ctx.expect(not lost, f"{len(lost)} lost: {lost[:10]}", f"all {sent} on the queue", "sends")
    twice = sorted((b for b, n in found.items() if n > 1), key=int)
    if twice and ctx.profile.duplicate_id_property:
        raise CheckFailure(
            f"stored twice despite {ctx.profile.duplicate_id_property}: {twice[:10]}",
            "each message once (the broker detects duplicates)",
        )
    if twice:
        return deviation(
            f"{len(twice)} resent message(s) stored twice: the broker has no duplicate "
            "detection (at-least-once, as docs/failover.md says)",
            observed=f"stored twice: {twice[:10]}",
            expected="each message once",
        )
    how = (
        f"duplicate detection ({ctx.profile.duplicate_id_property})"
        if ctx.profile.duplicate_id_property
        else "no duplicate detection, none resent twice this time"
    )
    return passed(f"all {sent} sends across the crash stored once; {how}")


@check("FO-2", time_limit=FO_LIMIT_S)
def fo2(ctx: CheckContext) -> Verdict:
    queue = _durable_queue(ctx)
    before = [f"b{i}" for i in range(100)]
    after = [f"a{i}" for i in range(50)]
    _send(ctx, queue, before)
    events = _Events()
    connection = _failover_connection(ctx, events)
    session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue(queue))
    connection.start()
    _take(ctx, consumer, 30, "received before the crash")
    _crash(ctx)
    _expect_reconnect(ctx, events)
    _send(ctx, queue, after)
    got = _receive_all(ctx, consumer, set(before[30:]) | set(after), "after the reconnect")
    again = sum(1 for m in got if text_of(m) in before[:30])
    ctx.note(f"{len(got)} received after the reconnect ({again} of the first 30 again)")
    return passed(
        "the same consumer received the 70 left from before the crash and the 50 sent after it"
    )


@check("FO-3", time_limit=FO_LIMIT_S)
def fo3(ctx: CheckContext) -> Verdict:
    queue = _durable_queue(ctx)
    texts = [str(i) for i in range(20)]
    _send(ctx, queue, texts)
    events = _Events()
    connection = _failover_connection(ctx, events)
    session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
    consumer = session.createConsumer(session.createQueue(queue))
    connection.start()
    first = _take(ctx, consumer, 10, "received before the crash")
    handed = {text_of(m) for m in first}
    ctx.expect(
        not any(m.getJMSRedelivered() for m in first), "flagged", "first deliveries unflagged"
    )
    _crash(ctx)
    _expect_reconnect(ctx, events)
    got = _receive_all(ctx, consumer, set(texts), "after the reconnect")
    seen_again = {text_of(m): m for m in got if text_of(m) in handed}
    unflagged = sorted((t for t, m in seen_again.items() if not m.getJMSRedelivered()), key=int)
    ctx.note(
        "seen again: "
        + ", ".join(
            f"{t} ({m.getJMSRedelivered()}, {m.getIntProperty('JMSXDeliveryCount')})"
            for t, m in sorted(seen_again.items(), key=lambda item: int(item[0]))
        )
    )
    ctx.expect(
        not unflagged,
        f"JMSRedelivered=false on {unflagged}",
        "JMSRedelivered=true on every message handed out before the drop",
        "redelivered",
    )
    return passed(f"the {len(seen_again)} messages seen before the drop came back flagged")


@check("FO-4", time_limit=FO_LIMIT_S)
def fo4(ctx: CheckContext) -> Verdict:
    queue, out = _durable_queue(ctx), _durable_queue(ctx, "out")
    texts = [str(i) for i in range(10)]
    _send(ctx, queue, texts)
    events = _Events()
    connection = _failover_connection(ctx, events)
    session = connection.createSession(jmspy.SESSION_TRANSACTED)
    consumer = session.createConsumer(session.createQueue(queue))
    producer = session.createProducer(session.createQueue(out))
    connection.start()
    _take(ctx, consumer, 10, "received in the transaction")
    producer.send(session.createTextMessage("sent in the lost transaction"))
    _crash(ctx)
    _expect_reconnect(ctx, events)
    error = ctx.expect_raises(
        jmspy.TransactionRolledBackException, session.commit, "commit() after the drop"
    )
    ctx.expect(
        not isinstance(error, jmspy.TransactionInDoubtException),
        type(error).__name__,
        "a certain rollback, not in doubt",
    )
    back = _receive_all(ctx, consumer, set(texts), "consumed work back after the rollback")
    unflagged = sorted({text_of(m) for m in back if not m.getJMSRedelivered()}, key=int)
    ctx.expect(not unflagged, f"unflagged {unflagged}", "all JMSRedelivered=true", "came back")
    session.commit()  # the session goes on with a new transaction
    ctx.expect_equal(dict(_left_on(ctx, out)), {}, "the rolled-back send on the broker")
    ctx.expect_equal(dict(_left_on(ctx, queue)), {}, "left after the new transaction's commit")
    return passed("commit() raised TransactionRolledBackException; the work came back, flagged")


@check("FO-5", time_limit=FO_LIMIT_S)
def fo5(ctx: CheckContext) -> Verdict:
    parts = urlsplit(ctx.target.url)
    proxy = FaultProxy(parts.hostname or "127.0.0.1", parts.port or 5672)
    ctx.on_close(proxy.close)
    queue = ctx.name()
    _send(ctx, queue, [str(i) for i in range(10)])
    events = _Events()
    nested = f"{parts.scheme}://{proxy.host}:{proxy.port}"
    connection = _failover_connection(ctx, events, nested, request_timeout=120_000)
    session = connection.createSession(jmspy.SESSION_TRANSACTED)
    consumer = session.createConsumer(session.createQueue(queue))
    connection.start()
    _take(ctx, consumer, 10, "received in the transaction")
    sent_before = proxy.bytes_to_target
    proxy.freeze_replies()
    outcome: list[BaseException | None] = []

    def commit() -> None:
        try:
            session.commit()
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - judged below
            outcome.append(exc)

    committer = threading.Thread(target=commit, name="fo5-commit", daemon=True)
    committer.start()
    # The discharge reached the broker, and its answer waits in the proxy: cut it off.
    ctx.expect(
        ctx.wait_for(lambda: proxy.bytes_to_target > sent_before, 30),
        "nothing written",
        "the discharge written to the broker",
    )
    ctx.expect(
        ctx.wait_for(lambda: proxy.bytes_held > 0, 30), "no answer", "the broker's answer held"
    )
    proxy.cut()
    proxy.thaw()
    committer.join(RECONNECT_S + 60)
    ctx.expect(bool(outcome), "commit() still blocked", "commit() to return", "commit")
    error = outcome[0]
    ctx.expect(
        isinstance(error, jmspy.TransactionInDoubtException)
        and not isinstance(error, jmspy.TransactionRolledBackException),
        "returned normally" if error is None else f"{type(error).__name__}: {error}",
        "TransactionInDoubtException (not TransactionRolledBackException)",
        "commit() whose answer was lost",
    )
    ctx.note(f"commit(): {type(error).__name__}: {error}")
    _expect_reconnect(ctx, events)
    ctx.expect(consumer.receive(1000) is None, "a message came back", "nothing back", "consumer")
    session.commit()  # the session goes on
    # The broker did commit (its answer was only lost): nothing is left of the ten.
    ctx.expect_equal(dict(_left_on(ctx, queue)), {}, "left on the broker")
    return passed("commit() with its answer lost raised TransactionInDoubtException")


@check("FO-6", time_limit=FO_LIMIT_S)
def fo6(ctx: CheckContext) -> Verdict:
    events = _Events()
    client_id = f"jmspy-cf-fo6-{uuid.uuid4().hex[:8]}"
    connection = _failover_connection(ctx, events, client_id=client_id)
    session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
    topic = session.createTopic(ctx.name("t"))
    subscriber = session.createDurableConsumer(topic, "sub")

    def unsubscribe() -> None:
        subscriber.close()
        session.unsubscribe("sub")

    ctx.on_close(unsubscribe)
    before = [f"b{i}" for i in range(50)]
    after = [f"a{i}" for i in range(30)]
    send_texts(session, topic, before, persistent=True)
    connection.start()
    _take(ctx, subscriber, 20, "received before the crash")
    _crash(ctx)
    _expect_reconnect(ctx, events)
    send_texts(session, topic, after, persistent=True)
    got = _receive_all(ctx, subscriber, set(before[20:]) | set(after), "after the reconnect")
    ctx.note(f"{len(got)} received after the reconnect")
    return passed("the durable subscription kept its backlog and received what came after")
