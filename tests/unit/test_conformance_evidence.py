"""The conformance suite's evidence that an outcome is the broker's: DD-7's re-stamped
expiration (ActiveMQ Classic's scheduler), seen on the kept message or on the one that expired
while delayed, and never claimed when jmspy's own frame was wrong."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jmspy.conformance.checks._evidence import expiry_restamped
from jmspy.conformance.model import Outcome, Verdict, deviation


@dataclass
class SentMessage:
    body: list[tuple[str, Any]]
    properties: dict[str, Any]
    annotations: dict[str, Any]

    def describe(self) -> str:
        return f"{self.properties} {self.annotations}"


@dataclass
class FakeContext:
    """The three things the helper uses of a CheckContext."""

    sent: list[SentMessage]
    notes: list[str] = field(default_factory=list)

    def sent_messages(self) -> list[SentMessage | None]:
        return list(self.sent)

    def note(self, line: str) -> None:
        self.notes.append(line)

    def broker_deviation(self, summary: str, *, observed: str, expected: str) -> Verdict:
        return deviation(summary, observed=observed, expected=expected)


class Received:
    def __init__(self, expiration: int) -> None:
        self.expiration = expiration

    def getJMSExpiration(self) -> int:
        return self.expiration


def _sent(text: str, stamp: int, delay: int, ttl: int) -> SentMessage:
    return SentMessage(
        body=[("amqp-value", text)],
        properties={"creation-time": stamp, "absolute-expiry-time": stamp + ttl},
        annotations={"x-opt-delivery-time": stamp + delay},
    )


def test_the_kept_message_arriving_with_a_later_expiration_is_the_broker_s_deviation() -> None:
    ctx = FakeContext(
        [_sent("kept", 1_000, 600, 5_000), _sent("expires while delayed", 1_001, 300, 300)]
    )

    verdict = expiry_restamped(ctx, Received(6_618), "kept", delay_ms=600, ttl_ms=5_000)

    assert verdict is not None and verdict.outcome is Outcome.DEVIATION
    assert "a delayed message with its expiration moved" in verdict.summary
    assert verdict.expected == "JMSExpiration 6000 (absolute-expiry-time as sent)"
    assert any("618 ms after the expiry jmspy sent" in note for note in ctx.notes)


def test_the_expired_while_delayed_message_delivered_is_the_broker_s_deviation() -> None:
    ctx = FakeContext(
        [_sent("kept", 1_000, 600, 5_000), _sent("expires while delayed", 1_001, 300, 300)]
    )

    verdict = expiry_restamped(ctx, Received(1_620))

    assert verdict is not None and verdict.outcome is Outcome.DEVIATION
    assert "expired while it was delayed" in verdict.summary


def test_no_deviation_is_claimed_when_jmspy_sent_the_wrong_expiry_or_nothing_moved() -> None:
    wrong = FakeContext([_sent("kept", 1_000, 600, 4_999)])
    assert expiry_restamped(wrong, Received(6_618), "kept", delay_ms=600, ttl_ms=5_000) is None
    right = FakeContext([_sent("kept", 1_000, 600, 5_000)])
    assert expiry_restamped(right, Received(5_990), "kept", delay_ms=600, ttl_ms=5_000) is None
    assert expiry_restamped(FakeContext([]), Received(6_618), "kept") is None
