"""The AMQP link a MessageConsumer receives on: its terminus, credit window and filters.

What a consumer's options mean on the wire, decided once before the link is attached: the
link's name and capabilities (Qpid JMS's, so a Java and a Python consumer share queues and
subscriptions), its prefetch window, whether the broker or the client evaluates the selector,
and whether the broker settles each message as it sends it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._amqp.provider import LinkSpec, link_profile
from .destination import Destination, Topic
from .errors import JMSException
from .selector import Selector, parse_selector

if TYPE_CHECKING:
    from ._ports import SessionPort
    from .subscription import Subscription

__all__ = ["ConsumerLink", "plan_consumer_link"]


@dataclass(frozen=True)
class ConsumerLink:
    """A consumer's link as it will be attached."""

    spec: LinkSpec
    #: The credit window (jms.prefetchPolicy for the destination's kind).
    prefetch: int
    #: The selector the client evaluates (brokers that cannot filter), else None.
    client_filter: Selector | None
    #: The broker settles each message as it sends it (rules JMS-68, WM-17).
    presettled: bool


def plan_consumer_link(
    port: SessionPort,
    destination: Destination,
    selector: str | None,
    no_local: bool,
    consumer_id: str,
    subscription: Subscription | None,
) -> ConsumerLink:
    """The link for a consumer of ``destination``; raises JMSException where the broker
    cannot give what the consumer asks for."""
    options = port.connection.options
    kind = "topic" if isinstance(destination, Topic) else "queue"
    if subscription is not None and subscription.durable:
        kind = "durable"
    wire = port.connection.wire
    adapter = wire.adapter
    address = wire.address(destination)
    # Brokers that cannot filter (RabbitMQ, Service Bus, IBM MQ over AMQP): the client
    # evaluates the selector for topic subscriptions. A queue cannot be filtered by a
    # client without taking messages away from other consumers, so that is refused.
    client_filter = None
    if selector is not None and not adapter.filters_selectors:
        if not destination.is_topic:
            raise JMSException(
                f"the broker ({adapter.title}) cannot filter by message selector and a "
                f"queue consumer cannot filter on its own without taking messages away "
                f"from other consumers: selector {selector!r} on {destination} refused"
            )
        client_filter = parse_selector(selector)
        selector = None
    presettled = options.presettles_consumer(port.mode, destination.is_topic)
    if subscription is None:
        spec = LinkSpec(
            name=f"jmspy:receiver:{consumer_id}:{address}",
            address=address,
            capabilities=(destination.kind,),
            selector=selector,
            no_local=no_local,
            presettled=presettled,
        )
    else:
        # Subscription links follow Qpid JMS's names and capabilities so a Java and a
        # Python consumer share one subscription queue on the broker.
        spec = LinkSpec(
            name=subscription.link_name,
            address=address,
            capabilities=subscription.capabilities(destination.kind),
            selector=selector,
            no_local=no_local,
            durable=subscription.durable,
            distribution_copy=subscription.durable,
            presettled=presettled,
        )
    spec.extra.update(link_profile(adapter))
    return ConsumerLink(spec, options.prefetch_for(kind), client_filter, presettled)
