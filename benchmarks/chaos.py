"""Failover under fire: messages moved through a local Artemis that is killed and restarted.

Two producers send persistent messages (synchronous sends) over ``failover:`` connections, each
to its own queue; two consumers take them, one per queue: one transacted (commit every
``--batch``) and one CLIENT_ACKNOWLEDGE (acknowledge every ``--batch``). (A queue per consumer:
Artemis does not count a delivery lost with a dropped connection, so a message redelivered to
*another* consumer cannot be flagged by any client; see the README's Failover section.)
Meanwhile the broker process group gets ``kill -9`` at random
moments and is restarted on the same journal, ``--kills`` times.

At the end every message the producers sent is accounted for:

* ``lost``: sent (the broker accepted it) but never committed/acknowledged by a consumer;
* ``duplicates``: deliveries after the first of the same message, split into flagged
  (``JMSRedelivered=true``: the consumer's acknowledgement or commit did not reach the broker,
  or the message was handed out just before the drop) and unflagged (a second copy of the
  message on the queue, i.e. a resent send the broker did not drop: duplicate detection
  exists to make this 0);
* ``processed twice``: of the flagged ones, how many the consumer had already acknowledged
  or committed (an acknowledgement the broker never got: AMQP does not confirm them);
* reconnect times as the clients measured them (interruption to restoration).

Targets (issue "failover"): lost 0, unflagged duplicates 0 (with duplicate detection, on by
default for failover connections to Artemis). The run ends by itself: every wait has a
deadline, and a shortfall fails loudly with the counts. Only 127.0.0.1 is used.

    python benchmarks/chaos.py                 # 20,000 messages, 5 kills
    python benchmarks/chaos.py -n 4000 --kills 2
    python benchmarks/chaos.py --option transport.sharedEventLoopThreads=1
"""

from __future__ import annotations

import argparse
import collections
import random
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from jmspy.conformance.brokers.artemis import ArtemisBroker

import jmspy


@dataclass
class ConsumerTally:
    name: str
    flagged: int = 0
    unflagged: int = 0
    rolled_back: int = 0
    in_doubt: int = 0
    ack_refused: int = 0
    errors: list[str] = field(default_factory=list)


class Ledger:
    """Every delivery and every settled batch of both consumers (thread-safe)."""

    def __init__(self) -> None:
        self.deliveries: collections.Counter[str] = collections.Counter()
        self.processed: collections.Counter[str] = collections.Counter()
        # Batches whose settlement had an unknown or partial outcome: (body, deliveries seen
        # when it was settled). It was processed by that settlement iff never delivered again.
        self.unknown: list[tuple[str, int]] = []
        self._lock = threading.Lock()

    def delivered(self, body: str) -> int:
        with self._lock:
            self.deliveries[body] += 1
            return self.deliveries[body]

    def settled(self, bodies: list[str], certain: bool) -> None:
        with self._lock:
            for body in bodies:
                if certain:
                    self.processed[body] += 1
                else:
                    self.unknown.append((body, self.deliveries[body]))

    def final(self) -> collections.Counter[str]:
        with self._lock:
            result = collections.Counter(self.processed)
            for body, seen in self.unknown:
                if self.deliveries[body] == seen:
                    result[body] += 1
            return result

    def done(self, expected: list[str]) -> bool:
        final = self.final()
        return all(final[body] for body in expected)


class ReconnectClock:
    """Reconnect times of all the run's connections (interruption to restoration)."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.failures: list[str] = []
        self._lock = threading.Lock()

    def listener(self) -> ConnectionClock:
        return ConnectionClock(self)

    def add(self, seconds: float) -> None:
        with self._lock:
            self.times.append(seconds)


class ConnectionClock:
    """A ConnectionListener for one connection, reporting to the run's ReconnectClock."""

    def __init__(self, clock: ReconnectClock) -> None:
        self.clock = clock
        self.began: float | None = None

    def onConnectionInterrupted(self, uri: str) -> None:
        self.began = time.monotonic()

    def onConnectionRestored(self, uri: str) -> None:
        if self.began is not None:
            self.clock.add(time.monotonic() - self.began)
            self.began = None

    def onConnectionFailure(self, exception: jmspy.JMSException) -> None:
        self.clock.failures.append(str(exception))


def produce(
    factory: jmspy.ConnectionFactory,
    queue_name: str,
    ids: list[str],
    accepted: list[str],
    clock: ReconnectClock,
    errors: list[str],
) -> None:
    with factory.createConnection() as connection:
        connection.setConnectionListener(clock.listener())
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        producer = session.createProducer(session.createQueue(queue_name))
        for message_id in ids:
            message = session.createTextMessage(message_id)
            try:
                producer.send(message)  # persistent: waits for the broker's outcome
            except jmspy.JMSException as exc:
                errors.append(f"send {message_id}: {exc}")
                continue
            accepted.append(message_id)


def consume(
    factory: jmspy.ConnectionFactory,
    queue_name: str,
    mode: int,
    tally: ConsumerTally,
    ledger: Ledger,
    batch: int,
    stop: threading.Event,
    clock: ReconnectClock,
) -> None:
    with factory.createConnection() as connection:
        connection.setConnectionListener(clock.listener())
        session = connection.createSession(mode)
        consumer = session.createConsumer(session.createQueue(queue_name))
        connection.start()
        pending: list[str] = []
        last: jmspy.Message | None = None
        while not stop.is_set():
            try:
                message = consumer.receive(500)
            except jmspy.JMSException as exc:
                tally.errors.append(f"receive: {exc}")
                continue
            if message is not None:
                body = message.getBody(str)
                assert body is not None
                if ledger.delivered(body) > 1:
                    if message.getJMSRedelivered():
                        tally.flagged += 1
                    else:
                        tally.unflagged += 1
                pending.append(body)
                last = message
            if pending and (message is None or len(pending) >= batch):
                _settle(session, mode, last, pending, tally, ledger)
                pending = []


def _settle(
    session: jmspy.Session,
    mode: int,
    last: jmspy.Message | None,
    pending: list[str],
    tally: ConsumerTally,
    ledger: Ledger,
) -> None:
    try:
        if mode == jmspy.SESSION_TRANSACTED:
            session.commit()
        else:
            assert last is not None
            last.acknowledge()
    except jmspy.TransactionRolledBackException:
        tally.rolled_back += 1  # certainly not processed: they come back redelivered
        return
    except jmspy.TransactionInDoubtException:
        tally.in_doubt += 1  # the broker may have committed
        ledger.settled(pending, certain=False)
        return
    except jmspy.IllegalStateException:
        tally.ack_refused += 1  # acknowledged only in part: the rest comes back
        ledger.settled(pending, certain=False)
        return
    except jmspy.JMSException as exc:
        tally.errors.append(f"settle: {exc}")
        ledger.settled(pending, certain=False)
        return
    ledger.settled(pending, certain=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--messages", type=int, default=20_000)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--no-duplicate-detection", action="store_true")
    parser.add_argument(
        "--max-reconnect-delay",
        type=int,
        default=1000,
        help="failover.maxReconnectDelay in ms (Qpid JMS's default, 30000, lets the back-off "
        "miss a broker that comes back between two kills by many seconds)",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a further connection URL option for every client, e.g. "
        "transport.sharedEventLoopThreads=1 (repeatable)",
    )
    parser.add_argument("--deadline", type=float, default=1800.0, help="give up after (s)")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    started = time.monotonic()
    deadline = started + args.deadline

    broker = ArtemisBroker(log=lambda line: print(f"broker: {line}", flush=True))
    broker.start()
    print(f"Artemis {broker.version} at {broker.url}", flush=True)
    try:
        return _run(args, rng, broker, started, deadline)
    finally:
        broker.stop()


def _run(args: Any, rng: random.Random, broker: Any, started: float, deadline: float) -> int:
    dedupe = "false" if args.no_duplicate_detection else "true"
    url = (
        f"failover:({broker.url})?jms.sendTimeout=300000&jms.requestTimeout=120000"
        f"&jmspy.duplicateDetection={dedupe}"
        f"&failover.maxReconnectDelay={args.max_reconnect_delay}"
    )
    for option in args.option:
        if "=" not in option:
            raise SystemExit(f"--option {option!r}: expected KEY=VALUE")
        url += f"&{option}"
    factory = jmspy.ConnectionFactory(url, broker.username, broker.password)
    queue_names = [f"chaos.{int(time.time())}.{n}" for n in (0, 1)]
    half = args.messages // 2
    ids = [f"p{p}-{i}" for p in (0, 1) for i in range(half)]
    accepted: list[list[str]] = [[], []]
    send_errors: list[str] = []
    clock = ReconnectClock()
    producers = [
        threading.Thread(
            target=produce,
            args=(
                factory,
                queue_names[p],
                ids[p * half : (p + 1) * half],
                accepted[p],
                clock,
                send_errors,
            ),
            name=f"chaos-producer-{p}",
        )
        for p in (0, 1)
    ]
    stop = threading.Event()
    ledger = Ledger()
    tallies = [ConsumerTally("transacted"), ConsumerTally("client-ack")]
    modes = [jmspy.SESSION_TRANSACTED, jmspy.CLIENT_ACKNOWLEDGE]
    consumers = [
        threading.Thread(
            target=consume,
            args=(factory, queue, mode, tally, ledger, args.batch, stop, clock),
            name=f"chaos-consumer-{tally.name}",
        )
        for queue, mode, tally in zip(queue_names, modes, tallies, strict=True)
    ]
    for thread in producers + consumers:
        thread.start()

    kill_times: list[float] = []
    restart_times: list[float] = []
    for kill in range(args.kills):
        # A random moment while messages still flow.
        time.sleep(rng.uniform(0.5, 4.0))
        kill_times.append(time.monotonic() - started)
        broker.kill()
        began = time.monotonic()
        broker.restart()
        restart_times.append(time.monotonic() - began)
        print(
            f"kill {kill + 1}/{args.kills} at {kill_times[-1]:.1f} s; broker back after "
            f"{restart_times[-1]:.1f} s",
            flush=True,
        )

    for thread in producers:
        thread.join(max(1.0, deadline - time.monotonic()))
    sent = accepted[0] + accepted[1]
    # Wait until every accepted message was processed (or the deadline).
    while time.monotonic() < deadline and not ledger.done(sent):
        time.sleep(0.2)
    stop.set()
    for thread in consumers:
        thread.join(60)

    processed = ledger.final()
    lost = [m for m in sent if processed[m] == 0]
    duplicates = sum(c - 1 for c in processed.values() if c > 1)
    deliveries = sum(ledger.deliveries.values())
    flagged = sum(t.flagged for t in tallies)
    unflagged = sum(t.unflagged for t in tallies)
    times = sorted(clock.times)
    total = time.monotonic() - started

    print()
    print(
        f"messages sent and accepted      {len(sent):>8} of {len(ids)} "
        f"({len(send_errors)} send errors)"
    )
    print(f"processed (committed / acked)   {sum(1 for m in sent if processed[m]):>8}")
    print(f"deliveries                      {deliveries:>8}")
    print(f"lost                            {len(lost):>8}")
    print(f"duplicates flagged / unflagged  {flagged:>8} / {unflagged}")
    print(f"  processed twice (flagged)     {duplicates:>8}")
    for tally in tallies:
        print(
            f"  {tally.name:12} rolled back {tally.rolled_back}, in doubt {tally.in_doubt}, "
            f"acknowledge refused {tally.ack_refused}, other errors {len(tally.errors)}"
        )
    print(f"duplicate detection             {dedupe}")
    print(f"failover.maxReconnectDelay      {args.max_reconnect_delay} ms")
    print(f"broker kills                    {args.kills} (restart {_spread(restart_times)})")
    print(f"client reconnects               {len(times)} ({_spread(times)})")
    print(f"total time                      {total:.1f} s")
    for line in (send_errors + [e for t in tallies for e in t.errors])[:10]:
        print(f"  error: {line}")
    ok = not lost and unflagged == 0 and len(sent) == len(ids) and not clock.failures
    print("RESULT:", "ok" if ok else "FAILED")
    return 0 if ok else 1


def _spread(values: list[float]) -> str:
    if not values:
        return "none"
    return (
        f"min {min(values):.2f} s, median {statistics.median(values):.2f} s, "
        f"max {max(values):.2f} s"
    )


if __name__ == "__main__":
    sys.exit(main())
