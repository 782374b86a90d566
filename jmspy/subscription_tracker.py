"""The subscriptions a connection has consumers on, and the link names of its shared ones, as
Qpid JMS's ``AmqpSubscriptionTracker`` keeps them, so Java and Python consumers of one
subscription share the broker's queue."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from .errors import JMSException

__all__ = ["SubscriptionTracker"]


@dataclass(slots=True)
class _SharedLinks:
    """One shared subscription's links on this connection: how many were named (the number
    in the last name) and how many are still open."""

    named: int = 0
    open: int = 0


class SubscriptionTracker:
    """Per connection: consumers open per subscription name, and the links of each shared
    subscription, forgotten when its last consumer here closes (a connection that lives for
    months keeps nothing of the subscriptions it no longer consumes)."""

    def __init__(self) -> None:
        # Shared subscriptions with a consumer here, per (durable|volatile, name).
        self._shared: dict[tuple[str, str], _SharedLinks] = {}
        self._active: dict[str, int] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Entries kept: one per subscription with a consumer open here, one more per shared
        one (its links)."""
        with self._lock:
            return len(self._shared) + len(self._active)

    def link_name(
        self, name: str, durable: bool, shared: bool, global_allowed: bool
    ) -> tuple[str, bool]:
        """Link name and 'global' flag for a subscription consumer about to be made;
        ``global_allowed``: the connection has no fixed client ID.

        A shared subscription's links are numbered in the order they are made here, and the
        numbers are not reused while one of its consumers is open; once the last one closes
        (:meth:`closed`) its next link is the first again, as in Qpid JMS."""
        if "|" in name:
            raise JMSException(f"subscription name {name!r} must not contain '|'")
        global_ = shared and global_allowed
        if not shared:
            return name, False
        key = _key(durable, name)
        with self._lock:
            links = self._shared.setdefault(key, _SharedLinks())
            links.named += 1
            links.open += 1
            count = links.named
        if durable:
            if global_:
                return (f"{name}|global" if count == 1 else f"{name}|global{count}"), True
            return (name if count == 1 else f"{name}|{count}"), False
        prefix = "global-volatile" if global_ else "volatile"
        return f"{name}|{prefix}{count}", global_

    def opened(self, name: str) -> None:
        with self._lock:
            self._active[name] = self._active.get(name, 0) + 1

    def active(self, name: str) -> int:
        """Consumers open here on the subscription ``name``."""
        with self._lock:
            return self._active.get(name, 0)

    def closed(self, subscription: Any) -> None:
        """A consumer closed (or failed to open); ``subscription`` is its Subscription, or
        None."""
        if subscription is None:
            return
        with self._lock:
            left = self._active.get(subscription.name, 0) - 1
            if left <= 0:
                self._active.pop(subscription.name, None)
            else:
                self._active[subscription.name] = left
            if subscription.shared:
                key = _key(subscription.durable, subscription.name)
                links = self._shared.get(key)
                if links is not None:
                    links.open -= 1
                    if links.open <= 0:
                        # Its last link here closed: forgotten, as Qpid JMS forgets it.
                        del self._shared[key]


def _key(durable: bool, name: str) -> tuple[str, str]:
    # Durable and volatile shared subscriptions of one name are numbered apart (Qpid JMS).
    return ("durable" if durable else "volatile", name)
