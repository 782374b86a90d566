"""Any AMQP 1.0 broker: behaviour decided by the capabilities it offers."""

from .base import BrokerProfile

PROFILE = BrokerProfile(
    name="generic",
    title="Generic AMQP 1.0 broker",
    delay_form="delivery-time",
    delay_supported=None,
    orders_by_priority=False,
    filters_selectors=True,
    transactions=True,
    dead_letter_outcome="rejected",
    broker_redelivery_delay=False,
    notes="Delayed delivery is used only when the broker offers DELAYED_DELIVERY on the "
    "connection or on the producer's link target.",
)
