"""JMSConsumer: the simplified API's consumer (JMS 2.0 section 8.6).

Re-exported by :mod:`jmspy.context`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from ._limits import check_receive_timeout
from ._runtime import runtime
from ._twins.jms_consumer import JMSConsumerTwins
from .message import Message

if TYPE_CHECKING:
    from .consumer import BatchListenerLike, ListenerLike, MessageConsumer

__all__ = ["JMSConsumer"]

_T = TypeVar("_T")


class JMSConsumer(JMSConsumerTwins):
    """The simplified API's consumer (JMS 2.0 section 8.6)."""

    def __init__(self, consumer: MessageConsumer) -> None:
        self._consumer = consumer
        # receiveBody is JMSConsumer-only (JMS 2.0): it wraps the classic consumer's receive
        # loop, which is not public on MessageConsumer. One reach-in, here.
        self._receive_body = consumer._receive_body

    @runtime
    def receive(self, timeout: int | None = None) -> Message | None:
        """Wait for a message; ``timeout`` in milliseconds.

        None or 0 waits until one arrives or the consumer closes. Returns None when the time runs
        out or the consumer is closed (JMS-59). Raises IllegalStateRuntimeException with a listener
        on the session, JMSRuntimeException for an invalid timeout.
        """
        return self._consumer.receive(timeout)

    @runtime
    def receiveNoWait(self) -> Message | None:
        """Return a message available now, or None.

        Before returning None it drains the broker, as ``MessageConsumer.receiveNoWait``.
        """
        return self._consumer.receiveNoWait()

    @runtime
    def receiveBody(self, c: type[_T], timeout: int | None = None) -> _T | None:
        """Receive the next message and return its body as type ``c``; ``timeout`` in milliseconds.

        Returns None when no message arrives in time, or for a typed message without a body.
        Raises MessageFormatRuntimeException when the body is not assignable to ``c``, and for a
        plain Message or a StreamMessage; in AUTO_ACKNOWLEDGE and DUPS_OK_ACKNOWLEDGE that message
        is returned again by the next receive, not counted as a redelivery; in CLIENT_ACKNOWLEDGE
        and in a transaction it counts as delivered (rule JMS-64).
        """
        body: _T | None = self._receive_body(c, check_receive_timeout(timeout), no_wait=False)
        return body

    @runtime
    def receiveBodyNoWait(self, c: type[_T]) -> _T | None:
        """As :meth:`receiveBody` for a message available now; None when there is none."""
        body: _T | None = self._receive_body(c, 0.0, no_wait=True)
        return body

    @runtime
    def setMessageListener(self, listener: ListenerLike | None) -> None:
        """Deliver messages to ``listener`` on the session's dispatch thread.

        None removes the listener (JMS-61).
        """
        self._consumer.setMessageListener(listener)

    @runtime
    def getMessageListener(self) -> ListenerLike | None:
        """The message listener, or None."""
        return self._consumer.getMessageListener()

    @runtime
    def setBatchMessageListener(
        self, listener: BatchListenerLike | None, batchSize: int = 1, batchTimeout: int = 0
    ) -> None:
        """Deliver messages to ``listener.onMessages(list)`` in batches (JMS_SPEC-36).

        Args:
            listener: The batch listener, or None to remove it.
            batchSize: At most this many messages per batch (BL-1), an integer >= 1.
            batchTimeout: Milliseconds a partial batch waits for more (BL-2); 0 delivers what is
                available at once (BL-3).

        Raises:
            IllegalArgumentException: An invalid batchSize or batchTimeout (BL-5).
            IllegalStateRuntimeException: A MessageListener is set, or the consumer is closed.
        """
        self._consumer.setBatchMessageListener(listener, batchSize, batchTimeout)

    @runtime
    def getBatchMessageListener(self) -> BatchListenerLike | None:
        """The batch listener, or None."""
        return self._consumer.getBatchMessageListener()

    @runtime
    def getMessageSelector(self) -> str | None:
        """The consumer's message selector, or None."""
        return self._consumer.getMessageSelector()

    @runtime
    def close(self) -> None:
        """Close the consumer; idempotent.

        A blocked receive returns None; see ``MessageConsumer.close``.
        """
        self._consumer.close()

    def __enter__(self) -> JMSConsumer:
        """Enter a ``with`` block; returns this consumer."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Leave a ``with`` block: :meth:`close` the consumer, whatever happened inside."""
        self.close()

    def __iter__(self) -> Any:
        """Iterate over messages until the consumer is closed (``for m in consumer``).

        Each step is a blocking :meth:`receive`; checked exceptions are not converted here.
        """
        return iter(self._consumer)
