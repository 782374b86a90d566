"""The listeners a connection reports to: ``ExceptionListener`` (JMS) and
``ConnectionListener`` (Qpid JMS's ``JmsConnectionListener`` events), and which
ConnectionListener method each event calls."""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol

from .errors import JMSException

__all__ = [
    "ExceptionListener",
    "ConnectionListener",
    "LISTENER_METHODS",
    "CLOSED_METHODS",
    "ListenerThread",
]

log = logging.getLogger("jmspy.connection")


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


class ListenerThread:
    """Runs a connection's listener calls one at a time, in the order they were handed in, on
    one thread of its own: started when a call is handed in, ended as soon as nothing is left
    to run. The engine thread hands calls in and never waits for the application; a listener
    slower than the events it hears about makes the queue longer, not the number of threads
    (one thread per call piled threads up behind the listener's lock)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._calls: collections.deque[tuple[str, Callable[..., Any], tuple[Any, ...]]] = (
            collections.deque()
        )
        self._lock = threading.Lock()
        self._running = False

    def call(self, what: str, method: Callable[..., Any], *args: Any) -> None:
        """Queue ``method(*args)`` (``what`` names it in the log if it raises)."""
        with self._lock:
            self._calls.append((what, method, args))
            if self._running:
                return  # the running thread takes it after the calls before it
            self._running = True
            thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            try:
                thread.start()
            except RuntimeError:
                # No thread to be had (interpreter shutdown, a thread limit): the call stays
                # queued for the next one to start; raising here would end the engine thread.
                self._running = False
                log.error("could not start a thread for %s; the call waits for the next one", what)

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._calls:
                    self._running = False
                    return
                what, method, args = self._calls.popleft()
            try:
                method(*args)
            except BaseException:  # noqa: BLE001 - a thread ending on SystemExit is silent
                log.exception("%s raised", what)
