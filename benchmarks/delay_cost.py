"""Rule DD-13: a destination without delay support costs nothing.

Measures the client-side cost of MessageProducer.send up to the point where the transfer is
handed to the engine (rule checks, stamping, encoding), for:

* baseline: the AMQP encoding alone (``encode_message``) of the same message,
* delay 0: the full send path with no delivery delay (what every ordinary send pays),
* delay 1000: the same with a delivery delay (rules DD-1..DD-12 run, one more annotation).

The ratio "delay 0 / baseline" is the overhead of the send path; the figure to look at for
DD-13 is "delay 0 added work": the difference between the delay-0 path and the same path with
the delay code removed (measured by running the producer with a patched-out rules module in
the same run). No broker is needed: the link is a stand-in that records the payload.

    python benchmarks/delay_cost.py [-n 50000]
"""

from __future__ import annotations

import argparse
import sys
import timeit
from typing import Any

from jmspy import rules
from jmspy._amqp.codec import encode_message
from jmspy.destination import Queue
from jmspy.message import TextMessage
from jmspy.producer import MessageProducer
from jmspy.producer_settings import ProducerSettings


class RecordingLink:
    target_capabilities = {"DELAYED_DELIVERY"}

    def __init__(self) -> None:
        self.sent = 0
        self.txn_failure_handler = None

    def send(self, payload: bytes, sync: bool, timeout_ms: int, *args: Any) -> None:
        self.sent += 1


class Profile:
    name = "artemis"
    queue_prefix = ""
    topic_prefix = ""
    delay_form = "delivery-time"
    message_annotations = True
    delay_supported = None
    publication_defaults: dict[str, str | None] = {}


def make_producer(queue: Queue, delay: int) -> MessageProducer:
    """A producer wired to a recording link, without a connection (the send path only)."""
    producer = MessageProducer.__new__(MessageProducer)
    session = type("S", (), {"_txn_id": None, "_check_closed": lambda self: None})()
    link = RecordingLink()
    # The session's port: an AUTO_ACKNOWLEDGE session that is never closed.
    port = type("P", (), {"mode": 1, "check_closed": lambda self: None})()
    producer.__dict__.update(
        _session=session,
        _port=port,
        _connection=type(
            "C",
            (),
            {"options": type("O", (), {"username": None, "populate_jmsx_user_id": False})()},
        )(),
        _wire=type(
            "W",
            (),
            {
                "delay_supported": lambda self, link=None: True,
                "broker_name": lambda self: "bench, adapter artemis",
            },
        )(),
        _destination=queue,
        _closed=False,
        _links={queue: link},
        _adapter=Profile(),
        _max_delivery_delay=None,
        _id_prefix="ID:bench:1:1:1-",
        _message_seq=iter(range(10**9)),
        _settings=ProducerSettings(delivery_delay=delay),
        _duplicate_property=None,
        _send_timeout=30000,
        _force_sync=False,
        _force_async=True,
    )
    return producer


def per_op_us(fn: Any, number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description="DD-13: the cost of delay 0 on the send path")
    parser.add_argument("-n", type=int, default=50000)
    args = parser.parse_args()
    queue = Queue("bench")
    message = TextMessage("x" * 100)
    message.setStringProperty("k", "v")

    def baseline() -> None:
        encode_message(message, ttl=0, delivery_time_transmitted=False)

    no_delay = make_producer(queue, 0)
    delayed = make_producer(queue, 1000)

    def send_no_delay() -> None:
        no_delay._send(queue, message, 1, 4, 0, 0)

    def send_delayed() -> None:
        delayed._send(queue, message, 1, 4, 0, 1000)

    base = per_op_us(baseline, args.n)
    zero = per_op_us(send_no_delay, args.n)
    with_delay = per_op_us(send_delayed, args.n)
    # The same delay-0 path with the delay rule entry point stubbed out: the difference is
    # everything the delay feature adds to an ordinary send.
    original = rules.effective_delay
    rules.effective_delay = lambda producer_delay, destination: producer_delay  # type: ignore[assignment]
    try:
        stripped = per_op_us(send_no_delay, args.n)
    finally:
        rules.effective_delay = original  # type: ignore[assignment]
    print(f"send path cost per message (min of 5 x {args.n}), client side only")
    print(f"{'encode only (baseline)':<34}{base:8.2f} us")
    print(f"{'send, delay 0':<34}{zero:8.2f} us   {zero / base:5.2f}x baseline")
    print(f"{'send, delay 0, delay code removed':<34}{stripped:8.2f} us")
    print(
        f"{'delay 0 added work':<34}{zero - stripped:8.2f} us   "
        f"{(zero - stripped) / zero * 100:5.1f}% of the send path"
    )
    print(f"{'send, delay 1000 ms':<34}{with_delay:8.2f} us   {with_delay / zero:5.2f}x delay 0")
    return 0


if __name__ == "__main__":
    sys.exit(main())
