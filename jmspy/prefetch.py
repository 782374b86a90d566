"""The consumer's local prefetch buffer in priority order (rule DD-15, "priority" delivery
sequence): what Qpid JMS calls jms.localMessagePriority."""

from __future__ import annotations

import collections
from collections.abc import Iterable, Iterator

from ._amqp.provider import InboundDelivery

__all__ = ["PriorityBuffer"]


class PriorityBuffer:
    """The local prefetch buffer in priority order: ten FIFO lanes, highest priority first.

    Offers the subset of ``collections.deque`` the consumer uses."""

    __slots__ = ("_lanes", "_size")

    def __init__(self) -> None:
        self._lanes: list[collections.deque[InboundDelivery]] = [
            collections.deque() for _ in range(10)
        ]
        self._size = 0

    @staticmethod
    def _lane(inbound: InboundDelivery) -> int:
        priority: int = inbound.message.getJMSPriority()
        return 9 - min(9, max(0, priority))

    def append(self, inbound: InboundDelivery) -> None:
        self._lanes[self._lane(inbound)].append(inbound)
        self._size += 1

    def extendleft(self, inbounds: Iterable[InboundDelivery]) -> None:
        for inbound in inbounds:
            self._lanes[self._lane(inbound)].appendleft(inbound)
            self._size += 1

    def popleft(self) -> InboundDelivery:
        for lane in self._lanes:
            if lane:
                self._size -= 1
                return lane.popleft()
        raise IndexError("pop from an empty buffer")

    def clear(self) -> None:
        for lane in self._lanes:
            lane.clear()
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def __bool__(self) -> bool:
        return self._size > 0

    def __iter__(self) -> Iterator[InboundDelivery]:
        for lane in self._lanes:
            yield from lane
