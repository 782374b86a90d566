"""JMS destinations: queues, topics and their temporary variants.

Each class carries the two AMQP facts the wire mapping needs (see the Qpid JMS mapping):

* ``kind``: the link capability symbol (``queue``, ``topic``, ``temporary-queue``,
  ``temporary-topic``) put on the Source/Target of a link to this destination;
* ``type_code``: the byte written in the ``x-opt-jms-dest`` / ``x-opt-jms-reply-to`` message
  annotations (queue=0, topic=1, temporary queue=2, temporary topic=3).

This module is pure Python so the message model can use it without importing proton.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from jmspy._twins.destination import DestinationTwins, QueueTwins, TopicTwins
from jmspy.errors import IllegalArgumentException, InvalidDestinationException
from jmspy.redelivery import RedeliveryPolicy

__all__ = [
    "Destination",
    "DestinationOptions",
    "Queue",
    "Topic",
    "TemporaryQueue",
    "TemporaryTopic",
    "TemporaryDestination",
    "QUEUE_TYPE",
    "TOPIC_TYPE",
    "TEMP_QUEUE_TYPE",
    "TEMP_TOPIC_TYPE",
    "destination_for_type_code",
    "check_temporary_readable",
]

QUEUE_TYPE = 0
TOPIC_TYPE = 1
TEMP_QUEUE_TYPE = 2
TEMP_TOPIC_TYPE = 3


class DestinationOptions(BaseModel):
    """What a destination declares about itself (the delay, priority and sequence rules use it).

    ``default_delivery_delay`` (ms, DD-10) applies to messages sent without a delay of their
    own; ``max_delivery_delay`` (ms, DD-11) caps delays; ``delivery_sequence`` (DD-15) is
    ``fifo`` or ``priority`` for consumers of this destination; ``default_priority`` (DD-16)
    replaces the producer's default priority; ``cluster_bind`` (DD-5) declares a clustered
    destination and its bind option; ``persistent_delivery`` / ``non_persistent_delivery``
    (DD-6) are a topic's publication delivery options.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    default_delivery_delay: int = Field(0, ge=0)
    max_delivery_delay: int | None = Field(None, ge=0)
    delivery_sequence: Literal["fifo", "priority"] | None = None
    default_priority: int | None = Field(None, ge=0, le=9)
    cluster_bind: Literal["not_fixed", "on_open", "on_group"] | None = None
    persistent_delivery: Literal["all", "all_durable", "all_available"] | None = None
    non_persistent_delivery: Literal["all", "all_durable", "all_available"] | None = None
    redelivery: RedeliveryPolicy | None = None


_NO_OPTIONS = DestinationOptions.model_validate({})


def _options(name: str, values: dict[str, Any]) -> DestinationOptions:
    if not values:
        return _NO_OPTIONS
    try:
        return DestinationOptions(**values)
    except ValidationError as exc:
        problems = "; ".join(
            f"{err['loc'][0] if err['loc'] else '?'}={err.get('input')!r}: {err['msg']}"
            for err in exc.errors()
        )
        raise IllegalArgumentException(
            f"invalid option for destination {name!r}: {problems}"
        ) from None


class Destination(DestinationTwins):
    """Base of every destination; equal and hashed by ``(kind, name)``.

    Not meant to be instantiated directly: use :class:`Queue`, :class:`Topic` or a temporary
    destination handed out by a session.
    """

    __slots__ = ("_name", "options")

    kind: ClassVar[str] = ""
    type_code: ClassVar[int] = -1
    is_temporary: ClassVar[bool] = False
    is_queue: ClassVar[bool] = False
    is_topic: ClassVar[bool] = False

    def __init__(self, name: str, **options: Any) -> None:
        if type(self) is Destination:
            raise TypeError("Destination is abstract: use Queue, Topic or a temporary destination")
        # A JMS destination without a name cannot be addressed on the wire; Qpid JMS refuses it
        # the same way (InvalidDestinationException rather than a plain ValueError).
        if name is None or not isinstance(name, str) or name == "":
            raise InvalidDestinationException(
                f"Invalid {type(self).__name__} name {name!r}: a non-empty string is required"
            )
        self._name = name
        self.options: DestinationOptions = _options(name, options)

    @property
    def address(self) -> str:
        """The AMQP node address (``to`` / ``reply-to`` / link source or target address)."""
        return self._name

    @property
    def name(self) -> str:
        """The destination's name, which is also its AMQP address."""
        return self._name

    def toString(self) -> str:
        """The destination's name (Java's ``toString()``)."""
        return self._name

    def __str__(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Destination):
            return NotImplemented
        # other._name: the same class's attribute on another instance (value equality).
        return self.kind == other.kind and self._name == other._name

    def __hash__(self) -> int:
        return hash((self.kind, self._name))

    # Destinations travel inside pickled ObjectMessage bodies and across processes; only the
    # (class, name) pair is meaningful there, never the owning connection or delete hook.
    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self._name,))

    def with_options(self, **options: Any) -> Destination:
        """A copy of this destination with more options (e.g. from a consumer's settings)."""
        merged = {**self.options.model_dump(exclude_defaults=True), **options}
        copy = type(self).__new__(type(self))
        for slot in _all_slots(type(self)):
            if hasattr(self, slot):
                object.__setattr__(copy, slot, getattr(self, slot))
        copy.options = _options(self._name, merged)
        return copy


def _all_slots(cls: type) -> list[str]:
    slots: list[str] = []
    for klass in cls.__mro__:
        for slot in getattr(klass, "__slots__", ()):
            if slot not in slots:
                slots.append(slot)
    return slots


class Queue(Destination, QueueTwins):
    """A queue (``jakarta.jms.Queue``): each message goes to one consumer.

    ``Queue("orders", default_delivery_delay=5000)``: keyword options are
    :class:`DestinationOptions`. An empty or missing name raises InvalidDestinationException, an
    invalid option IllegalArgumentException.
    """

    __slots__ = ()
    kind: ClassVar[str] = "queue"
    type_code: ClassVar[int] = QUEUE_TYPE
    is_queue: ClassVar[bool] = True

    def getQueueName(self) -> str:
        """The queue's name."""
        return self._name


class Topic(Destination, TopicTwins):
    """A topic (``jakarta.jms.Topic``): each message goes to every subscription.

    Keyword options are :class:`DestinationOptions`. An empty or missing name raises
    InvalidDestinationException, an invalid option IllegalArgumentException.
    """

    __slots__ = ()
    kind: ClassVar[str] = "topic"
    type_code: ClassVar[int] = TOPIC_TYPE
    is_topic: ClassVar[bool] = True

    def getTopicName(self) -> str:
        """The topic's name."""
        return self._name


class TemporaryDestination(Destination):
    """State and behaviour shared by the two temporary kinds: the owner and the delete hook.

    ``owner`` is whatever created the destination (the connection); the connection layer uses
    it to refuse consumers from other connections. ``on_delete`` is the connection's hook that
    really removes the node; it may raise (e.g. IllegalStateException while a consumer is
    active), in which case the destination is not marked deleted.
    """

    __slots__ = ("owner", "_on_delete", "_deleted")
    is_temporary: ClassVar[bool] = True

    def __init__(
        self,
        name: str,
        owner: object | None = None,
        on_delete: Callable[[Any], None] | None = None,
    ) -> None:
        super().__init__(name)
        self.owner = owner
        self._on_delete = on_delete
        self._deleted = False

    @property
    def deleted(self) -> bool:
        """Whether :meth:`delete` succeeded, or the broker connection that held it was lost."""
        return self._deleted

    def delete(self) -> None:
        """Delete the temporary destination on the broker.

        Raises IllegalStateException while a consumer of the owning connection consumes from it, or
        when that connection is closed; the destination then stays usable.
        """
        if self._on_delete is not None:
            self._on_delete(self)
        self._deleted = True


def check_temporary_readable(destination: Destination, connection: object, action: str) -> None:
    """A temporary destination is read (consumed from, browsed) only by the connection that
    created it and only until it is deleted (JMS 2.0 section 6.2.2, as Qpid JMS checks its
    consumers and browsers): InvalidDestinationException otherwise. ``action`` says what was
    refused ("consume from", "browse"). Other destinations pass."""
    if not isinstance(destination, TemporaryDestination):
        return
    if destination.owner is not connection:
        raise InvalidDestinationException(
            f"Can't {action} a temporary destination created using another connection "
            f"({destination})"
        )
    if destination.deleted:
        raise InvalidDestinationException(f"temporary destination {destination} has been deleted")


class TemporaryQueue(Queue, TemporaryDestination):
    """A queue that lives as long as its connection (``Session.createTemporaryQueue``)."""

    __slots__ = ()
    kind: ClassVar[str] = "temporary-queue"
    type_code: ClassVar[int] = TEMP_QUEUE_TYPE


class TemporaryTopic(Topic, TemporaryDestination):
    """A topic that lives as long as its connection (``Session.createTemporaryTopic``)."""

    __slots__ = ()
    kind: ClassVar[str] = "temporary-topic"
    type_code: ClassVar[int] = TEMP_TOPIC_TYPE


_BY_TYPE_CODE: dict[int, type[Destination]] = {
    QUEUE_TYPE: Queue,
    TOPIC_TYPE: Topic,
    TEMP_QUEUE_TYPE: TemporaryQueue,
    TEMP_TOPIC_TYPE: TemporaryTopic,
}


def destination_for_type_code(type_code: int, address: str) -> Destination:
    """Build the destination a ``x-opt-jms-dest`` / ``x-opt-jms-reply-to`` byte designates.

    Raises KeyError for an unknown code; the codec decides what to fall back to.
    """
    return _BY_TYPE_CODE[type_code](address)
