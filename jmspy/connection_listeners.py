"""The listeners a connection reports to: ``ExceptionListener`` (JMS) and
``ConnectionListener`` (Qpid JMS's ``JmsConnectionListener`` events), and which
ConnectionListener method each event calls."""

from __future__ import annotations

from typing import Any, Protocol

from .errors import JMSException

__all__ = ["ExceptionListener", "ConnectionListener", "LISTENER_METHODS", "CLOSED_METHODS"]


class ExceptionListener(Protocol):
    """Hears of connection problems that no call can report (``jakarta.jms.ExceptionListener``).

    A plain callable taking the exception works too. Invocations for one connection are serialised
    and run on a jmspy thread, never the engine thread.
    """

    def onException(self, exception: JMSException) -> None:
        """Called with the connection's failure.

        Also called for an asynchronous send that failed after ``send`` returned.
        """


class ConnectionListener(Protocol):
    """Connection events, as Qpid JMS's ``JmsConnectionListener`` has them (any method may be
    left out). Called on a jmspy thread that is never the engine thread, one event at a time.

    * ``onConnectionEstablished(uri)``: the first connect succeeded;
    * ``onConnectionInterrupted(uri)``: failover lost the connection to ``uri`` and reconnects;
    * ``onConnectionRestored(uri)``: reconnected to ``uri``, everything re-created;
    * ``onConnectionFailure(exception)``: failed for good (failover gave up, or no failover);
      the ExceptionListener hears about it too;
    * ``onConsumerClosed(consumer, exception)`` and ``onProducerClosed(producer, exception)``:
      the broker closed that consumer's or producer's link (a deleted queue, an
      administrator), or a reconnect could not create it again (its queue missing on the
      broker it reconnected to, a temporary destination lost with the old connection), while
      the connection lives on. The consumer or producer is unusable from then on (its calls
      raise the exception); a MessageListener on it gets nothing more, so this is where an
      application learns to open a new one.
    """

    def onConnectionEstablished(self, uri: str) -> None:
        """The first connect to ``uri`` succeeded."""

    def onConnectionInterrupted(self, uri: str) -> None:
        """Failover lost the connection to ``uri`` and is reconnecting."""

    def onConnectionRestored(self, uri: str) -> None:
        """Reconnected to ``uri``; sessions, producers and consumers were re-created."""

    def onConnectionFailure(self, exception: JMSException) -> None:
        """The connection failed for good (failover gave up, or there is no failover)."""

    def onConsumerClosed(self, consumer: Any, exception: JMSException) -> None:
        """The broker closed ``consumer`` (or a reconnect could not re-create it)."""

    def onProducerClosed(self, producer: Any, exception: JMSException) -> None:
        """The broker closed ``producer`` (or a reconnect could not re-create it)."""


LISTENER_METHODS = {
    "established": "onConnectionEstablished",
    "interrupted": "onConnectionInterrupted",
    "restored": "onConnectionRestored",
    "failure": "onConnectionFailure",
}


CLOSED_METHODS = {"consumer": "onConsumerClosed", "producer": "onProducerClosed"}
