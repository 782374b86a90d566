"""The rule catalogue: every documented restriction and mapping jmspy enforces or checks,
each with a stable id, a title, the wording the errors, tests and conformance reports reuse,
and where the rule comes from. Data only; the checks that enforce the rules are in
:mod:`jmspy.rules`, which also re-exports everything here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .errors import ReasonCode

Level = Literal["client", "wire", "broker"]

IBM_MQ_DELIVERY_DELAY = "IBM MQ documentation: JMS 2.0 delivery delay"
IBM_MQ_DELIVERY_SEQUENCE = "IBM MQ documentation: the MsgDeliverySequence queue attribute"
ZAQAR_DELAYED_QUEUES = "OpenStack Zaqar specification: delayed queues"
JMS_PRIORITY = "JMS 2.0 section 3.4.10 (JMSPriority)"


class Rule(BaseModel):
    """One documented restriction or mapping: the single source of its id and wording."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    text: str
    source: str
    level: Level
    reason: ReasonCode | None = None
    capabilities: tuple[str, ...] = ()


def _rules(*rules: Rule) -> dict[str, Rule]:
    return {rule.id: rule for rule in rules}


RULES: Mapping[str, Rule] = _rules(
    Rule(
        id="DD-1",
        title="Delivery delay needs a broker that supports delayed delivery",
        text="A non-zero delivery delay on a connection whose broker does not support delayed "
        "delivery raises MQRC_FUNCTION_NOT_SUPPORTED, at setDeliveryDelay when that is known "
        "and otherwise at send, before the transfer is written. A delay of 0 is always allowed.",
        source=IBM_MQ_DELIVERY_DELAY,
        level="client",
        reason=ReasonCode.MQRC_FUNCTION_NOT_SUPPORTED,
    ),
    Rule(
        id="DD-2",
        title="Time to live must not be shorter than the delivery delay",
        text="Setting a time to live shorter than a non-zero delivery delay, or a delay longer "
        "than a non-zero time to live, raises MQRC_EXPIRY_ERROR at whichever of setTimeToLive, "
        "setDeliveryDelay or send completes the conflicting pair. Time to live 0 never "
        "conflicts.",
        source=IBM_MQ_DELIVERY_DELAY,
        level="client",
        reason=ReasonCode.MQRC_EXPIRY_ERROR,
    ),
    Rule(
        id="DD-3",
        title="No delivery delay for retained publications",
        text="Sending with a non-zero delivery delay a message whose JMS_IBM_Retain property is "
        "RETAIN_PUBLICATION (1) raises MQRC_OPTIONS_ERROR.",
        source=IBM_MQ_DELIVERY_DELAY,
        level="client",
        reason=ReasonCode.MQRC_OPTIONS_ERROR,
    ),
    Rule(
        id="DD-4",
        title="No delivery delay for grouped messages",
        text="Sending with a non-zero delivery delay a message that carries JMSXGroupID or "
        "JMSXGroupSeq raises MQRC_OPTIONS_ERROR.",
        source=IBM_MQ_DELIVERY_DELAY,
        level="client",
        reason=ReasonCode.MQRC_OPTIONS_ERROR,
    ),
    Rule(
        id="DD-5",
        title="No delivery delay to clustered destinations bound on open or on group",
        text="Sending with a non-zero delivery delay to a destination declared clustered with a "
        "bind option other than not_fixed raises MQRC_OPTIONS_ERROR.",
        source=IBM_MQ_DELIVERY_DELAY,
        level="client",
        reason=ReasonCode.MQRC_OPTIONS_ERROR,
    ),
    Rule(
        id="DD-6",
        title="Delayed publications need topics that deliver to all available subscribers",
        text="Publishing with a non-zero delivery delay is allowed only when the topic's "
        "delivery option for the message's persistence is all_available; otherwise "
        "MQRC_PUBLICATION_FAILURE. The adapter supplies the defaults (IBM MQ's for ibmmq, none "
        "elsewhere).",
        source=IBM_MQ_DELIVERY_DELAY,
        level="client",
        reason=ReasonCode.MQRC_PUBLICATION_FAILURE,
    ),
    Rule(
        id="DD-7",
        title="Delivery delay preserves the expiry interval",
        text="JMSExpiration is the send time plus the time to live (not the delivery time plus "
        "it) and JMSDeliveryTime is the send time plus the delay; both are set on the message by "
        "send. A message whose expiry passes while it is delayed is never delivered.",
        source=IBM_MQ_DELIVERY_DELAY,
        level="broker",
        capabilities=("DELAYED_DELIVERY",),
    ),
    Rule(
        id="DD-8",
        title="Delayed messages sent in a transaction wait for the commit",
        text="A delayed message sent in a transaction is not visible before the commit; its "
        "JMSDeliveryTime still counts from the send call.",
        source=IBM_MQ_DELIVERY_DELAY,
        level="broker",
        capabilities=("DELAYED_DELIVERY", "amqp:local-transactions"),
    ),
    Rule(
        id="DD-9",
        title="A failed delayed send says which destination and why",
        text="A send with a delivery delay that the broker refuses (destination full, not "
        "authorized, not found) raises a JMSException subclass naming the destination and the "
        "reason; nothing is retried silently.",
        source=IBM_MQ_DELIVERY_DELAY,
        level="wire",
    ),
    Rule(
        id="DD-10",
        title="A queue's default delivery delay applies to messages without their own",
        text="A message sent with no delay of its own (producer delay 0) to a destination with "
        "a default delivery delay gets that delay; a producer or per-send delay overrides it.",
        source=ZAQAR_DELAYED_QUEUES,
        level="client",
    ),
    Rule(
        id="DD-11",
        title="Delivery delay must not exceed the configured maximum",
        text="A delivery delay larger than the maximum configured on the factory "
        "(jmspy.maxDeliveryDelay) or on the destination raises MQRC_OPTIONS_ERROR at the setter "
        "or send that introduces it. Default: no maximum (Zaqar's default maximum is 900 s).",
        source=ZAQAR_DELAYED_QUEUES,
        level="client",
        reason=ReasonCode.MQRC_OPTIONS_ERROR,
    ),
    Rule(
        id="DD-12",
        title="No silent loss: time to live shorter than the effective delay is an error",
        text="A time to live shorter than the effective delay, including a destination's "
        "default delay, raises DD-2's MQRC_EXPIRY_ERROR at send, so a message can never expire "
        "unclaimed while it is delayed.",
        source=ZAQAR_DELAYED_QUEUES,
        level="client",
        reason=ReasonCode.MQRC_EXPIRY_ERROR,
    ),
    Rule(
        id="DD-13",
        title="Delay 0 costs nothing",
        text="With a delivery delay of 0 the send path adds no annotation and no measurable work.",
        source=ZAQAR_DELAYED_QUEUES,
        level="wire",
    ),
    Rule(
        id="DD-14",
        title="Priority is 0..9",
        text="Priority must be 0..9 (default 4); anything else raises JMSException at the setter "
        "and at send. JMSPriority maps to header.priority.",
        source=JMS_PRIORITY,
        level="client",
    ),
    Rule(
        id="DD-15",
        title="Delivery sequence: FIFO or priority",
        text="A destination or consumer may choose delivery sequence fifo or priority. With "
        "priority the consumer returns the highest-priority message it holds locally, FIFO "
        "within a priority; with fifo, arrival order.",
        source=IBM_MQ_DELIVERY_SEQUENCE,
        level="client",
    ),
    Rule(
        id="DD-16",
        title="A destination may define the default priority",
        text="A destination may define a default priority used when the producer's priority is "
        "left at its default.",
        source=IBM_MQ_DELIVERY_SEQUENCE,
        level="client",
    ),
)

# ---- the other rule families ---------------------------------------------------------------
#
# Redelivery and dead letters (RD-n), the batch message listener (BL-n), the JMS 2.0 client
# rules jmspy implements (JMS-n, numbered as in the project's JMS checklist of client-side
# restrictions) and the JMS <-> AMQP wire mapping (WM-n). Defined here so the
# conformance suite (jmspy.conformance) and the tests share one id and one wording per rule.
# ``capabilities`` names what a broker must offer for the rule's scenario to be observable
# (the conformance catalogue lists the vocabulary).

ARTEMIS_REDELIVERY = (
    "Apache ActiveMQ Artemis documentation: message redelivery and undelivered messages"
)
JMS_SPEC_36 = "JMS_SPEC-36 (proposed JMS batch message listener)"
README_REDELIVERY = "docs/redelivery.md: Redelivery and dead letters"
README_BATCH = "docs/batch-listener.md: Batch message listener"
AMQP_MAPPING = "AMQP JMS mapping as Qpid JMS implements it"

_MORE_RULES = _rules(
    # -- redelivery and dead letters
    Rule(
        id="RD-1",
        title="A failed delivery is counted and flagged",
        text="When a MessageListener raises in AUTO_ACKNOWLEDGE or DUPS_OK_ACKNOWLEDGE mode the "
        "delivery has failed: the message is delivered again with JMSRedelivered=true and "
        "JMSXDeliveryCount one higher (1 on the first delivery, 2 on the second).",
        source=f"{ARTEMIS_REDELIVERY}; JMS 2.0 section 8.7",
        level="broker",
    ),
    Rule(
        id="RD-2",
        title="Session.recover() redelivers the unacknowledged messages, counted",
        text="In CLIENT_ACKNOWLEDGE mode recover() delivers again, in their original order, "
        "every message delivered and not acknowledged, each with JMSRedelivered=true and "
        "JMSXDeliveryCount incremented; messages not delivered before keep JMSRedelivered=false "
        "and JMSXDeliveryCount 1.",
        source=f"JMS 2.0 section 6.2.10; {README_REDELIVERY}",
        level="client",
    ),
    Rule(
        id="RD-3",
        title="A rolled-back transaction redelivers its messages, counted",
        text="Messages received in a transaction that is rolled back are delivered again, in "
        "order, with JMSRedelivered=true and JMSXDeliveryCount one higher.",
        source=f"{ARTEMIS_REDELIVERY}; {README_REDELIVERY}",
        level="broker",
        capabilities=("amqp:local-transactions",),
    ),
    Rule(
        id="RD-4",
        title="Closing a CLIENT_ACKNOWLEDGE consumer with unacknowledged messages fails them",
        text="Messages delivered to a CLIENT_ACKNOWLEDGE consumer and not acknowledged when it "
        "closes are settled modified(delivery-failed=true): the broker delivers them again with "
        "JMSRedelivered=true and JMSXDeliveryCount 2.",
        source=README_REDELIVERY,
        level="broker",
        capabilities=("broker-redelivery",),
    ),
    Rule(
        id="RD-5",
        title="Redelivery delay formula",
        text="The delay before the n-th redelivery is redelivery_delay x multiplier^(n-1), "
        "varied by +-collision_avoidance_factor x random[0,1) with the sign chosen at random, "
        "and capped at max_redelivery_delay (default redelivery_delay x 10). Artemis's "
        "documented examples give 5000, 10000, 15000 ms and 875, 1375, 975 ms.",
        source=ARTEMIS_REDELIVERY,
        level="client",
    ),
    Rule(
        id="RD-6",
        title="Redelivery policy settings are validated",
        text="A collision avoidance factor outside 0.0..1.0, a negative redelivery delay or max "
        "delivery attempts of 0 (or below -1) raise IllegalArgumentException naming the setting "
        "and the value, from RedeliveryPolicy.create and from the factory's URL options.",
        source=f"{ARTEMIS_REDELIVERY}; {README_REDELIVERY}",
        level="client",
    ),
    Rule(
        id="RD-7",
        title="The client policy's redelivery delay is waited",
        text="With a client redelivery policy (jmspy.redeliveryPolicy.redeliveryDelay and "
        "multiplier) a failed message is delivered again no earlier than the computed delay "
        "after the failure: delay, then delay x multiplier.",
        source=f"{ARTEMIS_REDELIVERY}; {README_REDELIVERY}",
        level="broker",
    ),
    Rule(
        id="RD-8",
        title="Broker redelivery settings: delay, multiplier, maximum, attempt limit",
        text="On a broker that delays redeliveries itself (Artemis address settings "
        "redelivery-delay 400 ms, multiplier 2, max-redelivery-delay 1000 ms, "
        "max-delivery-attempts 4, dead-letter-address DLQ), jmspy reports each failure so the "
        "broker counts it: the gaps between attempts are 400, 800 and 1000 ms, JMSXDeliveryCount "
        "runs 1..4, and after the fourth failure the message is on DLQ.",
        source=ARTEMIS_REDELIVERY,
        level="broker",
        capabilities=("redelivery-address-settings",),
    ),
    Rule(
        id="RD-9",
        title="The client's attempt limit dead-letters the message",
        text="With max_delivery_attempts = n a message is handed to the application at most n "
        "times; after the n-th failure it is settled with the adapter's dead-letter outcome "
        "(rejected), so the broker moves it to its dead-letter destination, where it keeps its "
        "JMSMessageID and carries JMSPY_ORIGINAL_DESTINATION. Where the broker would drop a "
        "rejected message (RabbitMQ 3.x) jmspy forwards a copy to the dead-letter queue itself, "
        "with JMSPY_ORIGINAL_DESTINATION and the old id as JMSPY_ORIGINAL_MESSAGE_ID.",
        source=f"{ARTEMIS_REDELIVERY}; {README_REDELIVERY}",
        level="broker",
        capabilities=("dead-letter-queue",),
    ),
    Rule(
        id="RD-10",
        title="A message over the attempt limit is never handed out",
        text="A message that arrives with a JMSXDeliveryCount above the consumer policy's "
        "max_delivery_attempts (it failed elsewhere before) is dead-lettered on arrival and is "
        "never returned by receive() nor given to a listener.",
        source=f"{ARTEMIS_REDELIVERY}; {README_REDELIVERY}",
        level="client",
        capabilities=("broker-redelivery",),
    ),
    Rule(
        id="RD-11",
        title="Other messages are not held back by a redelivery delay",
        text="While a failed message waits for its redelivery delay, the messages behind it are "
        "delivered; only the failed message is delayed.",
        source=ARTEMIS_REDELIVERY,
        level="broker",
    ),
    Rule(
        id="RD-12",
        title="Broker attempt limit with auto-created dead-letter resources",
        text="With auto-create-dead-letter-resources (Artemis: max-delivery-attempts 3, "
        "dead-letter-address DLA) the message that failed its third attempt is moved to the "
        "auto-created queue DLQ.<address> on DLA, where jmspy reads it by its fully qualified "
        "name with JMSPY_ORIGINAL_DESTINATION = <address>.",
        source=ARTEMIS_REDELIVERY,
        level="broker",
        capabilities=("redelivery-address-settings",),
    ),
    # -- batch message listener
    Rule(
        id="BL-1",
        title="A batch never exceeds batchSize",
        text="onMessages receives lists of 1..batchSize messages; every message arrives exactly "
        "once, in delivery order.",
        source=JMS_SPEC_36,
        level="client",
    ),
    Rule(
        id="BL-2",
        title="A partial batch waits for batchTimeout, a full one does not",
        text="A batch smaller than batchSize is delivered batchTimeout ms after its first "
        "message arrived, not before; a full batch is delivered as soon as it is complete.",
        source=JMS_SPEC_36,
        level="client",
    ),
    Rule(
        id="BL-3",
        title="batchTimeout 0 delivers what is available at once",
        text="With batchTimeout 0 onMessages is called with whatever messages are available, "
        "without waiting to fill the batch.",
        source=README_BATCH,
        level="client",
    ),
    Rule(
        id="BL-4",
        title="The consumer keeps credit for full batches",
        text="Setting a BatchMessageListener grows the consumer's credit window to at least "
        "batchSize, so full batches form even when the prefetch is smaller (prefetch 2, "
        "batchSize 5: a batch of 5).",
        source=README_BATCH,
        level="client",
    ),
    Rule(
        id="BL-5",
        title="Illegal batch arguments and states",
        text="batchSize below 1 or not an integer, and batchTimeout below 0, raise "
        "IllegalArgumentException naming the value; a BatchMessageListener and a MessageListener "
        "on the same consumer, or receive() on a consumer with a BatchMessageListener, raise "
        "IllegalStateException (IllegalStateRuntimeException on JMSConsumer).",
        source=JMS_SPEC_36,
        level="client",
    ),
    Rule(
        id="BL-6",
        title="AUTO_ACKNOWLEDGE: a batch is acknowledged whole or redelivered whole",
        text="After onMessages returns every message of the batch is acknowledged; if it raises, "
        "every message of the batch is a failed delivery and comes again with "
        "JMSRedelivered=true and JMSXDeliveryCount 2.",
        source=JMS_SPEC_36,
        level="client",
    ),
    Rule(
        id="BL-7",
        title="CLIENT_ACKNOWLEDGE: acknowledge() covers everything delivered",
        text="acknowledge() on any message of a batch acknowledges every message delivered to "
        "the session so far; messages not acknowledged come back after the consumer closes.",
        source=JMS_SPEC_36,
        level="client",
    ),
    Rule(
        id="BL-8",
        title="No batch while the connection is stopped",
        text="A BatchMessageListener is not called while the connection is stopped; the batches "
        "come after start().",
        source=README_BATCH,
        level="client",
    ),
    Rule(
        id="BL-9",
        title="close() from inside onMessages",
        text="Closing the consumer from inside onMessages lets the call finish: that batch is "
        "acknowledged, nothing else is delivered, and prefetched messages go back to the "
        "broker for other consumers.",
        source=README_BATCH,
        level="client",
    ),
    Rule(
        id="BL-10",
        title="DUPS_OK_ACKNOWLEDGE acknowledges lazily but surely",
        text="Batches are acknowledged several at a time and at the latest when the consumer "
        "closes; afterwards nothing delivered is left on the queue.",
        source=JMS_SPEC_36,
        level="client",
    ),
    Rule(
        id="BL-11",
        title="SESSION_TRANSACTED: a batch belongs to the transaction",
        text="In a transacted session commit() acknowledges the batch and rollback() makes the "
        "broker deliver it again with JMSRedelivered=true.",
        source=JMS_SPEC_36,
        level="client",
        capabilities=("amqp:local-transactions",),
    ),
    Rule(
        id="BL-12",
        title="Batches run one at a time on the session's dispatch thread",
        text="onMessages calls of one session never overlap and all run on the session's "
        "dispatch thread, not on the application's thread.",
        source=f"{README_BATCH}; JMS 2.0 section 6.2.13",
        level="client",
    ),
    # -- JMS 2.0 client rules (numbers are the checklist's)
    Rule(
        id="JMS-1",
        title="Bad credentials raise JMSSecurityException",
        text="A wrong password raises JMSSecurityException (at the first use of the connection, "
        "or at createConnection when a client id is configured) and "
        "JMSSecurityRuntimeException from createContext; the message never contains the "
        "password.",
        source="JMS 2.0 section 10.3 (checklist 1)",
        level="client",
    ),
    Rule(
        id="JMS-2",
        title="A connection is created stopped",
        text="A new connection delivers nothing, neither to receive() nor to a listener, until "
        "start() is called.",
        source="JMS 2.0 section 6.1.4 (checklist 2)",
        level="client",
    ),
    Rule(
        id="JMS-3",
        title="createContext refuses an invalid session mode",
        text="ConnectionFactory.createContext(sessionMode) with a mode other than 0..3, 101 "
        "(INDIVIDUAL_ACKNOWLEDGE, rule JMS-67), 100 and 257 (the no-acknowledgement modes, rule "
        "JMS-68) raises JMSRuntimeException, as does a mode that is not an int (a bool, a float, "
        "a list).",
        source="JMS 2.0 ConnectionFactory javadoc (checklist 3)",
        level="client",
    ),
    Rule(
        id="JMS-4",
        title="setClientID only right after the connection is created",
        text="setClientID after any other use of the connection raises IllegalStateException; "
        "on a JMSContext, IllegalStateRuntimeException.",
        source="JMS 2.0 section 6.1.2 (checklist 4 and 53)",
        level="client",
    ),
    Rule(
        id="JMS-5",
        title="setClientID when a client id is configured",
        text="setClientID on a connection whose factory configures a client id raises "
        "IllegalStateException.",
        source="JMS 2.0 section 6.1.2 (checklist 5)",
        level="client",
    ),
    Rule(
        id="JMS-6",
        title="Invalid or duplicate client id",
        text="An empty client id raises InvalidClientIDException; so does a client id already "
        "in use by another connection to the broker.",
        source="JMS 2.0 section 6.1.2 (checklist 6)",
        level="broker",
        capabilities=("sole-connection-for-container",),
    ),
    Rule(
        id="JMS-8",
        title="start() and stop() are idempotent; stop() does not stop sending",
        text="start() on a started connection and stop() on a stopped one are ignored; a "
        "stopped connection can still send, and delivers again after start().",
        source="JMS 2.0 section 6.1.5 (checklist 8)",
        level="client",
    ),
    Rule(
        id="JMS-9",
        title="stop() from a listener of its own connection is refused",
        text="Connection.stop() called from a MessageListener of the same connection raises "
        "IllegalStateException.",
        source="JMS 2.0 section 6.1.5 (checklist 9)",
        level="client",
    ),
    Rule(
        id="JMS-10",
        title="close() from a listener of its own connection is refused",
        text="Connection.close() called from a MessageListener of the same connection raises "
        "IllegalStateException.",
        source="JMS 2.0 section 6.1.8 (checklist 10)",
        level="client",
    ),
    Rule(
        id="JMS-11",
        title="close() ends a blocked receive",
        text="Closing the connection while a receive() without timeout is blocked makes that "
        "receive return null.",
        source="JMS 2.0 section 6.1.8 (checklist 11)",
        level="client",
    ),
    Rule(
        id="JMS-12",
        title="Closing does not acknowledge; acknowledge() after close is refused",
        text="Closing a connection does not acknowledge CLIENT_ACKNOWLEDGE messages (they are "
        "delivered again), and acknowledge() on a message whose session is closed raises "
        "IllegalStateException.",
        source="JMS 2.0 section 6.1.8 (checklist 12)",
        level="client",
    ),
    Rule(
        id="JMS-13",
        title="Closed objects refuse use; close() is idempotent",
        text="After close, any use of the connection, its sessions, producers and consumers "
        "raises IllegalStateException; closing again is ignored; message objects stay usable.",
        source="JMS 2.0 section 6.1.8 (checklist 13)",
        level="client",
    ),
    Rule(
        id="JMS-16",
        title="createSession validates the session mode",
        text="createSession with a mode other than 0..3, 101 (JMS-67), 100 and 257 (JMS-68), or "
        "createSession(false, SESSION_TRANSACTED), or a mode that is not an int (a float, a "
        "list), raises JMSException; createSession() is AUTO_ACKNOWLEDGE.",
        source="JMS 2.0 Connection javadoc (checklist 16)",
        level="client",
    ),
    Rule(
        id="JMS-17",
        title="A transacted session reports SESSION_TRANSACTED",
        text="getAcknowledgeMode() of a transacted session returns SESSION_TRANSACTED (0) and "
        "getTransacted() true, whatever acknowledge mode was passed with transacted=true.",
        source="JMS 2.0 Session javadoc (checklist 17)",
        level="client",
        capabilities=("amqp:local-transactions",),
    ),
    Rule(
        id="JMS-18",
        title="commit() and rollback() need a transacted session",
        text="commit() or rollback() on a session that is not transacted raises "
        "IllegalStateException; on a JMSContext, IllegalStateRuntimeException.",
        source="JMS 2.0 section 10.3 (checklist 18 and 54)",
        level="client",
    ),
    Rule(
        id="JMS-19",
        title="recover() on a transacted session is refused",
        text="recover() on a transacted session raises IllegalStateException; on a transacted "
        "JMSContext, IllegalStateRuntimeException.",
        source="JMS 2.0 Session javadoc (checklist 19 and 54)",
        level="client",
        capabilities=("amqp:local-transactions",),
    ),
    Rule(
        id="JMS-20",
        title="Session close: not from its own listener, idempotent, final",
        text="Session.close() from a MessageListener of that session raises "
        "IllegalStateException; closing a closed session is ignored; any other method of a "
        "closed session raises IllegalStateException.",
        source="JMS 2.0 section 6.2.15 (checklist 20)",
        level="client",
    ),
    Rule(
        id="JMS-21",
        title="No synchronous receive on a session with a listener",
        text="receive() on a consumer raises IllegalStateException when any consumer of the "
        "same session has a MessageListener.",
        source="JMS 2.0 section 6.2.5 (checklist 21)",
        level="client",
    ),
    Rule(
        id="JMS-22",
        title="Consumers need a valid destination and selector; producers may be anonymous",
        text="createConsumer(null) raises InvalidDestinationException and a syntactically bad "
        "selector InvalidSelectorException, when the consumer is created; an empty selector "
        "means no selector; createProducer(null) creates an anonymous producer.",
        source="JMS 2.0 section 3.8.1.1 and Session javadoc (checklist 22)",
        level="client",
    ),
    Rule(
        id="JMS-32",
        title="A message may be sent by another session",
        text="A message created by one session can be sent by a producer of another session "
        "(of another connection) and arrives unchanged.",
        source="JMS 2.0 section 6.2.4 (checklist 32)",
        level="client",
    ),
    Rule(
        id="JMS-33",
        title="Producer defaults: PERSISTENT, priority 4, no expiry, no delay",
        text="A new producer has delivery mode PERSISTENT, priority 4, time to live 0 and "
        "delivery delay 0; a message sent with these arrives PERSISTENT with JMSPriority 4 and "
        "JMSExpiration 0.",
        source="JMS 2.0 section 3.4.10 and MessageProducer javadoc (checklist 33)",
        level="client",
    ),
    Rule(
        id="JMS-34",
        title="Invalid delivery mode or priority raises JMSException",
        text="setDeliveryMode(-1), setPriority(-1) and send(..., deliveryMode=-1 or "
        "priority=-1, ...) raise JMSException and send nothing.",
        source="JMS 2.0 MessageProducer javadoc; TCK messageproducertests (checklist 34)",
        level="client",
    ),
    Rule(
        id="JMS-36",
        title="send overloads must match how the producer was created",
        text="send(message) on a producer created without a destination, and send(destination, "
        "message) on a producer created with one, raise UnsupportedOperationException.",
        source="JMS 2.0 MessageProducer javadoc (checklist 36)",
        level="client",
    ),
    Rule(
        id="JMS-37",
        title="An anonymous producer refuses a null destination",
        text="send(null, message) on an anonymous producer raises InvalidDestinationException.",
        source="TCK messageproducertests (checklist 37)",
        level="client",
    ),
    Rule(
        id="JMS-38",
        title="A null message raises MessageFormatException",
        text="send(null) raises MessageFormatException.",
        source="JMS 2.0 MessageProducer javadoc (checklist 38)",
        level="client",
    ),
    Rule(
        id="JMS-39",
        title="An asynchronous send needs a CompletionListener",
        text="send(..., completionListener) with a null listener, or with an object that has no "
        "onCompletion or no onException, raises IllegalArgumentException and sends nothing; so "
        "does JMSProducer.setAsync with such an object (setAsync(null) means synchronous sends).",
        source="JMS 2.0 MessageProducer javadoc (checklist 39)",
        level="client",
    ),
    Rule(
        id="JMS-41",
        title="Disabled message ids and timestamps",
        text="With setDisableMessageID(true) the message is sent without a JMSMessageID (null "
        "at the receiver); with setDisableMessageTimestamp(true) JMSTimestamp is 0.",
        source="JMS 2.0 sections 3.4.3-3.4.4 (checklist 41)",
        level="client",
    ),
    Rule(
        id="JMS-43",
        title="JMSProducer setters chain",
        text="Every JMSProducer setter returns the same JMSProducer.",
        source="JMS 2.0 section 7.10 (checklist 43)",
        level="client",
    ),
    Rule(
        id="JMS-44",
        title="JMSProducer setters refuse invalid priority and delivery mode",
        text="JMSProducer.setPriority(-1) and setDeliveryMode(-1) raise JMSRuntimeException from "
        "the setter itself.",
        source="TCK jmscontexttopictests (checklist 44)",
        level="client",
    ),
    Rule(
        id="JMS-45",
        title="JMSProducer.setProperty validates name and value",
        text="A null or empty property name raises IllegalArgumentException; a value of an "
        "unsupported type raises MessageFormatRuntimeException.",
        source="JMS 2.0 JMSProducer javadoc (checklist 45)",
        level="client",
    ),
    Rule(
        id="JMS-46",
        title="JMSProducer headers override the message's",
        text="JMSCorrelationID, JMSType and JMSReplyTo set on the JMSProducer replace the "
        "values already on the message being sent. A value of the wrong type (a correlation id "
        "or type that is not a str, a reply-to that is not a Destination) is refused when it is "
        "set, on the JMSProducer and on a Message, naming the value.",
        source="JMS 2.0 sections 7.5-7.6 (checklist 46)",
        level="client",
    ),
    Rule(
        id="JMS-47",
        title="JMSProducer.send refuses a null destination",
        text="JMSProducer.send(null, ...), or a destination that is not a Destination (a queue "
        "name as a str), raises InvalidDestinationRuntimeException.",
        source="TCK jmscontextqueuetests (checklist 47)",
        level="client",
    ),
    Rule(
        id="JMS-48",
        title="JMSProducer.send body forms",
        text="send(destination, body) sends a str as a TextMessage, bytes as a BytesMessage, a "
        "dict as a MapMessage, any other object as an ObjectMessage, and None as a message "
        "with an empty body.",
        source="JMS 2.0 JMSProducer javadoc (checklist 48)",
        level="client",
    ),
    Rule(
        id="JMS-52",
        title="JMSContext starts on the first consumer unless autoStart is off",
        text="A JMSContext starts its connection when a consumer is created; after "
        "setAutoStart(false) it stays stopped until start().",
        source="JMS 2.0 section 8.4 (checklist 52)",
        level="client",
    ),
    Rule(
        id="JMS-54",
        title="A closed JMSContext refuses acknowledge()",
        text="acknowledge() on a closed JMSContext raises IllegalStateRuntimeException.",
        source="JMS 2.0 JMSContext javadoc (checklist 54)",
        level="client",
    ),
    Rule(
        id="JMS-59",
        title="receive timeouts",
        text="receive(t) on an empty destination returns null after about t ms, "
        "receiveNoWait() returns null at once, and a message that is there is returned by "
        "either.",
        source="JMS 2.0 MessageConsumer javadoc (checklist 59)",
        level="client",
    ),
    Rule(
        id="JMS-60",
        title="No synchronous receive on a consumer with a listener",
        text="receive() on a consumer that has a MessageListener raises IllegalStateException.",
        source="JMS 2.0 section 6.2.5, Qpid JMS precedent (checklist 60)",
        level="client",
    ),
    Rule(
        id="JMS-61",
        title="setMessageListener(null) removes the listener",
        text="After setMessageListener(null) the listener is not called any more and receive() "
        "works again.",
        source="JMS 2.0 MessageConsumer javadoc (checklist 61)",
        level="client",
    ),
    Rule(
        id="JMS-62",
        title="A consumer may close itself from its own onMessage",
        text="MessageConsumer.close() from the consumer's own onMessage is allowed: onMessage "
        "completes normally and no further message is delivered to it.",
        source="JMS 2.0 section 8.8 (checklist 62)",
        level="client",
    ),
    Rule(
        id="JMS-63",
        title="Listener exceptions: redelivery in AUTO, next message in CLIENT",
        text="A listener that raises in AUTO_ACKNOWLEDGE gets the same message again with "
        "JMSRedelivered=true (without delay unless a redelivery policy sets one; the broker "
        "redelivers it, so messages already prefetched may come first, as with Qpid JMS, where "
        "the spec says immediately); in CLIENT_ACKNOWLEDGE the next message is delivered.",
        source="JMS 2.0 section 8.7 (checklist 63)",
        level="client",
    ),
    Rule(
        id="JMS-64",
        title="receiveBody with the wrong type",
        text="JMSConsumer.receiveBody(c) for a body not assignable to c, or for a plain Message "
        "or a StreamMessage (whose bodies receiveBody cannot return), raises "
        "MessageFormatRuntimeException; in AUTO_ACKNOWLEDGE and DUPS_OK_ACKNOWLEDGE the same "
        "message is returned by the next receive, not counted as a redelivery; in "
        "CLIENT_ACKNOWLEDGE and in a transacted session it counts as received (the next "
        "receive returns the next message).",
        source="JMS 2.0 section 8.6 (checklist 64)",
        level="client",
    ),
    Rule(
        id="JMS-65",
        title="A session's listeners run one at a time",
        text="MessageListeners of different consumers of one session are never called "
        "concurrently.",
        source="JMS 2.0 sections 6.2.13-6.2.14 (checklist 65)",
        level="client",
    ),
    Rule(
        id="JMS-66",
        title="Selector arithmetic uses Java numeric promotion",
        text="In a message selector an int divided by an int is an integer division (n / 4 = 2 "
        "selects n = 8..11), and an operand of a floating-point type makes it a floating-point "
        "one (n / 4.0 = 2 selects 8 only). jmspy's client-side evaluator, used where the broker "
        "cannot filter, does so; where the broker filters, its filter decides, and a broker "
        "that computes otherwise is reported as a deviation.",
        source="JMS 2.0 section 3.8.1.1 (arithmetic operations use Java numeric promotion)",
        level="broker",
        capabilities=("selectors",),
    ),
    Rule(
        id="JMS-67",
        title="INDIVIDUAL_ACKNOWLEDGE: acknowledge() settles that message only",
        text="A session created with mode 101 (INDIVIDUAL_ACKNOWLEDGE, Qpid JMS's extension) "
        "settles only the message acknowledge() is called on; recover() delivers again, marked "
        "redelivered, only the messages not acknowledged; JMSContext.acknowledge() does nothing "
        "in this mode.",
        source="Qpid JMS INDIVIDUAL_ACKNOWLEDGE session mode (JmsSession, JmsAcknowledgeCallback)",
        level="client",
    ),
    Rule(
        id="JMS-68",
        title="NO_ACKNOWLEDGE and ARTEMIS_PRE_ACKNOWLEDGE: consumed as sent",
        text="A session created with mode 257 (NO_ACKNOWLEDGE) or 100 (ARTEMIS_PRE_ACKNOWLEDGE), "
        "Qpid JMS's no-acknowledgement modes, has presettled consumers (rule WM-17): a message "
        "counts as consumed once the broker sends it, so a message a listener fails on is not "
        "delivered again, recover() and acknowledge() do nothing, and prefetched messages not "
        "yet handed over when the consumer or the connection closes are lost (a failover "
        "reconnect keeps them and hands them over).",
        source="Qpid JMS no-acknowledge session modes (JmsSession.isNoAcknowledge, "
        "JmsDefaultPresettlePolicy)",
        level="client",
    ),
    # -- the JMS <-> AMQP wire mapping
    Rule(
        id="WM-1",
        title="Message type annotation",
        text="Every message carries the message annotation x-opt-jms-msg-type (byte): "
        "Message 0, ObjectMessage 1, MapMessage 2, BytesMessage 3, StreamMessage 4, "
        "TextMessage 5.",
        source=f"{AMQP_MAPPING} (AmqpMessageSupport)",
        level="wire",
    ),
    Rule(
        id="WM-2",
        title="JMSDeliveryMode is header.durable",
        text="A PERSISTENT message is sent with header.durable=true; a NON_PERSISTENT one with "
        "durable false (written false, or no header at all) and arrives NON_PERSISTENT.",
        source=f"{AMQP_MAPPING} (AmqpJmsMessageFacade, AmqpHeader)",
        level="wire",
    ),
    Rule(
        id="WM-3",
        title="JMSPriority is header.priority",
        text="Priority p is sent as header.priority p (ubyte); the default 4 may be left out "
        "and reads back as 4.",
        source=f"{AMQP_MAPPING} (AmqpJmsMessageFacade, AmqpHeader)",
        level="wire",
    ),
    Rule(
        id="WM-4",
        title="Time to live is header.ttl",
        text="A time to live t > 0 ms is sent as header.ttl t (uint, ms); with time to live 0 "
        "header.ttl is absent.",
        source=f"{AMQP_MAPPING} (AmqpJmsMessageFacade, AmqpHeader)",
        level="wire",
    ),
    Rule(
        id="WM-5",
        title="JMSExpiration is properties.absolute-expiry-time",
        text="With time to live t > 0, properties.absolute-expiry-time is JMSTimestamp + t (an "
        "AMQP timestamp, ms); with time to live 0 it is absent and JMSExpiration is 0.",
        source=f"{AMQP_MAPPING} (AmqpJmsMessageFacade, AmqpHeader)",
        level="wire",
    ),
    Rule(
        id="WM-6",
        title="JMSTimestamp is properties.creation-time",
        text="properties.creation-time is JMSTimestamp (ms); it is absent when timestamps are "
        "disabled on the producer.",
        source=f"{AMQP_MAPPING} (AmqpJmsMessageFacade, AmqpHeader)",
        level="wire",
    ),
    Rule(
        id="WM-7",
        title="Message id and correlation id forms",
        text="JMSMessageID is sent as the string properties.message-id starting with ID:. A "
        "received uuid, ulong, binary or unprefixed string message-id reads as "
        "ID:AMQP_UUID:<uuid>, ID:AMQP_ULONG:<n>, ID:AMQP_BINARY:<HEX>, ID:AMQP_NO_PREFIX:<s>. A "
        "plain JMSCorrelationID is sent as a string, bytes as binary, and ID:AMQP_UUID:<uuid> "
        "as a uuid.",
        source=f"{AMQP_MAPPING} (AmqpMessageIdHelper)",
        level="wire",
    ),
    Rule(
        id="WM-8",
        title="x-opt-delivery-time only when the delay is above 0",
        text="A send with delivery delay d > 0 carries the message annotation "
        "x-opt-delivery-time (long) = JMSTimestamp + d = JMSDeliveryTime; a send with delay 0 "
        "carries no such annotation and JMSDeliveryTime equals JMSTimestamp.",
        source=f"{AMQP_MAPPING} (AmqpJmsMessageFacade, AmqpHeader); JMS 2.0 section 3.4.13",
        level="wire",
        capabilities=("DELAYED_DELIVERY",),
    ),
    Rule(
        id="WM-9",
        title="Destination type annotations",
        text="JMSDestination is properties.to (the adapter's address form) plus "
        "x-opt-jms-dest (byte: queue 0, topic 1); JMSReplyTo is properties.reply-to plus "
        "x-opt-jms-reply-to.",
        source=f"{AMQP_MAPPING} (AmqpDestinationHelper)",
        level="wire",
    ),
    Rule(
        id="WM-10",
        title="header.delivery-count is JMSRedelivered and JMSXDeliveryCount",
        text="A message with header.delivery-count n arrives with JMSRedelivered = (n > 0) and "
        "JMSXDeliveryCount = n + 1.",
        source=f"{AMQP_MAPPING} (AmqpJmsMessageFacade, AmqpHeader)",
        level="wire",
    ),
    Rule(
        id="WM-11",
        title="Application property types",
        text="boolean, byte, short, int, long, float, double and String properties are sent as "
        "AMQP boolean, byte, short, int, long, float, double and string application "
        "properties, and AMQP-typed properties read back with the matching Java type.",
        source=f"{AMQP_MAPPING}; JMS 2.0 section 3.5.4",
        level="wire",
    ),
    Rule(
        id="WM-12",
        title="Body sections per message type",
        text="TextMessage: amqp-value(string); BytesMessage: data, content-type "
        "application/octet-stream; MapMessage: amqp-value(map); StreamMessage: "
        "amqp-sequence(list); ObjectMessage: data, content-type "
        "application/x-python-serialized-object; Message: no body section.",
        source=f"{AMQP_MAPPING} (AmqpCodec, the facades); docs/porting.md: Deliberate differences",
        level="wire",
    ),
    Rule(
        id="WM-13",
        title="JMSType, JMSCorrelationID and grouping properties",
        text="JMSType is properties.subject, JMSCorrelationID properties.correlation-id, "
        "JMSXGroupID properties.group-id and JMSXGroupSeq properties.group-sequence (uint); "
        "none of them is sent as an application property.",
        source=f"{AMQP_MAPPING} (AmqpJmsMessageFacade, AmqpHeader)",
        level="wire",
    ),
    Rule(
        id="WM-14",
        title="JMSXUserID only with jms.populateJMSXUserID",
        text="properties.user-id is the authenticated user name (UTF-8) when "
        "jms.populateJMSXUserID=true and absent otherwise, whatever the message claimed.",
        source=f"{AMQP_MAPPING} (AmqpJmsMessageFacade, AmqpHeader)",
        level="wire",
    ),
    Rule(
        id="WM-15",
        title="Messages without a type annotation are typed by their body",
        text="A message without x-opt-jms-msg-type becomes a TextMessage for amqp-value(string "
        "or null), a BytesMessage for data or amqp-value(binary) without a textual content type "
        "and for no body without a content type, and an ObjectMessage for amqp-value of any "
        "other value (a map included) or amqp-sequence.",
        source=f"{AMQP_MAPPING} (AmqpCodec and the message facades)",
        level="wire",
    ),
    Rule(
        id="WM-16",
        title="JMS_AMQP_ACK_TYPE chooses the outcome of acknowledge()",
        text="In CLIENT_ACKNOWLEDGE and INDIVIDUAL_ACKNOWLEDGE sessions, acknowledge() on a "
        "message whose JMS_AMQP_ACK_TYPE is 1, 2, 3, 4 or 5 settles with accepted, rejected, "
        "released, modified(delivery-failed) or modified(delivery-failed, undeliverable-here); "
        "without it, accepted. Setting it in another mode, or to another value, raises "
        "JMSException.",
        source=f"{AMQP_MAPPING} (JmsAcknowledgeCallback, AmqpConsumer.handleDisposition)",
        level="wire",
    ),
    Rule(
        id="WM-17",
        title="The presettle policy: settled links, no dispositions",
        text="A consumer of a NO_ACKNOWLEDGE or ARTEMIS_PRE_ACKNOWLEDGE session (JMS-68), or one "
        "the presettle policy names (jms.presettlePolicy.presettleAll, presettleConsumers, "
        "presettleQueueConsumers, presettleTopicConsumers; never in a transacted session), "
        "attaches its receiver link with snd-settle-mode settled and sends no disposition for "
        "what it receives; in AUTO_ACKNOWLEDGE a message its listener fails on is delivered "
        "again by the client, since the broker cannot. A producer the policy names "
        "(presettleAll, presettleProducers, presettleQueueProducers, presettleTopicProducers, "
        "presettleTransactedProducers) attaches settled and sends settled transfers, each send "
        "done once written (an anonymous producer's link stays "
        "unsettled unless every send is presettled, and settles the sends the policy names).",
        source=f"{AMQP_MAPPING} (JmsDefaultPresettlePolicy, AmqpConsumerBuilder, "
        "AmqpProducerBuilder, AmqpFixedProducer)",
        level="wire",
    ),
)

RULES = {**RULES, **_MORE_RULES}

# -- SEC: transport security and the client's own safeguards
SECURITY = "docs/security.md: Security (TLS and SASL)"

_SEC_RULES = _rules(
    Rule(
        id="SEC-1",
        title="A TLS acceptor's certificate verifies for its host",
        text="On an amqps:// target the connection succeeds with certificate and host name "
        "verification on (the target's trust store, or the system CAs), and the same "
        "connection trusting only an unrelated CA fails with JMSSecurityException naming the "
        "host. Not applicable to a target without TLS.",
        source=f"{SECURITY}; Qpid JMS transport.verifyHost",
        level="broker",
    ),
    Rule(
        id="SEC-2",
        title="The broker offers a SASL mechanism the client can use",
        text="The broker's sasl-mechanisms frame lists at least one of SCRAM-SHA-512, "
        "SCRAM-SHA-256, EXTERNAL, SCRAM-SHA-1, PLAIN or ANONYMOUS that the suite's credentials "
        "allow; the offered list is reported (PLAIN offered on a non-TLS port is noted).",
        source=f"{SECURITY}; AMQP 1.0 section 5.3",
        level="broker",
    ),
    Rule(
        id="SEC-3",
        title="The broker honours the client's maximum frame size",
        text="With amqp.maxFrameSize=512 a message of 8 KiB is sent and received intact: the "
        "broker splits its transfers into frames of at most 512 bytes (a larger frame would "
        "end the connection with a framing error).",
        source="AMQP 1.0 section 2.7.1 (open.max-frame-size)",
        level="broker",
    ),
    Rule(
        id="SEC-4",
        title="Credentials stay out of URLs, representations and errors",
        text="A connection URL with user information is refused with IllegalArgumentException; "
        "the password does not appear in the representation of the connection options nor in "
        "the JMSSecurityException of a refused login. An error about a URL shows it without "
        "user information or query, and never repeats an option's value that may be a "
        "password (given twice, or split by an unencoded '&', '/', '?' or '#').",
        source=SECURITY,
        level="client",
    ),
    Rule(
        id="SEC-5",
        title="ObjectMessage bodies load no class unless allowed",
        text="getObject on a received pickled ObjectMessage whose body refers to a class not in "
        "jms.deserializationPolicy.allowList raises MessageFormatException naming the class "
        "and the option; with the class allowed the object loads. A body that names a private "
        "sub-module of an allowed package, names a module or other non-callable object, or "
        "sets attributes on a class or function it names (rather than on an instance) is "
        "refused the same way, before the sub-module is imported or anything is changed.",
        source=f"{SECURITY}, ObjectMessage",
        level="client",
    ),
    Rule(
        id="SEC-6",
        title="TLS versions and cipher suites are TLSv1.2 and newer, as configured",
        text="transport.enabledProtocols / disabledProtocols / enabledCipherSuites / "
        "disabledCipherSuites take Java's names (cipher suites also OpenSSL's). A version "
        "below TLSv1.2 among the enabled protocols, an unknown name, an anonymous suite, "
        "settings that leave no version or no suite, and a list keeping some TLS 1.3 suites "
        "but not all raise IllegalArgumentException naming the option and the value when the "
        "factory is made. On an amqps:// target the connection offers what the settings "
        "leave: TLSv1.2 and TLSv1.3 by default.",
        source=f"{SECURITY}; Qpid JMS transport options; RFC 8996",
        level="client",
    ),
)

RULES = {**RULES, **_SEC_RULES}

QPID_FAILOVER = "Qpid JMS failover (FailoverProvider)"
README_FAILOVER = "docs/failover.md: Failover"

# The FO family: what a failover: connection promises across a broker crash and restart.
_FAILOVER_RULES = _rules(
    Rule(
        id="FO-1",
        title="Synchronous sends survive a reconnect",
        text="Persistent synchronous sends on a failover connection across a broker crash and "
        "restart all return normally and every message is on the queue afterwards; a send in "
        "flight at the crash is resent after the reconnect. Where the broker detects "
        "duplicates (Artemis, _AMQ_DUPL_ID) none is stored twice; elsewhere a resent message "
        "may be stored twice (at-least-once).",
        source=f"{QPID_FAILOVER}: sends; {README_FAILOVER} (Sends)",
        level="broker",
        capabilities=("broker-restart",),
    ),
    Rule(
        id="FO-2",
        title="Consumers resume after a reconnect",
        text="A consumer on a failover connection keeps receiving after the broker is back, "
        "with no new consumer: the messages it had not yet received before the crash and those "
        "sent after the restart all arrive; none is lost.",
        source=f"{QPID_FAILOVER}: consumers; {README_FAILOVER} (Consumers)",
        level="broker",
        capabilities=("broker-restart",),
    ),
    Rule(
        id="FO-3",
        title="Messages seen before the drop come back flagged redelivered",
        text="A message handed to the application before the connection dropped and not "
        "acknowledged arrives again after the reconnect with JMSRedelivered=true (the client "
        "remembers what it handed out, since the broker may not raise the delivery count).",
        source=f"{QPID_FAILOVER}: consumers; {README_FAILOVER} (Consumers, Acknowledgements)",
        level="client",
        capabilities=("broker-restart",),
    ),
    Rule(
        id="FO-4",
        title="A transaction interrupted by a drop is rolled back for certain",
        text="commit() of a transaction that did work before the connection dropped raises "
        "TransactionRolledBackException; nothing of it was committed: its sends are not on the "
        "broker and the messages it consumed come back with JMSRedelivered=true. The session "
        "goes on with a new transaction.",
        source=f"{QPID_FAILOVER}: transactions; {README_FAILOVER} (Transactions)",
        level="client",
        capabilities=("broker-restart", "amqp:local-transactions"),
    ),
    Rule(
        id="FO-5",
        title="A commit whose answer was lost is in doubt",
        text="commit() whose discharge reached the broker but whose answer was lost with the "
        "connection raises TransactionInDoubtException, which is not a "
        "TransactionRolledBackException (the broker may have committed; Qpid JMS reports this "
        "case as a rollback). The session goes on after the reconnect.",
        source=f"{README_FAILOVER} (Transactions); {QPID_FAILOVER}: transactions",
        level="client",
        capabilities=("fault-proxy", "amqp:local-transactions"),
    ),
    Rule(
        id="FO-6",
        title="A durable subscription resumes after a reconnect",
        text="A durable subscriber on a failover connection with a client id keeps its "
        "subscription across a broker crash and restart: the messages published before the "
        "crash that it had not received and those published after the restart all arrive.",
        source=f"{QPID_FAILOVER}: subscriptions; {README_FAILOVER} (Consumers)",
        level="broker",
        capabilities=("broker-restart", "durable-subscriptions"),
    ),
)

RULES = {**RULES, **_FAILOVER_RULES}
