"""Apache Qpid Broker-J 7.0+.

Measured against Broker-J 9.2.1 provisioned by ``jmspy-broker start qpid-broker-j``
(jmspy.conformance.brokers.qpid_broker_j: auto-created durable queues with
holdOnPublishEnabled, maximumDeliveryAttempts 5 and the alternate binding DLQ); the broker
tests in tests/broker/test_qpid_broker_j.py re-check the facts marked *.
"""

from .base import BrokerProfile

#: The client's default attempt limit on Broker-J (attempts including the first) and the delay
#: before each redelivery, used while the application configures no redelivery policy of its
#: own: Broker-J redelivers a failed message at once and forever unless the queue has a
#: maximumDeliveryAttempts, so without a client default a listener that always fails spins.
DEFAULT_MAX_DELIVERY_ATTEMPTS = 5
DEFAULT_REDELIVERY_DELAY_MS = 200

PROFILE = BrokerProfile(
    name="qpid_broker_j",
    title="Apache Qpid Broker-J",
    # * The open frame of 9.2.1 says product="Apache Qpid Broker-J Core", version="9.2.1";
    # the older names are kept for 7.x/8.x, which used them.
    products=("Apache Qpid Broker-J Core", "Apache Qpid Broker-J", "qpid-java-broker"),
    # * Offered on the connection: ANONYMOUS-RELAY, SHARED-SUBS, sole-connection-for-container
    # (no DELAYED_DELIVERY there; see delay_form).
    expected_capabilities=frozenset(
        {"ANONYMOUS-RELAY", "SHARED-SUBS", "sole-connection-for-container"}
    ),
    # * DELAYED_DELIVERY is offered per sending link, in the attach's target capabilities
    # (with REJECT_UNROUTABLE); x-opt-delivery-time is honoured by queues with
    # holdOnPublishEnabled=true only. Held messages are released at the virtual host's
    # housekeeping check (virtualhost.housekeepingCheckPeriod, 30 s by default): 8-30 s late
    # measured with the default, under 0.6 s with the provisioned broker's 250 ms.
    delay_form="delivery-time",
    # Priority ordering needs a queue of type "priority"; auto-created queues are standard.
    orders_by_priority=False,
    # * JMS selectors are applied by the broker (apache.org:selector-filter:string).
    filters_selectors=True,
    transactions=True,
    # * rejected and modified(delivery-failed) are both answered by redelivery with the count
    # raised; only the queue's maximumDeliveryAttempts moves a message to its alternate binding
    # (routeToAlternateOrDiscard in Broker-J's ConsumerTarget_1_0). No outcome dead-letters by
    # itself, so after the client's last attempt jmspy settles modified(delivery-failed,
    # undeliverable-here): the broker counts the attempt (which reaches the queue's limit when
    # that is at most the client's, and the message moves to DLQ) and never gives the message
    # to that consumer again, so nothing loops and nothing is lost.
    dead_letter_outcome="modified-failed-undeliverable",
    broker_redelivery_delay=False,
    # * Addresses: a queue by its name (auto-created by the provisioned policy); topics through
    # the amq.topic exchange ("amq.topic/<name>": each consumer gets its own subscription
    # queue). A bare topic name would be auto-created as a queue, and two subscribers would
    # then share its messages.
    topic_prefix="amq.topic/",
    default_max_delivery_attempts=DEFAULT_MAX_DELIVERY_ATTEMPTS,
    default_redelivery_delay=DEFAULT_REDELIVERY_DELAY_MS,
    # The provisioned broker's alternate binding (Broker-J has no default dead-letter queue:
    # each queue names its own alternate binding; a queue without one discards).
    dead_letter_queue="DLQ",
    notes="DELAYED_DELIVERY is offered per sending link (target capabilities), so rule DD-1 "
    "is checked with the link; delays need queues with holdOnPublishEnabled=true and are "
    "released at the housekeeping check (virtualhost.housekeepingCheckPeriod, default 30 s, "
    "so up to that late); priority needs the priority queue type; topics are "
    "amq.topic/<name>; failed deliveries are redelivered by the broker without a limit "
    "unless the queue has maximumDeliveryAttempts (then they move to its alternate binding), "
    "so jmspy's default is 5 attempts 200 ms apart, then "
    "modified(delivery-failed, undeliverable-here).",
)
