"""What the codec's encoder, decoder and section reader share: the error type, the AMQP
section descriptors, the JMS annotation keys and message-type bytes, and a per-thread scratch
proton.Data."""

from __future__ import annotations

import logging
import threading
from typing import Final

from proton import (
    Data,
    symbol,
)

from jmspy.message import PYTHON_SERIALIZED_CONTENT_TYPE


class CodecError(Exception):
    """A transfer payload that is not a message this client can present as a JMS message.

    The consumer settles such a delivery modified(delivery-failed, undeliverable-here) and does
    not hand it to the application, as Qpid JMS does.
    """


log = logging.getLogger("jmspy.codec")

# Section descriptors (AMQP 1.0 part 3, 3.2).
HEADER: Final = 0x70
DELIVERY_ANNOTATIONS: Final = 0x71
MESSAGE_ANNOTATIONS: Final = 0x72
PROPERTIES: Final = 0x73
APPLICATION_PROPERTIES: Final = 0x74
DATA: Final = 0x75
AMQP_SEQUENCE: Final = 0x76
AMQP_VALUE: Final = 0x77
FOOTER: Final = 0x78

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

JMS_MSG_TYPE: Final = symbol("x-opt-jms-msg-type")
JMS_DEST_TYPE: Final = symbol("x-opt-jms-dest")
JMS_REPLY_TO_TYPE: Final = symbol("x-opt-jms-reply-to")
JMS_DELIVERY_TIME: Final = symbol("x-opt-delivery-time")
LEGACY_TO_TYPE: Final = symbol("x-opt-to-type")
LEGACY_REPLY_TYPE: Final = symbol("x-opt-reply-type")

OCTET_STREAM_CONTENT_TYPE = "application/octet-stream"
_OCTET_STREAM: Final = symbol(OCTET_STREAM_CONTENT_TYPE)
_PYTHON_SERIALIZED: Final = symbol(PYTHON_SERIALIZED_CONTENT_TYPE)

MSG_TYPE_MESSAGE: Final = 0
MSG_TYPE_OBJECT: Final = 1
MSG_TYPE_MAP: Final = 2
MSG_TYPE_BYTES: Final = 3
MSG_TYPE_STREAM: Final = 4
MSG_TYPE_TEXT: Final = 5

_UINT_MAX: Final = 2**32 - 1
_LONG_MAX: Final = 2**63 - 1
_INT_MAX: Final = 2**31 - 1

# Pre-encoded section prefixes: described-type constructor 0x00, smallulong 0x53, code.
_DATA_PREFIX: Final = b"\x00\x53\x75"
_VALUE_PREFIX: Final = b"\x00\x53\x77"
_NULL_VALUE_SECTION: Final = b"\x00\x53\x77\x40"
_EMPTY_DATA_SECTION: Final = b"\x00\x53\x75\xa0\x00"

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
