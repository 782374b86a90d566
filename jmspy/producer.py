"""MessageProducer (classic API)."""

from __future__ import annotations

import functools
import itertools
import logging
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, overload

from . import rules, tracing
from ._amqp.codec import encode_message
from ._amqp.completion import Completion, NotifiedCompletion
from ._amqp.provider import ANONYMOUS_RELAY, AmqpSender, LinkSpec
from ._limits import saturating_add
from ._modes import SESSION_TRANSACTED
from ._twins.producer import MessageProducerTwins
from .destination import Destination
from .errors import (
    IllegalArgumentException,
    IllegalStateException,
    InvalidDestinationException,
    JMSException,
    MessageFormatException,
    UnsupportedOperationException,
)
from .message import DeliveryMode, Message
from .producer_settings import (  # noqa: F401 - DEFAULT_PRIORITY re-exported
    DEFAULT_PRIORITY,
    ProducerSettings,
    validate_delivery_mode,
    validate_milliseconds,
    validate_priority,
)

if TYPE_CHECKING:
    from ._ports import SessionPort
    from .session import Session

__all__ = ["CompletionListener", "MessageProducer", "DEFAULT_PRIORITY", "now_ms"]


log = logging.getLogger("jmspy.producer")


def _naming_destination(exc: JMSException, destination: Destination) -> JMSException:
    """DD-9: a refused send says which destination. Links through the anonymous relay do not
    know it, so the producer adds it (same exception class, code and cause)."""
    if repr(str(destination)) in exc.reason:  # quoted, as the links name their address
        return exc
    named = type(exc)(
        f"send to {destination} failed: {exc.reason}",
        exc.error_code,
        exc.linked_exception,
        reason_code=exc.reason_code,
        rule_id=exc.rule_id,
    )
    return named


def _ended(link: AmqpSender) -> bool:
    """Whether a link can take no more sends: closed, or ended by the broker or a failure."""
    return link.closed or link.failure is not None


class CompletionListener(Protocol):
    """``jakarta.jms.CompletionListener``: the outcome of an asynchronous send, called on the
    session's completion thread (any object with these two methods will do)."""

    def onCompletion(self, message: Message) -> None:
        """Called once the broker accepted ``message`` (the asynchronous send completed)."""
        ...

    def onException(self, message: Message, exception: BaseException) -> None:
        """Called when the send of ``message`` failed or its outcome is unknown."""
        ...


def _is_completion_listener(value: Any) -> bool:
    return callable(getattr(value, "onCompletion", None)) and callable(
        getattr(value, "onException", None)
    )


def check_completion_listener(value: Any, call: str) -> None:
    """Refuse what cannot be a CompletionListener where one is required (rule JMS-39): None,
    or an object without callable ``onCompletion`` and ``onException``, which would otherwise
    fail only when the send's outcome arrives, on the completion thread."""
    if value is None:
        raise IllegalArgumentException(f"{call}: CompletionListener must not be null [rule JMS-39]")
    if not _is_completion_listener(value):
        missing = [
            name
            for name in ("onCompletion", "onException")
            if not callable(getattr(value, name, None))
        ]
        raise IllegalArgumentException(
            f"{call}: {value!r} is not a CompletionListener: it has no callable "
            f"{' and no '.join(missing)} [rule JMS-39]"
        )


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class MessageProducer(MessageProducerTwins):
    """Sends messages to a destination (or, when created without one, to any destination)."""

    def __init__(
        self, session: Session, port: SessionPort, destination: Destination | None, seq: int
    ) -> None:
        self._session = session
        self._port = port
        self._connection = port.connection
        self._destination = destination
        self._producer_id = f"{port.session_id}:{seq}"
        self._id_prefix = self._producer_id + "-"
        self._message_seq = itertools.count(1)
        self._settings = ProducerSettings()
        self._closed = False
        self._wire = self._connection.wire
        options = self._connection.options
        self._max_delivery_delay = options.max_delivery_delay
        self._adapter = self._connection.adapter
        self._send_timeout = options.send_timeout
        self._force_async = options.force_async_send
        self._force_sync = options.force_sync_send
        self._max_in_flight = options.max_async_sends_in_flight
        # Duplicate detection (jmspy.duplicateDetection): the broker's property name, or None.
        dedupe = options.duplicate_detection
        if dedupe is None:
            dedupe = self._connection.isFailover()
        self._duplicate_property = self._adapter.duplicate_id_property if dedupe else None
        self._links: dict[Destination | None, AmqpSender] = {}
        self._link_seq = itertools.count(1)
        if destination is not None:
            self._links[destination] = self._attach(destination)
        elif ANONYMOUS_RELAY in port.amqp_connection.remote_offered_capabilities:
            self._links[None] = self._attach(None)
        # An anonymous producer on a broker without the anonymous relay attaches a link per
        # destination (a "fallback" link, Qpid JMS's term). Kept in least-recently-used order
        # (the dict's), at most amqp.anonymousFallbackCacheSize of them: a producer that sends
        # to a new destination every time would otherwise hold a link, and the broker one,
        # for each destination it ever used.
        self._fallback = destination is None and None not in self._links
        self._fallback_size = options.anonymous_fallback_cache_size
        self._fallback_idle_s = options.anonymous_fallback_cache_timeout / 1000.0
        self._fallback_used: dict[Destination | None, float] = {}
        # Fallback links out of the cache, closed once their sends are settled (or here, at
        # the producer's close).
        self._retiring: list[AmqpSender] = []
        self._close_timeout = options.close_timeout
        if options.tracing:  # jmspy.tracing: a span and trace context per send (tracing.py)
            self._send = tracing.traced_send(self._connection, self._send)  # type: ignore[method-assign]

    def __repr__(self) -> str:
        return f"MessageProducer(destination={self._destination!r})"

    def _attach(self, destination: Destination | None) -> AmqpSender:
        address = self._wire.address(destination) if destination is not None else None
        capabilities = (destination.kind,) if destination is not None else ()
        spec = LinkSpec(
            name=f"jmspy:sender:{self._producer_id}:{next(self._link_seq)}:{address or ''}",
            address=address,
            capabilities=capabilities,
            # Rule WM-17: a presettled link (an anonymous one only when every send is).
            presettled=self._connection.options.presettles_producer(
                self._port.mode, None if destination is None else destination.is_topic
            ),
        )
        # The producer's one link: its end is the producer's. That is the fixed producer's
        # link and an anonymous producer's relay link (both None here); an anonymous producer
        # without the relay makes a link per destination and carries on without one of them.
        owns_producer = destination == self._destination

        def hook(sender: AmqpSender) -> None:
            # Before the attach: the broker may detach the link as soon as it answers it.
            sender.async_failure_handler = self._port.connection_port.on_async_send_failure
            if owns_producer:
                sender.on_ended = self._on_ended_by_broker

        return self._session._amqp.create_sender(spec, self._max_in_flight, before_attach=hook)

    def _on_ended_by_broker(self, error: JMSException) -> None:
        """Engine thread: the link is gone for good while the connection lives on."""
        if not self._closed:
            self._port.connection_port.notify_closed_by_broker("producer", self, error)

    def _link_for(self, destination: Destination) -> AmqpSender:
        link = self._links.get(None) if self._destination is None else None
        if link is not None:
            return link
        if not self._fallback:
            return self._links[destination]
        now = time.monotonic()
        if self._fallback_idle_s > 0:
            for idle in [
                cached
                for cached, used in self._fallback_used.items()
                if cached != destination and now - used >= self._fallback_idle_s
            ]:
                self._close_fallback_link(idle)
        link = self._links.pop(destination, None)
        if link is not None and _ended(link):
            # The broker detached it (a deleted queue, a lost link): it is gone, so it leaves
            # the cache and the send attaches a new one, as Qpid JMS's fallback producer does
            # (left cached, it would fail every later send to the destination).
            self._fallback_used.pop(destination, None)
            link = None
        if link is None:
            # Room for the new link: the least recently used ones go first.
            while self._links and len(self._links) >= max(self._fallback_size, 1):
                self._close_fallback_link(next(iter(self._links)))
            link = self._attach(destination)
        self._links[destination] = link  # now the most recently used
        self._fallback_used[destination] = now
        return link

    def _close_fallback_link(self, destination: Destination | None) -> None:
        """Take a fallback link out of the cache. It is closed once what was sent on it is
        settled, with no send waiting for that: the send that evicts it waited up to
        jms.closeTimeout for another destination's outcomes, past its own jms.sendTimeout.
        A broker that never settles them gets jms.sendTimeout plus jms.closeTimeout, then the
        link is closed and they are reported unknown; the producer's close closes it too."""
        link = self._links.pop(destination)
        self._fallback_used.pop(destination, None)
        # A link the broker ended (or that was closed) has nothing left to settle; kept here,
        # each one would stay for the producer's life.
        self._retiring = [retiring for retiring in self._retiring if not _ended(retiring)]
        if _ended(link):
            return
        self._retiring.append(link)
        within_s = (self._send_timeout + self._close_timeout) / 1000.0
        link.retire(
            within_s,
            IllegalStateException(
                f"the link to {destination} left the anonymous producer's link cache "
                "(amqp.anonymousFallbackCacheSize)"
            ),
        )

    def _check_closed(self) -> None:
        if self._closed:
            raise IllegalStateException("The MessageProducer is closed")
        self._port.check_closed()

    # ---- settings ------------------------------------------------------------------------

    def getDestination(self) -> Destination | None:
        """The producer's destination, or None for an anonymous producer."""
        self._check_closed()
        return self._destination

    def setDeliveryMode(self, deliveryMode: int) -> None:
        """Set the default delivery mode: ``DeliveryMode.PERSISTENT`` (2) or ``NON_PERSISTENT`` (1).

        Raises JMSException for any other value (rule JMS-34).
        """
        self._check_closed()
        self._settings.set_delivery_mode(deliveryMode)

    def getDeliveryMode(self) -> int:
        """The default delivery mode (PERSISTENT unless set, rule JMS-33)."""
        self._check_closed()
        return self._settings.delivery_mode

    def setPriority(self, defaultPriority: int) -> None:
        """Set the default priority, 0 to 9 (rule DD-14).

        Raises JMSException naming the value when it is out of range or not an integer (JMS-34).
        """
        self._check_closed()
        self._settings.set_priority(defaultPriority)

    def getPriority(self) -> int:
        """The default priority (4 unless set)."""
        self._check_closed()
        return self._settings.priority

    def setTimeToLive(self, timeToLive: int) -> None:
        """Set the default time to live in milliseconds; 0 means no expiry.

        Raises JMSException for a negative or non-integer value, and with MQRC_EXPIRY_ERROR when it
        is shorter than a non-zero delivery delay (rule DD-2).
        """
        self._check_closed()
        self._settings.set_time_to_live(timeToLive)

    def getTimeToLive(self) -> int:
        """The default time to live in milliseconds (0: no expiry)."""
        self._check_closed()
        return self._settings.time_to_live

    def setDeliveryDelay(self, deliveryDelay: int) -> None:
        """Set the delivery delay in milliseconds for messages sent by this producer.

        Raises JMSException for a negative or non-integer value; MQRC_OPTIONS_ERROR above the
        factory's or destination's maximum (DD-11); MQRC_EXPIRY_ERROR when longer than a non-zero
        time to live (DD-2); MQRC_FUNCTION_NOT_SUPPORTED when the broker of this producer's link has
        no delayed delivery (DD-1; an anonymous producer finds out at send).
        """
        self._check_closed()
        delay = validate_milliseconds("deliveryDelay", deliveryDelay)
        self.check_delivery_delay(delay)
        self._settings.set_delivery_delay(delay)

    def check_delivery_delay(self, delay: int, *, relay: bool = False) -> None:
        """The delivery-delay rules a setter can check before any send: the limits (DD-11)
        and, where support is known already, DD-1: on a fixed producer's link (attached at
        creation), or, with ``relay`` (``JMSProducer``), on the anonymous relay link or from
        the broker profile. A classic producer without a destination decides DD-1 at send."""
        self._check_delay_limits(delay, self._destination)
        if self._destination is not None:
            supported = self._wire.delay_supported(self._links[self._destination])
        elif relay:
            supported = self._wire.delay_supported(self._links.get(None))
        else:
            return
        rules.check_delay_supported(delay, supported, self._wire.broker_name())

    def _check_delay_limits(self, delay: int, destination: Destination | None) -> None:
        rules.check_max_delay(
            delay, self._max_delivery_delay, what="the connection factory (jmspy.maxDeliveryDelay)"
        )
        if destination is not None:
            rules.check_max_delay(
                delay, destination.options.max_delivery_delay, what=f"destination {destination}"
            )

    def getDeliveryDelay(self) -> int:
        """The delivery delay in milliseconds (0 unless set)."""
        self._check_closed()
        return self._settings.delivery_delay

    def setDisableMessageID(self, value: bool) -> None:
        """When true, sent messages carry no JMSMessageID (rule JMS-41)."""
        self._check_closed()
        self._settings.disable_message_id = bool(value)

    def getDisableMessageID(self) -> bool:
        """Whether message ids are disabled."""
        self._check_closed()
        return self._settings.disable_message_id

    def setDisableMessageTimestamp(self, value: bool) -> None:
        """When true, sent messages carry no JMSTimestamp (rule JMS-41)."""
        self._check_closed()
        self._settings.disable_timestamp = bool(value)

    def getDisableMessageTimestamp(self) -> bool:
        """Whether message timestamps are disabled."""
        self._check_closed()
        return self._settings.disable_timestamp

    # ---- send ------------------------------------------------------------------------------

    # The JMS forms of send, for type checkers; the implementation takes them all.
    @overload
    def send(self, message: Message, /) -> None: ...
    @overload
    def send(self, message: Message, completionListener: CompletionListener, /) -> None: ...
    @overload
    def send(
        self, message: Message, deliveryMode: int, priority: int, timeToLive: int, /
    ) -> None: ...
    @overload
    def send(
        self,
        message: Message,
        deliveryMode: int,
        priority: int,
        timeToLive: int,
        completionListener: CompletionListener,
        /,
    ) -> None: ...
    @overload
    def send(self, destination: Destination, message: Message, /) -> None: ...
    @overload
    def send(
        self,
        destination: Destination,
        message: Message,
        completionListener: CompletionListener,
        /,
    ) -> None: ...
    @overload
    def send(
        self,
        destination: Destination,
        message: Message,
        deliveryMode: int,
        priority: int,
        timeToLive: int,
        /,
    ) -> None: ...
    @overload
    def send(
        self,
        destination: Destination,
        message: Message,
        deliveryMode: int,
        priority: int,
        timeToLive: int,
        completionListener: CompletionListener,
        /,
    ) -> None: ...

    def send(self, *args: Any) -> None:
        """``send(message[, deliveryMode, priority, timeToLive][, completionListener])`` or
        ``send(destination, message[, deliveryMode, priority, timeToLive][,
        completionListener])``. With a CompletionListener the call returns at once and
        ``onCompletion``/``onException`` run later on the session's completion thread."""
        self._check_closed()
        listener = None
        if args and _is_completion_listener(args[-1]):
            *head, listener = args
            args = tuple(head)
        else:
            # One argument past the message and its optional (mode, priority, ttl) is where
            # the overloads take a CompletionListener: whatever is there must be one.
            after_message = len(args) - (1 if isinstance(args[0], Message) else 2) if args else 0
            if after_message in (1, 4):
                check_completion_listener(args[-1], "send")
        if len(args) in (2, 5) or (args and isinstance(args[0], Destination)):
            destination, message, *rest = args
            if self._destination is not None:
                raise UnsupportedOperationException(
                    f"this producer was created for {self._destination}; "
                    "use send(message) without a destination"
                )
            if destination is None:
                raise InvalidDestinationException("Destination must not be null")
            if not isinstance(destination, Destination):
                raise InvalidDestinationException(f"invalid destination {destination!r}")
            if len(rest) not in (0, 3):
                raise JMSException(
                    "send(destination, message, ...) takes deliveryMode, priority and "
                    f"timeToLive together, got {len(rest)} of them"
                )
        elif len(args) in (1, 4):
            message, *rest = args
            if self._destination is None:
                raise UnsupportedOperationException(
                    "this producer has no destination; use send(destination, message)"
                )
            destination = self._destination
        else:
            raise JMSException(f"send takes 1, 2, 4 or 5 arguments, got {len(args)}")
        if rest:
            mode = validate_delivery_mode(rest[0])
            priority = validate_priority(rest[1])
            ttl = validate_milliseconds("timeToLive", rest[2])
        else:
            settings = self._settings
            mode, ttl = settings.delivery_mode, settings.time_to_live
            priority = settings.priority_for(destination)  # DD-16
        self._send(
            destination, message, mode, priority, ttl, self._settings.delivery_delay, listener
        )

    def send_with(
        self, settings: ProducerSettings, destination: Destination, message: Message, listener: Any
    ) -> None:
        """A send with another object's settings (a ``JMSProducer`` sends through its
        context's anonymous producer with its own settings)."""
        self._send(
            destination,
            message,
            settings.delivery_mode,
            settings.priority_for(destination),
            settings.time_to_live,
            settings.delivery_delay,
            listener,
            settings,
        )

    def _send(
        self,
        destination: Destination,
        message: Message,
        mode: int,
        priority: int,
        ttl: int,
        delay: int,
        listener: Any = None,
        settings: ProducerSettings | None = None,
    ) -> None:
        if settings is None:
            settings = self._settings
        if message is None:
            raise MessageFormatException("Message must not be null")
        if not isinstance(message, Message):
            raise MessageFormatException(
                f"cannot send {type(message).__name__}: expected a jmspy Message"
            )
        if getattr(destination, "deleted", False):
            raise IllegalStateException(
                f"Temporary destination has been deleted: {destination} (deleted, or lost with "
                "the connection to the broker that created it)"
            )
        # Every restriction is checked before anything is encoded or written.
        delay = rules.effective_delay(delay, destination)  # DD-10
        link = self._link_for(destination)
        if delay > 0:
            self._check_delay_limits(delay, destination)  # DD-11
            rules.check_delay_supported(
                delay, self._wire.delay_supported(link), self._wire.broker_name()
            )
            rules.check_ttl_and_delay(ttl, delay, where="send")  # DD-2 / DD-12
            rules.check_message_for_delay(delay, message)  # DD-3, DD-4
            rules.check_destination_for_delay(  # DD-5, DD-6
                delay,
                destination,
                mode == DeliveryMode.PERSISTENT,
                self._adapter.publication_defaults,
            )
        timestamp = now_ms()
        # As in Qpid JMS: JMSXUserID is the authenticated user with jms.populateJMSXUserID and
        # is cleared on every other send, so a message cannot claim someone else's identity.
        options = self._connection.options
        message.stamp_for_send(
            destination,
            mode,
            priority,
            0 if settings.disable_timestamp else timestamp,
            saturating_add(timestamp, ttl) if ttl > 0 else 0,
            saturating_add(timestamp, delay),
            None if settings.disable_message_id else self._id_prefix + str(next(self._message_seq)),
            options.username if options.populate_jmsx_user_id else None,
        )
        adapter = self._adapter
        payload = encode_message(
            message,
            ttl=ttl,
            delivery_time_transmitted=delay > 0,
            queue_prefix=adapter.queue_prefix,
            topic_prefix=adapter.topic_prefix,
            delay_form=adapter.delay_form,
            message_annotations=adapter.message_annotations,
            duplicate_id=self._duplicate_id(message),
        )
        if self._force_sync:
            sync = True
        elif self._force_async:
            sync = False
        else:
            sync = mode == DeliveryMode.PERSISTENT
        track: Completion[None] | None = None
        async_send: NotifiedCompletion[None] | None = None
        if listener is not None:
            sync = False
            # jmspy.aio's listener is completed by the engine thread itself and bounds the
            # wait by jms.sendTimeout on its event loop (no Event, no completion thread).
            # A CompletionListener's outcome goes to the session's completion thread, which
            # is told when it is there (no Event per send).
            if hasattr(listener, "on_settled"):
                track = listener
            else:
                track = async_send = NotifiedCompletion()
        # An anonymous relay link decides per send, by the destination's kind (rule WM-17).
        presettled = (
            self._connection.options.presettles_producer(self._port.mode, destination.is_topic)
            if link.spec.address is None
            else None
        )
        # A jmspy.aio send runs on an event loop, which must not wait for an in-flight slot:
        # its completion starts the link send now or, in send order, once a slot is free.
        start_send = getattr(track, "start_send", None) if track is listener else None
        if self._port.mode == SESSION_TRANSACTED:
            # Transactional sends need no round trip each: commit waits for their outcomes.
            txn_id, txn_epoch = self._port.txn_for_work()
            link.txn_failure_handler = self._port.on_txn_failure
            if start_send is not None:
                start_send(
                    link,
                    self._transactional_send(
                        link, payload, txn_id, track, txn_epoch, presettled, destination
                    ),
                    transactional=True,
                )
            else:
                link.send(payload, False, self._send_timeout, txn_id, track, txn_epoch, presettled)
        else:
            try:
                if start_send is not None:
                    start_send(
                        link,
                        functools.partial(
                            link.send,
                            payload,
                            False,
                            self._send_timeout,
                            None,
                            track,
                            None,
                            presettled,
                        ),
                        # A link for this send only is closed right after it: no waiting.
                        may_wait=not (self._fallback and self._fallback_size == 0),
                    )
                else:
                    link.send(payload, sync, self._send_timeout, None, track, None, presettled)
            except JMSException as exc:
                raise _naming_destination(exc, destination) from exc
            finally:
                if self._fallback and self._fallback_size == 0 and destination in self._links:
                    # amqp.anonymousFallbackCacheSize=0: a link for this send only.
                    self._close_fallback_link(destination)
        if async_send is not None:
            self._port.track_async_send(self, async_send, message, listener)

    def _transactional_send(
        self,
        link: AmqpSender,
        payload: bytes,
        txn_id: bytes,
        track: Completion[None] | None,
        txn_epoch: int,
        presettled: bool | None,
        destination: Destination,
    ) -> Callable[[], None]:
        """The link send of a transactional event-loop send, which may run once an in-flight
        slot is free: a send whose transaction ended meanwhile (committed or rolled back
        without it) is not written with that transaction's id."""

        def send() -> None:
            # Reach-in kept: the producer's session owns the transaction id.
            if self._session._txn_id != txn_id:
                raise JMSException(
                    f"transactional send to {destination} waited for an in-flight slot "
                    "(jms.maxAsyncSendsInFlight) until its transaction had ended; the message "
                    "was not sent"
                )
            link.send(payload, False, self._send_timeout, txn_id, track, txn_epoch, presettled)

        return send

    def _duplicate_id(self, message: Message) -> tuple[str, str] | None:
        """The broker's duplicate-detection property for this send: the JMSMessageID (unique
        per send), or a random id when message ids are disabled."""
        name = self._duplicate_property
        if name is None:
            return None
        return name, message.getJMSMessageID() or f"ID:{uuid.uuid4()}"

    # ---- close -------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the producer after its pending sends complete; idempotent.

        Raises IllegalStateException when called from one of this session's completion listeners.
        Bounded by ``jms.closeTimeout``: a send still blocked then on another thread (waiting for
        link credit or for the broker's outcome) ends as the producer closes, as does one
        blocked when its session or connection closes. One never written raises
        IllegalStateException (the message was not sent); one written but not settled by the
        broker raises JMSException saying its outcome is unknown. An asynchronous send gets
        its CompletionListener's ``onException`` the same way.
        """
        if self._closed:
            return
        self._port.check_not_completion_thread("MessageProducer.close()")
        amqp = self._port.amqp_connection
        # Every step shares one jms.closeTimeout (nested in a session or connection close,
        # theirs).
        with amqp.close_scope():
            self._port.wait_completions(self, amqp.close_remaining_s())
            self._closed = True
            reason = IllegalStateException(f"the {self._closed_by()} was closed")
            for link in [*self._links.values(), *self._retiring]:
                link.wait_settled(amqp.close_remaining_s())
                link.close(reason=reason)
            self._retiring.clear()
        self._port.producer_closed(self)

    def _closed_by(self) -> str:
        """What is closing this producer, for the sends its close ends: the connection, the
        session (each closes its producers first) or the producer itself."""
        try:
            self._port.connection_port.check_closed()
        except IllegalStateException:
            return "connection"
        return "session" if self._port.is_closing() else "producer"

    def __enter__(self) -> MessageProducer:
        """Enter a ``with`` block; returns this producer."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Leave a ``with`` block: :meth:`close` the producer, whatever happened inside."""
        self.close()
