"""jmspy: the JMS 2.0 API for Python over AMQP 1.0, wire-compatible with Apache Qpid JMS.

The public names are re-exported here; the modules behind them are private details.
"""

from __future__ import annotations

from ._pythonic import add_snake_case_aliases
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
from .errors import *  # noqa: F403 - the exception tree is part of the public API
from .errors import ReasonCode
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

add_snake_case_aliases(
    [
        ConnectionFactory,
        Connection,
        ConnectionMetaData,
        Session,
        MessageProducer,
        MessageConsumer,
        JMSContext,
        JMSProducer,
        JMSConsumer,
        Message,
        TextMessage,
        BytesMessage,
        MapMessage,
        StreamMessage,
        ObjectMessage,
        Destination,
        Queue,
        Topic,
        QueueBrowser,
        TemporaryQueue,
        TemporaryTopic,
    ]
)

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
    "ReasonCode",
    "Session",
    "StreamMessage",
    "TemporaryQueue",
    "TemporaryTopic",
    "TextMessage",
    "Topic",
]
