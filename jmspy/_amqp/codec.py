"""JMS message <-> AMQP 1.0 bare message, byte-compatible in meaning with Qpid JMS.

The mapping (header, annotations, properties, application-properties, body section choice and
receive-side type inference) is the one Qpid JMS implements, so Java JMS clients on the same
broker see the same headers, properties and body types.

Sections are written and read one by one with :class:`proton.Data` rather than through
:class:`proton.Message`, which would add defaults (e.g. a header section on every message) and
hide exact AMQP types. On receive, :mod:`jmspy._amqp.amqp_reader` reads them first, giving the
same values several times faster; proton.Data reads whatever it declines (malformed input
included). Three pieces are cached or framed by hand because they are on the path of every send:

* the header section, per (durable, priority, ttl);
* the message-annotations section, per (message type, destination type, reply-to type) when no
  delivery time is sent (Qpid JMS keeps the same cache);
* ``data`` and string ``amqp-value`` body sections, which are a fixed 3-byte descriptor plus an
  AMQP binary/string constructor, so copying a large body through proton.Data is avoided.
"""

from __future__ import annotations

import codecs
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast

from proton import (
    Data,
    DataException,
    Described,
    byte,
    char,
    float32,
    int32,
    short,
    symbol,
    timestamp,
    ubyte,
    uint,
    ulong,
    ushort,
)

from jmspy._amqp.amqp_reader import AmqpDecodeError, read_sections
from jmspy._amqp.decode_report import amqp_type_name, undecodable_section
from jmspy._amqp.ids import (
    IdConversionError,
    to_correlation_id_string,
    to_id_object,
    to_message_id_string,
)
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
from jmspy.errors import JMSException, MessageFormatException
from jmspy.message import (
    JAVA_SERIALIZED_CONTENT_TYPE,
    JMS_AMQP_PREFIX,
    JMS_AMQP_REPLY_TO_GROUP_ID,
    JMS_AMQP_TTL,
    PYTHON_SERIALIZED_CONTENT_TYPE,
    BytesMessage,
    DeliveryMode,
    DeserializationPolicy,
    JavaType,
    JByte,
    JChar,
    JFloat,
    JInt,
    JLong,
    JShort,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
    TypedValue,
)

__all__ = [
    "CodecError",
    "encode_message",
    "decode_message",
    "read_message_sections",
    "NOT_DESCRIBED",
    "OCTET_STREAM_CONTENT_TYPE",
    "JMS_MSG_TYPE",
    "JMS_DEST_TYPE",
    "JMS_REPLY_TO_TYPE",
    "JMS_DELIVERY_TIME",
]


class CodecError(Exception):
    """A transfer payload that is not a message this client can present as a JMS message.

    The consumer settles such a delivery modified(delivery-failed, undeliverable-here) and does
    not hand it to the application, as Qpid JMS does.
    """


log = logging.getLogger("jmspy.codec")

# Section descriptors (AMQP 1.0 part 3, 3.2).
HEADER = 0x70
DELIVERY_ANNOTATIONS = 0x71
MESSAGE_ANNOTATIONS = 0x72
PROPERTIES = 0x73
APPLICATION_PROPERTIES = 0x74
DATA = 0x75
AMQP_SEQUENCE = 0x76
AMQP_VALUE = 0x77
FOOTER = 0x78

_SYMBOLIC_DESCRIPTORS = {
    "amqp:header:list": HEADER,
    "amqp:delivery-annotations:map": DELIVERY_ANNOTATIONS,
    "amqp:message-annotations:map": MESSAGE_ANNOTATIONS,
    "amqp:properties:list": PROPERTIES,
    "amqp:application-properties:map": APPLICATION_PROPERTIES,
    "amqp:data:binary": DATA,
    "amqp:amqp-sequence:list": AMQP_SEQUENCE,
    "amqp:amqp-value:*": AMQP_VALUE,
    "amqp:footer:map": FOOTER,
}

JMS_MSG_TYPE = symbol("x-opt-jms-msg-type")
JMS_DEST_TYPE = symbol("x-opt-jms-dest")
JMS_REPLY_TO_TYPE = symbol("x-opt-jms-reply-to")
JMS_DELIVERY_TIME = symbol("x-opt-delivery-time")
LEGACY_TO_TYPE = symbol("x-opt-to-type")
LEGACY_REPLY_TYPE = symbol("x-opt-reply-type")

OCTET_STREAM_CONTENT_TYPE = "application/octet-stream"
_OCTET_STREAM = symbol(OCTET_STREAM_CONTENT_TYPE)
_PYTHON_SERIALIZED = symbol(PYTHON_SERIALIZED_CONTENT_TYPE)

MSG_TYPE_MESSAGE = 0
MSG_TYPE_OBJECT = 1
MSG_TYPE_MAP = 2
MSG_TYPE_BYTES = 3
MSG_TYPE_STREAM = 4
MSG_TYPE_TEXT = 5

_UINT_MAX = 2**32 - 1
_LONG_MAX = 2**63 - 1
_INT_MAX = 2**31 - 1

# Pre-encoded section prefixes: described-type constructor 0x00, smallulong 0x53, code.
_DATA_PREFIX = b"\x00\x53\x75"
_VALUE_PREFIX = b"\x00\x53\x77"
_NULL_VALUE_SECTION = b"\x00\x53\x77\x40"
_EMPTY_DATA_SECTION = b"\x00\x53\x75\xa0\x00"

_tls = threading.local()


def _data() -> Data:
    """A per-thread scratch Data, cleared; proton.Data is not safe to share between threads."""
    d: Data | None = getattr(_tls, "data", None)
    if d is None:
        d = _tls.data = Data(64)
    else:
        d.clear()
    return d


def _framed(prefix: bytes, small: int, large: int, payload: bytes) -> bytes:
    n = len(payload)
    if n < 256:
        return b"".join((prefix, bytes((small, n)), payload))
    return b"".join((prefix, bytes((large,)), n.to_bytes(4, "big"), payload))


# ---------------------------------------------------------------------------------------------
# Encoding
# ---------------------------------------------------------------------------------------------

_HEADER_CACHE: dict[tuple[bool, int, int], bytes] = {}
_MA_CACHE: dict[tuple[int, int, int], bytes] = {}
_CACHE_LIMIT = 1024


def _header_section(durable: bool, priority: int, ttl: int) -> bytes:
    key = (durable, priority, ttl)
    cached = _HEADER_CACHE.get(key)
    if cached is not None:
        return cached
    d = Data(8)
    d.put_described()
    d.enter()
    d.put_ulong(HEADER)
    d.put_list()
    d.enter()
    # Qpid JMS (AmqpHeader) always writes durable explicitly once the header is sent.
    d.put_bool(durable)
    if priority != 4 or ttl:
        if priority != 4:
            d.put_ubyte(priority)
        else:
            d.put_null()
        if ttl:
            d.put_uint(ttl)
    d.exit()
    d.exit()
    encoded = bytes(d.encode())
    if len(_HEADER_CACHE) >= _CACHE_LIMIT:
        _HEADER_CACHE.clear()
    _HEADER_CACHE[key] = encoded
    return encoded


SCHEDULED_ENQUEUE_TIME = symbol("x-opt-scheduled-enqueue-time")


def _annotations_section(
    msg_type: int,
    dest_type: int,
    reply_type: int,
    delivery_time: int | None,
    delay_form: str = "delivery-time",
) -> bytes:
    key = (msg_type, dest_type, reply_type)
    if delivery_time is None:
        cached = _MA_CACHE.get(key)
        if cached is not None:
            return cached
    d = Data(16)
    d.put_described()
    d.enter()
    d.put_ulong(MESSAGE_ANNOTATIONS)
    d.put_map()
    d.enter()
    d.put_symbol(JMS_MSG_TYPE)
    d.put_byte(msg_type)
    if dest_type >= 0:
        d.put_symbol(JMS_DEST_TYPE)
        d.put_byte(dest_type)
    if reply_type >= 0:
        d.put_symbol(JMS_REPLY_TO_TYPE)
        d.put_byte(reply_type)
    if delivery_time is not None:
        if delay_form == "scheduled-enqueue-time":
            # Azure Service Bus schedules with its own annotation, an AMQP timestamp.
            d.put_symbol(SCHEDULED_ENQUEUE_TIME)
            d.put_timestamp(timestamp(delivery_time))
        else:
            # Qpid JMS writes the absolute delivery time as an AMQP long (ms since the epoch).
            d.put_symbol(JMS_DELIVERY_TIME)
            d.put_long(delivery_time)
    d.exit()
    d.exit()
    encoded = bytes(d.encode())
    if delivery_time is None:
        if len(_MA_CACHE) >= _CACHE_LIMIT:
            _MA_CACHE.clear()
        _MA_CACHE[key] = encoded
    return encoded


_TYPED_PUTTERS: dict[JavaType, Callable[[Data, Any], None]] = {
    JavaType.BOOLEAN: Data.put_bool,
    JavaType.BYTE: Data.put_byte,
    JavaType.SHORT: Data.put_short,
    JavaType.INT: Data.put_int,
    JavaType.LONG: Data.put_long,
    JavaType.FLOAT: Data.put_float,
    JavaType.DOUBLE: Data.put_double,
    JavaType.STRING: Data.put_string,
    JavaType.CHAR: Data.put_char,
    JavaType.BYTES: Data.put_binary,
    JavaType.OBJECT: Data.put_object,
}


def _put_typed(d: Data, tv: TypedValue) -> None:
    jt, v = tv
    if v is None:
        d.put_null()
    else:
        _TYPED_PUTTERS[jt](d, v)


def _to_amqp_value(value: Any) -> Any:
    """A Python object as proton's put_object wants it (typed ObjectMessage encoding)."""
    t = type(value)
    if value is None or t in (str, bool, int, float, bytes, uuid.UUID):
        if t is int and not -(2**63) <= value <= _LONG_MAX:
            raise MessageFormatException(f"Integer {value} does not fit an AMQP long")
        return value
    if isinstance(value, JByte):
        return byte(value)
    if isinstance(value, JShort):
        return short(value)
    if isinstance(value, JInt):
        return int32(value)
    if isinstance(value, JLong):
        return int(value)
    if isinstance(value, JFloat):
        return float32(value)
    if isinstance(value, JChar):
        return char(value)
    if isinstance(value, dict):
        return {_to_amqp_value(k): _to_amqp_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_amqp_value(v) for v in value]
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    if t in Data.put_mappings:
        return value  # already a proton type (symbol, ulong, timestamp, Described, ...)
    raise MessageFormatException(
        f"ObjectMessage body of type {t.__name__} cannot be sent with JMS_AMQP_TYPED_ENCODING: "
        "only AMQP-encodable values (None, bool, int, float, str, bytes, uuid, list, dict) can"
    )


def node_address(dest: Destination, queue_prefix: str | None, topic_prefix: str | None) -> str:
    """The AMQP address of a destination with a broker's queue/topic prefixes applied."""
    return _address(dest, queue_prefix, topic_prefix)


def _address(dest: Destination, queue_prefix: str | None, topic_prefix: str | None) -> str:
    # Prefixes are per-broker naming conventions for permanent nodes; temporary nodes are named
    # by the broker and used verbatim.
    if dest.is_temporary or dest.address.startswith("/"):
        # A name that already is a broker address form (e.g. RabbitMQ's /amq/queue/NAME for
        # an existing queue) is used as given.
        return dest.address
    if queue_prefix and dest.is_queue:
        return queue_prefix + dest.address
    if topic_prefix and dest.is_topic:
        return topic_prefix + dest.address
    return dest.address


def _id_object(value: str, what: str) -> Any:
    try:
        return to_id_object(value)
    except IdConversionError as exc:
        raise MessageFormatException(f"Invalid {what} {value!r}: {exc}", linked=exc) from exc


def encode_message(
    msg: Message,
    *,
    ttl: int,
    delivery_time_transmitted: bool,
    queue_prefix: str | None = None,
    topic_prefix: str | None = None,
    delay_form: str = "delivery-time",
    message_annotations: bool = True,
    duplicate_id: tuple[str, str] | None = None,
) -> bytes:
    """The AMQP bare message (all sections, concatenated) for sending ``msg``.

    The producer stamps the JMS headers (destination, delivery mode, priority, timestamp,
    expiration, message id, delivery time) on ``msg`` before calling this. ``ttl`` is the
    producer's time to live in ms (0 = none), written to ``header.ttl`` unless the message's
    ``JMS_AMQP_TTL`` property overrides it. ``x-opt-delivery-time`` is written only when
    ``delivery_time_transmitted`` (the send had a delivery delay > 0).

    Raises MessageFormatException when a value cannot be represented on the wire.
    """
    try:
        return _encode(
            msg,
            ttl,
            delivery_time_transmitted,
            queue_prefix,
            topic_prefix,
            delay_form,
            message_annotations,
            duplicate_id,
        )
    except JMSException:
        raise
    except Exception as exc:
        raise MessageFormatException(f"Cannot encode message: {exc}", linked=exc) from exc


def _encode(
    msg: Message,
    ttl: int,
    delivery_time_transmitted: bool,
    queue_prefix: str | None,
    topic_prefix: str | None,
    delay_form: str = "delivery-time",
    message_annotations: bool = True,
    duplicate_id: tuple[str, str] | None = None,
) -> bytes:
    parts: list[bytes | bytearray] = []
    props = msg._properties

    # -- header
    if props:
        ttl_override = props.get(JMS_AMQP_TTL)
        if ttl_override is not None and ttl_override[1] is not None:
            ttl = int(ttl_override[1])
            if not 0 <= ttl <= _UINT_MAX:
                raise MessageFormatException(
                    f"{JMS_AMQP_TTL} value {ttl} is out of range: it must be 0..{_UINT_MAX}"
                )
    header_ttl = ttl if 0 < ttl < _UINT_MAX else 0
    durable = msg._delivery_mode == DeliveryMode.PERSISTENT
    priority = msg._priority
    if durable or priority != 4 or header_ttl:
        parts.append(_header_section(durable, priority, header_ttl))

    # -- message annotations
    dest = msg._destination
    reply_to = msg._reply_to
    msg_type = msg._jms_msg_type
    # Some brokers (IBM MQ AMQP channels) reject any message carrying annotations.
    if message_annotations:
        parts.append(
            _annotations_section(
                msg_type,
                -1 if dest is None else dest.type_code,
                -1 if reply_to is None else reply_to.type_code,
                msg._delivery_time if delivery_time_transmitted else None,
                delay_form,
            )
        )

    # -- properties
    body: bytes | None = None
    content_type: symbol | None = None
    typed_object: Any = None
    typed_object_set = False
    if msg_type == MSG_TYPE_BYTES:
        assert isinstance(msg, BytesMessage)
        content_type = _OCTET_STREAM
        raw = msg._body_bytes()
        body = _framed(_DATA_PREFIX, 0xA0, 0xB0, raw) if raw else _EMPTY_DATA_SECTION
    elif msg_type == MSG_TYPE_TEXT:
        assert isinstance(msg, TextMessage)
        text = msg._text
        if text is None:
            body = _NULL_VALUE_SECTION
        else:
            body = _framed(_VALUE_PREFIX, 0xA1, 0xB1, text.encode("utf-8"))
    elif msg_type == MSG_TYPE_OBJECT:
        assert isinstance(msg, ObjectMessage)
        if msg._typed_encoding() or msg._has_typed:
            typed_object = _to_amqp_value(msg.getObject())
            typed_object_set = True
        elif msg._serialized is not None:
            ct = msg._content_type or PYTHON_SERIALIZED_CONTENT_TYPE
            content_type = (
                _PYTHON_SERIALIZED if ct == PYTHON_SERIALIZED_CONTENT_TYPE else symbol(ct)
            )
            body = _framed(_DATA_PREFIX, 0xA0, 0xB0, msg._serialized)
        else:
            # Qpid JMS sends an empty serialized-object body as a data section of a serialized
            # null; we have no such object, so an unset body is sent as amqp-value(null).
            body = _NULL_VALUE_SECTION

    message_id = msg._message_id
    correlation_id = msg._correlation_id
    user_id = msg._user_id
    fields: list[Any] = [
        None if message_id is None else _id_object(message_id, "JMSMessageID"),
        user_id.encode("utf-8") if user_id else None,
        None if dest is None else _address(dest, queue_prefix, topic_prefix),
        msg._type,
        None if reply_to is None else _address(reply_to, queue_prefix, topic_prefix),
        (
            correlation_id
            if correlation_id is None or isinstance(correlation_id, bytes)
            else _id_object(correlation_id, "JMSCorrelationID")
        ),
        content_type,
        None,  # content-encoding
        msg._expiration if msg._expiration > 0 else None,
        msg._timestamp if msg._timestamp > 0 else None,
        msg._group_id,
        (msg._group_seq & _UINT_MAX) if msg._group_seq else None,
        None,
    ]
    if props:
        rtg = props.get(JMS_AMQP_REPLY_TO_GROUP_ID)
        if rtg is not None and rtg[1] is not None:
            fields[12] = str(rtg[1])

    d = _data()
    last = 12
    while last >= 0 and fields[last] is None:
        last -= 1
    if last >= 0:
        d.put_described()
        d.enter()
        d.put_ulong(PROPERTIES)
        d.put_list()
        d.enter()
        for i in range(last + 1):
            value = fields[i]
            if value is None:
                d.put_null()
            else:
                _PROPERTY_PUTTERS[i](d, value)
        d.exit()
        d.exit()

    # -- application properties (vendor JMS_AMQP_* names are intercepted, never sent), and
    # the broker's duplicate-detection id (name, value) when the producer stamps one
    late_section: bytes | None = None
    if (
        duplicate_id is not None
        and body is not None
        and not (props and any(not name.startswith(JMS_AMQP_PREFIX) for name in props))
    ):
        # The common case (no application properties, body outside the general encoder): the
        # section is written directly, after the properties, for a fraction of the cost.
        late_section = _duplicate_id_section(*duplicate_id)
    elif props or duplicate_id is not None:
        started = False
        for name, tv in (props or {}).items():
            if name.startswith(JMS_AMQP_PREFIX):
                continue
            if not started:
                started = _start_application_properties(d)
            d.put_string(name)
            _put_typed(d, tv)
        if duplicate_id is not None and duplicate_id[0] not in (props or {}):
            if not started:
                started = _start_application_properties(d)
            d.put_string(duplicate_id[0])
            d.put_string(duplicate_id[1])
        if started:
            d.exit()
            d.exit()

    # -- body sections that need the general encoder
    if msg_type == MSG_TYPE_MAP:
        assert isinstance(msg, MapMessage)
        d.put_described()
        d.enter()
        d.put_ulong(AMQP_VALUE)
        d.put_map()
        d.enter()
        for key, tv in msg._map.items():
            d.put_string(key)
            _put_typed(d, tv)
        d.exit()
        d.exit()
    elif msg_type == MSG_TYPE_STREAM:
        assert isinstance(msg, StreamMessage)
        d.put_described()
        d.enter()
        d.put_ulong(AMQP_SEQUENCE)
        d.put_list()
        d.enter()
        for tv in msg._items:
            _put_typed(d, tv)
        d.exit()
        d.exit()
    elif typed_object_set:
        d.put_described()
        d.enter()
        d.put_ulong(AMQP_VALUE)
        d.put_object(typed_object)
        d.exit()

    parts.append(d.encode())
    if late_section is not None:
        parts.append(late_section)
    if body is not None:
        parts.append(body)
    return b"".join(parts)


def _start_application_properties(d: Data) -> bool:
    d.put_described()
    d.enter()
    d.put_ulong(APPLICATION_PROPERTIES)
    d.put_map()
    d.enter()
    return True


_DUPLICATE_KEYS: dict[str, bytes] = {}


def _duplicate_id_section(name: str, value: str) -> bytes:
    """application-properties {name: value} (two strings), encoded by hand."""
    key = _DUPLICATE_KEYS.get(name)
    if key is None:
        key = _DUPLICATE_KEYS[name] = _framed(b"", 0xA1, 0xB1, name.encode("utf-8"))
    raw = value.encode("utf-8")
    size = len(key) + len(raw) + 3  # entries + the map's count byte
    if size < 256 and len(raw) < 256:
        return b"".join(
            (b"\x00\x53\x74\xc1", bytes((size, 2)), key, b"\xa1", bytes((len(raw),)), raw)
        )
    entries = key + _framed(b"", 0xA1, 0xB1, raw)
    return b"".join(
        (b"\x00\x53\x74\xd1", (len(entries) + 4).to_bytes(4, "big"), b"\x00\x00\x00\x02", entries)
    )


def _put_id(d: Data, value: Any) -> None:
    if isinstance(value, str):
        d.put_string(value)
    elif isinstance(value, ulong):
        d.put_ulong(value)
    elif isinstance(value, uuid.UUID):
        d.put_uuid(value)
    elif isinstance(value, bytes):
        d.put_binary(value)
    else:
        raise MessageFormatException(f"Unsupported id value type {type(value).__name__}")


_PROPERTY_PUTTERS: tuple[Callable[[Data, Any], None], ...] = (
    _put_id,  # message-id
    Data.put_binary,  # user-id
    Data.put_string,  # to
    Data.put_string,  # subject
    Data.put_string,  # reply-to
    _put_id,  # correlation-id
    Data.put_symbol,  # content-type
    Data.put_symbol,  # content-encoding
    Data.put_timestamp,  # absolute-expiry-time
    Data.put_timestamp,  # creation-time
    Data.put_string,  # group-id
    Data.put_uint,  # group-sequence
    Data.put_string,  # reply-to-group-id
)


# ---------------------------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------------------------


def _wrap_ulong(v: int) -> int:
    return int(v) - 2**64 if v > _LONG_MAX else int(v)


# Python class of a decoded AMQP value -> (JavaType, converter). Used for application
# properties, map bodies and stream bodies. AMQP types without a Java equivalent map to the
# nearest one: unsigned ints widen (ulong wraps like Java's long cast), symbol and uuid become
# String and timestamp becomes long milliseconds.
_FROM_AMQP: dict[type, tuple[JavaType, Callable[[Any], Any]]] = {
    bool: (JavaType.BOOLEAN, bool),
    byte: (JavaType.BYTE, int),
    short: (JavaType.SHORT, int),
    int32: (JavaType.INT, int),
    int: (JavaType.LONG, int),
    float32: (JavaType.FLOAT, float),
    float: (JavaType.DOUBLE, float),
    str: (JavaType.STRING, str),
    symbol: (JavaType.STRING, str),
    char: (JavaType.CHAR, str),
    ubyte: (JavaType.SHORT, int),
    ushort: (JavaType.INT, int),
    uint: (JavaType.LONG, int),
    ulong: (JavaType.LONG, _wrap_ulong),
    timestamp: (JavaType.LONG, int),
    uuid.UUID: (JavaType.STRING, str),
    bytes: (JavaType.BYTES, bytes),
}
_NULL_TV: TypedValue = (JavaType.STRING, None)


def _typed_from_amqp(value: Any, binary_ok: bool) -> TypedValue:
    if value is None:
        return _NULL_TV
    entry = _FROM_AMQP.get(type(value))
    if entry is None:
        return (JavaType.OBJECT, value)
    jt, conv = entry
    if jt is JavaType.BYTES and not binary_ok:
        # JMS properties cannot hold byte[]; keep the value visible through getObjectProperty.
        return (JavaType.OBJECT, bytes(value))
    return (jt, conv(value))


_KIND_BY_LEGACY = {
    frozenset(("queue",)): QUEUE_TYPE,
    frozenset(("topic",)): TOPIC_TYPE,
    frozenset(("temporary", "queue")): TEMP_QUEUE_TYPE,
    frozenset(("temporary", "topic")): TEMP_TOPIC_TYPE,
}


def _type_byte(annotations: dict[Any, Any], key: symbol, legacy_key: symbol) -> int:
    value = annotations.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    legacy = annotations.get(legacy_key)
    if isinstance(legacy, str):
        kinds = frozenset(p.strip().lower() for p in legacy.split(",") if p.strip())
        return _KIND_BY_LEGACY.get(kinds, -1)
    return -1


def _make_destination(
    address: str | None,
    type_byte: int,
    consumer_destination: Destination | None,
    use_consumer_for_type_only: bool,
    queue_prefix: str | None,
    topic_prefix: str | None,
) -> Destination | None:
    if address is None:
        return None if use_consumer_for_type_only else consumer_destination
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


def _text_charset(content_type: str | None) -> str | None:
    """The charset of a textual content type, or None when the type is not textual."""
    if not content_type:
        return None
    main, *params = content_type.split(";")
    mime = main.strip().lower()
    textual = (
        mime.startswith("text/")
        or mime
        in (
            "application/json",
            "application/xml",
            "application/javascript",
            "application/ecmascript",
        )
        or mime.endswith("+json")
        or mime.endswith("+xml")
    )
    if not textual:
        return None
    charset = "utf-8"
    for param in params:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            charset = value.strip().strip('"') or "utf-8"
    try:
        codecs.lookup(charset)
    except LookupError:
        return None  # an unknown charset cannot be decoded: treat the body as bytes
    return charset


def _is_serialized(content_type: str | None) -> bool:
    return content_type in (JAVA_SERIALIZED_CONTENT_TYPE, PYTHON_SERIALIZED_CONTENT_TYPE)


_NO_BODY = 0
_BODY_DATA = 1
_BODY_SEQUENCE = 2
_BODY_VALUE = 3


def decode_message(
    payload: bytes | bytearray | memoryview,
    consumer_destination: Destination | None,
    *,
    deserialization_policy: DeserializationPolicy | None = None,
    queue_prefix: str | None = None,
    topic_prefix: str | None = None,
    validate_property_names: bool = True,
    read_only: bool = True,
    now_ms: int | None = None,
) -> Message:
    """Build the JMS message for a received AMQP bare message.

    ``consumer_destination`` supplies the destination kind when the message carries no type
    annotations (and JMSDestination when it has no ``to``). The message comes back read-only
    (properties and body) unless ``read_only`` is False. Raises :class:`CodecError` for a
    payload that is not a valid AMQP message or contradicts its JMS type annotation.
    """
    try:
        return _decode(
            payload,
            consumer_destination,
            deserialization_policy,
            queue_prefix,
            topic_prefix,
            validate_property_names,
            read_only,
            now_ms,
        )
    except CodecError:
        raise
    except Exception as exc:
        raise CodecError(f"Cannot decode AMQP message: {type(exc).__name__}: {exc}") from exc


def _decode(
    payload: bytes | bytearray | memoryview,
    consumer_destination: Destination | None,
    policy: DeserializationPolicy | None,
    queue_prefix: str | None,
    topic_prefix: str | None,
    validate_property_names: bool,
    read_only: bool,
    now_ms: int | None,
) -> Message:
    if len(payload) == 0:
        raise CodecError("Cannot decode AMQP message: the payload is empty")
    header: list[Any] | None = None
    annotations: dict[Any, Any] = {}
    properties: list[Any] = []
    app_properties: dict[Any, Any] | None = None
    body_kind = _NO_BODY
    data_parts: list[bytes] = []
    sequence: list[Any] = []
    value: Any = None

    for index, (descriptor, content) in enumerate(read_message_sections(payload)):
        if descriptor is _NOT_DESCRIBED:
            raise CodecError(
                f"Cannot decode AMQP message: section {index} is a {type(content).__name__}, "
                "not a described section"
            )
        code = _SYMBOLIC_DESCRIPTORS.get(descriptor) if isinstance(descriptor, str) else descriptor
        if code == HEADER:
            header = _as_list(content, "header")
        elif code == MESSAGE_ANNOTATIONS:
            annotations = _as_map(content, "message-annotations")
        elif code == PROPERTIES:
            properties = _as_list(content, "properties")
        elif code == APPLICATION_PROPERTIES:
            app_properties = _as_map(content, "application-properties")
        elif code == DATA:
            if body_kind not in (_NO_BODY, _BODY_DATA):
                raise CodecError("Cannot decode AMQP message: data mixed with another body kind")
            if not isinstance(content, bytes):
                raise CodecError("Cannot decode AMQP message: a data section must hold binary")
            body_kind = _BODY_DATA
            data_parts.append(content)
        elif code == AMQP_SEQUENCE:
            if body_kind not in (_NO_BODY, _BODY_SEQUENCE):
                raise CodecError(
                    "Cannot decode AMQP message: amqp-sequence mixed with another body kind"
                )
            if not isinstance(content, list):
                raise CodecError("Cannot decode AMQP message: amqp-sequence must hold a list")
            body_kind = _BODY_SEQUENCE
            sequence.extend(content)
        elif code == AMQP_VALUE:
            if body_kind != _NO_BODY:
                raise CodecError("Cannot decode AMQP message: more than one body section")
            body_kind = _BODY_VALUE
            value = content
        elif code in (DELIVERY_ANNOTATIONS, FOOTER):
            pass  # hop-by-hop / trailing data with no JMS meaning
        else:
            raise CodecError(
                f"Cannot decode AMQP message: unknown section descriptor {descriptor!r}"
            )

    # The properties fields, absent trailing ones padded with null (one list, not a bounds
    # check per field read).
    fields = properties if len(properties) >= 13 else properties + _NULL_FIELDS[len(properties) :]
    content_type = fields[6]
    if content_type is not None:
        content_type = str(content_type)

    # -- message class and body
    msg_type_value = annotations.get(JMS_MSG_TYPE)
    msg: Message
    if msg_type_value is not None:
        if isinstance(msg_type_value, bool) or not isinstance(msg_type_value, int):
            raise CodecError(
                f"Invalid JMS Message Type annotation value {msg_type_value!r} "
                f"({type(msg_type_value).__name__})"
            )
        msg = _body_for_annotation(
            int(msg_type_value), body_kind, data_parts, sequence, value, content_type
        )
    else:
        msg = _body_by_inference(body_kind, data_parts, sequence, value, content_type)
    if isinstance(msg, ObjectMessage) and policy is not None:
        msg._set_deserialization_policy(policy)

    # -- header
    delivery_count = 0
    ttl = 0
    if header:
        if len(header) < 5:
            header = header + _NULL_FIELDS[len(header) : 5]
        durable = header[0]
        priority = header[1]
        ttl = _integer(header[2] or 0, "header.ttl")
        delivery_count = _integer(header[4] or 0, "header.delivery-count")
        if not durable:
            msg._delivery_mode = DeliveryMode.NON_PERSISTENT
        if priority is not None:
            msg._priority = min(_integer(priority, "header.priority"), 9)
    else:
        msg._delivery_mode = DeliveryMode.NON_PERSISTENT  # AMQP default durable=false
    msg._redelivered = delivery_count > 0
    msg._delivery_count = int(delivery_count) + 1

    # -- properties
    if properties:
        msg._message_id = _id_field(to_message_id_string, fields[0], "properties.message-id")
        user_id = fields[1]
        if isinstance(user_id, bytes | str) and user_id:
            # bytes(n) of a non-binary user-id (a uint from a misbehaving peer) would allocate
            # n zero bytes, up to 4 GB; anything but binary or a string is ignored.
            msg._user_id = (
                user_id if isinstance(user_id, str) else user_id.decode("utf-8", "replace")
            )
        subject = fields[3]
        if subject is not None:
            msg._type = str(subject)
        correlation_id = fields[5]
        if isinstance(correlation_id, bytes):
            msg._correlation_id = correlation_id
        elif correlation_id is not None:
            msg._correlation_id = _id_field(
                to_correlation_id_string, correlation_id, "properties.correlation-id"
            )
        expiry = fields[8]
        if expiry is not None:
            msg._expiration = _integer(expiry, "properties.absolute-expiry-time")
        creation = fields[9]
        if creation is not None:
            msg._timestamp = _integer(creation, "properties.creation-time")
        group_id = fields[10]
        if group_id is not None:
            msg._group_id = str(group_id)
        group_seq = fields[11]
        if group_seq is not None:
            seq = _integer(group_seq, "properties.group-sequence") & _UINT_MAX
            msg._group_seq = seq - 2**32 if seq > _INT_MAX else seq
        reply_to_group = fields[12]
        if reply_to_group is not None:
            msg._store(JMS_AMQP_REPLY_TO_GROUP_ID, (JavaType.STRING, str(reply_to_group)))
    if not msg._expiration and ttl:
        # No absolute expiry but a header ttl: Qpid JMS synthesises now + ttl.
        msg._expiration = (now_ms if now_ms is not None else int(time.time() * 1000)) + int(ttl)

    to = fields[2]
    reply_to = fields[4]
    msg._destination = _make_destination(
        None if to is None else str(to),
        _type_byte(annotations, JMS_DEST_TYPE, LEGACY_TO_TYPE),
        consumer_destination,
        False,
        queue_prefix,
        topic_prefix,
    )
    msg._reply_to = _make_destination(
        None if reply_to is None else str(reply_to),
        _type_byte(annotations, JMS_REPLY_TO_TYPE, LEGACY_REPLY_TYPE),
        consumer_destination,
        True,
        queue_prefix,
        topic_prefix,
    )

    delivery_time = annotations.get(JMS_DELIVERY_TIME)
    if isinstance(delivery_time, int | float) and not isinstance(delivery_time, bool):
        msg._delivery_time = int(delivery_time)
    else:
        if delivery_time is not None:
            # As Qpid JMS treats an annotation it cannot use: the message is still delivered
            # (it used to be dropped); only JMSDeliveryTime falls back to the timestamp.
            log.warning(
                "ignoring x-opt-delivery-time annotation of type %s (%.80r) on message %s: a "
                "timestamp or long is required; JMSDeliveryTime is the JMSTimestamp instead",
                type(delivery_time).__name__,
                delivery_time,
                msg._message_id,
            )
        msg._delivery_time = msg._timestamp

    # -- application properties
    if app_properties:
        store = msg._properties
        if store is None:
            store = msg._properties = {}
        for key, raw in app_properties.items():
            if not isinstance(key, str):
                raise CodecError(
                    f"Invalid application-properties key {key!r}: keys must be strings"
                )
            store[str(key)] = _typed_from_amqp(raw, False)

    # Brokers annotate dead-lettered and expired copies with where they came from (Artemis:
    # x-opt-ORIG-*). They are exposed as read-only JMSPY_* properties, documented in the README.
    if len(annotations) > 1 and not _DEAD_LETTER_KEYS.isdisjoint(annotations):
        for key, name in DEAD_LETTER_ANNOTATIONS.items():
            value = annotations.get(key)
            if value is not None:
                store = msg._properties
                if store is None:
                    store = msg._properties = {}
                store[name] = (JavaType.STRING, str(value))

    msg._validate_names = validate_property_names
    if read_only:
        msg._set_read_only(True)
    return msg


DEAD_LETTER_ANNOTATIONS = {
    symbol("x-opt-ORIG-ADDRESS"): "JMSPY_ORIGINAL_DESTINATION",
    symbol("x-opt-ORIG-QUEUE"): "JMSPY_ORIGINAL_QUEUE",
    symbol("x-opt-ORIG-MESSAGE-ID"): "JMSPY_ORIGINAL_MESSAGE_ID",
    symbol("x-opt-ACTUAL-EXPIRY"): "JMSPY_ACTUAL_EXPIRY",
}
_DEAD_LETTER_KEYS = DEAD_LETTER_ANNOTATIONS.keys()


# Marks a top-level value that is not a described section in _proton_sections' output.
_NOT_DESCRIBED = object()
NOT_DESCRIBED = _NOT_DESCRIBED


def read_message_sections(
    payload: bytes | bytearray | memoryview,
) -> Iterable[tuple[Any, Any]]:
    """(descriptor, value) of each section of an AMQP bare message, in wire order: the one
    section reader of jmspy, its conformance suite and its test peer.

    The pure-Python reader (amqp_reader.read_sections) gives the same values as proton.Data,
    several times faster; what it does not read (malformed input included) goes through
    proton.Data, so the result and any error are proton's. Descriptors are ulong codes or
    symbols; arrays come as plain lists; a top-level value that is not described comes as
    ``(NOT_DESCRIBED, value)`` from the proton path. Raises :class:`CodecError` (or proton's
    DataException) for input neither reads.
    """
    try:
        return read_sections(payload)
    except AmqpDecodeError:
        return _proton_sections(payload)


def _decoded(payload: bytes | bytearray | memoryview) -> Data:
    """The thread's scratch Data holding every top-level value of ``payload``, rewound."""
    view = memoryview(payload)
    total = len(view)
    d = _data()
    pos = 0
    # Each decode() call appends one top-level value, so all sections land in one Data and are
    # then walked once.
    index = 0
    while pos < total:
        # Data.decode is typed for bytes but takes any buffer; a memoryview slice avoids
        # copying the rest of the payload for every section.
        try:
            consumed = d.decode(cast(bytes, view[pos:]))
        except DataException as exc:
            raise CodecError(undecodable_section(view, index, pos, exc)) from exc
        if consumed <= 0:
            raise CodecError(f"Cannot decode AMQP message: no progress at byte {pos}")
        pos += consumed
        index += 1
    d.rewind()
    return d


def _proton_values(payload: bytes | bytearray | memoryview) -> list[Any]:
    """The top-level values of ``payload`` read through proton.Data (the reference reader)."""
    d = _decoded(payload)
    out: list[Any] = []
    t = d.next()
    while t is not None:
        out.append(_GETTERS[t](d))
        t = d.next()
    return out


def _proton_sections(payload: bytes | bytearray | memoryview) -> Iterator[tuple[Any, Any]]:
    """(descriptor, value) of each section through proton.Data, the fallback of read_sections.

    The whole payload is decoded before this returns; the sections are then read one by one as
    the caller iterates, and a top-level value that is not described comes as
    ``(_NOT_DESCRIBED, value)``.
    """
    return _walk_sections(_decoded(payload))


def _walk_sections(d: Data) -> Iterator[tuple[Any, Any]]:
    t = d.next()
    while t is not None:
        section = _GETTERS[t](d)
        if isinstance(section, Described):
            yield section.descriptor, section.value
        else:
            yield _NOT_DESCRIBED, section
        t = d.next()


def _read_binary(d: Data) -> bytes:
    # get_binary returns a memoryview into the Data's own buffer, which the next clear() frees.
    return bytes(d.get_binary())


# Data.next() already returns the type of the node it moves to, so the readers below use it
# instead of asking type() again: decoding is dominated by these per-node calls.


def _read_list(d: Data) -> list[Any]:
    out: list[Any] = []
    if d.enter():
        nxt = d.next
        t = nxt()
        while t is not None:
            out.append(_GETTERS[t](d))
            t = nxt()
        d.exit()
    return out


def _read_map(d: Data) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    if d.enter():
        nxt = d.next
        t = nxt()
        while t is not None:
            key = _GETTERS[t](d)
            t = nxt()
            if t is None:
                out[key] = None
                break
            out[key] = _GETTERS[t](d)
            t = nxt()
        d.exit()
    return out


def _read_described(d: Data) -> Described:
    d.enter()
    descriptor = _read_next(d)
    value = _read_next(d)
    d.exit()
    return Described(descriptor, value)


def _read_array(d: Data) -> list[Any]:
    # Arrays have no JMS equivalent; a plain list keeps the elements reachable.
    _count, described, _type = d.get_array()
    out: list[Any] = []
    if d.enter():
        if described:
            d.next()
        t = d.next()
        while t is not None:
            out.append(_GETTERS[t](d))
            t = d.next()
        d.exit()
    return out


def _unsupported(d: Data) -> Any:
    raise CodecError(f"Cannot decode AMQP message: unsupported AMQP type code {d.type()}")


class _Getters(dict[int, Callable[[Data], Any]]):
    def __missing__(self, key: int) -> Callable[[Data], Any]:
        return _unsupported


_GETTERS = _Getters(Data.get_mappings)
_GETTERS[Data.BINARY] = _read_binary
_GETTERS[Data.LIST] = _read_list
_GETTERS[Data.MAP] = _read_map
_GETTERS[Data.DESCRIBED] = _read_described
_GETTERS[Data.ARRAY] = _read_array


def _read_next(d: Data) -> Any:
    """Move to the next node and read it as Python values (None when there is none)."""
    t = d.next()
    if t is None:
        return None
    return _GETTERS[t](d)


_NULL_FIELDS: list[Any] = [None] * 13


def _integer(value: Any, field: str) -> int:
    """A numeric header/properties field; another type names the field in the drop reason
    (it used to be a bare ``TypeError: int() argument must be ...``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    raise CodecError(
        f"Cannot decode AMQP message: {field} holds {amqp_type_name(value)}, not a number"
    )


def _id_field(convert: Callable[[Any], str | None], value: Any, field: str) -> str | None:
    try:
        return convert(value)
    except IdConversionError as exc:
        raise CodecError(f"Cannot decode AMQP message: {field}: {exc}") from exc


def _as_list(content: Any, what: str) -> list[Any]:
    if content is None:
        return []
    if not isinstance(content, list):
        raise CodecError(
            f"Cannot decode AMQP message: the {what} section must hold a list, "
            f"not {amqp_type_name(content)}"
        )
    return content


def _as_map(content: Any, what: str) -> dict[Any, Any]:
    if content is None:
        return {}
    if not isinstance(content, dict):
        raise CodecError(
            f"Cannot decode AMQP message: the {what} section must hold a map, "
            f"not {amqp_type_name(content)}"
        )
    return content


def _typed_map(value: dict[Any, Any]) -> dict[str, TypedValue]:
    result: dict[str, TypedValue] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise CodecError(f"Invalid MapMessage body: key {key!r} is not a string")
        result[str(key)] = _typed_from_amqp(item, True)
    return result


def _text_from_data(data: bytes, content_type: str | None) -> str:
    charset = _text_charset(content_type) or "utf-8"
    # Java's new String(bytes, charset) replaces malformed input rather than failing.
    return data.decode(charset, "replace")


def _body_for_annotation(
    msg_type: int,
    body_kind: int,
    data_parts: list[bytes],
    sequence: list[Any],
    value: Any,
    content_type: str | None,
) -> Message:
    """The message for an explicit ``x-opt-jms-msg-type``, checking the body fits it."""
    if msg_type == MSG_TYPE_MESSAGE:
        return Message()
    if msg_type == MSG_TYPE_TEXT:
        text_msg = TextMessage()
        if body_kind == _BODY_VALUE and (value is None or isinstance(value, str)):
            text_msg._text = None if value is None else str(value)
        elif body_kind == _BODY_DATA:
            text_msg._text = _text_from_data(b"".join(data_parts), content_type)
        elif body_kind != _NO_BODY:
            raise CodecError(_mismatch("TextMessage", body_kind, value))
        return text_msg
    if msg_type == MSG_TYPE_BYTES:
        bytes_msg = BytesMessage()
        if body_kind == _BODY_DATA:
            bytes_msg._set_body_bytes(b"".join(data_parts))
        elif body_kind == _BODY_VALUE and isinstance(value, bytes):
            bytes_msg._set_body_bytes(value)
        elif body_kind == _NO_BODY or (body_kind == _BODY_VALUE and value is None):
            bytes_msg._set_body_bytes(b"")
        else:
            raise CodecError(_mismatch("BytesMessage", body_kind, value))
        return bytes_msg
    if msg_type == MSG_TYPE_MAP:
        map_msg = MapMessage()
        if body_kind == _BODY_VALUE and isinstance(value, dict):
            map_msg._map = _typed_map(value)
        elif not (body_kind == _NO_BODY or (body_kind == _BODY_VALUE and value is None)):
            raise CodecError(_mismatch("MapMessage", body_kind, value))
        return map_msg
    if msg_type == MSG_TYPE_STREAM:
        stream_msg = StreamMessage()
        if body_kind == _BODY_SEQUENCE:
            items = sequence
        elif body_kind == _BODY_VALUE and isinstance(value, list):
            items = value
        elif body_kind == _NO_BODY or (body_kind == _BODY_VALUE and value is None):
            items = []
        else:
            raise CodecError(_mismatch("StreamMessage", body_kind, value))
        stream_msg._set_items([_typed_from_amqp(v, True) for v in items])
        return stream_msg
    if msg_type == MSG_TYPE_OBJECT:
        return _object_message(body_kind, data_parts, sequence, value, content_type)
    raise CodecError(f"Invalid JMS Message Type annotation value {msg_type!r}")


def _object_message(
    body_kind: int,
    data_parts: list[bytes],
    sequence: list[Any],
    value: Any,
    content_type: str | None,
) -> ObjectMessage:
    obj_msg = ObjectMessage()
    if body_kind == _BODY_DATA:
        obj_msg._set_serialized(b"".join(data_parts), content_type)
    elif body_kind == _BODY_SEQUENCE:
        obj_msg._set_typed_body(list(sequence))
    elif body_kind == _BODY_VALUE:
        if value is not None:
            obj_msg._set_typed_body(value)
    return obj_msg


def _body_by_inference(
    body_kind: int,
    data_parts: list[bytes],
    sequence: list[Any],
    value: Any,
    content_type: str | None,
) -> Message:
    """Pick the JMS type of a message from a non-JMS producer (Qpid JMS createWithoutAnnotation)."""
    if body_kind == _NO_BODY:
        if _is_serialized(content_type):
            return ObjectMessage()
        if content_type is None or content_type == OCTET_STREAM_CONTENT_TYPE:
            return _body_for_annotation(
                MSG_TYPE_BYTES, body_kind, data_parts, sequence, value, content_type
            )
        if _text_charset(content_type) is not None:
            return TextMessage()
        return Message()
    if body_kind == _BODY_DATA:
        if _is_serialized(content_type):
            return _object_message(body_kind, data_parts, sequence, value, content_type)
        if (
            content_type is not None
            and content_type != OCTET_STREAM_CONTENT_TYPE
            and _text_charset(content_type) is not None
        ):
            return _body_for_annotation(
                MSG_TYPE_TEXT, body_kind, data_parts, sequence, value, content_type
            )
        return _body_for_annotation(
            MSG_TYPE_BYTES, body_kind, data_parts, sequence, value, content_type
        )
    if body_kind == _BODY_VALUE:
        if value is None or isinstance(value, str):
            return _body_for_annotation(
                MSG_TYPE_TEXT, body_kind, data_parts, sequence, value, content_type
            )
        if isinstance(value, bytes):
            return _body_for_annotation(
                MSG_TYPE_BYTES, body_kind, data_parts, sequence, value, content_type
            )
        return _object_message(body_kind, data_parts, sequence, value, content_type)
    return _object_message(body_kind, data_parts, sequence, value, content_type)


def _mismatch(jms_type: str, body_kind: int, value: Any) -> str:
    kind = {_BODY_DATA: "data", _BODY_SEQUENCE: "amqp-sequence", _BODY_VALUE: "amqp-value"}.get(
        body_kind, "no body"
    )
    detail = f" holding {type(value).__name__}" if body_kind == _BODY_VALUE else ""
    return f"Cannot decode AMQP message: a {jms_type} cannot have a {kind} body{detail}"
