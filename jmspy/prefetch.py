"""The consumer's local prefetch buffer in priority order (rule DD-15, "priority" delivery
sequence): what Qpid JMS calls jms.localMessagePriority."""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, cast

from ._amqp.provider import InboundDelivery
from ._deferred_wakeups import defer_wakeup

if TYPE_CHECKING:
    from ._ports import SessionPort
    from .consumer import BatchListenerLike, ListenerLike, MessageConsumer
__all__ = ["PriorityBuffer"]


class PriorityBuffer:
    """The local prefetch buffer in priority order: ten FIFO lanes, highest priority first.

    Offers the subset of ``collections.deque`` the consumer uses."""

    __slots__ = ("_lanes", "_size")

    def __init__(self) -> None:
        self._lanes: list[collections.deque[InboundDelivery]] = [
            collections.deque() for _ in range(10)
        ]
        self._size = 0

    @staticmethod
    def _lane(inbound: InboundDelivery) -> int:
        priority: int = inbound.message.getJMSPriority()
        return 9 - min(9, max(0, priority))

    def append(self, inbound: InboundDelivery) -> None:
        self._lanes[self._lane(inbound)].append(inbound)
        self._size += 1

    def extend(self, inbounds: Iterable[InboundDelivery]) -> None:
        for inbound in inbounds:
            self.append(inbound)

    def extendleft(self, inbounds: Iterable[InboundDelivery]) -> None:
        for inbound in inbounds:
            self._lanes[self._lane(inbound)].appendleft(inbound)
            self._size += 1

    def popleft(self) -> InboundDelivery:
        for lane in self._lanes:
            if lane:
                self._size -= 1
                return lane.popleft()
        raise IndexError("pop from an empty buffer")

    def clear(self) -> None:
        for lane in self._lanes:
            lane.clear()
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def __bool__(self) -> bool:
        return self._size > 0

    def __iter__(self) -> Iterator[InboundDelivery]:
        for lane in self._lanes:
            yield from lane


# A MessageListener gets at most this many messages per turn of the session's dispatch thread,
# so the other consumers of the session get their turn.
LISTENER_RUN = 64
# A receive() waiting for messages is woken at once when this many are buffered; fewer wait
# for the engine's deferred wake-ups (WakeupDeferral).
RECEIVER_WAKE_AT = 64


class _Consumer(Protocol):
    """The part of the consumer that buffered delivery reads and drives."""

    _port: SessionPort
    _cv: threading.Condition
    _receiving: int
    _buffer: collections.deque[InboundDelivery] | PriorityBuffer
    _listener: ListenerLike | None
    _batch_listener: BatchListenerLike | None
    _batch_size: int
    _closed: bool
    _deferred_close: bool
    _client_filter: Any
    _dispatch_signalled: bool
    _close_requested: bool
    _arrival_hook: Callable[[], None] | None
    _run: list[InboundDelivery]
    _run_thread: threading.Thread | None
    _receiver: Any

    def _stop_run(self, listener: ListenerLike) -> bool: ...

    def _on_inbound(self, inbound: InboundDelivery) -> None: ...

    def _take(self) -> InboundDelivery | None: ...

    def _deliver_one(self, listener: ListenerLike, inbound: InboundDelivery) -> None: ...

    def _request_turn(self) -> None: ...

    def _request_turn_soon(self) -> None: ...

    def _wakeup_deferred(self, key: object, wake: Callable[[], None]) -> bool: ...

    def _wake_receiver(self) -> None: ...

    def _close_internal(self) -> None: ...

    def _return_run(self) -> None: ...

    def _pull_if_no_prefetch(self) -> None: ...


class BufferedDelivery:
    """Filling the consumer's prefetch buffer and emptying it into a MessageListener, a
    whole engine pass or listener run at a time (mixed into the consumer).

    One lock round and one wake-up per pass instead of per message: every wake-up of a
    waiting thread is a thread switch, and under the GIL the engine thread and the woken
    thread then take turns at every message."""

    # Created by the consumer; declared so the type checker does not take the assignment in
    # _dispatch_one for the attribute's definition.
    _run_thread: threading.Thread | None

    def _on_inbound_many(self: _Consumer, inbounds: list[InboundDelivery]) -> None:
        """Engine thread: the transfers of one engine pass, in order."""
        if self._closed or self._client_filter is not None:
            for inbound in inbounds:
                self._on_inbound(inbound)
            return
        signal = False
        with self._cv:
            before = len(self._buffer)
            self._buffer.extend(inbounds)
            if self._receiving:  # the only waiters on _cv are receive() calls
                # On a connection's own engine thread the wake-up waits while more input is
                # there (see WakeupDeferral), unless enough is buffered to be worth a switch.
                if not self._wakeup_deferred(self, self._wake_receiver):
                    self._cv.notify()
            if self._listener is not None and not self._dispatch_signalled:
                self._dispatch_signalled = signal = True
        if self._arrival_hook is not None:  # a waiting jmspy.aio receive (_async_receive.py)
            self._arrival_hook()
        if signal:
            self._request_turn_soon()
        elif self._batch_listener is not None:
            # A batch consumer needs waking only when a batch starts (to time it) or fills;
            # after each batch the dispatcher re-signals while messages remain.
            size = self._batch_size
            after = before + len(inbounds)
            if before == 0 or before // size != after // size:
                self._request_turn_soon()

    def _wakeup_deferred(self: _Consumer, key: object, wake: Callable[[], None]) -> bool:
        """Engine thread: whether ``wake`` was deferred (see WakeupDeferral); never once
        RECEIVER_WAKE_AT messages are buffered."""
        return len(self._buffer) < RECEIVER_WAKE_AT and defer_wakeup(key, wake)

    def _request_turn_soon(self: _Consumer) -> None:
        """Engine thread: a dispatch turn, deferred like a receiver's wake-up."""
        if not self._wakeup_deferred((self, "turn"), self._request_turn):
            self._request_turn()

    def _wake_receiver(self: _Consumer) -> None:
        with self._cv:
            self._cv.notify()

    def _return_run(self: _Consumer) -> None:
        """With ``_cv`` held: the messages of the listener run in progress on this thread go
        back in front of the buffer, in order (a recover() puts its messages in front of
        them; a rollback gives them back with the rest). Nothing happens on another thread:
        only the dispatch thread touches the run."""
        run = self._run
        if run and (self._run_thread is None or self._run_thread is threading.current_thread()):
            # Their credit was counted when the run took them and is counted again when they
            # are taken next: give it back, else every run that ends early (a stop, a listener
            # change, a recover or rollback from the listener) widens the window by its rest.
            epoch = self._receiver.connection.epoch
            for inbound in run:
                if inbound.epoch == epoch:
                    self._receiver.credit_unconsumed()
            self._buffer.extendleft(run)  # reversed already: back in arrival order
            run.clear()

    def _request_turn(self: _Consumer) -> None:
        """Queue a turn of the session's dispatch thread for this consumer."""
        self._port.signal_ready(cast("MessageConsumer", self))

    def _stop_run(self: _Consumer, listener: ListenerLike) -> bool:
        """Whether a listener run ends after the message just delivered: the listener was
        replaced, the connection stopped, the consumer or its session is closing, or another
        thread waits for the session's listener (the close of another consumer of the
        session, a stop): their close or stop waits for the run, and JMS lets it wait for the
        current message only. Read at every message: the cheap checks go first."""
        port = self._port
        return (
            self._listener is not listener
            or self._close_requested
            or port.listener_waits.awaited
            or not port.connection_port.started()
            or port.is_closing()
        )

    def _dispatch_one(self: _Consumer) -> None:
        """Session dispatch thread: deliver buffered messages to the listener, up to
        LISTENER_RUN of them, while the connection runs and the listener stays the same.

        The run is taken out of the buffer in one lock round (the engine thread fills the
        buffer under the same lock, so a lock round per message made the two threads wait
        on each other at every message); what the run did not deliver goes back in front.
        ``_run`` holds it meanwhile, in reverse order, so that a recover() or a rollback
        from the listener finds the messages it must put behind or give back
        (:meth:`_return_run`)."""
        listener = self._listener
        run = self._run
        try:
            if listener is None or self._closed or self._deferred_close or self._close_requested:
                return  # a close() waiting for the dispatch must not wait behind more runs
            with self._cv:
                for _ in range(LISTENER_RUN):
                    inbound = self._take()
                    if inbound is None:
                        break
                    run.append(inbound)
                run.reverse()  # popped from the end: arrival order
                self._run_thread = threading.current_thread()
            connection = self._receiver.connection
            while run:
                if self._closed or self._deferred_close:
                    return
                inbound = run.pop()
                if inbound.epoch != connection.epoch:
                    # Lost with the transport (failover): the broker sends it again, and the
                    # buffer it came from was emptied when the transport went.
                    continue
                self._deliver_one(listener, inbound)
                if self._stop_run(listener):
                    return
        finally:
            with self._cv:
                self._run_thread = None
                self._return_run()
            if self._deferred_close:
                self._close_internal()
            with self._cv:
                more = (
                    bool(self._buffer)
                    and self._listener is not None
                    and not self._closed
                    and not self._close_requested
                )
                # Another turn while messages remain; otherwise the next arrival signals.
                self._dispatch_signalled = more
            if more:
                self._request_turn()
            elif self._listener is not None:
                self._pull_if_no_prefetch()
