"""What a broker profile says, and how jmspy picks one for a connection.

A profile is data (validated by pydantic) plus the few small hooks every broker needs: how a
JMS destination becomes an AMQP address and how a delivery delay is written. There is no class
hierarchy of connections: the provider asks the chosen profile and does the rest itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from jmspy.redelivery import RedeliveryPolicy

DelayForm = Literal["delivery-time", "scheduled-enqueue-time", "unsupported"]
DeadLetterOutcome = Literal["rejected", "modified-failed-undeliverable", "none"]
PublicationOption = Literal["all", "all_durable", "all_available"]

# The connection capability a broker offers when it honours x-opt-delivery-time (Qpid JMS
# asks for it); the one definition, also imported by jmspy._amqp.provider.
DELAYED_DELIVERY = "DELAYED_DELIVERY"


class BrokerProfile(BaseModel):
    """One broker's AMQP 1.0 behaviour, as jmspy needs to know it."""

    model_config = ConfigDict(frozen=True)

    name: str
    title: str
    # Values of the open frame's `product` property that identify this broker.
    products: tuple[str, ...] = ()
    # Connection capabilities this broker is documented to offer.
    expected_capabilities: frozenset[str] = frozenset()
    # How a delivery delay is expressed: Qpid JMS's x-opt-delivery-time annotation (absolute
    # ms, long), Service Bus's x-opt-scheduled-enqueue-time (timestamp), or not at all.
    delay_form: DelayForm = "delivery-time"
    # Whether delayed delivery can be relied on even when the capability is not offered (some
    # brokers honour the annotation without advertising it), or never (the profile knows better
    # than the capability list).
    delay_supported: bool | None = None
    # Whether the broker orders a queue's backlog by priority itself.
    orders_by_priority: bool = False
    # Whether the broker filters by JMS selector (source filter).
    filters_selectors: bool = True
    transactions: bool = True
    message_annotations: bool = True
    # The disposition that sends a message to the dead-letter destination.
    dead_letter_outcome: DeadLetterOutcome = "rejected"
    # Whether the broker itself delays redelivery (address settings); otherwise the client does.
    broker_redelivery_delay: bool = False
    # Whether failed deliveries are redelivered by the client itself (held for the policy's
    # delay, counted locally) because the broker neither delays nor reliably counts them.
    client_redelivery: bool = False
    # Where the broker puts no limit (and no delay) on redelivering to AMQP consumers, the
    # client policy jmspy applies when the application sets none, so that a message that
    # always fails cannot loop: at most this many delivery attempts (first included), this
    # many ms between them, then the dead-letter outcome. None: the broker limits itself.
    default_max_delivery_attempts: int | None = None
    default_redelivery_delay: int = 0
    # Where the broker keeps dead letters (a queue name), when it is one fixed queue.
    dead_letter_queue: str | None = None
    # Whether jmspy itself forwards a message past its last attempt to ``dead_letter_queue``
    # (then accepts the original) because the broker's dead-letter outcome may drop it.
    forward_dead_letters: bool = False
    # Whether the broker understands the modified outcome. RabbitMQ 3.x ends the session on
    # one, so failed deliveries are released and undeliverable ones rejected instead.
    modified_outcome: bool = True
    # Whether the broker answers a drain (receiveNoWait and close use one). RabbitMQ 3.x's
    # classic queues crash the session on drain=true.
    drain: bool = True
    # How long (ms) a consumer link with credit left and unacknowledged messages held may go
    # without a transfer, nothing buffered locally, before jmspy drains it to wake the
    # broker's dispatch (jmspy/_amqp/dispatch_probe.py); 0: never (dispatch follows credit).
    stalled_dispatch_probe_ms: int = 0
    # The application property by which the broker drops a message it already has (Artemis:
    # ``_AMQ_DUPL_ID``); jmspy stamps it so a send resent after a reconnect is not a duplicate.
    duplicate_id_property: str | None = None
    anonymous_relay: bool = True
    temporary_destinations: bool = True
    durable_subscriptions: bool = True
    browse: bool = True
    # Address prefixes (the same form on links and in `to`/`reply-to`).
    queue_prefix: str = ""
    topic_prefix: str = ""
    # Rule DD-6 defaults: a topic's delivery option for persistent / non-persistent messages.
    publication_defaults: Mapping[str, PublicationOption | None] = {
        "persistent": None,
        "non_persistent": None,
    }
    notes: str = ""

    def supports_delayed_delivery(
        self, offered: Iterable[str], link_capabilities: Iterable[str] | None = None
    ) -> bool | None:
        """DD-1, the one place it is decided: the profile's word where it has one, else the
        connection's offered capabilities, else the target capabilities of the sender link
        (None when no link is given: known only once one is attached)."""
        if self.delay_form == "unsupported":
            return False
        if self.delay_supported is not None:
            return self.delay_supported
        if DELAYED_DELIVERY in set(offered):
            return True
        if link_capabilities is None:
            return None
        return DELAYED_DELIVERY in set(link_capabilities)

    def bounded_policy(self, policy: RedeliveryPolicy) -> RedeliveryPolicy:
        """``policy`` with this broker's default attempt limit and delay where the application
        set none and the broker applies none of its own (ActiveMQ Classic redelivers to an
        AMQP consumer at once and forever): a message that always fails then ends in the
        dead-letter outcome instead of looping. An explicit -1 (unlimited) is the
        application's choice and stays."""
        attempts = self.default_max_delivery_attempts
        if attempts is None or policy.max_delivery_attempts is not None:
            return policy
        values: dict[str, Any] = {"max_delivery_attempts": attempts}
        if "redelivery_delay" not in policy.model_fields_set:
            values["redelivery_delay"] = self.default_redelivery_delay
        return policy.model_copy(update=values)

    def describe(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
