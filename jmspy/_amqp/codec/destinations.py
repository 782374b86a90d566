"""The JMS destination of a received message: its address, the destination-type annotation
(or the legacy one) and the consumer's own destination, as Qpid JMS decides it."""

from __future__ import annotations

from typing import Any

from proton import symbol

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


_KIND_BY_LEGACY = {
    frozenset(("queue",)): QUEUE_TYPE,
    frozenset(("topic",)): TOPIC_TYPE,
    frozenset(("temporary", "queue")): TEMP_QUEUE_TYPE,
    frozenset(("temporary", "topic")): TEMP_TOPIC_TYPE,
}


def type_byte(annotations: dict[Any, Any], key: symbol, legacy_key: symbol) -> int:
    value = annotations.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    legacy = annotations.get(legacy_key)
    if isinstance(legacy, str):
        kinds = frozenset(p.strip().lower() for p in legacy.split(",") if p.strip())
        return _KIND_BY_LEGACY.get(kinds, -1)
    return -1


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
    if cls.is_temporary:
        pass
    elif cls.is_queue and queue_prefix and address.startswith(queue_prefix):
        address = address[len(queue_prefix) :]
    elif cls.is_topic and topic_prefix and address.startswith(topic_prefix):
        address = address[len(topic_prefix) :]
    if not address:
        return None
    return cls(address)
