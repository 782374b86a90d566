"""Client-side dead-lettering for brokers that drop what they are told to dead-letter.

RabbitMQ 3.x answers ``rejected`` by dead-lettering through the queue's dead-letter exchange
and, when the queue has none (the default), by dropping the message. So where the adapter
says so (``BrokerProfile.forward_dead_letters``), a message that used up its delivery
attempts is not rejected: jmspy sends a copy to a dead-letter queue on the broker
(``jmspy.redeliveryPolicy.deadLetterQueue``, else the adapter's ``dead_letter_queue``),
persistent, so the send waits for the broker's ``accepted``; only then is the original
accepted. If the forward fails in any way the original is released (the broker keeps it and
delivers it again): a dead letter is never lost, at worst it is tried again.

The copy carries the original's body, headers and properties, plus
``JMSPY_ORIGINAL_DESTINATION`` (the name of the queue or topic it was consumed from) and
``JMSPY_DELIVERY_COUNT`` (the delivery attempts made); its ``JMSDestination`` is the
dead-letter queue and it gets a new ``JMSMessageID``, as any send does
(``JMSPY_ORIGINAL_MESSAGE_ID`` keeps the old one).

The forward runs on a thread of its own and the original stays unsettled meanwhile. If the
consumer or connection closes in between, the broker takes the unsettled original back; if the
copy had already been accepted the message then exists twice (on its queue and on the
dead-letter queue): a duplicate, never a loss.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from .errors import JMSException
from .message import DeliveryMode
from .message.java import JavaType

if TYPE_CHECKING:
    from ._amqp.provider import AmqpReceiver, InboundDelivery
    from .connection import Connection
    from .destination import Destination
    from .message import Message

log = logging.getLogger(__name__)

__all__ = [
    "DELIVERY_COUNT",
    "ORIGINAL_DESTINATION",
    "ORIGINAL_MESSAGE_ID",
    "forward_dead_letter",
    "start_forward",
]

ORIGINAL_DESTINATION = "JMSPY_ORIGINAL_DESTINATION"
DELIVERY_COUNT = "JMSPY_DELIVERY_COUNT"
ORIGINAL_MESSAGE_ID = "JMSPY_ORIGINAL_MESSAGE_ID"


def start_forward(
    connection: Connection,
    receiver: AmqpReceiver,
    inbound: InboundDelivery,
    queue_name: str,
    origin: Destination,
    attempts: int,
) -> threading.Thread:
    """Forward on a thread of its own. The consumer gives up on a message while it holds its
    buffer's lock (receive() takes from the buffer under it) or on the session's dispatch
    thread; a send that waits for the broker there could wait on the engine thread, which
    needs that lock to hand over the next message. The original stays unsettled (held by
    the client, never lost) until the thread settles it."""
    thread = threading.Thread(
        target=forward_dead_letter,
        args=(connection, receiver, inbound, queue_name, origin, attempts),
        name=f"jmspy-dead-letter-{queue_name}",
        daemon=True,
    )
    thread.start()
    return thread


def forward_dead_letter(
    connection: Connection,
    receiver: AmqpReceiver,
    inbound: InboundDelivery,
    queue_name: str,
    origin: Destination,
    attempts: int,
) -> bool:
    """Send ``inbound``'s message to ``queue_name`` and accept the original once the broker
    accepted the copy; release the original if anything fails. True when forwarded."""
    message = inbound.message
    message_id = message.getJMSMessageID()
    try:
        _send_copy(connection, message, queue_name, origin, attempts, message_id)
    except Exception as exc:  # noqa: BLE001 - whatever failed, the original must stay
        log.error(
            "message %s from %s failed %s delivery attempts and could not be forwarded to the "
            "dead-letter queue %r (%s); releasing it so the broker keeps it",
            message_id,
            origin,
            attempts,
            queue_name,
            exc,
        )
        _settle_quietly(receiver, inbound, "released")
        return False
    log.warning(
        "message %s from %s failed %s delivery attempts; forwarded to the dead-letter queue %r",
        message_id,
        origin,
        attempts,
        queue_name,
    )
    _settle_quietly(receiver, inbound, "accepted")
    return True


def _send_copy(
    connection: Connection,
    message: Message,
    queue_name: str,
    origin: Destination,
    attempts: int,
    message_id: str | None,
) -> None:
    # The properties of a received message are read-only to the application; the message's
    # property store is written directly so every property, whatever its type (a foreign
    # producer's binary or list values included), goes on unchanged.
    store = message.get_property_store()
    store[ORIGINAL_DESTINATION] = (JavaType.STRING, origin.address)
    store[DELIVERY_COUNT] = (JavaType.INT, attempts)
    if message_id is not None:
        store[ORIGINAL_MESSAGE_ID] = (JavaType.STRING, message_id)
    # A session of its own: the consumer's session may be in the middle of a listener call
    # or of receive(), and its acknowledgement must not cover the copy.
    session = connection.createSession()
    try:
        producer = session.createProducer(session.createQueue(queue_name))
        # Persistent: the send waits for the broker's outcome (accepted, or an exception),
        # and the dead letter survives a broker restart. No expiry: it waits for a person.
        producer.send(message, DeliveryMode.PERSISTENT, message.getJMSPriority(), 0)
    finally:
        try:
            session.close()
        except JMSException as exc:
            log.debug("closing the dead-letter session failed: %s", exc)


def _settle_quietly(receiver: AmqpReceiver, inbound: InboundDelivery, outcome: str) -> None:
    """Settle; a connection that failed meanwhile gives the message back to the broker by
    itself, so a failure here only needs logging."""
    try:
        receiver.settle(inbound, outcome)
    except JMSException as exc:
        log.warning("settling %s of dead-lettered message failed: %s", outcome, exc)
