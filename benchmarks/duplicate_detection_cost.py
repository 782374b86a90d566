"""What duplicate detection costs a sender: ``_AMQ_DUPL_ID`` on every message, or not.

    python benchmarks/duplicate_detection_cost.py [-n 10000] [--rounds 5]

Interleaved rounds against one local Artemis (or JMSPY_BROKER_URL), each moving ``-n``
non-persistent 1 KiB BytesMessages with ``jmspy.duplicateDetection=false`` and ``=true``
(timed until ``close()`` returns, i.e. until the broker settled every send). Prints the
median rate and the median process CPU per message of each, and their ratio. The broker does
the duplicate-id cache lookup too, so the rate shows the whole cost, the CPU column the
client's. Each round's queue is drained and counted; a lost message fails the run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

try:
    from _common import BenchmarkError, broker, drain_queue, fresh_queue, process_cpu_s

    import jmspy
except ImportError as exc:  # pragma: no cover - a broken environment, said plainly
    print(f"duplicate detection benchmark cannot start: {exc}", file=sys.stderr)
    raise SystemExit(2) from exc


def one_round(
    url: str, user: str, password: str, count: int, dedupe: bool
) -> tuple[float, float, str]:
    factory = jmspy.ConnectionFactory(
        f"{url}?jmspy.duplicateDetection={'true' if dedupe else 'false'}", user, password
    )
    queue_name = fresh_queue("dedupe")
    body = b"x" * 1024
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        producer = session.createProducer(session.createQueue(queue_name))
        producer.setDeliveryMode(jmspy.DeliveryMode.NON_PERSISTENT)
        message = session.createBytesMessage()
        message.writeBytes(body)
        started, cpu = time.monotonic(), process_cpu_s()
        for _ in range(count):
            producer.send(message)
        producer.close()  # waits until the broker settled every send
        elapsed, used = time.monotonic() - started, process_cpu_s() - cpu
    return count / elapsed, used / count * 1e6, queue_name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--messages", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    results: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    with broker() as info:
        for _ in range(args.rounds):
            for dedupe in (False, True):
                rate, cpu_us, queue_name = one_round(
                    info.url, info.username, info.password, args.messages, dedupe
                )
                left = drain_queue(info, queue_name, expected=args.messages)
                if left != args.messages:
                    raise BenchmarkError(f"{queue_name}: {left} of {args.messages} arrived")
                results[dedupe].append((rate, cpu_us))
    rows = {}
    for dedupe, runs in results.items():
        rows[dedupe] = (
            statistics.median(r for r, _ in runs),
            statistics.median(c for _, c in runs),
        )
        rates = ", ".join(f"{r:,.0f}" for r, _ in runs)
        print(f"duplicateDetection={str(dedupe).lower():5}  msg/s per round: {rates}")
    (rate_off, cpu_off), (rate_on, cpu_on) = rows[False], rows[True]
    print(f"{'':20} {'median msg/s':>14} {'CPU us/msg':>12}")
    print(f"{'off':20} {rate_off:>14,.0f} {cpu_off:>12.1f}")
    print(f"{'on (_AMQ_DUPL_ID)':20} {rate_on:>14,.0f} {cpu_on:>12.1f}")
    print(f"ratio on/off: rate {rate_on / rate_off:.3f}, CPU {cpu_on / cpu_off:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
