"""JMS message -> AMQP 1.0 bare message, as Qpid JMS writes it.

The message is read through its facade (``get_wire_fields``, ``get_properties`` and the body
type's typed accessors), never through its private fields. Three pieces are cached or framed by
hand because they are on the path of every send:

* the header section, per (durable, priority, ttl);
* the message-annotations section, per (message type, destination type, reply-to type) when no
  delivery time is sent (Qpid JMS keeps the same cache);
* ``data`` and string ``amqp-value`` body sections, which are a fixed 3-byte descriptor plus an
  AMQP binary/string constructor, so copying a large body through proton.Data is avoided.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from typing import Any

from proton import (
    Data,
    byte,
    char,
    float32,
    int32,
    short,
    symbol,
)

from jmspy._amqp.codec.common import (
    _DATA_PREFIX,
    _EMPTY_DATA_SECTION,
    _LONG_MAX,
    _NULL_VALUE_SECTION,
    _OCTET_STREAM,
    _PYTHON_SERIALIZED,
    _UINT_MAX,
    _VALUE_PREFIX,
    AMQP_SEQUENCE,
    AMQP_VALUE,
    APPLICATION_PROPERTIES,
    HEADER,
    JMS_DELIVERY_TIME,
    JMS_DEST_TYPE,
    JMS_MSG_TYPE,
    JMS_REPLY_TO_TYPE,
    MESSAGE_ANNOTATIONS,
    MSG_TYPE_BYTES,
    MSG_TYPE_MAP,
    MSG_TYPE_OBJECT,
    MSG_TYPE_STREAM,
    MSG_TYPE_TEXT,
    _data,
    _framed,
)
from jmspy._amqp.codec.properties import properties_section
from jmspy._amqp.codec.typed_values import (
    application_properties_section,
    encode_long,
    typed_list_section,
    typed_map_section,
)
from jmspy._amqp.ids import IdConversionError, to_id_object
from jmspy.destination import Destination
from jmspy.errors import JMSException, MessageFormatException
from jmspy.message import (
    JMS_AMQP_PREFIX,
    JMS_AMQP_REPLY_TO_GROUP_ID,
    JMS_AMQP_TTL,
    PYTHON_SERIALIZED_CONTENT_TYPE,
    BytesMessage,
    DeliveryMode,
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

_TIMESTAMP = struct.Struct(">Bq")
_MAP32_HEADER = struct.Struct(">II")
_DELIVERY_TIME_KEY = _framed(b"", 0xA3, 0xB3, JMS_DELIVERY_TIME.encode("ascii"))
_SCHEDULED_ENQUEUE_TIME_KEY = _framed(b"", 0xA3, 0xB3, SCHEDULED_ENQUEUE_TIME.encode("ascii"))


def _annotations_section(
    msg_type: int,
    dest_type: int,
    reply_type: int,
    delivery_time: int | None,
    delay_form: str = "delivery-time",
) -> bytes:
    key = (msg_type, dest_type, reply_type)
    cached = _MA_CACHE.get(key)
    if cached is None:
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
        d.exit()
        d.exit()
        cached = bytes(d.encode())
        if len(_MA_CACHE) >= _CACHE_LIMIT:
            _MA_CACHE.clear()
        _MA_CACHE[key] = cached
    if delivery_time is None:
        return cached
    # A delayed message: the cached section with one more entry, as proton.Data would append
    # it (every delayed send used to build the whole section through proton.Data).
    if delay_form == "scheduled-enqueue-time":
        # Azure Service Bus schedules with its own annotation, an AMQP timestamp.
        entry = _SCHEDULED_ENQUEUE_TIME_KEY + _TIMESTAMP.pack(0x83, delivery_time)
    else:
        # Qpid JMS writes the absolute delivery time as an AMQP long (ms since the epoch).
        entry = _DELIVERY_TIME_KEY + encode_long(delivery_time)
    size, count = _MAP32_HEADER.unpack_from(cached, 4)  # after 00 53 72 d1
    return b"".join(
        (cached[:4], _MAP32_HEADER.pack(size + len(entry), count + 2), cached[12:], entry)
    )


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
    props = msg.get_properties()
    (
        delivery_mode,
        priority,
        dest,
        reply_to,
        delivery_time,
        message_id,
        correlation_id,
        user_id,
        jms_type,
        expiration,
        creation_time,
        group_id,
        group_seq,
    ) = msg.get_wire_fields()

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
    durable = delivery_mode == DeliveryMode.PERSISTENT
    if durable or priority != 4 or header_ttl:
        parts.append(_header_section(durable, priority, header_ttl))

    # -- message annotations
    msg_type = msg.jms_msg_type
    # Some brokers (IBM MQ AMQP channels) reject any message carrying annotations.
    if message_annotations:
        parts.append(
            _annotations_section(
                msg_type,
                -1 if dest is None else dest.type_code,
                -1 if reply_to is None else reply_to.type_code,
                delivery_time if delivery_time_transmitted else None,
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
        raw = msg.get_body_bytes()
        body = _framed(_DATA_PREFIX, 0xA0, 0xB0, raw) if raw else _EMPTY_DATA_SECTION
    elif msg_type == MSG_TYPE_TEXT:
        assert isinstance(msg, TextMessage)
        text = msg.getText()
        if text is None:
            body = _NULL_VALUE_SECTION
        else:
            body = _framed(_VALUE_PREFIX, 0xA1, 0xB1, text.encode("utf-8"))
    elif msg_type == MSG_TYPE_OBJECT:
        assert isinstance(msg, ObjectMessage)
        serialized, serialized_type = msg.get_serialized_body()
        if msg.uses_typed_encoding() or msg.has_typed_body():
            typed_object = _to_amqp_value(msg.getObject())
            typed_object_set = True
        elif serialized is not None:
            ct = serialized_type or PYTHON_SERIALIZED_CONTENT_TYPE
            content_type = (
                _PYTHON_SERIALIZED if ct == PYTHON_SERIALIZED_CONTENT_TYPE else symbol(ct)
            )
            body = _framed(_DATA_PREFIX, 0xA0, 0xB0, serialized)
        else:
            # Qpid JMS sends an empty serialized-object body as a data section of a serialized
            # null; we have no such object, so an unset body is sent as amqp-value(null).
            body = _NULL_VALUE_SECTION

    fields: list[Any] = [
        None if message_id is None else _id_object(message_id, "JMSMessageID"),
        user_id.encode("utf-8") if user_id else None,
        None if dest is None else _address(dest, queue_prefix, topic_prefix),
        jms_type,
        None if reply_to is None else _address(reply_to, queue_prefix, topic_prefix),
        (
            correlation_id
            if correlation_id is None or isinstance(correlation_id, bytes)
            else _id_object(correlation_id, "JMSCorrelationID")
        ),
        content_type,
        None,  # content-encoding
        expiration if expiration > 0 else None,
        creation_time if creation_time > 0 else None,
        group_id,
        (group_seq & _UINT_MAX) if group_seq else None,
        None,
    ]
    if props:
        rtg = props.get(JMS_AMQP_REPLY_TO_GROUP_ID)
        if rtg is not None and rtg[1] is not None:
            fields[12] = str(rtg[1])

    parts.append(properties_section(fields))

    # -- application properties (vendor JMS_AMQP_* names are intercepted, never sent), and
    # the broker's duplicate-detection id (name, value) when the producer stamps one
    d: Data | None = None  # proton's general encoder, only for what needs it
    if props or duplicate_id is not None:
        section = application_properties_section(props, duplicate_id)
        if section is not None:
            parts.append(section)
        else:  # a value only proton.Data writes
            d = _data()
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

    # -- MapMessage and StreamMessage bodies: written in Python unless a value needs proton
    collection: dict[str, TypedValue] | list[TypedValue] | None = None
    if msg_type == MSG_TYPE_MAP:
        assert isinstance(msg, MapMessage)
        entries = msg.get_typed_entries()
        collection = entries
        descriptor, body = AMQP_VALUE, typed_map_section(entries)
    elif msg_type == MSG_TYPE_STREAM:
        assert isinstance(msg, StreamMessage)
        collection = msg.get_typed_items()
        descriptor, body = AMQP_SEQUENCE, typed_list_section(collection)
    if collection is not None and body is None:
        if d is None:
            d = _data()
        _put_typed_body(d, descriptor, collection)
    # -- body sections that need the general encoder
    if typed_object_set:
        if d is None:
            d = _data()
        d.put_described()
        d.enter()
        d.put_ulong(AMQP_VALUE)
        d.put_object(typed_object)
        d.exit()

    if d is not None:
        parts.append(d.encode())
    if body is not None:
        parts.append(body)
    return b"".join(parts)


def _put_typed_body(
    d: Data, descriptor: int, body: dict[str, TypedValue] | list[TypedValue]
) -> None:
    """A MapMessage body (amqp-value of a map with string keys) or a StreamMessage body
    (amqp-sequence of a list): the one encoder of typed collections."""
    d.put_described()
    d.enter()
    d.put_ulong(descriptor)
    if isinstance(body, dict):
        d.put_map()
        d.enter()
        for key, tv in body.items():
            d.put_string(key)
            _put_typed(d, tv)
    else:
        d.put_list()
        d.enter()
        for tv in body:
            _put_typed(d, tv)
    d.exit()
    d.exit()


def _start_application_properties(d: Data) -> bool:
    d.put_described()
    d.enter()
    d.put_ulong(APPLICATION_PROPERTIES)
    d.put_map()
    d.enter()
    return True
