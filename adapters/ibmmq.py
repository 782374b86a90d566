"""IBM MQ AMQP channels."""

from .base import BrokerProfile

PROFILE = BrokerProfile(
    name="ibmmq",
    title="IBM MQ (AMQP channel)",
    products=("IBM MQ", "IBM MQ Light", "MQ Light"),
    delay_form="unsupported",
    delay_supported=False,
    orders_by_priority=True,
    filters_selectors=False,
    transactions=False,
    message_annotations=False,
    dead_letter_outcome="rejected",
    broker_redelivery_delay=False,
    publication_defaults={"persistent": "all_durable", "non_persistent": "all_available"},
    notes="No message annotations (a message carrying any is rejected), no transactions, no "
    "delivery delay over AMQP (MQ's delay is a JMS-client feature); IBM MQ's topic defaults "
    "PMSGDLV=ALLDUR and NPMSGDLV=ALLAVAIL apply to rule DD-6.",
)
