"""Settling received deliveries: one delivery with the outcome the JMS layer chose
(:func:`_settle_now`), and the queue of settlements many threads hand to one piece of engine
work (:class:`_EngineBatch`), so that a burst of acknowledgements costs one engine turn."""
# Shares underscore members with the other modules of one provider (see jmspy/_amqp/__init__.py).

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar, cast

from proton import Delivery, Described, ulong

from ..errors import JMSException
from .proton_internals import accept_and_settle
from .terms import ACCEPTED_CODE, TRANSACTIONAL_STATE, InboundDelivery

__all__: list[str] = []

T = TypeVar("T")


def _settle_now(
    inbound: InboundDelivery,
    outcome: str,
    failed: bool,
    undeliverable: bool,
    txn_id: bytes | None = None,
) -> None:
    if inbound.settled:
        return
    inbound.settled = True
    receiver = inbound.receiver
    receiver.open_deliveries.discard(inbound)
    handle = inbound.delivery
    if receiver.failure is not None or inbound.epoch != receiver.connection.epoch:
        # Failed link, or a delivery of a transport failover has replaced: nothing to settle
        # (the broker puts the message back and redelivers it).
        handle.release()
        return
    if outcome == "modified" and not inbound.receiver.modified_outcome:
        # The broker does not know the modified outcome: the nearest it understands.
        outcome = "rejected" if undeliverable else "released"
    if outcome == "accepted" and txn_id is None:
        accept_and_settle(handle)
        return
    delivery = handle.wrap()
    if txn_id is not None and outcome == "accepted":
        # transactional-state(txn-id, accepted): the acknowledgement takes effect at commit.
        delivery.local.data = cast(Any, [txn_id, Described(ulong(ACCEPTED_CODE), [])])
        delivery.update(TRANSACTIONAL_STATE)
    elif outcome == "released":
        delivery.update(Delivery.RELEASED)
    elif outcome == "rejected":
        delivery.update(Delivery.REJECTED)
    else:
        delivery.local.failed = failed
        delivery.local.undeliverable = undeliverable
        delivery.update(Delivery.MODIFIED)
    delivery.settle()
    handle.release()


class _EngineBatch(Generic[T]):
    """Items queued from any thread for one piece of engine work that takes them all: the
    first item since the engine last took the queue submits the work, later ones join it."""

    def __init__(self, settle: Callable[[collections.deque[T]], None]) -> None:
        self._items: collections.deque[T] = collections.deque()
        self._settle = settle
        self._lock = threading.Lock()
        self._submitted = False

    def add(self, items: Iterable[T], submit: Callable[[Callable[[], None]], None]) -> None:
        """Queue ``items``; ``submit`` hands work to the engine thread (the connection's)."""
        self._items.extend(items)
        if self._submitted:
            return
        with self._lock:
            if self._submitted:
                return
            self._submitted = True
        try:
            submit(self._run)
        except JMSException:
            with self._lock:
                self._submitted = False

    def _run(self) -> None:
        with self._lock:
            # Cleared before taking the queue: an item queued from here on submits anew.
            self._submitted = False
        self._settle(self._items)
