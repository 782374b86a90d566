"""The JMS message class and body for the body sections of a received AMQP message, as Qpid
JMS chooses them (from the ``x-opt-jms-msg-type`` annotation, or from the sections and the
content type for a message from a non-JMS producer), and the Java types of received AMQP
values (application properties, MapMessage entries, StreamMessage items)."""

from __future__ import annotations

import codecs
import re
import uuid
from collections.abc import Callable
from typing import Any, Final

from proton import (
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

from jmspy._amqp.codec.common import (
    _LONG_MAX,
    MSG_TYPE_BYTES,
    MSG_TYPE_MAP,
    MSG_TYPE_MESSAGE,
    MSG_TYPE_OBJECT,
    MSG_TYPE_STREAM,
    MSG_TYPE_TEXT,
    OCTET_STREAM_CONTENT_TYPE,
    CodecError,
)
from jmspy.message import (
    JAVA_SERIALIZED_CONTENT_TYPE,
    PYTHON_SERIALIZED_CONTENT_TYPE,
    BytesMessage,
    JavaType,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
    TypedValue,
)


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


def _text_charset(content_type: str | None) -> str | None:
    """The charset of a textual content type, or None when the type is not textual, as Qpid
    JMS's ContentTypeSupport decides it (a type/subtype that does not parse, or a charset that
    cannot be decoded, is not textual: the body is then bytes)."""
    if not content_type:
        return None
    main_type, slash, rest = content_type.partition("/")
    if not slash:
        return None
    main_type = main_type.strip().lower()
    sub_type, _, params = rest.lower().partition(";")
    sub_type = sub_type.strip()
    if not sub_type:
        return None
    # The +xml/+json suffixes count under application/ only: image/svg+xml is an image.
    if main_type != "text" and not (
        main_type == "application"
        and (sub_type in _TEXTUAL_APPLICATION or sub_type.endswith(("+xml", "+json")))
    ):
        return None
    charset = "utf-8"
    for param in params.split(";"):
        key, eq, value = param.strip().partition("=")
        if eq and key.strip() == "charset":
            # Only a value quoted at both ends is unquoted; an empty or half-quoted charset
            # names no charset and fails the lookup below.
            if len(value) > 1 and value.startswith('"') and value.endswith('"'):
                value = value[1:-1]
            charset = value
            break
    # Python's lookup forgives names Java refuses ('"utf-8', 'utf 8'); Java's rule for a
    # legal charset name comes first.
    if _CHARSET_NAME.fullmatch(charset) is None:
        return None
    try:
        codecs.lookup(charset)
    except LookupError:
        return None  # an unknown charset cannot be decoded: treat the body as bytes
    return charset


_TEXTUAL_APPLICATION: Final = frozenset(("xml", "xml-dtd", "json", "javascript", "ecmascript"))
# java.nio.charset.Charset's legal names: a letter or digit, then letters, digits and -+.:_
_CHARSET_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9+.:_-]*")


def _is_serialized(content_type: str | None) -> bool:
    return content_type in (JAVA_SERIALIZED_CONTENT_TYPE, PYTHON_SERIALIZED_CONTENT_TYPE)


_NO_BODY: Final = 0
_BODY_DATA: Final = 1
_BODY_SEQUENCE: Final = 2
_BODY_VALUE: Final = 3


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
    data: bytes,
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
            text_msg = TextMessage(None if value is None else str(value))
        elif body_kind == _BODY_DATA:
            text_msg = TextMessage(_text_from_data(data, content_type))
        elif body_kind != _NO_BODY:
            raise CodecError(_mismatch("TextMessage", body_kind, value))
        return text_msg
    if msg_type == MSG_TYPE_BYTES:
        bytes_msg = BytesMessage()
        if body_kind == _BODY_DATA:
            bytes_msg.set_body_bytes(data)
        elif body_kind == _BODY_VALUE and isinstance(value, bytes):
            bytes_msg.set_body_bytes(value)
        elif body_kind == _NO_BODY or (body_kind == _BODY_VALUE and value is None):
            bytes_msg.set_body_bytes(b"")
        else:
            raise CodecError(_mismatch("BytesMessage", body_kind, value))
        return bytes_msg
    if msg_type == MSG_TYPE_MAP:
        map_msg = MapMessage()
        if body_kind == _BODY_VALUE and isinstance(value, dict):
            map_msg.set_typed_entries(_typed_map(value))
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
        stream_msg.set_typed_items([_typed_from_amqp(v, True) for v in items])
        return stream_msg
    if msg_type == MSG_TYPE_OBJECT:
        return _object_message(body_kind, data, sequence, value, content_type)
    raise CodecError(f"Invalid JMS Message Type annotation value {msg_type!r}")


def _object_message(
    body_kind: int,
    data: bytes,
    sequence: list[Any],
    value: Any,
    content_type: str | None,
) -> ObjectMessage:
    obj_msg = ObjectMessage()
    if body_kind == _BODY_DATA:
        obj_msg.set_serialized_body(data, content_type)
    elif body_kind == _BODY_SEQUENCE:
        obj_msg.set_received_typed_body(list(sequence))
    elif body_kind == _BODY_VALUE:
        obj_msg.set_received_typed_body(value)
    return obj_msg


def _body_by_inference(
    body_kind: int,
    data: bytes,
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
                MSG_TYPE_BYTES, body_kind, data, sequence, value, content_type
            )
        if _text_charset(content_type) is not None:
            return TextMessage()
        return Message()
    if body_kind == _BODY_DATA:
        if _is_serialized(content_type):
            return _object_message(body_kind, data, sequence, value, content_type)
        if (
            content_type is not None
            and content_type != OCTET_STREAM_CONTENT_TYPE
            and _text_charset(content_type) is not None
        ):
            return _body_for_annotation(
                MSG_TYPE_TEXT, body_kind, data, sequence, value, content_type
            )
        return _body_for_annotation(MSG_TYPE_BYTES, body_kind, data, sequence, value, content_type)
    if body_kind == _BODY_VALUE:
        if value is None or isinstance(value, str):
            return _body_for_annotation(
                MSG_TYPE_TEXT, body_kind, data, sequence, value, content_type
            )
        if isinstance(value, bytes):
            return _body_for_annotation(
                MSG_TYPE_BYTES, body_kind, data, sequence, value, content_type
            )
        return _object_message(body_kind, data, sequence, value, content_type)
    return _object_message(body_kind, data, sequence, value, content_type)


def _mismatch(jms_type: str, body_kind: int, value: Any) -> str:
    kind = {_BODY_DATA: "data", _BODY_SEQUENCE: "amqp-sequence", _BODY_VALUE: "amqp-value"}.get(
        body_kind, "no body"
    )
    detail = f" holding {type(value).__name__}" if body_kind == _BODY_VALUE else ""
    return f"Cannot decode AMQP message: a {jms_type} cannot have a {kind} body{detail}"
