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
        # Unshared durable subscriptions with their one consumer open here.
        self._exclusive: set[str] = set()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Entries kept: one per subscription with a consumer open here."""
        with self._lock:
            return len(self._shared) + len(self._exclusive)

    def link_name(
        self, name: str, durable: bool, shared: bool, global_allowed: bool
    ) -> tuple[str, bool]:
        """Link name and 'global' flag for a subscription consumer about to be made;
        ``global_allowed``: the connection has no fixed client ID.

        A shared subscription's links are numbered in the order they are made here, and the
        numbers are not reused while one of its consumers is open; once the last one closes
        (:meth:`closed`) its next link is the first again, as in Qpid JMS.

        JMSException when an unshared durable subscription of that name has its consumer here
        already, or an unshared one is asked for while a shared durable one of that name is
        active here."""
        if "|" in name:
            raise JMSException(f"subscription name {name!r} must not contain '|'")
        global_ = shared and global_allowed
        key = _key(durable, name)
        with self._lock:
            if durable:
                # Refused here, as Qpid JMS's AmqpConsumerBuilder refuses them: the attach would
                # reuse a live link's name on this connection, which the broker never answers
                # (the call waited out jms.requestTimeout), and an unshared durable
                # subscription has one consumer at a time (JMS 2.0 section 8.3.3).
                if name in self._exclusive:
                    raise JMSException(
                        f"A non-shared durable subscription is already active with name {name!r}"
                    )
                if not shared and key in self._shared:
                    raise JMSException(
                        f"A shared durable subscription is already active with name {name!r}"
                    )
            if not shared:
                self._exclusive.add(name)
                return name, False
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
        """A consumer of the subscription ``name`` is being made: nothing to do, as
        :meth:`link_name` counted it already (its reservation, Qpid JMS's
        ``reserveNextSubscriptionLinkName``)."""

    def active(self, name: str) -> int:
        """Consumers open here on the durable subscription ``name``; a shared non-durable one
        of the same name is another subscription (JMS 2.0 section 8.3.2), which
        ``unsubscribe`` does not touch (Qpid JMS's ``isActiveDurableSub``)."""
        with self._lock:
            links = self._shared.get(_key(True, name))
            return (name in self._exclusive) + (links.open if links is not None else 0)

    def closed(self, subscription: Any) -> None:
        """A consumer closed (or failed to open); ``subscription`` is its Subscription, or
        None."""
        if subscription is None:
            return
        with self._lock:
            if not subscription.shared:
                self._exclusive.discard(subscription.name)
                return
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
