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
    modified_outcome=False,
    drain=False,
    anonymous_relay=False,
    temporary_destinations=False,
    durable_subscriptions=False,
    browse=False,
    notes="Offers no capabilities; no delayed delivery (x-opt-delivery-time is ignored); "
    "priority only on queues declared with x-max-priority (reach them as /amq/queue/NAME); "
    "header.ttl is honoured; rejected dead-letters to the queue's dead-letter exchange (or "
    "drops); released requeues; the modified outcome and drain end the session, so jmspy "
    "releases or rejects instead and never drains; delivery-count is always 0 (the client "
    "counts); selectors are not applied; no anonymous relay, dynamic nodes, durable "
    "subscriptions or transactions.",
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
