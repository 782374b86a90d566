"""jmspy: the JMS 2.0 API for Python over AMQP 1.0, wire-compatible with Apache Qpid JMS.

The public names are re-exported here; the modules behind them are private details.
"""

from __future__ import annotations

from ._version import __version__ as __version__
from .browser import QueueBrowser
from .connection import (
    AUTO_ACKNOWLEDGE,
    CLIENT_ACKNOWLEDGE,
    DUPS_OK_ACKNOWLEDGE,
    SESSION_TRANSACTED,
    Connection,
    ConnectionListener,
    ConnectionMetaData,
    ExceptionListener,
)
from .consumer import BatchMessageListener, MessageConsumer, MessageListener
from .context import JMSConsumer, JMSContext, JMSProducer
from .destination import (
    Destination,
    DestinationOptions,
    Queue,
    TemporaryQueue,
    TemporaryTopic,
    Topic,
)

# The whole exception tree is public (jmspy.errors.__all__; a test keeps the two lists equal).
from .errors import (
    IllegalArgumentException,
    IllegalStateException,
    IllegalStateRuntimeException,
    InvalidClientIDException,
    InvalidClientIDRuntimeException,
    InvalidDestinationException,
    InvalidDestinationRuntimeException,
    InvalidSelectorException,
    InvalidSelectorRuntimeException,
    JMSError,
    JMSException,
    JMSRuntimeException,
    JMSSecurityException,
    JMSSecurityRuntimeException,
    MessageEOFException,
    MessageFormatException,
    MessageFormatRuntimeException,
    MessageNotReadableException,
    MessageNotWriteableException,
    MessageNotWriteableRuntimeException,
    NumberFormatException,
    ReasonCode,
    ResourceAllocationException,
    ResourceAllocationRuntimeException,
    TransactionInDoubtException,
    TransactionInDoubtRuntimeException,
    TransactionInProgressException,
    TransactionInProgressRuntimeException,
    TransactionRolledBackException,
    TransactionRolledBackRuntimeException,
    UnsupportedOperationException,
)
from .factory import ConnectionFactory
from .message import (
    BytesMessage,
    DeliveryMode,
    DeserializationPolicy,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)
from .producer import MessageProducer
from .rules import JMS_IBM_RETAIN, RETAIN_PUBLICATION, RULES, Rule
from .session import Session

__all__ = [
    "AUTO_ACKNOWLEDGE",
    "CLIENT_ACKNOWLEDGE",
    "DUPS_OK_ACKNOWLEDGE",
    "SESSION_TRANSACTED",
    "BatchMessageListener",
    "BytesMessage",
    "Connection",
    "ConnectionFactory",
    "ConnectionMetaData",
    "DeliveryMode",
    "DeserializationPolicy",
    "Destination",
    "DestinationOptions",
    "JMS_IBM_RETAIN",
    "RETAIN_PUBLICATION",
    "RULES",
    "Rule",
    "ExceptionListener",
    "ConnectionListener",
    "JMSConsumer",
    "JMSContext",
    "JMSProducer",
    "MapMessage",
    "Message",
    "MessageConsumer",
    "MessageListener",
    "MessageProducer",
    "ObjectMessage",
    "Queue",
    "QueueBrowser",
    "Session",
    "StreamMessage",
    "TemporaryQueue",
    "TemporaryTopic",
    "TextMessage",
    "Topic",
    # the exception tree (jmspy.errors), whole: ``from jmspy import *`` brings all of it
    "ReasonCode",
    "JMSError",
    "JMSException",
    "IllegalStateException",
    "InvalidClientIDException",
    "InvalidDestinationException",
    "InvalidSelectorException",
    "JMSSecurityException",
    "MessageEOFException",
    "MessageFormatException",
    "MessageNotReadableException",
    "MessageNotWriteableException",
    "ResourceAllocationException",
    "TransactionInProgressException",
    "TransactionRolledBackException",
    "TransactionInDoubtException",
    "JMSRuntimeException",
    "IllegalStateRuntimeException",
    "InvalidClientIDRuntimeException",
    "InvalidDestinationRuntimeException",
    "InvalidSelectorRuntimeException",
    "JMSSecurityRuntimeException",
    "MessageFormatRuntimeException",
    "MessageNotWriteableRuntimeException",
    "ResourceAllocationRuntimeException",
    "TransactionInProgressRuntimeException",
    "TransactionRolledBackRuntimeException",
    "TransactionInDoubtRuntimeException",
    "IllegalArgumentException",
    "NumberFormatException",
    "UnsupportedOperationException",
]
