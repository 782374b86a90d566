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
    # RabbitMQ 3.x neither delays nor counts redeliveries (delivery-count is always 0), so the
    # client does both; without an application policy a listener that always raises would get
    # the message forever. jmspy's default: 7 attempts 1000 ms apart (as for ActiveMQ Classic,
    # its OpenWire client's defaults). After the last one, `rejected` would drop the message
    # on a queue without a dead-letter exchange (the default), so jmspy forwards it to the
    # queue DLQ (/queue/DLQ; jmspy.redeliveryPolicy.deadLetterQueue) and accepts the original
    # only once the broker accepted the copy (afterLastAttempt=reject keeps `rejected`, for
    # queues with a dead-letter exchange).
    default_max_delivery_attempts=7,
    default_redelivery_delay=1000,
    dead_letter_queue="DLQ",
    forward_dead_letters=True,
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
    "drops), so after its default 7 attempts 1 s apart jmspy forwards a poison message to "
    "/queue/DLQ itself (afterLastAttempt=reject: rejected); released requeues; the modified "
    "outcome and drain end the session, so jmspy releases or rejects instead and never "
    "drains; delivery-count is always 0 (the client counts); selectors are not applied; no "
    "anonymous relay, dynamic nodes, durable subscriptions or transactions.",
)

# Written from RabbitMQ's documentation and NOT verified on a broker (no 4.x broker can be
# provisioned by the project yet):
# - AMQP 1.0 is a core protocol from 4.0 (release notes 4.0.1, "AMQP 1.0 is now a core
#   protocol"); addresses v2 are /queues/:queue and /exchanges/:exchange/:routing-key
#   (https://www.rabbitmq.com/docs/amqp#addresses).
# - The modified outcome is understood: undeliverable-here=false requeues, =true dead-letters
#   (or drops without a dead-letter target), on classic and quorum queues
#   (https://www.rabbitmq.com/docs/amqp#outcomes); so modified_outcome stays True.
# - drain is answered, with a lone flow frame when the queue is empty
#   (https://www.rabbitmq.com/blog/2024/09/02/amqp-flow-control, "Drain"); so drain stays True.
# - Quorum queues have a default delivery limit of 20 since 4.0: a message redelivered 20 times
#   is dead-lettered or dropped (release notes 4.0.1, "Quorum Queues Now Have a Default
#   Redelivery Limit"); classic queues have none, so the client still counts (client_redelivery).
PROFILE_4X = BrokerProfile(
    name="rabbitmq4",
    title="RabbitMQ 4.x (native AMQP 1.0; profile not verified on a broker)",
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
    modified_outcome=True,
    drain=True,
    notes="Not verified on a broker (from RabbitMQ's documentation). Addresses /queues/:q and "
    "/exchanges/:x/:rk; no delay on publish in open source 4.x; modified requeues "
    "(undeliverable-here dead-letters) and drain is answered; quorum queues stop at 20 "
    "deliveries by default since 4.0 (dead-lettered or dropped).",
)
