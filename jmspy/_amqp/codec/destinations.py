"""The JMS destination of a received message: its address, the destination-type annotation
(or the legacy one) and the consumer's own destination, as Qpid JMS decides it."""

from __future__ import annotations

import re
from typing import Any

from proton import byte, symbol

from jmspy.destination import (
    QUEUE_TYPE,
    TEMP_QUEUE_TYPE,
    TEMP_TOPIC_TYPE,
    TOPIC_TYPE,
    Destination,
    Queue,
    TemporaryQueue,
    TemporaryTopic,
    Topic,
)

__all__ = ["received_destination", "type_byte"]


# No type annotation, or one that names no kind.
_UNKNOWN_TYPE = -1
# Qpid JMS splits a legacy type string on commas and the whitespace around them.
_LEGACY_SEPARATOR = re.compile(r"\s*,\s*")


def _annotation_type(value: Any) -> int:
    """The destination type an annotation value gives, as Qpid JMS's AmqpDestinationHelper
    reads it: a byte is the type itself; a string is the legacy comma list ("queue",
    "topic", "temporary", case-sensitive, other words ignored); anything else (an int of
    another AMQP type included) gives no type."""
    if value is None:
        return _UNKNOWN_TYPE
    if type(value) is byte:
        return int(value)
    if not isinstance(value, str):
        return _UNKNOWN_TYPE
    words = set(_LEGACY_SEPARATOR.split(value))
    if "queue" in words:
        return TEMP_QUEUE_TYPE if "temporary" in words else QUEUE_TYPE
    if "topic" in words:
        return TEMP_TOPIC_TYPE if "temporary" in words else TOPIC_TYPE
    return _UNKNOWN_TYPE


def type_byte(annotations: dict[Any, Any], key: symbol, legacy_key: symbol) -> int:
    """The destination type of ``key``'s annotation, else of the legacy one; -1 for none."""
    kind = _annotation_type(annotations.get(key))
    if kind == _UNKNOWN_TYPE:
        kind = _annotation_type(annotations.get(legacy_key))
    return kind


# Received queues and topics by everything that decides them: a consumer sees the same few
# addresses over and over, and Queue/Topic are values (temporary destinations, which carry
# state, are never kept). Cleared when full.
_DESTINATIONS: dict[tuple[Any, ...], Destination | None] = {}
_DESTINATIONS_SIZE = 512


def received_destination(
    address: str | None,
    type_byte: int,
    consumer_destination: Destination | None,
    use_consumer_for_type_only: bool,
    queue_prefix: str | None,
    topic_prefix: str | None,
) -> Destination | None:
    if address is None:
        return None if use_consumer_for_type_only else consumer_destination
    key = (address, type_byte, consumer_destination, queue_prefix, topic_prefix)
    try:
        return _DESTINATIONS[key]
    except KeyError:
        pass
    destination = _new_destination(
        address, type_byte, consumer_destination, queue_prefix, topic_prefix
    )
    if destination is None or not destination.is_temporary:
        if len(_DESTINATIONS) >= _DESTINATIONS_SIZE:
            _DESTINATIONS.clear()
        _DESTINATIONS[key] = destination
    return destination


def _new_destination(
    address: str,
    type_byte: int,
    consumer_destination: Destination | None,
    queue_prefix: str | None,
    topic_prefix: str | None,
) -> Destination | None:
    # The prefix goes by the annotated type (Qpid JMS's stripPrefixIfNecessary): without one,
    # whichever prefix the address has, whatever kind the consumer's destination then gives.
    if type_byte == QUEUE_TYPE or type_byte == _UNKNOWN_TYPE:
        if queue_prefix and address.startswith(queue_prefix):
            address = address[len(queue_prefix) :]
        elif type_byte == _UNKNOWN_TYPE and topic_prefix and address.startswith(topic_prefix):
            address = address[len(topic_prefix) :]
    elif type_byte == TOPIC_TYPE and topic_prefix and address.startswith(topic_prefix):
        address = address[len(topic_prefix) :]
    cls: type[Destination]
    if type_byte == QUEUE_TYPE:
        cls = Queue
    elif type_byte == TOPIC_TYPE:
        cls = Topic
    elif type_byte == TEMP_QUEUE_TYPE:
        cls = TemporaryQueue
    elif type_byte == TEMP_TOPIC_TYPE:
        cls = TemporaryTopic
    elif consumer_destination is not None:
        # No (known) annotation: the consumer's own destination kind is the best guess.
        cls = type(consumer_destination)
    else:
        cls = Queue
    if not address:
        return None
    return cls(address)
