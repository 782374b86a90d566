"""ActiveMQ Classic 5.x with its AMQP transport.

Every fact below was measured against ActiveMQ Classic 5.18.3 as provisioned by
``jmspy-broker start activemq`` (see jmspy.conformance.brokers.activemq for its
configuration) with python-qpid-proton 0.40; tests/broker/test_activemq.py re-checks them.
"""

from .base import BrokerProfile

PROFILE = BrokerProfile(
    name="activemq",
    title="ActiveMQ Classic 5.x",
    # Open frame properties: product="ActiveMQ", version="5.18.3", platform="Java/17...".
    products=("ActiveMQ",),
    # Offered capabilities of the open frame: exactly these two.
    expected_capabilities=frozenset({"ANONYMOUS-RELAY", "DELAYED_DELIVERY"}),
    # x-opt-delivery-time is honoured (with schedulerSupport="true"): never early, up to a few
    # hundred ms late. Two deviations, measured: the scheduler re-stamps the expiration when
    # it releases the message (TTL counted from the release, not the send), and a delayed
    # message sent in a transaction is scheduled at commit (the delay counts from commit).
    delay_form="delivery-time",
    # A queue with prioritizedMessages="true" (the provisioned configuration; off by default)
    # hands out a backlog of priorities 1, 9, 4, 0, 7 as 9, 7, 4, 1, 0.
    orders_by_priority=True,
    # A JMS selector on the source filter is applied by the broker (queues and topics).
    filters_selectors=True,
    transactions=True,
    # rejected: the message goes to the shared dead-letter queue ActiveMQ.DLQ at once.
    dead_letter_outcome="rejected",
    dead_letter_queue="ActiveMQ.DLQ",
    # modified(delivery-failed) is redelivered at once with delivery-count + 1: no redelivery
    # delay and no attempt limit for AMQP consumers (a listener that always raised was
    # redelivered about 1,300 times a second, never dead-lettered). So jmspy applies a client
    # policy when the application sets none: ActiveMQ's own OpenWire client defaults
    # (maximumRedeliveries 6 = 7 attempts, initialRedeliveryDelay 1000 ms), then rejected.
    broker_redelivery_delay=False,
    default_max_delivery_attempts=7,
    default_redelivery_delay=1000,
    # A consumer holding unacknowledged messages (CLIENT_/INDIVIDUAL_ACKNOWLEDGE) stops getting
    # any after some hundreds, credit or not, until something wakes the queue (an
    # acknowledgement, a new message, a drain, its 30 s expiry scan): a CLIENT_ACKNOWLEDGE
    # listener got 1,400 of 5,000 queued messages, then nothing for 27 s. A drain after 500 ms
    # without a transfer wakes it (jmspy/_amqp/dispatch_probe.py).
    stalled_dispatch_probe_ms=500,
    # The open frame announces queue-prefix="queue://" and topic-prefix="topic://"; jmspy
    # applies announced prefixes whatever the profile says (these are the fallback). Without
    # them a topic address is taken for a queue.
    queue_prefix="queue://",
    topic_prefix="topic://",
    notes="Announces queue:// and topic:// prefixes in its open frame; x-opt-delivery-time "
    'only with schedulerSupport="true" (the scheduler re-stamps expiry on release, a delay '
    "sent in a transaction counts from commit); priority ordering only with "
    'prioritizedMessages="true"; no redelivery limit or delay for AMQP consumers (jmspy '
    "applies 7 attempts, 1 s apart, then rejected -> ActiveMQ.DLQ); the broker assigns its own "
    "message id when the client sends none; header.ttl comes back as the remaining time; a "
    "consumer holding some hundreds of unacknowledged messages gets no more until the queue "
    "is woken (jmspy drains its link after 500 ms without a transfer).",
)
