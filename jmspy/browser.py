"""QueueBrowser: look at a queue's messages without consuming them."""

from __future__ import annotations

import collections
import contextlib
import itertools
import threading
from collections.abc import Generator
from typing import TYPE_CHECKING

from ._amqp.provider import AmqpReceiver, InboundDelivery, LinkSpec, link_profile
from ._twins.browser import QueueBrowserTwins
from .destination import Queue, check_temporary_readable
from .enumeration import MessageEnumeration
from .errors import IllegalStateException, JMSException
from .message import Message

if TYPE_CHECKING:
    from ._ports import SessionPort
    from .session import Session

__all__ = ["QueueBrowser"]


_browser_seq = itertools.count(1)


class QueueBrowser(QueueBrowserTwins):
    """Each ``getEnumeration()`` opens a non-destructive (distribution-mode ``copy``),
    presettled link and yields the queue's messages, in queue order, until the broker has no
    more (a drain that comes back empty)."""

    def __init__(
        self, session: Session, port: SessionPort, queue: Queue, selector: str | None
    ) -> None:
        self._session = session
        self._port = port
        self._queue = queue
        self._selector = selector
        self._closed = False
        self._open: list[AmqpReceiver] = []
        self._check_queue()

    def _check_closed(self) -> None:
        if self._closed:
            raise IllegalStateException("The QueueBrowser is closed")
        self._port.check_closed()

    def _check_queue(self) -> None:
        """A temporary queue can be browsed only by the connection that created it, and only
        until it is deleted, as it can only be consumed then (JMS 2.0 section 6.2.2; Qpid JMS
        checks its browsers as it checks its consumers): the broker would otherwise show one
        application's replies to another."""
        check_temporary_readable(self._queue, self._port.connection, "browse")

    def getQueue(self) -> Queue:
        """The queue being browsed (IllegalStateException when closed)."""
        self._check_closed()
        return self._queue

    def getMessageSelector(self) -> str | None:
        """The browser's message selector, or None."""
        self._check_closed()
        return self._selector

    def getEnumeration(self) -> MessageEnumeration[Message]:
        """Enumerate the messages on the queue now, without consuming them.

        Each call opens its own non-destructive link; the enumeration ends, and closes that link,
        when a drain comes back empty. Java's ``hasMoreElements()``/``nextElement()`` and
        Python's iteration both walk it; ``close()`` (or ``with``) releases the link early, and
        closing the browser closes every enumeration it opened. Raises IllegalStateException
        when closed, InvalidDestinationException for a temporary queue deleted since the browser
        was made, and JMSException when the broker cannot browse (its ``copy`` links would
        consume).
        """
        self._check_closed()
        self._check_queue()
        connection = self._port.connection
        options = connection.options
        wire = connection.wire
        adapter = wire.adapter
        if not adapter.browse:
            raise JMSException(
                f"the broker ({adapter.title}) cannot browse: its 'copy' links still take "
                "messages off the queue, so a QueueBrowser would consume them"
            )
        address = wire.address(self._queue)
        buffer: collections.deque[InboundDelivery] = collections.deque()
        arrived = threading.Condition()
        failure: list[JMSException] = []

        def on_message(inbound: InboundDelivery) -> None:
            with arrived:
                buffer.append(inbound)
                arrived.notify()

        def on_closed(error: JMSException) -> None:
            with arrived:
                failure.append(error)
                arrived.notify()

        spec = LinkSpec(
            name=f"jmspy:browser:{self._port.session_id}:{next(_browser_seq)}:{address}",
            address=address,
            capabilities=(self._queue.kind,),
            selector=self._selector,
            distribution_copy=True,
            presettled=True,
            extra=link_profile(adapter),
        )
        receiver = self._session._amqp.create_receiver(
            spec, options.prefetch_for("browser"), wire.decoder(self._queue), on_message, on_closed
        )
        self._open.append(receiver)
        messages = self._enumerate(receiver, buffer, arrived, failure, options.drain_timeout)

        def release() -> None:
            # The generator's own end closes the link once it started; one never iterated
            # has not, and one running on another thread cannot be closed from here.
            with contextlib.suppress(ValueError):
                messages.close()
            if receiver in self._open:
                self._open.remove(receiver)
            receiver.close()

        return MessageEnumeration(messages, release)

    def _enumerate(
        self,
        receiver: AmqpReceiver,
        buffer: collections.deque[InboundDelivery],
        arrived: threading.Condition,
        failure: list[JMSException],
        drain_timeout: int,
    ) -> Generator[Message, None, None]:
        try:
            while not self._closed:
                with arrived:
                    inbound = buffer.popleft() if buffer else None
                if inbound is None:
                    if failure:
                        raise failure[0]
                    # Ask for everything the broker still has; an empty drain ends the browse.
                    receiver.drain(drain_timeout)
                    with arrived:
                        if not buffer:
                            return
                    receiver.restore_credit()
                    continue
                if inbound.epoch != receiver.connection.epoch:
                    # Buffered from a connection failover replaced: the new copy link browses
                    # the queue from its head again, so this message comes again from it; its
                    # credit was the old link's (the new one granted a whole window).
                    continue
                receiver.credit_consumed()
                receiver.settle(inbound, "accepted")  # presettled: only frees local state
                yield inbound.message
        finally:
            if receiver in self._open:
                self._open.remove(receiver)
            receiver.close()

    def close(self) -> None:
        """Close the browser and every enumeration still open; idempotent."""
        if self._closed:
            return
        self._closed = True
        # One jms.closeTimeout for the whole close (see AmqpConnection.close_scope), shared by
        # every enumeration's link: a silent peer must not cost each of them a full timeout.
        with self._port.amqp_connection.close_scope():
            for receiver in list(self._open):
                receiver.close()
        self._open.clear()

    def __enter__(self) -> QueueBrowser:
        """Enter a ``with`` block; returns this browser."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Leave a ``with`` block: :meth:`close` the browser, whatever happened inside."""
        self.close()

    def __iter__(self) -> MessageEnumeration[Message]:
        """Iterate over the queue's messages (``for m in browser``) with a new enumeration."""
        return self.getEnumeration()
