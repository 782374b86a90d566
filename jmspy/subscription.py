"""A named topic subscription as the consumer's link carries it (Qpid JMS's naming and
capabilities, so Java and Python consumers share one subscription queue on the broker)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Subscription"]


@dataclass(frozen=True)
class Subscription:
    """A named topic subscription: durable or not, shared or not, global without a client id."""

    name: str
    link_name: str
    durable: bool
    shared: bool
    global_: bool

    def capabilities(self, kind: str) -> tuple[str, ...]:
        caps = [kind]
        if self.shared:
            caps.append("shared")
        if self.global_:
            caps.append("global")
        return tuple(caps)
