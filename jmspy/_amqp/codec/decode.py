"""AMQP 1.0 bare message -> JMS message, as Qpid JMS reads it (including the choice of the
JMS type of a message from a non-JMS producer).

The message is filled through its facade (``set_received_header``, ``set_received_properties``,
the body type's typed setters...), never through its private fields.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from proton import (
    byte,
    symbol,
    ulong,
)

from jmspy._amqp.codec.bodies import (
    _BODY_DATA,
    _BODY_SEQUENCE,
    _BODY_VALUE,
    _NO_BODY,
    _body_by_inference,
    _body_for_annotation,
    _typed_from_amqp,
)
from jmspy._amqp.codec.common import (
    _INT_MAX,
    _SYMBOLIC_DESCRIPTORS,
    _UINT_MAX,
    AMQP_SEQUENCE,
    AMQP_VALUE,
    APPLICATION_PROPERTIES,
    DATA,
    DELIVERY_ANNOTATIONS,
    FOOTER,
    HEADER,
    JMS_DELIVERY_TIME,
    JMS_DEST_TYPE,
    JMS_MSG_TYPE,
    JMS_REPLY_TO_TYPE,
    LEGACY_REPLY_TYPE,
    LEGACY_TO_TYPE,
    MESSAGE_ANNOTATIONS,
    PROPERTIES,
    CodecError,
    log,
)
from jmspy._amqp.codec.destinations import received_destination, type_byte
from jmspy._amqp.codec.proton_fallback import _NOT_DESCRIBED, read_message_sections
from jmspy._amqp.decode_report import amqp_type_name
from jmspy._amqp.ids import (
    IdConversionError,
    _has_type_prefix,
    to_correlation_id_string,
    to_message_id_string,
)
from jmspy.destination import (
    Destination,
)
from jmspy.message import (
    JMS_AMQP_REPLY_TO_GROUP_ID,
    DeserializationPolicy,
    JavaType,
    Message,
    ObjectMessage,
)


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
    destinations: dict[tuple[str, int], Destination | None] | None = None,
) -> Message:
    """Build the JMS message for a received AMQP bare message.

    ``consumer_destination`` supplies the destination kind when the message carries no type
    annotations (and JMSDestination when it has no ``to``). The message comes back read-only
    (properties and body) unless ``read_only`` is False. ``destinations`` is a cache of
    received destinations owned by one consumer (whose destination and prefixes are always
    the same), kept from message to message. Raises :class:`CodecError` for a
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
            destinations,
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
    destinations: dict[tuple[str, int], Destination | None] | None,
) -> Message:
    # This runs on the engine thread for every received message, so it is written for speed:
    # exact type checks before the general ones, the usual section order first, no
    # intermediate containers for the usual single data section.
    if len(payload) == 0:
        raise CodecError("Cannot decode AMQP message: the payload is empty")
    header: list[Any] | None = None
    annotations: dict[Any, Any] = _NO_ANNOTATIONS
    properties: list[Any] | None = None
    app_properties: dict[Any, Any] | None = None
    body_kind = _NO_BODY
    data: bytes = b""
    data_parts: list[bytes] | None = None
    sequence: list[Any] = []
    value: Any = None

    for index, (descriptor, content) in enumerate(read_message_sections(payload)):
        if type(descriptor) is not ulong:
            descriptor = _section_code(descriptor, content, index)
        if descriptor == PROPERTIES:
            properties = content if type(content) is list else _as_list(content, "properties")
        elif descriptor == MESSAGE_ANNOTATIONS:
            annotations = (
                content if type(content) is dict else _as_map(content, "message-annotations")
            )
        elif descriptor == DATA:
            if type(content) is not bytes:
                raise CodecError("Cannot decode AMQP message: a data section must hold binary")
            if body_kind == _NO_BODY:
                body_kind = _BODY_DATA
                data = content
            elif body_kind == _BODY_DATA:
                if data_parts is None:
                    data_parts = [data]
                data_parts.append(content)
            else:
                raise CodecError("Cannot decode AMQP message: data mixed with another body kind")
        elif descriptor == HEADER:
            header = _as_list(content, "header")
        elif descriptor == APPLICATION_PROPERTIES:
            app_properties = _as_map(content, "application-properties")
        elif descriptor == AMQP_VALUE:
            if body_kind != _NO_BODY:
                raise CodecError("Cannot decode AMQP message: more than one body section")
            body_kind = _BODY_VALUE
            value = content
        elif descriptor == AMQP_SEQUENCE:
            if body_kind not in (_NO_BODY, _BODY_SEQUENCE):
                raise CodecError(
                    "Cannot decode AMQP message: amqp-sequence mixed with another body kind"
                )
            if not isinstance(content, list):
                raise CodecError("Cannot decode AMQP message: amqp-sequence must hold a list")
            body_kind = _BODY_SEQUENCE
            sequence.extend(content)
        elif descriptor in (DELIVERY_ANNOTATIONS, FOOTER):
            pass  # hop-by-hop / trailing data with no JMS meaning
        else:
            raise CodecError(
                f"Cannot decode AMQP message: unknown section descriptor {descriptor!r}"
            )
    if data_parts is not None:
        data = b"".join(data_parts)

    # The properties fields, absent trailing ones padded with null (one list, not a bounds
    # check per field read).
    if not properties:
        fields = _NULL_FIELDS
    elif len(properties) >= 13:
        fields = properties
    else:
        fields = properties + _NULL_FIELDS[len(properties) :]
    content_type = fields[6]
    if content_type is not None:
        content_type = str(content_type)

    # -- message class and body
    msg_type_value = annotations.get(JMS_MSG_TYPE) if annotations else None
    msg: Message
    if msg_type_value is not None:
        if type(msg_type_value) is not byte and (
            isinstance(msg_type_value, bool) or not isinstance(msg_type_value, int)
        ):
            raise CodecError(
                f"Invalid JMS Message Type annotation value {msg_type_value!r} "
                f"({type(msg_type_value).__name__})"
            )
        msg = _body_for_annotation(
            int(msg_type_value), body_kind, data, sequence, value, content_type
        )
    else:
        msg = _body_by_inference(body_kind, data, sequence, value, content_type)
    if policy is not None and isinstance(msg, ObjectMessage):
        msg.set_deserialization_policy(policy)

    # -- header
    durable = False  # the AMQP default
    priority: int | None = None
    delivery_count = 0
    ttl = 0
    if header:
        if len(header) < 5:
            header = header + _NULL_FIELDS[len(header) : 5]
        durable = bool(header[0])
        raw_priority = header[1]
        if raw_priority is not None:
            priority = min(_integer(raw_priority, "header.priority"), 9)
        raw_ttl = header[2]
        if raw_ttl:
            ttl = _integer(raw_ttl, "header.ttl")
        raw_count = header[4]
        if raw_count:
            delivery_count = _integer(raw_count, "header.delivery-count")

    # -- properties
    message_id: str | None = None
    user_id: str | None = None
    jms_type: str | None = None
    correlation_id: str | bytes | None = None
    expiration = 0
    creation_time = 0
    group_id: str | None = None
    group_seq: int | None = None
    if properties:
        raw_id = fields[0]
        if type(raw_id) is str and raw_id.startswith("ID:") and not _has_type_prefix(raw_id):
            message_id = raw_id  # a JMS-made id: as it is
        else:
            message_id = _id_field(to_message_id_string, raw_id, "properties.message-id")
        raw_user_id = fields[1]
        if raw_user_id is not None and isinstance(raw_user_id, bytes | str) and raw_user_id:
            # bytes(n) of a non-binary user-id (a uint from a misbehaving peer) would allocate
            # n zero bytes, up to 4 GB; anything but binary or a string is ignored.
            user_id = (
                raw_user_id
                if isinstance(raw_user_id, str)
                else raw_user_id.decode("utf-8", "replace")
            )
        subject = fields[3]
        if subject is not None:
            jms_type = str(subject)
        raw_correlation_id = fields[5]
        if raw_correlation_id is not None:
            if isinstance(raw_correlation_id, bytes):
                correlation_id = raw_correlation_id
            else:
                correlation_id = _id_field(
                    to_correlation_id_string, raw_correlation_id, "properties.correlation-id"
                )
        expiry = fields[8]
        if expiry is not None:
            expiration = _integer(expiry, "properties.absolute-expiry-time")
        creation = fields[9]
        if creation is not None:
            creation_time = _integer(creation, "properties.creation-time")
        raw_group_id = fields[10]
        if raw_group_id is not None:
            group_id = str(raw_group_id)
        raw_group_seq = fields[11]
        if raw_group_seq is not None:
            seq = _integer(raw_group_seq, "properties.group-sequence") & _UINT_MAX
            # 0 is no sequence (Qpid JMS: JMSXGroupSeq 0 does not exist; jmspy never sends
            # it), though proton writes group-sequence 0 with every group-id.
            if seq:
                group_seq = seq - 2**32 if seq > _INT_MAX else seq
        reply_to_group = fields[12]
        if reply_to_group is not None:
            msg.get_property_store()[JMS_AMQP_REPLY_TO_GROUP_ID] = (
                JavaType.STRING,
                str(reply_to_group),
            )
    if ttl and fields[8] is None:
        # No absolute expiry but a header ttl: Qpid JMS synthesises now + ttl. An
        # absolute-expiry-time of 0 is present, and Qpid JMS then reports 0 (never).
        expiration = (now_ms if now_ms is not None else int(time.time() * 1000)) + int(ttl)

    # -- destinations
    to = fields[2]
    if to is None:
        destination = consumer_destination
    else:
        # Any: the annotation's type is checked at run time just below.
        raw_type: Any = annotations.get(JMS_DEST_TYPE) if annotations else None
        dest_type = (
            int(raw_type)
            if type(raw_type) is byte and raw_type >= 0
            else type_byte(annotations, JMS_DEST_TYPE, LEGACY_TO_TYPE)
        )
        destination = _destination_for(
            str(to),
            dest_type,
            consumer_destination,
            queue_prefix,
            topic_prefix,
            destinations,
        )
    reply_to = fields[4]
    reply_destination: Destination | None = None
    if reply_to is not None:
        reply_destination = _destination_for(
            str(reply_to),
            type_byte(annotations, JMS_REPLY_TO_TYPE, LEGACY_REPLY_TYPE),
            consumer_destination,
            queue_prefix,
            topic_prefix,
            destinations,
        )

    delivery_time = creation_time
    if annotations:
        raw_delivery_time = annotations.get(JMS_DELIVERY_TIME)
        if raw_delivery_time is not None:
            if isinstance(raw_delivery_time, int | float) and not isinstance(
                raw_delivery_time, bool
            ):
                delivery_time = int(raw_delivery_time)
            else:
                # As Qpid JMS treats an annotation it cannot use: the message is still
                # delivered (it used to be dropped); only JMSDeliveryTime falls back to the
                # timestamp.
                log.warning(
                    "ignoring x-opt-delivery-time annotation of type %s (%.80r) on message %s: "
                    "a timestamp or long is required; JMSDeliveryTime is the JMSTimestamp "
                    "instead",
                    type(raw_delivery_time).__name__,
                    raw_delivery_time,
                    message_id,
                )

    msg.set_received(
        durable,
        priority,
        delivery_count,
        message_id,
        user_id,
        jms_type,
        correlation_id,
        expiration,
        creation_time,
        group_id,
        group_seq,
        destination,
        reply_destination,
        delivery_time,
        validate_property_names,
    )

    # -- application properties
    if app_properties:
        store = msg.get_property_store()
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
                msg.get_property_store()[name] = (JavaType.STRING, str(value))

    if read_only:
        msg.set_read_only(True)
    return msg


def _section_code(descriptor: Any, content: Any, index: int) -> Any:
    """The numeric code of a section's symbolic descriptor; a value that is not a described
    section is refused."""
    if descriptor is _NOT_DESCRIBED:
        raise CodecError(
            f"Cannot decode AMQP message: section {index} is a {type(content).__name__}, "
            "not a described section"
        )
    if isinstance(descriptor, str):
        return _SYMBOLIC_DESCRIPTORS.get(descriptor, descriptor)
    return descriptor


def _destination_for(
    address: str,
    dest_type: int,
    consumer_destination: Destination | None,
    queue_prefix: str | None,
    topic_prefix: str | None,
    destinations: dict[tuple[str, int], Destination | None] | None,
) -> Destination | None:
    """received_destination for an address, through the consumer's own cache when it has one
    (its consumer destination and prefixes are fixed, so the address and type decide)."""
    if destinations is None:
        return received_destination(
            address, dest_type, consumer_destination, False, queue_prefix, topic_prefix
        )
    key = (address, dest_type)
    try:
        return destinations[key]
    except KeyError:
        pass
    destination = received_destination(
        address, dest_type, consumer_destination, False, queue_prefix, topic_prefix
    )
    if destination is None or not destination.is_temporary:
        if len(destinations) >= _CONSUMER_DESTINATIONS_SIZE:
            destinations.clear()
        destinations[key] = destination
    return destination


# A consumer's destination cache holds at most this many addresses (cleared when full).
_CONSUMER_DESTINATIONS_SIZE = 64
_NO_ANNOTATIONS: dict[Any, Any] = {}


DEAD_LETTER_ANNOTATIONS = {
    symbol("x-opt-ORIG-ADDRESS"): "JMSPY_ORIGINAL_DESTINATION",
    symbol("x-opt-ORIG-QUEUE"): "JMSPY_ORIGINAL_QUEUE",
    symbol("x-opt-ORIG-MESSAGE-ID"): "JMSPY_ORIGINAL_MESSAGE_ID",
    symbol("x-opt-ACTUAL-EXPIRY"): "JMSPY_ACTUAL_EXPIRY",
}
_DEAD_LETTER_KEYS = DEAD_LETTER_ANNOTATIONS.keys()


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
