"""JMSMessageID / JMSCorrelationID <-> AMQP message-id conversions, and id generation.

AMQP ids may be ulong, uuid, binary or string while JMS ids are strings. Qpid JMS
(``AmqpMessageIdHelper``) escapes the non-string kinds into ``ID:AMQP_<KIND>:`` strings so an id
read from one message can be set as the correlation id of a reply and go back on the wire with
its original AMQP type. We reproduce that encoding exactly so replies interoperate with Java
clients.
"""

from __future__ import annotations

import enum
import itertools
import re
import uuid
from collections.abc import Callable

from proton import ulong

__all__ = [
    "IdConversionError",
    "to_message_id_string",
    "to_correlation_id_string",
    "to_id_object",
    "IdGenerator",
    "MessageIdGenerator",
    "MessageIdPolicy",
    "session_id",
    "producer_id",
    "consumer_id",
]

JMS_ID_PREFIX = "ID:"
AMQP_UUID_PREFIX = "AMQP_UUID:"
AMQP_ULONG_PREFIX = "AMQP_ULONG:"
AMQP_BINARY_PREFIX = "AMQP_BINARY:"
AMQP_STRING_PREFIX = "AMQP_STRING:"
AMQP_NO_PREFIX = "AMQP_NO_PREFIX:"

_ID_UUID = JMS_ID_PREFIX + AMQP_UUID_PREFIX
_ID_ULONG = JMS_ID_PREFIX + AMQP_ULONG_PREFIX
_ID_BINARY = JMS_ID_PREFIX + AMQP_BINARY_PREFIX
_ID_STRING = JMS_ID_PREFIX + AMQP_STRING_PREFIX
_ID_NO_PREFIX = JMS_ID_PREFIX + AMQP_NO_PREFIX

_TYPE_PREFIXES = (
    AMQP_UUID_PREFIX,
    AMQP_ULONG_PREFIX,
    AMQP_BINARY_PREFIX,
    AMQP_STRING_PREFIX,
    AMQP_NO_PREFIX,
)
_ULONG_MAX = 2**64 - 1
_DIGITS = re.compile(r"[0-9]+")
_HEX = re.compile(r"(?:[0-9A-Fa-f]{2})*")

AmqpId = str | uuid.UUID | int | bytes


class IdConversionError(ValueError):
    """An ``ID:AMQP_*:`` string whose payload is not a valid uuid, ulong or hex binary."""


def _has_type_prefix(s: str) -> bool:
    # Only called for strings starting with "ID:"; the AMQP_* tag must follow it directly.
    return s.startswith(_TYPE_PREFIXES, 3)


def _non_string_to_id_string(amqp_id: object) -> str:
    if isinstance(amqp_id, uuid.UUID):
        return _ID_UUID + str(amqp_id)
    if isinstance(amqp_id, bytes | bytearray | memoryview):
        return _ID_BINARY + bytes(amqp_id).hex().upper()
    if isinstance(amqp_id, int) and not isinstance(amqp_id, bool):
        if not 0 <= amqp_id <= _ULONG_MAX:
            raise IdConversionError(f"AMQP ulong id {amqp_id} is out of range")
        return _ID_ULONG + str(int(amqp_id))
    raise IdConversionError(f"Unsupported AMQP id type {type(amqp_id).__name__}: {amqp_id!r}")


def to_message_id_string(amqp_id: object) -> str | None:
    """The JMSMessageID for an AMQP message-id (None for None)."""
    if amqp_id is None:
        return None
    if isinstance(amqp_id, str):
        if not amqp_id.startswith(JMS_ID_PREFIX):
            # Remember that there was no "ID:" so it can be restored when used as correlation id.
            return _ID_NO_PREFIX + amqp_id
        if _has_type_prefix(amqp_id):
            # A real string that merely looks escaped: escape it again so it stays a string.
            return _ID_STRING + amqp_id
        return str(amqp_id)
    return _non_string_to_id_string(amqp_id)


def to_correlation_id_string(amqp_id: object) -> str | None:
    """The JMSCorrelationID for an AMQP correlation-id (None for None).

    Same as :func:`to_message_id_string` except that a string without ``ID:`` is an
    application-specific correlation id and is returned unchanged.
    """
    if amqp_id is None:
        return None
    if isinstance(amqp_id, str):
        if not amqp_id.startswith(JMS_ID_PREFIX):
            return str(amqp_id)
        if _has_type_prefix(amqp_id):
            return _ID_STRING + amqp_id
        return str(amqp_id)
    return _non_string_to_id_string(amqp_id)


def to_id_object(id_string: str | None) -> AmqpId | None:
    """The AMQP id value to put on the wire for a JMS id string (reverse of the above).

    ``ID:AMQP_UUID:x`` -> uuid.UUID, ``ID:AMQP_ULONG:n`` -> proton.ulong,
    ``ID:AMQP_BINARY:HEX`` -> bytes, ``ID:AMQP_STRING:x`` / ``ID:AMQP_NO_PREFIX:x`` -> "x";
    anything else is sent as the string itself.
    """
    if id_string is None:
        return None
    if not id_string.startswith("ID:AMQP_"):
        return id_string  # fast path: generated ids and application correlation ids
    if id_string.startswith(_ID_UUID):
        payload = id_string[len(_ID_UUID) :]
        try:
            return uuid.UUID(payload)
        except ValueError as exc:
            raise IdConversionError(f"Unable to convert ID value {id_string!r}: {exc}") from exc
    if id_string.startswith(_ID_ULONG):
        payload = id_string[len(_ID_ULONG) :]
        if not _DIGITS.fullmatch(payload) or int(payload) > _ULONG_MAX:
            raise IdConversionError(
                f"Unable to convert ID value {id_string!r}: not an unsigned 64-bit number"
            )
        return ulong(int(payload))
    if id_string.startswith(_ID_BINARY):
        payload = id_string[len(_ID_BINARY) :]
        if not _HEX.fullmatch(payload):
            raise IdConversionError(
                f"Unable to convert ID value {id_string!r}: the binary payload must be an "
                "even-length hex string"
            )
        return bytes.fromhex(payload)
    if id_string.startswith(_ID_STRING):
        return id_string[len(_ID_STRING) :]
    if id_string.startswith(_ID_NO_PREFIX):
        return id_string[len(_ID_NO_PREFIX) :]
    return id_string


# ---------------------------------------------------------------------------------------------
# Generation (Qpid JMS IdGenerator / JmsSessionId / JmsProducerId / JmsMessageIDBuilder)
# ---------------------------------------------------------------------------------------------


class IdGenerator:
    """Connection ids ``<prefix><uuid4>:<n>`` with n = 1, 2, ...

    One instance per connection factory; the uuid is drawn once, as Qpid JMS does, so all
    connections of a factory share it and differ by sequence.
    """

    def __init__(self, prefix: str = JMS_ID_PREFIX) -> None:
        self._seed = f"{prefix}{uuid.uuid4()}:"
        self._seq = itertools.count(1)

    def generate_id(self) -> str:
        return self._seed + str(next(self._seq))

    next_connection_id = generate_id


def session_id(connection_id: str, session_seq: int) -> str:
    return f"{connection_id}:{session_seq}"


def producer_id(session_id: str, producer_seq: int) -> str:
    return f"{session_id}:{producer_seq}"


def consumer_id(session_id: str, consumer_seq: int) -> str:
    return f"{session_id}:{consumer_seq}"


class MessageIdPolicy(enum.Enum):
    """``jms.messageIDPolicy.messageIDType`` values."""

    DEFAULT = "DEFAULT"
    UUID = "UUID"
    UUID_STRING = "UUID_STRING"
    PREFIXED_UUID_STRING = "PREFIXED_UUID_STRING"


class MessageIdGenerator:
    """Per-producer JMSMessageID source.

    The returned value is the JMSMessageID string the message shows; the codec turns it into the
    AMQP message-id with :func:`to_id_object`. DEFAULT gives ``<producerId>-<n>`` (an ``ID:``
    string, sent as an AMQP string); UUID gives ``ID:AMQP_UUID:<uuid>`` (sent as an AMQP uuid);
    UUID_STRING gives ``ID:AMQP_NO_PREFIX:<uuid>`` (sent as the bare uuid string) and
    PREFIXED_UUID_STRING gives ``ID:<uuid>``.
    """

    __slots__ = ("_prefix", "_counter", "next")

    def __init__(self, producer_id: str, policy: MessageIdPolicy = MessageIdPolicy.DEFAULT) -> None:
        if not producer_id.startswith(JMS_ID_PREFIX):
            producer_id = JMS_ID_PREFIX + producer_id
        self._prefix = producer_id + "-"
        self._counter = itertools.count(1)
        # Bind the generating function once so a send pays one call, a next() and a concat.
        self.next: Callable[[], str]
        if policy is MessageIdPolicy.DEFAULT:
            self.next = self._next_default
        elif policy is MessageIdPolicy.UUID:
            self.next = lambda: _ID_UUID + str(uuid.uuid4())
        elif policy is MessageIdPolicy.UUID_STRING:
            self.next = lambda: _ID_NO_PREFIX + str(uuid.uuid4())
        else:
            self.next = lambda: JMS_ID_PREFIX + str(uuid.uuid4())

    def _next_default(self) -> str:
        return self._prefix + str(next(self._counter))

    def __call__(self) -> str:
        return self.next()
