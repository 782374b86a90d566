"""Apache Artemis (formerly ActiveMQ Artemis): the reference broker for jmspy's tests."""

from .base import BrokerProfile

PROFILE = BrokerProfile(
    name="artemis",
    title="Apache Artemis",
    products=("apache-activemq-artemis", "apache-artemis"),
    expected_capabilities=frozenset(
        {"sole-connection-for-container", "DELAYED_DELIVERY", "SHARED-SUBS", "ANONYMOUS-RELAY"}
    ),
    delay_form="delivery-time",
    orders_by_priority=True,
    filters_selectors=True,
    transactions=True,
    dead_letter_outcome="rejected",
    broker_redelivery_delay=True,
    # Duplicate detection is on by default for every address (id-cache-size 20000); a
    # duplicate outside a transaction is accepted and not routed.
    duplicate_id_property="_AMQ_DUPL_ID",
    notes="Queues are priority ordered (10 levels, FIFO within one); modified(delivery-failed) "
    "counts an attempt and applies address-setting redelivery delays and max-delivery-attempts; "
    "rejected dead-letters at once; a disconnect does not count as a failed attempt.",
)
