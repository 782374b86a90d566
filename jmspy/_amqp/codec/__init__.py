"""JMS message <-> AMQP 1.0 bare message, byte-compatible in meaning with Qpid JMS.

The mapping (header, annotations, properties, application-properties, body section choice and
receive-side type inference) is the one Qpid JMS implements, so Java JMS clients on the same
broker see the same headers, properties and body types.

Sections are written and read one by one with :class:`proton.Data` rather than through
:class:`proton.Message`, which would add defaults (e.g. a header section on every message) and
hide exact AMQP types. The package:

* :mod:`.encode` - a message to the sections to send (:func:`encode_message`);
* :mod:`.decode` - received sections to a message (:func:`decode_message`);
* :mod:`.proton_fallback` - :func:`read_message_sections`, the one section reader (the
  pure-Python :mod:`jmspy._amqp.amqp_reader`, proton.Data for whatever it declines);
* :mod:`.common` - descriptors, annotation keys, the error type.

Encoder and decoder reach the message only through its facade
(:class:`jmspy.message.MessageFacade` and the body types' typed accessors).
"""

from __future__ import annotations

from jmspy._amqp.codec.common import (
    _SYMBOLIC_DESCRIPTORS as _SYMBOLIC_DESCRIPTORS,
)
from jmspy._amqp.codec.common import (
    AMQP_SEQUENCE as AMQP_SEQUENCE,
)
from jmspy._amqp.codec.common import (
    AMQP_VALUE as AMQP_VALUE,
)
from jmspy._amqp.codec.common import (
    APPLICATION_PROPERTIES as APPLICATION_PROPERTIES,
)
from jmspy._amqp.codec.common import (
    DATA as DATA,
)
from jmspy._amqp.codec.common import (
    DELIVERY_ANNOTATIONS as DELIVERY_ANNOTATIONS,
)
from jmspy._amqp.codec.common import (
    FOOTER as FOOTER,
)
from jmspy._amqp.codec.common import (
    HEADER as HEADER,
)
from jmspy._amqp.codec.common import (
    JMS_DELIVERY_TIME,
    JMS_DEST_TYPE,
    JMS_MSG_TYPE,
    JMS_REPLY_TO_TYPE,
    OCTET_STREAM_CONTENT_TYPE,
    CodecError,
)
from jmspy._amqp.codec.common import (
    MESSAGE_ANNOTATIONS as MESSAGE_ANNOTATIONS,
)
from jmspy._amqp.codec.common import (
    PROPERTIES as PROPERTIES,
)
from jmspy._amqp.codec.decode import (
    DEAD_LETTER_ANNOTATIONS as DEAD_LETTER_ANNOTATIONS,
)
from jmspy._amqp.codec.decode import _decode as _decode
from jmspy._amqp.codec.decode import decode_message
from jmspy._amqp.codec.encode import (
    SCHEDULED_ENQUEUE_TIME as SCHEDULED_ENQUEUE_TIME,
)
from jmspy._amqp.codec.encode import encode_message
from jmspy._amqp.codec.encode import node_address as node_address
from jmspy._amqp.codec.proton_fallback import (
    NOT_DESCRIBED,
    read_message_sections,
)
from jmspy._amqp.codec.proton_fallback import _proton_sections as _proton_sections
from jmspy._amqp.codec.proton_fallback import _proton_values as _proton_values

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
