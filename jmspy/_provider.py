"""The provider interface: what the JMS objects may ask of the protocol layer below them.

As in Qpid JMS (``JmsConnection`` -> ``Provider`` -> ``AmqpProvider``), the JMS objects hold a
provider and the handles it returns (sessions, sender and receiver links) and never reach into
how they are made. The one implementation is :class:`jmspy._amqp.provider.AmqpConnection`
(failover included: its Reconnector re-creates every session and link under the same handles,
so the JMS objects see the same provider before and after a reconnect); only
``Connection._ensure_open`` names it. mypy checks that it satisfies these protocols there.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ._amqp.provider import AmqpReceiver, AmqpSender, InboundDelivery, LinkSpec
    from .errors import JMSException
    from .options import Endpoint


class ProviderTransactions(Protocol):
    """A session's transaction coordinator."""

    def declare(self) -> bytes: ...

    def discharge(
        self, txn_id: bytes, fail: bool, epoch: int | None = None, timeout_ms: int | None = None
    ) -> None: ...


class ProviderSession(Protocol):
    """A protocol session: it attaches the sender and receiver links (the handles the
    producers, consumers and browsers hold)."""

    def create_sender(
        self,
        spec: LinkSpec,
        max_in_flight: int,
        *,
        before_attach: Callable[[AmqpSender], None] | None = None,
    ) -> AmqpSender: ...

    def create_receiver(
        self,
        spec: LinkSpec,
        prefetch: int,
        decode: Callable[[bytes | bytearray], Any],
        on_message: Callable[[InboundDelivery], None],
        on_closed: Callable[[JMSException], None],
        *,
        before_attach: Callable[[AmqpReceiver], None] | None = None,
    ) -> AmqpReceiver: ...

    def coordinator(self) -> ProviderTransactions: ...

    def close(self) -> None: ...


class Provider(Protocol):
    """One connection to a broker, as the JMS objects see it."""

    # What the peer said in its open frame (the current server's, after a failover).
    remote_offered_capabilities: set[str]
    remote_properties: dict[str, Any]
    endpoint: Endpoint
    # Failed for good (None while usable) and the reconnect generation (work tagged with an
    # older epoch was lost with an earlier connection).
    failure: JMSException | None
    epoch: int

    @property
    def interrupted(self) -> bool: ...

    def open(self) -> None: ...

    def check_usable(self) -> None: ...

    def create_session(self) -> ProviderSession: ...

    # One jms.closeTimeout shared by every step of a nested close.
    def close_scope(self) -> AbstractContextManager[None]: ...

    def close_remaining_s(self) -> float: ...

    def close(self) -> None: ...
