"""A watch on consumer links whose broker may stop dispatching while credit is left.

ActiveMQ Classic 5.x (its AMQP transport) stops sending to a consumer that holds
unacknowledged messages (CLIENT_ACKNOWLEDGE, INDIVIDUAL_ACKNOWLEDGE, a transaction not yet
committed) after some hundreds of them, although the link still has credit and the queue has
messages: the queue pages messages in for dispatch 200 at a time and, measured, hands over
the next page only when something else wakes it (an acknowledgement, a new message, a flow
that adds credit, its expiry scan every 30 s). A listener then waits for that scan; a
``receive(timeout)`` waits out its whole timeout before the drain at its end fetches the rest.
A drain wakes the queue at once (the broker answers it with a pull), so a link that has credit,
holds unsettled deliveries and has had no transfer and nothing buffered for one probe interval
is drained; the drain's answer restores the credit window. A drain that brings nothing (the
queue is empty, or everything left is with other consumers) doubles the interval, up to
:data:`MAX_INTERVAL_S`; any transfer brings it back to the profile's.

The profile's ``stalled_dispatch_probe_ms`` turns it on (0, the default, leaves a broker that
dispatches by credit alone without any extra frame).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from .receiver import AmqpReceiver

__all__ = ["StalledDispatchProbe"]

#: LinkSpec.extra key carrying the profile's probe interval.
PROBE_MS_KEY: Final = "stalled_dispatch_probe_ms"
#: The longest interval between checks of a link whose drains bring nothing.
MAX_INTERVAL_S: Final = 8.0


class StalledDispatchProbe:
    """Engine thread only: one per consumer link whose broker profile asks for it."""

    __slots__ = ("_receiver", "_interval_s", "_delay_s", "_generation", "_seen")

    def __init__(self, receiver: AmqpReceiver, interval_ms: int) -> None:
        self._receiver = receiver
        self._interval_s = interval_ms / 1000.0
        self._delay_s = self._interval_s
        # Each (re)attach starts a new round of checks; the checks of an earlier round end.
        self._generation = 0
        self._seen = -1

    def arm(self) -> None:
        """The link is attached (again, after a reconnect): check it every interval."""
        self._generation += 1
        self._seen = -1
        self._delay_s = self._interval_s
        self._schedule(self._generation)

    def _schedule(self, generation: int) -> None:
        self._receiver.connection.engine.schedule(self._delay_s, lambda: self._check(generation))

    def _check(self, generation: int) -> None:
        receiver = self._receiver
        if generation != self._generation or receiver.closed or receiver.failure is not None:
            return
        arrivals = receiver.arrivals
        if arrivals != self._seen:
            self._delay_s = self._interval_s
        elif receiver.drain_if_stalled():
            self._delay_s = min(2 * self._delay_s, MAX_INTERVAL_S)
        self._seen = arrivals
        self._schedule(generation)
