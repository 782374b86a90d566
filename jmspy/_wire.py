"""The wire questions of one connection, answered in one place.

Qpid JMS keeps these answers in its AMQP provider (``AmqpProvider`` / ``AmqpConnection``): the
JMS objects above never compute an address, pick a decoder or decide whether a delivery delay
can be honoured themselves. Here one :class:`Wire` per connection is made when the AMQP
connection opens (after the broker profile is chosen) and every producer, consumer and browser
of that connection asks it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._amqp.codec import decode_message, node_address
from ._amqp.redact import peer_text
from .message import DeserializationPolicy, Message

if TYPE_CHECKING:
    from ._amqp.provider import AmqpSender
    from ._provider import Provider
    from .adapters import BrokerProfile
    from .destination import Destination
    from .options import ConnectionOptions


def _names(csv: str) -> list[str]:
    return [x.strip() for x in csv.split(",") if x.strip()]


class Wire:
    """Addresses, the message decoder and delayed-delivery support for one connection."""

    def __init__(self, amqp: Provider, adapter: BrokerProfile, options: ConnectionOptions) -> None:
        # The AMQP connection is kept, not a copy of what its peer said: after a failover
        # reconnect the open frame (capabilities, properties) is the new server's.
        self._amqp = amqp
        self.adapter = adapter
        self.deserialization_policy = DeserializationPolicy(
            allow_list=_names(options.deserialization_allow_list),
            deny_list=_names(options.deserialization_deny_list),
        )

    # ---- what the peer said about itself -------------------------------------------------

    def remote_properties(self) -> dict[str, Any]:
        return self._amqp.remote_properties

    def offered_capabilities(self) -> frozenset[str]:
        return frozenset(self._amqp.remote_offered_capabilities)

    def broker_name(self) -> str:
        """How error messages name the broker: its product and the adapter in use."""
        # The broker's own text, escaped: it goes into exception messages and log lines.
        product = peer_text(self.remote_properties().get("product") or "unknown product")
        return f"{product}, adapter {self.adapter.name}"

    # ---- addresses and decoding ----------------------------------------------------------

    def address(self, destination: Destination) -> str:
        """The node address of a destination on this broker (the adapter's prefixes)."""
        return node_address(destination, self.adapter.queue_prefix, self.adapter.topic_prefix)

    def decoder(self, destination: Destination) -> Callable[[bytes | bytearray], Message]:
        """The decoder for messages received from ``destination`` on this connection."""
        policy = self.deserialization_policy
        queue_prefix = self.adapter.queue_prefix
        topic_prefix = self.adapter.topic_prefix

        # The consumer's received destinations, by address and type annotation.
        destinations: dict[tuple[str, int], Destination | None] = {}

        def decode(payload: bytes | bytearray) -> Message:
            return decode_message(
                payload,
                destination,
                deserialization_policy=policy,
                queue_prefix=queue_prefix,
                topic_prefix=topic_prefix,
                destinations=destinations,
            )

        return decode

    # ---- delayed delivery (DD-1) ---------------------------------------------------------

    def delay_supported(self, link: AmqpSender | None = None) -> bool | None:
        """Whether a delivery delay is honoured on ``link`` (None: not known before a link to
        the destination is attached). The decision itself is the broker profile's
        (:meth:`BrokerProfile.supports_delayed_delivery`)."""
        supported: bool | None = self.adapter.supports_delayed_delivery(
            self._amqp.remote_offered_capabilities,
            link.target_capabilities if link is not None else None,
        )
        return supported
