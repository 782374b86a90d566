"""Apache Qpid Broker-J 7.0+."""

from .base import BrokerProfile

PROFILE = BrokerProfile(
    name="qpid_broker_j",
    title="Apache Qpid Broker-J",
    products=("qpid-java-broker", "Qpid Broker-J"),
    expected_capabilities=frozenset(
        {"ANONYMOUS-RELAY", "SHARED-SUBS", "sole-connection-for-container"}
    ),
    delay_form="delivery-time",
    orders_by_priority=False,
    filters_selectors=True,
    transactions=True,
    dead_letter_outcome="rejected",
    broker_redelivery_delay=False,
    notes="DELAYED_DELIVERY is offered per sending link (target capabilities), so the check for "
    "rule DD-1 happens at send; delays need queues with holdOnPublishEnabled=true; priority "
    "needs the priority queue type; maximumDeliveryAttempts routes to the alternate binding.",
)
