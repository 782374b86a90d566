"""Session: producers, consumers, acknowledgement and the listener dispatch thread."""

from __future__ import annotations

import collections
import itertools
import logging
import queue
import threading
from typing import TYPE_CHECKING, Any

from ._amqp.completion import WaitScope
from ._amqp.provider import InboundDelivery, LinkSpec
from ._dispatch_pool import DispatchPool
from ._modes import (
    ACKNOWLEDGE_MODES,
    ACKNOWLEDGED_BY_APPLICATION,
    ARTEMIS_PRE_ACKNOWLEDGE,
    AUTO_ACKNOWLEDGE,
    CLIENT_ACKNOWLEDGE,
    DUPS_OK_ACKNOWLEDGE,
    INDIVIDUAL_ACKNOWLEDGE,
    NO_ACKNOWLEDGE,
    NOT_ACKNOWLEDGED,
    SESSION_TRANSACTED,
)
from ._ports import ConnectionPort, ConsumerHooks, ListenerWaits, SessionHooks, SessionPort
from ._provider import Provider, ProviderSession
from ._twins.session import SessionTwins
from .browser import QueueBrowser
from .consumer import MessageConsumer
from .destination import (
    Destination,
    Queue,
    TemporaryQueue,
    TemporaryTopic,
    Topic,
    check_temporary_readable,
)
from .errors import (
    IllegalStateException,
    InvalidDestinationException,
    JMSException,
)
from .message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
from .producer import MessageProducer
from .selector import parse_selector
from .session_acknowledgements import SessionAcknowledgements
from .session_completions import SessionCompletions
from .session_dispatch import SessionDispatch
from .session_transactions import SessionTransactions
from .subscription import Subscription

if TYPE_CHECKING:
    from .connection import Connection

__all__ = ["Session"]


log = logging.getLogger("jmspy.session")


class Session(
    SessionDispatch,
    SessionTransactions,
    SessionCompletions,
    SessionAcknowledgements,
    SessionTwins,
):
    """A single-threaded context for producing and consuming (JMS 2.0 section 6.2)."""

    SESSION_TRANSACTED = SESSION_TRANSACTED
    AUTO_ACKNOWLEDGE = AUTO_ACKNOWLEDGE
    CLIENT_ACKNOWLEDGE = CLIENT_ACKNOWLEDGE
    DUPS_OK_ACKNOWLEDGE = DUPS_OK_ACKNOWLEDGE
    INDIVIDUAL_ACKNOWLEDGE = INDIVIDUAL_ACKNOWLEDGE
    ARTEMIS_PRE_ACKNOWLEDGE = ARTEMIS_PRE_ACKNOWLEDGE
    NO_ACKNOWLEDGE = NO_ACKNOWLEDGE

    def __init__(
        self,
        connection: Connection,
        amqp: Provider,
        mode: int,
        seq: int,
        connection_port: ConnectionPort,
    ) -> None:
        self._connection = connection
        self._connection_port = connection_port
        self._amqp_connection = amqp
        self._mode = mode
        self._seq = seq
        self._session_id = f"{connection_port.connection_id}:{seq}"
        self._amqp: ProviderSession = amqp.create_session()
        self._producers: list[MessageProducer] = []
        self._consumers: list[MessageConsumer] = []
        # Each consumer's hooks (registered by the consumer as it is made).
        self._consumer_hooks: dict[MessageConsumer, ConsumerHooks] = {}
        self._producer_seq = itertools.count(1)
        self._consumer_seq = itertools.count(1)
        self._closed = False
        self._closing = False
        # The broker waits of commit() and rollback(), which a close from another thread ends.
        self._api_waits = WaitScope()
        # CLIENT_ACKNOWLEDGE and INDIVIDUAL_ACKNOWLEDGE: see SessionAcknowledgements.
        self._unacked: dict[InboundDelivery, None] = {}
        self._unacked_lock = threading.Lock()
        # Listener dispatch: one thread per session, created when the first listener is set.
        self._ready: queue.SimpleQueue[MessageConsumer | None] = queue.SimpleQueue()
        self._dispatcher: threading.Thread | None = None
        # transport.sharedEventLoopThreads: listener calls run on a shared pool instead.
        self._pool: DispatchPool | None = None
        self._delivery_lock = threading.RLock()
        self._current_listener_delivery: InboundDelivery | None = None
        self._batch_deadlines: dict[MessageConsumer, float] = {}
        self._completions = collections.deque()
        self._completion_cv = threading.Condition()
        self._completion_thread = None
        self._recover_requested = False
        # SESSION_TRANSACTED: the current AMQP transaction, and why it can only roll back.
        # The id is None between transactions (declared again on first use); ``_txn_epoch`` is
        # the connection epoch it was declared in: a reconnect since then means the broker
        # dropped it, which rolls back whatever work it had (``_txn_has_work``).
        self._txn_id: bytes | None = None
        self._txn_epoch = -1
        self._txn_has_work = False
        self._txn_failure: JMSException | None = None
        # The transaction a commit() sent its discharge for (see _close_within_deadline).
        self._committing_txn: bytes | None = None
        # Listener deliveries held back by a failed declare: tried again at this monotonic
        # time, after a pause that doubles at each failure (see _txn_for_listener).
        self._declare_retry_at = 0.0
        self._declare_retry_s = 0.0
        if mode == SESSION_TRANSACTED:
            try:
                self._current_txn()
            except BaseException:
                # The AMQP session is begun already: nobody could end it once this raised,
                # and it would stay on the connection for as long as the connection lives.
                try:
                    self._amqp.close()
                except JMSException as exc:
                    log.debug("ending the session of a failed transaction declare: %s", exc)
                raise
        # Threads waiting for the listener in progress (a close or stop from another thread).
        self._listener_waits = ListenerWaits()
        # What this session's producers, consumers and browsers may use of it.
        self._port = SessionPort(
            connection=connection,
            connection_port=connection_port,
            amqp_connection=amqp,
            amqp=self._amqp,
            session_id=self._session_id,
            mode=mode,
            check_closed=self._check_closed,
            is_closing=lambda: self._closing or self._closed,
            ensure_dispatcher=self._ensure_dispatcher,
            signal_ready=self._signal_ready_or_hold,
            has_listener=self._has_listener,
            wait_for_listener=self._wait_for_listener,
            listener_waits=self._listener_waits,
            begin_listener_delivery=self._begin_listener_delivery,
            end_listener_delivery=self._end_listener_delivery,
            take_recover_request=self._take_recover_request,
            track_unacked=self._track_unacked,
            forget_unacked=self._forget_unacked,
            txn_for_work=self._txn_for_work,
            txn_needs_declare=self._txn_needs_declare,
            txn_for_listener=self._txn_for_listener,
            listener_held_until=self._listener_held_until,
            on_txn_failure=self._on_txn_failure,
            track_async_send=self._track_async_send,
            check_not_completion_thread=self._check_not_completion_thread,
            wait_completions=self._wait_completions,
            consumer_opened=self._consumer_hooks.__setitem__,
            consumer_closed=self._consumer_closed,
            producer_closed=self._producer_closed,
        )
        connection_port.session_opened(
            self,
            SessionHooks(
                on_connection_failed=self._on_connection_failed,
                on_connection_started=self._on_connection_started,
                wait_for_listener=self._wait_for_listener,
                is_dispatch_thread=self._is_dispatch_thread,
                is_completion_thread=self._is_completion_thread,
                consumes_from=self._consumes_from,
                begin_stop_consumer_credit=self._begin_stop_consumer_credit,
            ),
        )

    def _hooks_of(self, consumer: MessageConsumer) -> ConsumerHooks:
        return self._consumer_hooks[consumer]

    def _begin_stop_consumer_credit(self) -> None:
        for hooks in list(self._consumer_hooks.values()):
            hooks.begin_stop_credit()

    def _consumes_from(self, destination: Destination) -> bool:
        return any(
            h.destination == destination and h.is_open()
            for h in list(self._consumer_hooks.values())
        )

    def __repr__(self) -> str:
        return f"Session({ACKNOWLEDGE_MODES[self._mode]}, {'closed' if self._closed else 'open'})"

    # ---- internal ------------------------------------------------------------------------

    def _check_closed(self) -> None:
        if self._closed or self._closing:
            raise IllegalStateException("The Session is closed")
        self._connection_port.check_closed()

    def _begin_listener_delivery(self, inbound: InboundDelivery) -> None:
        self._current_listener_delivery = inbound
        self._recover_requested = False

    def _end_listener_delivery(self) -> None:
        self._current_listener_delivery = None

    def _take_recover_request(self) -> bool:
        """Whether recover() was called inside the listener just run (AUTO/DUPS_OK); cleared."""
        requested, self._recover_requested = self._recover_requested, False
        return requested

    def _is_dispatch_thread(self, thread: threading.Thread) -> bool:
        if self._pool is not None:
            return self._pool.running(self) is thread
        return self._dispatcher is thread

    def _on_connection_started(self) -> None:
        for hooks in list(self._consumer_hooks.values()):
            hooks.on_connection_started()

    def _on_connection_failed(self, error: JMSException) -> None:
        for hooks in list(self._consumer_hooks.values()):
            hooks.on_link_closed(error)

    def _consumer_closed(self, consumer: MessageConsumer) -> None:
        self._consumer_hooks.pop(consumer, None)
        try:
            self._consumers.remove(consumer)
        except ValueError:
            pass

    def _producer_closed(self, producer: MessageProducer) -> None:
        try:
            self._producers.remove(producer)
        except ValueError:
            pass

    # ---- message factories -------------------------------------------------------------

    def createMessage(self) -> Message:
        """Create a message with no body (raises IllegalStateException when closed)."""
        self._check_closed()
        return Message()

    def createTextMessage(self, text: str | None = None) -> TextMessage:
        """Create a ``TextMessage``, with ``text`` as its body when given."""
        self._check_closed()
        message = TextMessage()
        if text is not None:
            message.setText(text)
        return message

    def createBytesMessage(self) -> BytesMessage:
        """Create an empty ``BytesMessage``, open for writing."""
        self._check_closed()
        return BytesMessage()

    def createMapMessage(self) -> MapMessage:
        """Create an empty ``MapMessage``."""
        self._check_closed()
        return MapMessage()

    def createStreamMessage(self) -> StreamMessage:
        """Create an empty ``StreamMessage``, open for writing."""
        self._check_closed()
        return StreamMessage()

    def createObjectMessage(self, obj: Any = None) -> ObjectMessage:
        """Create an ``ObjectMessage``, with ``obj`` as its body when not None."""
        self._check_closed()
        message = ObjectMessage()
        if obj is not None:
            message.setObject(obj)
        return message

    # ---- destinations ---------------------------------------------------------------------

    def createQueue(self, queueName: str, **options: Any) -> Queue:
        """A queue by name; jmspy options (see DestinationOptions) may describe it, e.g.
        ``createQueue("orders", default_delivery_delay=5000, delivery_sequence="priority")``."""
        self._check_closed()
        return Queue(queueName, **options)

    def createTopic(self, topicName: str, **options: Any) -> Topic:
        """A topic by name; jmspy options (see DestinationOptions) may describe it."""
        self._check_closed()
        return Topic(topicName, **options)

    # ---- temporary destinations and subscriptions ------------------------------------------

    def createTemporaryQueue(self) -> TemporaryQueue:
        """A queue that lives as long as the connection (or until delete())."""
        self._check_closed()
        return self._connection_port.create_temporary("temporary-queue")  # type: ignore[return-value]

    def createTemporaryTopic(self) -> TemporaryTopic:
        """A topic that lives as long as the connection (or until delete())."""
        self._check_closed()
        return self._connection_port.create_temporary("temporary-topic")  # type: ignore[return-value]

    def _subscribe(
        self,
        topic: Destination | None,
        name: str | None,
        selector: str | None,
        no_local: bool,
        *,
        durable: bool,
        shared: bool,
    ) -> MessageConsumer:
        self._check_closed()
        if topic is None or not isinstance(topic, Topic):
            raise InvalidDestinationException(
                f"invalid destination {topic!r}: a subscription needs a Topic"
            )
        if not name or not str(name).strip():
            raise JMSException(f"invalid subscription name {name!r}: must not be empty")
        adapter = self._connection.adapter
        if durable and not adapter.durable_subscriptions:
            raise JMSException(
                f"the broker ({adapter.title}) does not keep durable subscriptions: a "
                "subscription queue would not survive the consumer"
            )
        if durable and not shared and not self._connection_port.client_id_fixed():
            raise IllegalStateException(
                "You must specify a unique clientID for the Connection to use a durable "
                "subscription (setClientID or jms.clientID)"
            )
        selector = _checked_selector(selector)
        link_name, global_ = self._connection_port.subscription_link_name(name, durable, shared)
        subscription = Subscription(name, link_name, durable, shared, global_)
        # Counted as open since subscription_link_name reserved the name: a consumer that
        # fails to open gives it back through the same call as one that closes.
        self._connection_port.subscription_opened(name)
        try:
            consumer = MessageConsumer(
                self,
                self._port,
                topic,
                selector,
                no_local,
                next(self._consumer_seq),
                subscription=subscription,
            )
        except BaseException:
            self._connection_port.subscription_closed(subscription)
            raise
        self._consumers.append(consumer)
        if self._connection_port.started():
            self._hooks_of(consumer).on_connection_started()
        return consumer

    def createDurableSubscriber(
        self, topic: Topic, name: str, messageSelector: str | None = None, noLocal: bool = False
    ) -> MessageConsumer:
        """An unshared durable subscription (needs a client id); survives close()."""
        return self._subscribe(topic, name, messageSelector, noLocal, durable=True, shared=False)

    def createDurableConsumer(
        self, topic: Topic, name: str, messageSelector: str | None = None, noLocal: bool = False
    ) -> MessageConsumer:
        """Consume from the unshared durable subscription ``name`` on ``topic``.

        The subscription is created if needed. Raises InvalidDestinationException unless ``topic``
        is a Topic, IllegalStateException without a client id, JMSException for an empty name or a
        broker that keeps no durable subscriptions, and InvalidSelectorException for a bad selector.
        """
        return self._subscribe(topic, name, messageSelector, noLocal, durable=True, shared=False)

    def createSharedDurableConsumer(
        self, topic: Topic, name: str, messageSelector: str | None = None
    ) -> MessageConsumer:
        """Consume from the shared durable subscription ``name`` on ``topic`` (no client id needed).

        Raises InvalidDestinationException unless ``topic`` is a Topic, JMSException for an empty
        name or a broker that keeps no durable subscriptions, InvalidSelectorException for a bad
        selector.
        """
        return self._subscribe(topic, name, messageSelector, False, durable=True, shared=True)

    def createSharedConsumer(
        self, topic: Topic, sharedSubscriptionName: str, messageSelector: str | None = None
    ) -> MessageConsumer:
        """Consume from the shared non-durable subscription ``sharedSubscriptionName`` on ``topic``.

        Raises InvalidDestinationException unless ``topic`` is a Topic, JMSException for an empty
        name, InvalidSelectorException for a bad selector.
        """
        return self._subscribe(
            topic, sharedSubscriptionName, messageSelector, False, durable=False, shared=True
        )

    def unsubscribe(self, name: str) -> None:
        """Delete a durable subscription: look it up by link name, then close that link.

        InvalidDestinationException for a name that is empty or not a str (JMS 2.0), before
        anything is sent."""
        self._check_closed()
        if not isinstance(name, str) or not name.strip():
            # Refused here, as a subscribe refuses it: it went out as "|global" or
            # "None|global" and waited a whole jms.requestTimeout for the broker's answer.
            raise InvalidDestinationException(
                f"invalid subscription name {name!r}: it must be a non-empty str"
            )
        if self._connection_port.active_subscriptions(name):
            raise IllegalStateException(
                f"cannot unsubscribe {name!r}: a consumer of this connection is still active on it"
            )
        # Qpid JMS's naming: without a client id only global shared subscriptions exist, and
        # their first link is "<name>|global".
        link_name = name if self._connection_port.client_id_fixed() else f"{name}|global"
        spec = LinkSpec(name=link_name, address=None, lookup=True)
        if not self._connection_port.client_id_fixed():
            # The broker finds a global shared subscription only with these (Qpid JMS).
            spec.extra["desired_capabilities"] = ("shared", "global")
        receiver = self._amqp.create_receiver(
            spec, 0, lambda payload: None, lambda inbound: None, lambda error: None
        )
        receiver.close()

    def createBrowser(self, queue: Queue, messageSelector: str | None = None) -> QueueBrowser:
        """Browse ``queue`` without consuming, optionally filtered by a selector.

        Raises InvalidDestinationException unless ``queue`` is a Queue and InvalidSelectorException
        for a bad selector (parsed before anything is sent).
        """
        self._check_closed()
        if queue is None or not isinstance(queue, Queue):
            raise InvalidDestinationException(
                f"invalid destination {queue!r}: a browser needs a Queue"
            )
        messageSelector = _checked_selector(messageSelector)
        return QueueBrowser(self, self._port, queue, messageSelector)

    # ---- producers and consumers --------------------------------------------------------

    def createProducer(self, destination: Destination | None = None) -> MessageProducer:
        """Create a producer for ``destination``, or an anonymous one when it is None (rule JMS-22).

        Raises InvalidDestinationException when ``destination`` is not a Destination.
        """
        self._check_closed()
        if destination is not None and not isinstance(destination, Destination):
            raise InvalidDestinationException(
                f"invalid destination {destination!r}: expected a Queue or Topic"
            )
        producer = MessageProducer(self, self._port, destination, next(self._producer_seq))
        self._producers.append(producer)
        return producer

    def createConsumer(
        self,
        destination: Destination | None,
        messageSelector: str | None = None,
        noLocal: bool = False,
    ) -> MessageConsumer:
        """Create a consumer of ``destination`` (rule JMS-22).

        It receives once the connection starts. Raises InvalidDestinationException for a missing
        destination, or a temporary one of another connection or already deleted, and
        InvalidSelectorException for a bad selector. ``noLocal`` skips messages published by this
        connection.
        """
        self._check_closed()
        if destination is None or not isinstance(destination, Destination):
            raise InvalidDestinationException(
                f"invalid destination {destination!r}: a consumer needs a Queue or Topic"
            )
        check_temporary_readable(destination, self._connection, "consume from")
        messageSelector = _checked_selector(messageSelector)
        consumer = MessageConsumer(
            self, self._port, destination, messageSelector, noLocal, next(self._consumer_seq)
        )
        self._consumers.append(consumer)
        if self._connection_port.started():
            self._hooks_of(consumer).on_connection_started()
        return consumer

    # ---- session state ----------------------------------------------------------------------

    def getTransacted(self) -> bool:
        """Whether the session is transacted (its mode is SESSION_TRANSACTED, rule JMS-17)."""
        self._check_closed()
        return self._mode == SESSION_TRANSACTED

    def getAcknowledgeMode(self) -> int:
        """The session mode: AUTO_, CLIENT_, DUPS_OK_, INDIVIDUAL_ACKNOWLEDGE (101),
        ARTEMIS_PRE_ACKNOWLEDGE (100), NO_ACKNOWLEDGE (257) or SESSION_TRANSACTED."""
        self._check_closed()
        return self._mode

    def recover(self) -> None:
        """Redeliver every unacknowledged message, from the first one, marked redelivered."""
        self._check_closed()
        if self._mode == SESSION_TRANSACTED:
            raise IllegalStateException("Cannot call recover() on a transacted session")
        if self._mode in NOT_ACKNOWLEDGED:
            return  # every message was consumed as it was handed over (JMS-68)
        on_dispatch = self._is_dispatch_thread(threading.current_thread())
        if self._mode in ACKNOWLEDGED_BY_APPLICATION:
            with self._delivery_lock:
                pending = self._take_unacked()
                by_consumer: dict[int, list[InboundDelivery]] = {}
                epoch = self._amqp_connection.epoch
                for inbound in pending:
                    if inbound.epoch != epoch:
                        continue  # lost with an old connection: the broker redelivers it
                    by_consumer.setdefault(id(inbound.receiver), []).append(inbound)
                # The hooks, not self._consumers: a consumer closing on another thread has
                # already given its hooks back, and is skipped.
                for hooks in list(self._consumer_hooks.values()):
                    mine = by_consumer.get(id(hooks.receiver))
                    if mine:
                        hooks.redeliver_locally(mine)
        elif on_dispatch and self._current_listener_delivery is not None:
            # AUTO/DUPS_OK inside onMessage: the current message is delivered again.
            self._recover_requested = True

    def close(self) -> None:
        """Close the session, its producers and consumers; an open transaction is rolled back.

        Nothing is acknowledged by closing; idempotent. Raises IllegalStateException when called
        from this session's own listener or completion listener (rule JMS-20). The whole close is
        bounded by ``jms.closeTimeout``: a commit() or rollback() waiting for the broker on
        another thread is ended first (the rollback returns, rolled back by the session's end;
        the commit raises TransactionInDoubtException).
        """
        if self._closed:
            return
        if self._is_dispatch_thread(threading.current_thread()):
            raise IllegalStateException(
                "Illegal invocation from MessageListener callback: a listener must not close "
                "its own session"
            )
        self._check_not_completion_thread("Session.close()")
        # One jms.closeTimeout for the whole close, shared by every link and the rollback.
        with self._amqp_connection.close_scope():
            self._close_within_deadline()

    def _close_within_deadline(self) -> None:
        amqp = self._amqp_connection
        self._wait_completions(limit_s=amqp.close_remaining_s())
        self._closing = True
        # A rollback() on another thread holds the delivery lock across its waits for the
        # broker (drain, discharge), each up to jms.requestTimeout: end them now, so the close
        # below keeps to jms.closeTimeout. A rollback can only roll back, and a commit cut
        # short reports in doubt (its discharge may have reached the broker).
        self._api_waits.abort(
            IllegalStateException(
                f"session {self._session_id} was closed while the call waited for the broker"
            )
        )
        # Every consumer asks for its credit back before the first waits for its answer: they
        # share one deadline, and a peer slow to answer must not leave the last none to ask.
        self._begin_stop_consumer_credit()
        try:
            with self._delivery_lock:
                # The hooks, not self._consumers: a consumer closing on another thread has
                # already given its hooks back (its own close finishes it).
                for hooks in list(self._consumer_hooks.values()):
                    try:
                        hooks.close_internal()
                    except JMSException as exc:
                        log.debug("closing consumer: %s", exc)
                for producer in list(self._producers):
                    try:
                        producer.close()
                    except JMSException as exc:
                        log.debug("closing producer: %s", exc)
                # Unacknowledged CLIENT_ACKNOWLEDGE messages were settled as failed deliveries
                # by their consumers' close; nothing is acknowledged by closing (JMS 6.2.15),
                # and an open transaction is rolled back.
                amqp = self._amqp_connection
                txn_id = self._txn_id
                if (
                    txn_id is not None
                    and txn_id != self._committing_txn  # a commit cut short: in doubt already
                    and amqp.failure is None
                    and not amqp.interrupted
                    and self._txn_epoch == amqp.epoch
                ):
                    try:
                        self._amqp.coordinator().discharge(
                            txn_id,
                            fail=True,
                            epoch=self._txn_epoch,
                            timeout_ms=max(1, int(amqp.close_remaining_s() * 1000)),
                        )
                    except JMSException as exc:
                        log.debug("rolling back on close: %s", exc)
                self._txn_id = None
                self._amqp.close()
                self._closed = True
        finally:
            self._closed = True
            if self._dispatcher is not None:
                self._ready.put(None)
            with self._completion_cv:
                self._completion_cv.notify_all()
            self._connection_port.session_closed(self)

    def __enter__(self) -> Session:
        """Enter a ``with`` block; returns this session."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Leave a ``with`` block: :meth:`close` the session, whatever happened inside."""
        self.close()


def _checked_selector(selector: str | None) -> str | None:
    """Parse a selector before anything is sent: a bad one raises InvalidSelectorException
    here; blank means none."""
    if selector is None:
        return None
    return None if parse_selector(selector) is None else selector
