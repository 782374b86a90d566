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
        return self.error_code

    def getLinkedException(self) -> BaseException | None:
        return self.linked_exception

    def setLinkedException(self, linked: BaseException | None) -> None:
        self.linked_exception = linked
        self.__cause__ = linked

    def getMessage(self) -> str:
        return self.reason

    @property
    def reason_number(self) -> int | None:
        """The numeric IBM MQ reason (e.g. 2013) when a restriction raised this exception."""
        return int(self.reason_code) if self.reason_code is not None else None


class JMSException(JMSError):
    """Root of the checked JMS exceptions (``jakarta.jms.JMSException``)."""


class IllegalStateException(JMSException):
    pass


class InvalidClientIDException(JMSException):
    pass


class InvalidDestinationException(JMSException):
    pass


class InvalidSelectorException(JMSException):
    pass


class JMSSecurityException(JMSException):
    pass


class MessageEOFException(JMSException):
    pass


class MessageFormatException(JMSException):
    pass


class MessageNotReadableException(JMSException):
    pass


class MessageNotWriteableException(JMSException):
    pass


class ResourceAllocationException(JMSException):
    pass


class TransactionInProgressException(JMSException):
    pass


class TransactionRolledBackException(JMSException):
    pass


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
    pass


class InvalidClientIDRuntimeException(JMSRuntimeException):
    pass


class InvalidDestinationRuntimeException(JMSRuntimeException):
    pass


class InvalidSelectorRuntimeException(JMSRuntimeException):
    pass


class JMSSecurityRuntimeException(JMSRuntimeException):
    pass


class MessageFormatRuntimeException(JMSRuntimeException):
    pass


class MessageNotWriteableRuntimeException(JMSRuntimeException):
    pass


class ResourceAllocationRuntimeException(JMSRuntimeException):
    pass


class TransactionInProgressRuntimeException(JMSRuntimeException):
    pass


class TransactionRolledBackRuntimeException(JMSRuntimeException):
    pass


class TransactionInDoubtRuntimeException(JMSRuntimeException):
    """The runtime twin of :class:`TransactionInDoubtException` (JMSContext.commit/rollback)."""


class IllegalArgumentException(ValueError):
    """``java.lang.IllegalArgumentException`` (bad property names, null listeners, ...)."""


class NumberFormatException(IllegalArgumentException):
    """``java.lang.NumberFormatException``: a String property that does not parse as a number."""


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
