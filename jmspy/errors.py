"""The jakarta.jms exception tree, its runtime twins, and IBM MQ style reason codes.

Classic API objects (``Connection``, ``Session``, ``MessageProducer``, ``MessageConsumer``,
``Message``) raise the checked family; the simplified API (``JMSContext``, ``JMSProducer``,
``JMSConsumer``) raises the runtime family. :func:`to_runtime` converts one into the other
with the same error code, reason, rule id and linked cause.

::

    Exception
     +-- JMSError                                  (root of both JMS families; jmspy only)
     |    +-- JMSException                         (checked family)
     |    |    +-- IllegalStateException
     |    |    +-- InvalidClientIDException
     |    |    +-- InvalidDestinationException
     |    |    +-- InvalidSelectorException
     |    |    +-- JMSSecurityException
     |    |    +-- MessageEOFException             (no runtime twin)
     |    |    +-- MessageFormatException
     |    |    +-- MessageNotReadableException     (no runtime twin)
     |    |    +-- MessageNotWriteableException
     |    |    +-- ResourceAllocationException
     |    |    +-- TransactionInProgressException
     |    |    +-- TransactionRolledBackException
     |    |    +-- TransactionInDoubtException     (outcome of a commit/rollback unknown)
     |    +-- JMSRuntimeException                  (runtime family)
     |         +-- IllegalStateRuntimeException ... one twin per checked class above
     +-- IllegalArgumentException (ValueError)     java.lang.IllegalArgumentException
     |    +-- NumberFormatException                java.lang.NumberFormatException
     +-- UnsupportedOperationException             java.lang.UnsupportedOperationException

``except JMSError`` catches both families (Java has no common root below ``Exception``; in
Python code that calls both APIs it saves a tuple). Every JMS exception has ``getErrorCode()``
and ``getLinkedException()`` (and the snake_case twins ``get_error_code()``, ...);
``__cause__`` is the linked exception too, so tracebacks show it. Exceptions raised by a
documented restriction also carry ``rule_id`` and ``reason_code`` (:class:`ReasonCode`), and
their error code is the reason's IBM MQ name so code ported from IBM MQ keeps matching on it.
"""

from __future__ import annotations

import enum as _enum

from ._twins.errors import JMSErrorTwins

__all__ = [
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
    "NoSuchElementException",
    "UnsupportedOperationException",
]


class ReasonCode(_enum.IntEnum):
    """IBM MQ reason codes used by the delivery-delay restrictions (values as MQ defines them)."""

    MQRC_NONE = 0
    MQRC_EXPIRY_ERROR = 2013
    MQRC_OPTIONS_ERROR = 2046
    MQRC_PRIORITY_ERROR = 2050
    MQRC_FUNCTION_NOT_SUPPORTED = 2298
    MQRC_PUBLICATION_FAILURE = 2502


class JMSError(Exception, JMSErrorTwins):
    """Root of both JMS families (:class:`JMSException` and :class:`JMSRuntimeException`): what
    they carry is here (reason, error code, rule id, reason code, linked cause).

    Not in Jakarta Messaging, where the two families only share ``Exception``; ``except
    JMSError`` catches an error of either API. Raise one of the subclasses, not this class."""

    def __init__(
        self,
        reason: str,
        error_code: str | None = None,
        linked: BaseException | None = None,
        *,
        reason_code: ReasonCode | None = None,
        rule_id: str | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.reason_code = reason_code
        self.rule_id = rule_id
        if error_code is None and reason_code is not None:
            error_code = reason_code.name
        self.error_code = error_code
        self.linked_exception = linked
        if linked is not None:
            self.__cause__ = linked

    def getErrorCode(self) -> str | None:
        """The provider-specific error code (``getErrorCode()``), or None.

        For an exception raised by a documented restriction this is the IBM MQ reason name (for
        example ``"MQRC_EXPIRY_ERROR"``) unless an explicit code was given.
        """
        return self.error_code

    def getLinkedException(self) -> BaseException | None:
        """The exception that caused this one, or None; it is also ``__cause__``."""
        return self.linked_exception

    def setLinkedException(self, linked: BaseException | None) -> None:
        """Set the exception that caused this one; ``__cause__`` follows it.

        Args:
            linked: The underlying exception, or None to clear it.
        """
        self.linked_exception = linked
        self.__cause__ = linked

    def getMessage(self) -> str:
        """The reason text given when the exception was created (Java's ``getMessage()``)."""
        return self.reason

    @property
    def reason_number(self) -> int | None:
        """The numeric IBM MQ reason (e.g. 2013) when a restriction raised this exception."""
        return int(self.reason_code) if self.reason_code is not None else None


class JMSException(JMSError):
    """Root of the checked JMS exceptions (``jakarta.jms.JMSException``)."""


class IllegalStateException(JMSException):
    """A method was called in a state that does not allow it (for example on a closed object)."""


class InvalidClientIDException(JMSException):
    """The client id is invalid or already in use by another connection (rule JMS-6)."""


class InvalidDestinationException(JMSException):
    """A destination is missing, not understood, or no longer valid.

    Also raised when the broker answers ``amqp:not-found`` (an unknown queue or a deleted temporary
    destination).
    """


class InvalidSelectorException(JMSException):
    """A message selector has invalid syntax."""


class JMSSecurityException(JMSException):
    """Authentication or authorisation failed (``amqp:unauthorized-access``; rule JMS-1)."""


class MessageEOFException(JMSException):
    """A ``BytesMessage`` or ``StreamMessage`` read went past the end of the body."""


class MessageFormatException(JMSException):
    """A value or message has the wrong type for the requested conversion or operation."""


class MessageNotReadableException(JMSException):
    """The message body is write-only (a ``BytesMessage`` or ``StreamMessage`` not yet reset)."""


class MessageNotWriteableException(JMSException):
    """The message body or properties are read-only (a received message not yet cleared)."""


class ResourceAllocationException(JMSException):
    """A broker limit was hit: the peer closed with ``amqp:resource-limit-exceeded``."""


class TransactionInProgressException(JMSException):
    """The operation is not allowed while a transaction is in progress (kept for JMS parity)."""


class TransactionRolledBackException(JMSException):
    """A commit failed and the transaction was rolled back (``amqp:transaction:rollback``)."""


class TransactionInDoubtException(JMSException):
    """The outcome of a commit (or rollback) is unknown: the request reached the broker, or may
    have, and no answer came back (the connection dropped, or the answer timed out).

    Not a :class:`TransactionRolledBackException`: the broker may have committed. An application
    that must not process twice checks its own records (or the broker) before it redoes the work;
    messages of an in-doubt transaction that were not committed come back with
    ``JMSRedelivered=true``."""


class JMSRuntimeException(JMSError):
    """Root of the unchecked JMS exceptions (``jakarta.jms.JMSRuntimeException``); not a
    subclass of JMSException, as in Java."""


class IllegalStateRuntimeException(JMSRuntimeException):
    """The runtime twin of :class:`IllegalStateException`, raised by the simplified API."""


class InvalidClientIDRuntimeException(JMSRuntimeException):
    """The runtime twin of :class:`InvalidClientIDException`, raised by the simplified API."""


class InvalidDestinationRuntimeException(JMSRuntimeException):
    """The runtime twin of :class:`InvalidDestinationException`, raised by the simplified API."""


class InvalidSelectorRuntimeException(JMSRuntimeException):
    """The runtime twin of :class:`InvalidSelectorException`, raised by the simplified API."""


class JMSSecurityRuntimeException(JMSRuntimeException):
    """The runtime twin of :class:`JMSSecurityException`, raised by the simplified API."""


class MessageFormatRuntimeException(JMSRuntimeException):
    """The runtime twin of :class:`MessageFormatException`, raised by the simplified API."""


class MessageNotWriteableRuntimeException(JMSRuntimeException):
    """The runtime twin of :class:`MessageNotWriteableException`, raised by the simplified API."""


class ResourceAllocationRuntimeException(JMSRuntimeException):
    """The runtime twin of :class:`ResourceAllocationException`, raised by the simplified API."""


class TransactionInProgressRuntimeException(JMSRuntimeException):
    """The runtime twin of :class:`TransactionInProgressException`, raised by the simplified API."""


class TransactionRolledBackRuntimeException(JMSRuntimeException):
    """The runtime twin of :class:`TransactionRolledBackException`, raised by the simplified API."""


class TransactionInDoubtRuntimeException(JMSRuntimeException):
    """The runtime twin of :class:`TransactionInDoubtException` (JMSContext.commit/rollback)."""


class IllegalArgumentException(ValueError):
    """``java.lang.IllegalArgumentException`` (bad property names, null listeners, ...)."""


class NumberFormatException(IllegalArgumentException):
    """``java.lang.NumberFormatException``: a String property that does not parse as a number."""


class NoSuchElementException(LookupError):
    """``java.util.NoSuchElementException``: ``nextElement()`` on an exhausted Enumeration."""


class UnsupportedOperationException(Exception):
    """``java.lang.UnsupportedOperationException`` (e.g. a destination on a fixed producer)."""


# Internal (not in __all__): the simplified API converts with to_runtime; user code catches
# JMSError, or the family it expects.
RUNTIME_TWINS: dict[type[JMSException], type[JMSRuntimeException]] = {
    IllegalStateException: IllegalStateRuntimeException,
    InvalidClientIDException: InvalidClientIDRuntimeException,
    InvalidDestinationException: InvalidDestinationRuntimeException,
    InvalidSelectorException: InvalidSelectorRuntimeException,
    JMSSecurityException: JMSSecurityRuntimeException,
    MessageFormatException: MessageFormatRuntimeException,
    MessageNotWriteableException: MessageNotWriteableRuntimeException,
    ResourceAllocationException: ResourceAllocationRuntimeException,
    TransactionInProgressException: TransactionInProgressRuntimeException,
    TransactionRolledBackException: TransactionRolledBackRuntimeException,
    TransactionInDoubtException: TransactionInDoubtRuntimeException,
}


def to_runtime(exc: JMSException) -> JMSRuntimeException:
    """The runtime twin of a checked exception, keeping code, reason, rule id and cause."""
    twin = JMSRuntimeException
    for klass in type(exc).__mro__:
        if klass in RUNTIME_TWINS:
            twin = RUNTIME_TWINS[klass]
            break
    return twin(
        exc.reason,
        exc.error_code,
        exc.linked_exception if exc.linked_exception is not None else exc,
        reason_code=exc.reason_code,
        rule_id=exc.rule_id,
    )
