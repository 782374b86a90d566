"""RabbitMQ: 3.x with the rabbitmq_amqp1_0 plugin, and 4.x native AMQP 1.0."""

from .base import BrokerProfile

PROFILE = BrokerProfile(
    name="rabbitmq",
    title="RabbitMQ 3.x (rabbitmq_amqp1_0 plugin)",
    products=("RabbitMQ",),
    expected_capabilities=frozenset(),
    delay_form="unsupported",
    delay_supported=False,
    orders_by_priority=True,
    filters_selectors=False,
    transactions=False,
    dead_letter_outcome="rejected",
    broker_redelivery_delay=False,
    client_redelivery=True,
    queue_prefix="/queue/",
    topic_prefix="/topic/",
    notes="No delayed delivery; priority only on queues declared with x-max-priority; "
    "header.ttl becomes the 0-9-1 expiration; rejected dead-letters to the queue's "
    "dead-letter exchange (or drops); delivery-count is not maintained by 3.x.",
)

PROFILE_4X = BrokerProfile(
    name="rabbitmq4",
    title="RabbitMQ 4.x (native AMQP 1.0)",
    products=(),
    expected_capabilities=frozenset({"ANONYMOUS-RELAY", "LINK_PAIR_V1_0"}),
    delay_form="unsupported",
    delay_supported=False,
    orders_by_priority=True,
    filters_selectors=False,
    transactions=False,
    dead_letter_outcome="rejected",
    broker_redelivery_delay=False,
    client_redelivery=True,
    queue_prefix="/queues/",
    topic_prefix="/exchanges/amq.topic/",
    notes="Addresses /queues/:q and /exchanges/:x/:rk; no delay on publish in open source 4.x; "
    "delivery-count grows on rejected and modified(delivery-failed).",
)
