"""ActiveMQ Classic 5.15+ with its AMQP transport."""

from .base import BrokerProfile

PROFILE = BrokerProfile(
    name="activemq",
    title="ActiveMQ Classic 5.15+",
    products=("ActiveMQ",),
    expected_capabilities=frozenset({"ANONYMOUS-RELAY", "DELAYED_DELIVERY"}),
    delay_form="delivery-time",
    orders_by_priority=False,
    filters_selectors=True,
    transactions=True,
    dead_letter_outcome="rejected",
    broker_redelivery_delay=False,
    notes='x-opt-delivery-time is honoured only with schedulerSupport="true" on the broker; '
    'priority ordering only with prioritizedMessages="true" (KahaDB: 3 levels); '
    "modified(delivery-failed) counts a redelivery, rejected is a poison ack (DLQ).",
)
