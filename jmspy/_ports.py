"""Handles the JMS objects lend the objects they create.

A connection creates sessions; a session creates producers, consumers and browsers. The
created object needs a few of its creator's services (is it closed, wake the dispatcher, the
current transaction, ...). Rather than reading the creator's private attributes, it is handed
one of these ports when it is made: a narrow, typed list of exactly what it may use, built by
the creator from its own bound methods. A reader sees in one place what a child can do to its
parent, and the child does not import the parent's class.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._amqp.completion import NotifiedCompletion
    from ._amqp.provider import AmqpReceiver, InboundDelivery
    from ._provider import Provider, ProviderSession
    from .connection import Connection
    from .consumer import MessageConsumer
    from .destination import Destination
    from .errors import JMSException
    from .producer import MessageProducer


@dataclass(frozen=True, slots=True)
class ConnectionPort:
    """What a connection lends its sessions (and, through them, their consumers and
    producers)."""

    connection_id: str
    check_closed: Callable[[], None]
    # Whether the connection is started (stop() holds deliveries back).
    started: Callable[[], bool]
    wait_started: Callable[[Callable[[], float | None]], bool]
    create_temporary: Callable[[str], Destination]
    client_id_fixed: Callable[[], bool]
    subscription_link_name: Callable[[str, bool, bool], tuple[str, bool]]
    subscription_opened: Callable[[str], None]
    subscription_closed: Callable[[Any], None]
    active_subscriptions: Callable[[str], int]
    session_opened: Callable[[Any, SessionHooks], None]
    session_closed: Callable[[Any], None]
    notify_exception_listener: Callable[[JMSException], None]
    # ("consumer" | "producer", the MessageConsumer or MessageProducer, why): it ended for
    # good while the connection lives on (see ConnectionListener.onConsumerClosed).
    notify_closed_by_broker: Callable[[str, Any, JMSException], None]
    on_async_send_failure: Callable[[JMSException], None]


class ListenerWaits:
    """The threads waiting for a session's listener call in progress to return: a consumer's
    close() or the connection's stop() from outside the listener.

    JMS 2.0 lets them wait for the call in progress only, not for the rest of a listener run
    of some other consumer of the session: while ``awaited`` is set, a run ends after its
    current message, and the dispatch thread lets the waiters through before its next run
    (:meth:`let_through`; a lock is not fair, and the thread that just released it mostly
    takes it back first). ``awaited`` is read without the lock once per delivered message; a
    stale read costs at most one more message."""

    __slots__ = ("_count", "_cv", "awaited")

    def __init__(self) -> None:
        self._count = 0
        self._cv = threading.Condition(threading.Lock())
        self.awaited = False

    def enter(self) -> None:
        with self._cv:
            self._count += 1
            self.awaited = True

    def leave(self) -> None:
        with self._cv:
            self._count -= 1
            if not self._count:
                self.awaited = False
                self._cv.notify_all()

    def let_through(self) -> None:
        """The dispatch thread, before a run and without the delivery lock: return once no
        thread waits any more (each only takes the lock and lets it go)."""
        with self._cv:
            while self._count:
                self._cv.wait()


@dataclass(frozen=True, slots=True)
class SessionPort:
    """What a session lends its producers, consumers and browsers."""

    connection: Connection
    connection_port: ConnectionPort
    amqp_connection: Provider
    amqp: ProviderSession
    session_id: str
    mode: int
    check_closed: Callable[[], None]
    # Whether the session is closing or closed (a listener run stops after its message).
    is_closing: Callable[[], bool]
    # Listener dispatch (one thread per session).
    ensure_dispatcher: Callable[[], None]
    signal_ready: Callable[..., None]
    has_listener: Callable[[], bool]
    wait_for_listener: Callable[[], None]
    # Set while a thread waits in wait_for_listener (a listener run stops after its message);
    # an attribute rather than a callable: every delivered message reads it.
    listener_waits: ListenerWaits
    # Marks the message a listener is handling (recover() inside onMessage redelivers it);
    # ``end_listener_delivery`` returns whether recover() asked for that.
    begin_listener_delivery: Callable[[InboundDelivery], None]
    end_listener_delivery: Callable[[], None]
    take_recover_request: Callable[[], bool]
    # Acknowledgement and transactions.
    # track_unacked also points the message's acknowledge() at what settles it.
    track_unacked: Callable[[InboundDelivery], None]
    forget_unacked: Callable[[MessageConsumer], list[InboundDelivery]]
    txn_for_work: Callable[[], tuple[bytes, int]]
    # Whether txn_for_work would first declare a transaction with the broker (a transacted
    # session after a reconnect, or after a declare that failed): a wait the event loop of
    # jmspy.aio must not make.
    txn_needs_declare: Callable[[], bool]
    # Listener deliveries in a transacted session: the transaction to join, or None while a
    # failed declare holds them back; and until when they are held back (None: they are not).
    txn_for_listener: Callable[[], bytes | None]
    listener_held_until: Callable[[], float | None]
    on_txn_failure: Callable[..., None]
    # Asynchronous sends (CompletionListener).
    track_async_send: Callable[[MessageProducer, NotifiedCompletion[None], Any, Any], None]
    check_not_completion_thread: Callable[[str], None]
    wait_completions: Callable[..., Any]
    # Bookkeeping when a child closes.
    consumer_opened: Callable[[MessageConsumer, ConsumerHooks], None]
    consumer_closed: Callable[[MessageConsumer], None]
    producer_closed: Callable[[MessageProducer], None]


@dataclass(frozen=True, slots=True)
class SessionHooks:
    """The other direction: what a connection may do to one of its sessions (the session
    registers them through ``ConnectionPort.session_opened``)."""

    on_connection_failed: Callable[[JMSException], None]
    on_connection_started: Callable[[], None]
    wait_for_listener: Callable[[], None]
    is_dispatch_thread: Callable[[threading.Thread], bool]
    is_completion_thread: Callable[[threading.Thread], bool]
    # Whether an open consumer of the session reads from the destination (a temporary
    # destination cannot be deleted then).
    consumes_from: Callable[[Destination], bool]
    # The connection is closing: every consumer of the session asks for its credit back now.
    begin_stop_consumer_credit: Callable[[], None]


@dataclass(frozen=True, slots=True)
class ConsumerHooks:
    """What a session may do to one of its consumers (registered through
    ``SessionPort.consumer_opened``)."""

    receiver: AmqpReceiver
    destination: Destination
    is_open: Callable[[], bool]
    has_listener: Callable[[], bool]
    has_batch_listener: Callable[[], bool]
    dispatch_one: Callable[[], None]
    # Returns when the next partial batch is due, or None.
    dispatch_batch: Callable[[], float | None]
    on_connection_started: Callable[[], None]
    on_link_closed: Callable[[JMSException], None]
    redeliver_locally: Callable[[list[InboundDelivery]], None]
    release_prefetch: Callable[[], None]
    # A closing session or connection asks every consumer's credit back at once, first.
    begin_stop_credit: Callable[[], None]
    close_internal: Callable[[], None]
