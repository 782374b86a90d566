"""MessageConsumer.close() from a thread other than the listener's waits for the onMessage in
progress on its session (JMS 2.0 section 4.4.16), and for nothing more: not for the rest of a
listener run of another consumer of the same session, which may hold up to LISTENER_RUN
messages. That consumer keeps every message, in order, once and only once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message as AmqpMessage

from jmspy import AUTO_ACKNOWLEDGE, Message
from jmspy.prefetch import LISTENER_RUN

from .client_support import Clients, clients_fixture, dispositions_for, wait_until, wire_barrier
from .peer import ScriptedPeer

WAIT_S = 30.0


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


class _GatedListener:
    """A MessageListener whose every onMessage call waits until the test lets it return."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self.bodies: list[str | None] = []
        self.returned = 0
        self._allowed = 0
        self._free = False

    def onMessage(self, message: Message) -> None:
        body = message.getBody(str)
        with self._cv:
            self.bodies.append(body)
            call = len(self.bodies)
            self._cv.notify_all()
            # Bounded so that a failing test cannot leave the dispatch thread stuck for good.
            self._cv.wait_for(lambda: self._free or self._allowed >= call, WAIT_S)
            self.returned += 1

    def wait_for_calls(self, count: int) -> None:
        with self._cv:
            entered = self._cv.wait_for(lambda: len(self.bodies) >= count, WAIT_S)
        assert entered, f"onMessage was called {len(self.bodies)} times, expected {count}"

    def allow(self, calls: int) -> None:
        """Let the first ``calls`` onMessage calls return."""
        with self._cv:
            self._allowed = calls
            self._cv.notify_all()

    def run_free(self) -> None:
        """Let every call return at once, from now on."""
        with self._cv:
            self._free = True
            self._cv.notify_all()

    def counts(self) -> tuple[int, int]:
        """(calls begun, calls returned)."""
        with self._cv:
            return len(self.bodies), self.returned


@pytest.mark.parametrize(
    "options",
    [{}, {"shared_event_loop_threads": 1}],
    ids=["session-thread", "shared-dispatch-pool"],
)
def test_close_of_another_consumer_waits_for_the_current_message_not_the_run(
    peer: ScriptedPeer, clients: Clients, options: dict[str, Any]
) -> None:
    count = 2 * LISTENER_RUN
    tags = [f"a-{i}".encode() for i in range(count)]
    for i, tag in enumerate(tags):
        peer.enqueue("a", AmqpMessage(body=f"a:{i}"), tag=tag)
    connection = clients.connect(peer, **options)
    session = connection.createSession(AUTO_ACKNOWLEDGE)
    consumer_a = session.createConsumer(session.createQueue("a"))
    consumer_b = session.createConsumer(session.createQueue("b"))
    listener_a = _GatedListener()
    consumer_a.setMessageListener(listener_a)
    consumer_b.setMessageListener(lambda message: None)
    wire_barrier(connection)  # every transfer is buffered: A's first run takes LISTENER_RUN
    assert consumer_a.getPrefetchedCount() == count
    connection.start()
    listener_a.wait_for_calls(1)

    at_close: list[tuple[int, int]] = []
    errors: list[BaseException] = []

    def close_b() -> None:
        try:
            consumer_b.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        at_close.append(listener_a.counts())

    closer = threading.Thread(target=close_b, name="close-b", daemon=True)
    try:
        closer.start()
        wait_until(
            lambda: session._listener_waits.awaited, WAIT_S, "B.close() to wait for the listener"
        )
        # A is still in its first onMessage: B's close waits for that call (JMS 2.0, 4.4.16).
        assert closer.is_alive()
        assert listener_a.counts() == (1, 0)

        listener_a.allow(1)  # A's first call returns; every later one waits
        closer.join(WAIT_S)

        assert not closer.is_alive(), (
            f"B.close() still waits for A's listener run after {listener_a.counts()[0]} "
            f"of its {LISTENER_RUN} messages"
        )
    finally:
        # A failed test must not leave the dispatch thread blocked, nor the close running on
        # into the teardown.
        listener_a.run_free()
        if closer.ident is not None:
            closer.join(WAIT_S)
    assert not errors, errors
    begun, returned = at_close[0]
    # Returned after A's call in progress (the first) did, and before A's run went on: at
    # most the next call had begun by then, the turn A got once the close stopped waiting.
    assert returned >= 1
    assert begun <= 2, at_close

    # A keeps every message, in order, once each, and then closes cleanly.
    listener_a.wait_for_calls(count)
    consumer_a.close()
    assert listener_a.bodies == [f"a:{i}" for i in range(count)]
    assert listener_a.counts() == (count, count)
    wire_barrier(connection)  # every acceptance A sent is recorded
    accepted = {tag: [d.kind for d in dispositions_for(peer, tag)] for tag in tags}
    assert accepted == {tag: ["accepted"] for tag in tags}
    session.close()
