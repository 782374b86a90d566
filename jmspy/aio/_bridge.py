"""How asyncio code waits for the engine: engine completions come back to the event loop as
futures completed with ``loop.call_soon_threadsafe``; the few engine calls that only exist in a
blocking form (link attach, commit, close, a drain) run on the process's control threads
(``_control_threads``: started on demand, ended when idle), never on a new thread per call."""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextvars
import logging
import queue
import threading
import time
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .._deferred_wakeups import defer_wakeup
from ..errors import JMSException
from ..message import Message
from ._control_threads import control_threads
from ._send_slots import FAILED, SlotWait, SlotWaits

if TYPE_CHECKING:
    from .._amqp.sender import AmqpSender

__all__ = [
    "Control",
    "ListenerRunner",
    "SendCompletion",
    "acknowledge",
    "asyncio_message",
    "reject",
    "resolve",
]

T = TypeVar("T")

log = logging.getLogger("jmspy.aio")


class Control:
    """What one asyncio connection uses to reach the engine and come back.

    ``post`` hands work from the engine thread to the event loop, many items per wake-up
    (one ``loop.call_soon_threadsafe`` while the loop has not yet run the previous ones).
    ``call`` runs a blocking engine call on one of the process's control threads; every such
    call is bounded by the timeout the synchronous API honours for it (jms.requestTimeout,
    jms.sendTimeout, jms.closeTimeout, jmspy.receiveDrainTimeout), so a control thread is
    never held longer than the blocking call would hold a caller's thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop, send_timeout_ms: int) -> None:
        self.loop = loop
        self.send_timeout_s = send_timeout_ms / 1000.0
        self._threads = control_threads()
        self._closed = False
        self._posted: collections.deque[tuple[Callable[..., None], tuple[Any, ...]]] = (
            collections.deque()
        )
        self._post_pending = False
        # Outstanding sends, oldest first, with their deadline and what they are. An entry goes
        # when its send is settled (at 10k sends/s, keeping them for the whole send timeout
        # held hundreds of thousands), or when its deadline passes.
        # The SendCompletion, when the send went through one, says which link to withdraw an
        # expired send from.
        self._sends: dict[asyncio.Future[None], tuple[float, str, SendCompletion | None]] = {}
        self._send_timer: asyncio.TimerHandle | None = None
        # Sends that found no free in-flight slot wait for one off the event loop.
        self._slot_waits = SlotWaits(self._threads, self.post, send_timeout_ms)
        # The send started last (SendCompletion.start_send), for the track_send that follows
        # it on the event loop without an await between them.
        self._started: SendCompletion | None = None

    async def call(
        self,
        function: Callable[..., T],
        *args: Any,
        on_abandoned: Callable[[T], None] | None = None,
    ) -> T:
        """``function(*args)`` on a control thread, or, inside a coroutine listener, on the
        session's dispatch thread that waits for it (as a blocking listener calls commit or
        rollback on its own thread, which holds the session's delivery lock). A cancelled
        await does not stop the call (an engine request cannot be taken back half way); what
        the call returns then goes to ``on_abandoned`` (on a control thread, failures logged),
        so an object nobody will ever hold (a consumer with credit taking messages from other
        consumers, a session) is closed as soon as it exists."""
        runner = LISTENER_RUNNER.get()
        future = runner.submit(function, args) if runner is not None else None
        if future is None:
            if self._closed:
                # The connection is closed: what is left to call on its objects (a second
                # close, a getter) answers at once without the engine.
                return function(*args)
            future = self._threads.submit(function, *args)
        try:
            return await asyncio.shield(asyncio.wrap_future(future))
        except asyncio.CancelledError:
            if on_abandoned is not None:
                # Runs at once when the call already finished (its result was on the way to
                # this task when it was cancelled), else on the thread that finishes it.
                future.add_done_callback(lambda done: self._abandon(done, on_abandoned))
            raise

    def _abandon(
        self, done: concurrent.futures.Future[T], on_abandoned: Callable[[T], None]
    ) -> None:
        # Any thread. A call that failed or never ran created nothing to let go of.
        if done.cancelled() or done.exception() is not None:
            return
        self.dispose(on_abandoned, done.result())

    def dispose(self, function: Callable[[T], None], value: T) -> None:
        """Any thread: ``function(value)`` on a control thread without anyone waiting for it
        (closing an object its creator no longer wants); a failure is logged, as nobody is
        left to raise it to."""

        def logged(outcome: concurrent.futures.Future[None]) -> None:
            error = outcome.exception()
            if error is not None:
                log.warning("could not let go of %r: %s", value, error, exc_info=error)

        self._threads.submit(function, value).add_done_callback(logged)

    def post(self, function: Callable[..., None], *args: Any) -> None:
        """Any thread: run ``function(*args)`` on the event loop soon, in posting order. On an
        engine thread the event loop's wake-up waits while the engine has more input (see
        WakeupDeferral: at most 0.5 ms), so one wake-up carries the outcomes of many sends."""
        self._posted.append((function, args))
        if not self._post_pending:
            self._post_pending = True
            if not defer_wakeup(self, self._wake_loop):
                self._wake_loop()

    def _wake_loop(self) -> None:
        try:
            self.loop.call_soon_threadsafe(self._run_posted)
        except RuntimeError:
            self._post_pending = False  # the loop is closed: nobody is left to tell

    def _run_posted(self) -> None:
        # Reset first: an item posted while these run schedules its own wake-up.
        self._post_pending = False
        posted = self._posted
        while posted:
            function, args = posted.popleft()
            function(*args)

    def track_send(self, future: asyncio.Future[None], what: str) -> None:
        """Bound a send's future by jms.sendTimeout. Deadlines come in the order sends are
        tracked, so one timer looking at the oldest outstanding send serves them all (no timer
        per send)."""
        started, self._started = self._started, None
        if future.done():
            return  # settled already: nothing to bound
        completion = started if started is not None and started.future is future else None
        self._sends[future] = (self.loop.time() + self.send_timeout_s, what, completion)
        if self._send_timer is None:
            self._send_timer = self.loop.call_later(self.send_timeout_s, self._expire_sends)

    def start_send(
        self,
        completion: SendCompletion,
        link: AmqpSender,
        send: Callable[[], None],
        may_wait: bool,
        transactional: bool,
    ) -> None:
        """Event loop thread: give a send to its link without waiting for an in-flight slot
        here (see _send_slots); one that finds none free waits on a control thread."""
        completion.link = link
        self._started = completion
        if not may_wait or self._closed:
            send()  # nothing to wait for: the link raises at once
            return
        completion.slot_wait = self._slot_waits.start(link, send, completion, transactional)

    async def slot_waits_done(self, links: list[AmqpSender]) -> None:
        """Until no send to ``links`` waits for an in-flight slot (each wait is bounded by
        jms.sendTimeout): a producer's close waits for them as for its queued sends."""
        await self._slot_waits.idle(links)

    def settled(self, future: asyncio.Future[None], error: BaseException | None) -> None:
        """Event loop thread: a send's outcome came back; it is no longer waited for."""
        self._sends.pop(future, None)
        if error is None:
            resolve(future, None)
        else:
            reject(future, error)

    def _expire_sends(self) -> None:
        self._send_timer = None
        sends = self._sends
        now = self.loop.time()
        while sends:
            future = next(iter(sends))
            deadline, what, completion = sends[future]
            if deadline > now:
                # The oldest one left is still waited for: look again at its deadline. A
                # cancelled one is kept too: its send is withdrawn at its deadline all the same.
                self._send_timer = self.loop.call_at(deadline, self._expire_sends)
                return
            del sends[future]
            error = self._expired(what, completion)
            if error is not None:
                reject(future, error)

    def _expired(self, what: str, completion: SendCompletion | None) -> JMSException | None:
        """What a send without an outcome at its deadline reports, as the blocking
        CompletionListener path does: one that never reached the wire is withdrawn (from the
        slot queue or from its link's outbox, freeing its in-flight slot) and was not sent;
        one written keeps its slot until the peer settles it, its outcome unknown. None when
        its own outcome is on the way to the event loop."""
        link = completion.link if completion is not None else None
        if completion is not None and link is not None:
            wait = completion.slot_wait
            if wait is not None:
                error = self._slot_waits.expire(link, wait)
                if error is not None:
                    return error
                if wait.state == FAILED:
                    return None  # the link refused it; that error is posted
            pending = link.withdraw(completion)
            timeout_ms = round(self.send_timeout_s * 1000)
            if pending is not None and pending.written:
                return JMSException(
                    f"{what} was written before the connection was interrupted and not resent "
                    f"within {timeout_ms} ms (jms.sendTimeout): its outcome is unknown, the "
                    "broker may or may not have the message (it will not be resent)"
                )
            if pending is not None:
                return JMSException(
                    f"{what} could not be written within {timeout_ms} ms (jms.sendTimeout, no "
                    "link credit or no connection); it was withdrawn, the message was not sent"
                )
        return JMSException(
            f"{what} was not settled by the peer within {self.send_timeout_s:g} s "
            "(jms.sendTimeout): its outcome is unknown, the broker may or may not have the "
            "message"
        )

    def shutdown(self) -> None:
        """Event loop thread: the connection is closed. Its timer bounded the tracked sends,
        so none may be left waiting: outcomes already posted are taken first, and a send
        still outstanding (held for a reconnect the close cancelled, say) fails."""
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None
        self._closed = True
        self._run_posted()
        # Sends still waiting for a slot never reach their link: certainly not sent.
        for wait in self._slot_waits.withdraw_all():
            reject(
                wait.completion.future,
                JMSException(
                    "an asyncio send was waiting for an in-flight slot when the connection was "
                    "closed; the message was not sent"
                ),
            )
        sends, self._sends = self._sends, {}
        for future, (_, what, _) in sends.items():
            reject(
                future,
                JMSException(
                    f"{what} was not settled when the connection was closed: its outcome is "
                    "unknown, the broker may or may not have the message"
                ),
            )


class ListenerRunner:
    """Runs blocking calls on a session's dispatch thread while it waits for a coroutine
    listener, so the listener's ``await session.rollback()`` does not wait for a lock that
    thread holds."""

    POLL_S = 0.25
    # A loop not running for this long is taken for gone (asyncio.run closes it at its end;
    # one driven by run_until_complete in steps runs again well within this).
    LOOP_GONE_S = 2.0

    def __init__(self) -> None:
        self._work: queue.SimpleQueue[
            tuple[Callable[..., Any], tuple[Any, ...], concurrent.futures.Future[Any]] | None
        ] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._active = True

    def submit(
        self, function: Callable[..., Any], args: tuple[Any, ...]
    ) -> concurrent.futures.Future[Any] | None:
        """Queue a call for the dispatch thread; None once the listener returned (a task it
        started that outlives it uses the control threads)."""
        with self._lock:
            if not self._active:
                return None
            future: concurrent.futures.Future[Any] = concurrent.futures.Future()
            self._work.put((function, args, future))
            return future

    def serve_until(
        self, done: concurrent.futures.Future[Any], loop: asyncio.AbstractEventLoop
    ) -> bool:
        """Dispatch thread: run queued calls until ``done`` completes; False when ``loop``
        closed, or stayed stopped for LOOP_GONE_S, first: nothing will complete ``done`` then,
        and the dispatch thread (holding its session's delivery lock) must not wait for ever."""

        def finished(_: concurrent.futures.Future[Any]) -> None:
            # Refuse new calls before the None is queued: a task the listener started that
            # awaits a call just after the listener returned would otherwise queue it behind
            # the None, where nobody runs it. Refused, it goes to the control threads; every
            # call accepted before is ahead of the None and still runs.
            self._end()
            self._work.put(None)

        done.add_done_callback(finished)
        stopped_since: float | None = None
        while True:
            try:
                item = self._work.get(timeout=self.POLL_S)
            except queue.Empty:
                if done.done():
                    continue  # its None is on the way
                now = time.monotonic()
                if not loop.is_running():
                    stopped_since = stopped_since or now
                else:
                    stopped_since = None
                if loop.is_closed() or (
                    stopped_since is not None and now - stopped_since >= self.LOOP_GONE_S
                ):
                    self._end()
                    # Calls queued by a listener that will never see their answer.
                    while (left := self._drain_one()) is not None:
                        left[2].cancel()
                    return False
                continue
            if item is None:
                break
            function, args, future = item
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(function(*args))
                except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
                    future.set_exception(exc)
        self._end()
        return True

    def _end(self) -> None:
        with self._lock:
            self._active = False

    def _drain_one(
        self,
    ) -> tuple[Callable[..., Any], tuple[Any, ...], concurrent.futures.Future[Any]] | None:
        while True:
            try:
                item = self._work.get_nowait()
            except queue.Empty:
                return None
            if item is not None:
                return item


# The runner of the coroutine listener this code runs in (None outside listeners).
LISTENER_RUNNER: contextvars.ContextVar[ListenerRunner | None] = contextvars.ContextVar(
    "jmspy_aio_listener_runner", default=None
)


def resolve(future: asyncio.Future[Any], value: Any = None) -> None:
    """Complete ``future`` unless it was cancelled meanwhile (event loop thread)."""
    if not future.done():
        future.set_result(value)


def reject(future: asyncio.Future[Any], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)


class SendCompletion:
    """The CompletionListener of one asyncio send. The engine thread completes it (``succeed``
    or ``fail``), which posts the outcome to the event loop; the wait is
    bounded by jms.sendTimeout (``Control.track_send``), as the completion thread bounds a
    blocking listener."""

    __slots__ = ("_control", "future", "link", "slot_wait")

    def __init__(self, control: Control, future: asyncio.Future[None]) -> None:
        self._control = control
        self.future = future
        # The link the send was given to, and its wait for an in-flight slot when it found
        # none free: what an expiry withdraws it from.
        self.link: AmqpSender | None = None
        self.slot_wait: SlotWait | None = None

    def start_send(
        self,
        link: AmqpSender,
        send: Callable[[], None],
        *,
        may_wait: bool = True,
        transactional: bool = False,
    ) -> None:
        """The producer gives this send to ``link`` through here (``send`` queues it there): an
        event loop must not wait for an in-flight slot (see Control.start_send)."""
        self._control.start_send(self, link, send, may_wait, transactional)

    def on_settled(self, error: BaseException | None) -> None:
        self._control.post(self._control.settled, self.future, error)

    # What the engine calls (the Completion shape): the producer hands this object to the
    # link as the send's completion, so no Event is made per send.
    def succeed(self, value: None = None) -> None:
        self._control.post(self._control.settled, self.future, None)

    def fail(self, error: BaseException) -> None:
        self._control.post(self._control.settled, self.future, error)

    # The CompletionListener shape, so the producer takes this object as one.
    def onCompletion(self, message: Message) -> None:
        self._control.post(self._control.settled, self.future, None)

    def onException(self, message: Message, exception: BaseException) -> None:
        self._control.post(self._control.settled, self.future, exception)


async def acknowledge(message: Message) -> None:
    """``await aio.acknowledge(message)``: ``Message.acknowledge()`` for asyncio code
    (CLIENT_ACKNOWLEDGE: every message the session delivered so far). It settles without
    waiting for the broker, as the blocking form does, so nothing leaves the event loop
    thread. Messages from jmspy.aio also answer ``await message.acknowledge()``; type checkers
    only know the blocking ``Message.acknowledge()``, so typed code uses this function."""
    Message.acknowledge(message)


def asyncio_message(message: Message) -> Message:
    """The received message with an awaitable ``acknowledge()`` (instance attribute: the
    message stays an instance of its own JMS type)."""
    message.acknowledge = types.MethodType(acknowledge, message)  # type: ignore[method-assign]
    return message
