"""Azure Service Bus (AMQP 1.0 endpoint)."""

from .base import BrokerProfile

PROFILE = BrokerProfile(
    name="servicebus",
    title="Azure Service Bus",
    products=("MSBroker", "Microsoft.ServiceBus"),
    delay_form="scheduled-enqueue-time",
    delay_supported=True,
    orders_by_priority=False,
    filters_selectors=False,
    transactions=True,
    dead_letter_outcome="rejected",
    broker_redelivery_delay=False,
    client_redelivery=True,
    notes="Delay is the x-opt-scheduled-enqueue-time annotation (an AMQP timestamp); "
    "header.priority is ignored; messages move to <entity>/$DeadLetterQueue at the entity's "
    "maximum delivery count; one session per connection.",
)
