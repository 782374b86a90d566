"""Event-loop sends that find no free in-flight slot (jms.maxAsyncSendsInFlight) on their link.

A blocking send waits for a slot on its caller's thread; on an event loop that wait would stall
every task for up to jms.sendTimeout. Such a send waits on a control thread instead, behind the
sends of its link that waited before it: the sends of one producer reach the link in the order
``send()`` was called, as the blocking API's do. The wait ends at jms.sendTimeout with the
exception the blocking send raises (the message was not sent).

A send that finds a slot free, and no earlier send of its link waiting, goes to the link at
once on the event loop: JMS lets one thread at a time use a session, so nothing else takes the
slot between the look and the send.
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import JMSException, TransactionRolledBackException
from ._control_threads import ControlThreads

if TYPE_CHECKING:
    from .._amqp.sender import AmqpSender

__all__ = ["SlotWait", "SlotWaits"]

# What became of a send that waits for a slot.
WAITING = 0
HANDED = 1  # given to its link (queued there for credit, or written)
WITHDRAWN = 2  # never given to its link: its wait ended (timeout, connection closed)
FAILED = 3  # the link refused it; the completion reports why


class SlotWait:
    """One send waiting for a slot: ``send`` gives it to the link (a slot being free then)."""

    __slots__ = ("completion", "deadline", "send", "state", "transactional")

    def __init__(
        self, send: Callable[[], None], completion: Any, deadline: float, transactional: bool
    ) -> None:
        self.send = send
        self.completion = completion
        self.deadline = deadline
        self.transactional = transactional
        self.state = WAITING


class SlotWaits:
    """The sends of one asyncio connection waiting for in-flight slots, a queue per link, each
    served in order by one control-thread job while it has sends."""

    def __init__(
        self,
        threads: ControlThreads,
        post: Callable[..., None],
        send_timeout_ms: int,
    ) -> None:
        self._threads = threads
        self._post = post
        self._timeout_ms = send_timeout_ms
        # Guards the queues and every SlotWait's state: the event loop (new sends, expiry) and
        # the control threads serving the queues both change them.
        self._lock = threading.Lock()
        self._queues: dict[AmqpSender, collections.deque[SlotWait]] = {}
        # Event-loop futures of those waiting for queues to empty (a producer's close).
        self._idle_waiters: list[asyncio.Future[None]] = []

    def start(
        self,
        link: AmqpSender,
        send: Callable[[], None],
        completion: Any,
        transactional: bool,
    ) -> SlotWait | None:
        """Event loop thread: give the send to ``link`` now when a slot is free and no earlier
        send of the link waits (None), else queue it behind them (its SlotWait)."""
        with self._lock:
            queue = self._queues.get(link)
            if queue is None and _slot_free(link):
                wait = None
            else:
                deadline = time.monotonic() + self._timeout_ms / 1000.0
                wait = SlotWait(send, completion, deadline, transactional)
                serve = queue is None
                if queue is None:
                    queue = self._queues[link] = collections.deque()
                queue.append(wait)
        if wait is None:
            send()
            return None
        if serve:
            self._threads.submit(self._serve, link, queue)
        return wait

    def _serve(self, link: AmqpSender, queue: collections.deque[SlotWait]) -> None:
        """Control thread: give the link's waiting sends to it in order, each when a slot is
        free, until none waits."""
        # Reach-in kept: the link's in-flight slots are what these sends wait for.
        slots = link._in_flight
        while True:
            with self._lock:
                if not queue:
                    del self._queues[link]
                    break
                wait = queue[0]
            got = wait.state == WAITING and slots.acquire(
                timeout=max(0.0, wait.deadline - time.monotonic())
            )
            error: BaseException | None = None
            with self._lock:
                queue.popleft()
                if got:
                    # Handed back for link.send to take at once: no other thread sends on
                    # this link while its queue is not empty (the event loop queues behind).
                    slots.release()
                if wait.state != WAITING:
                    continue  # withdrawn meanwhile; its outcome was reported then
                if got:
                    # Under the lock: an expiry sees the send either waiting here or given to
                    # the link (where it can withdraw it), never in between.
                    wait.state = HANDED
                    try:
                        wait.send()
                    except BaseException as exc:  # noqa: BLE001 - reported as the send's outcome
                        wait.state = FAILED
                        error = exc
                else:
                    wait.state = WITHDRAWN
                    error = link.slot_timeout(self._timeout_ms)
            if error is not None:
                if wait.state == WITHDRAWN:
                    _fail_transaction(link, wait)
                wait.completion.fail(error)
        self._post(self._wake_idle_waiters)

    def expire(self, link: AmqpSender, wait: SlotWait) -> JMSException | None:
        """Event loop thread: the send's jms.sendTimeout passed. One still waiting for a slot
        is withdrawn (not sent) and its error returned; None when it left the queue: given to
        the link (entirely: that happens under the lock), or FAILED with its own error."""
        with self._lock:
            if wait.state != WAITING:
                return None
            wait.state = WITHDRAWN
        _fail_transaction(link, wait)
        return link.slot_timeout(self._timeout_ms)

    def withdraw_all(self) -> list[SlotWait]:
        """The connection is closed: no waiting send goes to its link any more. Returns the
        withdrawn ones, for their outcome."""
        withdrawn: list[SlotWait] = []
        with self._lock:
            for queue in self._queues.values():
                for wait in queue:
                    if wait.state == WAITING:
                        wait.state = WITHDRAWN
                        withdrawn.append(wait)
        return withdrawn

    async def idle(self, links: list[AmqpSender]) -> None:
        """Event loop thread: until no send of ``links`` waits for a slot (each wait ends by
        its jms.sendTimeout)."""
        loop = asyncio.get_running_loop()
        while True:
            with self._lock:
                if not any(link in self._queues for link in links):
                    return
            waiter: asyncio.Future[None] = loop.create_future()
            self._idle_waiters.append(waiter)
            await waiter

    def _wake_idle_waiters(self) -> None:
        waiters, self._idle_waiters = self._idle_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)


def _slot_free(link: AmqpSender) -> bool:
    # Reach-in kept: a look at the link's in-flight slots, taking none.
    slots = link._in_flight
    if slots.acquire(blocking=False):
        slots.release()
        return True
    return False


def _fail_transaction(link: AmqpSender, wait: SlotWait) -> None:
    """A transactional send withdrawn before it reached its link fails its transaction, as
    one withdrawn from the link does: a commit must not go ahead without it."""
    handler = link.txn_failure_handler
    if wait.transactional and handler is not None:
        handler(
            TransactionRolledBackException(
                f"a transactional send to {link.spec.address!r} got no in-flight slot within "
                "jms.sendTimeout and was withdrawn; the transaction will roll back"
            )
        )
