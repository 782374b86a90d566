"""The JMS message model: headers, typed properties and the six body types.

Method names follow ``jakarta.jms`` so code ported from Java reads the same. The package holds:

* :mod:`~jmspy.message.java` - Java value semantics (type tags, J* wrappers, conversions), shared
  with the selector;
* :mod:`~jmspy.message.names` - delivery-mode constants, special property names, name validation;
* :mod:`~jmspy.message.pickle_policy` - which classes ObjectMessage.getObject may unpickle;
* :mod:`~jmspy.message.facade` - header/property storage and the provider's typed surface (what
  the codec, producer and consumer use; modelled on Qpid JMS's AmqpJmsMessageFacade);
* :mod:`~jmspy.message.base` - :class:`Message`, the JMS API over the facade;
* one module per body type (text, bytes, map, stream, object).

No module here imports proton: the message is the hot object on the send path and is also used by
code that never touches AMQP. Wire encoding lives in :mod:`jmspy._amqp.codec`.
"""

from __future__ import annotations

from typing import Any

from jmspy.message.base import Message
from jmspy.message.bytes_message import BytesMessage
from jmspy.message.facade import MessageFacade as MessageFacade
from jmspy.message.java import (
    JavaType,
    JByte,
    JChar,
    JFloat,
    JInt,
    JLong,
    JShort,
)
from jmspy.message.java import (
    TypedValue as TypedValue,
)
from jmspy.message.map_message import MapMessage
from jmspy.message.names import (
    DEFAULT_DELIVERY_DELAY,
    DEFAULT_DELIVERY_MODE,
    DEFAULT_PRIORITY,
    DEFAULT_TIME_TO_LIVE,
    JAVA_SERIALIZED_CONTENT_TYPE,
    PYTHON_SERIALIZED_CONTENT_TYPE,
    DeliveryMode,
)
from jmspy.message.names import (
    JMS_AMQP_ACK_TYPE as JMS_AMQP_ACK_TYPE,
)
from jmspy.message.names import (
    JMS_AMQP_PREFIX as JMS_AMQP_PREFIX,
)
from jmspy.message.names import (
    JMS_AMQP_REPLY_TO_GROUP_ID as JMS_AMQP_REPLY_TO_GROUP_ID,
)
from jmspy.message.names import (
    JMS_AMQP_TTL as JMS_AMQP_TTL,
)
from jmspy.message.names import (
    JMS_AMQP_TYPED_ENCODING as JMS_AMQP_TYPED_ENCODING,
)
from jmspy.message.names import (
    JMSX_DELIVERY_COUNT as JMSX_DELIVERY_COUNT,
)
from jmspy.message.names import (
    JMSX_GROUP_ID as JMSX_GROUP_ID,
)
from jmspy.message.names import (
    JMSX_GROUP_SEQ as JMSX_GROUP_SEQ,
)
from jmspy.message.names import (
    JMSX_USER_ID as JMSX_USER_ID,
)
from jmspy.message.object_message import ObjectMessage
from jmspy.message.pickle_policy import DeserializationPolicy
from jmspy.message.stream_message import StreamMessage
from jmspy.message.text_message import TextMessage

# The names below, and those imported "as" themselves above, are what the module exported
# before it became a package.
__all__ = [
    "DeliveryMode",
    "DEFAULT_PRIORITY",
    "DEFAULT_DELIVERY_MODE",
    "DEFAULT_TIME_TO_LIVE",
    "DEFAULT_DELIVERY_DELAY",
    "JavaType",
    "JByte",
    "JShort",
    "JInt",
    "JLong",
    "JFloat",
    "JChar",
    "DeserializationPolicy",
    "Message",
    "TextMessage",
    "BytesMessage",
    "MapMessage",
    "StreamMessage",
    "ObjectMessage",
    "message_for_body",
    "PYTHON_SERIALIZED_CONTENT_TYPE",
    "JAVA_SERIALIZED_CONTENT_TYPE",
]


def message_for_body(body: Any) -> Message:
    """The message JMSProducer.send(destination, body) sends for a Python body value.

    str -> TextMessage, bytes -> BytesMessage, dict -> MapMessage (values as setObject),
    None -> Message, anything else -> ObjectMessage.
    """
    if isinstance(body, str):
        return TextMessage(body)
    if isinstance(body, bytes | bytearray | memoryview):
        bm = BytesMessage()
        bm.writeBytes(body)
        return bm
    if isinstance(body, dict):
        mm = MapMessage()
        for key, value in body.items():
            mm.setObject(key, value)
        return mm
    if body is None:
        return Message()
    return ObjectMessage(body)
