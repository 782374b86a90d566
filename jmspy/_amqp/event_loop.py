"""Shared event loops: one thread serving the sockets of many connections.

By default every connection has an engine thread of its own (see engine.py). With
``transport.sharedEventLoopThreads=N`` (the Qpid JMS option of the same name) the connections
of the process that ask for N threads share a group of N loop threads instead, each connection
served by one of them for its whole life: a process with hundreds of connections then has N
engine threads, not hundreds fighting for the GIL.

A loop thread runs exactly the engine's own turn (:meth:`Engine._prepare`, wait,
:meth:`Engine._after_wait`) for every engine it serves, waiting on all their sockets and wake-up
sockets with one ``poll``. An engine is only stepped when something happened to it (input,
output room, a wake-up, its deadline), so an idle connection costs nothing per turn. All proton
work of a connection still runs on one thread, so nothing in the provider changes; a failure of
one engine ends that engine only (``Engine._finish``), never the loop.

The blocking connect (TCP, TLS handshake, SASL) runs on a short-lived thread per connect and
the engine joins its loop once the AMQP bytes can flow; a loop thread ends when it serves no
connection and is started again by the next one.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
import select
import socket
import threading
import time
from typing import TYPE_CHECKING

from .._deferred_wakeups import WakeupDeferral
from ..errors import JMSException

if TYPE_CHECKING:
    from .engine import Engine

log = logging.getLogger("jmspy.engine")

_POLL_IN = select.POLLIN | select.POLLPRI
_POLL_READABLE = _POLL_IN | select.POLLHUP | select.POLLERR
_MAX_WAIT_S = 5.0

_groups: dict[int, list[SharedEventLoop]] = {}
_groups_lock = threading.Lock()


def shared_loop(threads: int) -> SharedEventLoop | None:
    """The loop a new connection with ``transport.sharedEventLoopThreads=threads`` joins (the
    least busy of the group's loops), or None when the option asks for no sharing (<= 0)."""
    if threads <= 0:
        return None
    with _groups_lock:
        group = _groups.get(threads)
        if group is None:
            group = [SharedEventLoop(f"jmspy-shared-loop-{threads}-{i}") for i in range(threads)]
            _groups[threads] = group
        return min(group, key=lambda loop: loop.load)


class SharedEventLoop:
    """One loop thread and the engines it serves."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._incoming: list[Engine] = []
        self._touched: set[Engine] = set()
        self._thread: threading.Thread | None = None
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        # Engines served or about to be (read by shared_loop to balance the group).
        self.load = 0
        self._deadlines: list[tuple[float, int, Engine]] = []
        self._wake_pending = False
        self._seq = itertools.count()

    # ---- any thread -------------------------------------------------------------------------

    def owns(self, thread: threading.Thread) -> bool:
        return thread is self._thread

    def add(self, engine: Engine) -> None:
        """Serve ``engine`` (connected; its turn starts with its queued work)."""
        with self._lock:
            self._incoming.append(engine)
            self.load += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
        self._wake()

    def touch(self, engine: Engine) -> None:
        """Step ``engine`` on the next turn (it has a new timer)."""
        self.notify(engine)

    def notify(self, engine: Engine) -> None:
        """Step ``engine`` on the next turn (work was queued for it). Engines notified before
        the loop wakes share one wake-up byte: with many connections, acknowledgements for
        many of them cost one system call, not one each."""
        with self._lock:
            self._touched.add(engine)
            if self._wake_pending or threading.current_thread() is self._thread:
                return  # the loop looks at _touched before it waits again
            self._wake_pending = True
        self._wake()

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"\0")
        except (BlockingIOError, OSError):
            pass  # full of wake-ups already

    # ---- the loop thread ----------------------------------------------------------------------

    def _run(self) -> None:
        poller = _Poller()
        deferral = WakeupDeferral()
        # The engines this thread serves (filled by _serve): failed here if the loop itself
        # breaks, so no connection is left waiting on a thread that is gone.
        engines: dict[Engine, list[float]] = {}
        deferral.enter()
        try:
            self._serve(poller, deferral, engines)
        except BaseException as exc:  # noqa: BLE001 - the loop thread never dies silently
            self._fail_served(exc, engines)
        finally:
            deferral.leave()  # nothing deferred is left behind when the thread ends
            poller.close()  # the loop thread ends when idle; its epoll fd must not outlive it

    def _fail_served(self, exc: BaseException, engines: dict[Engine, list[float]]) -> None:
        """The loop broke outside an engine's step (the poller, say): every engine it served
        ends as if its transport had died, and the next engine starts a new loop thread."""
        log.error("shared event loop %s failed", self.name, exc_info=exc)
        for engine in list(engines):
            error = JMSException(
                f"connection to {engine.host}:{engine.port} lost its shared event loop thread "
                f"{self.name}: {exc!r}",
                linked=exc,
            )
            engines.pop(engine, None)
            with self._lock:
                self.load -= 1
            try:
                engine._finish(error)
            except BaseException:  # noqa: BLE001 - the other engines must be failed too
                log.exception("failing an engine of the shared event loop %s raised", self.name)
        with self._lock:
            # Engines added since the last turn are served by a new thread.
            self._thread = None
            if self._incoming:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()

    def _serve(
        self, poller: _Poller, deferral: WakeupDeferral, engines: dict[Engine, list[float]]
    ) -> None:
        own_fd = self._wake_r.fileno()
        poller.register(own_fd, _POLL_IN)
        # engines: engine -> [deadline of its live heap entry (0.0: none), socket events
        # registered]; fd -> (engine, is its wake-up socket)
        by_fd: dict[int, tuple[Engine, bool]] = {}
        due: dict[Engine, list[bool]] = {}  # engine -> [socket readable, woken]
        # (deadline, seq, engine): one entry per turn; an entry whose deadline is no longer
        # its engine's is stale and skipped, so a turn costs O(log n), not a scan of all.
        self._deadlines = []
        deadlines = self._deadlines
        while True:
            with self._lock:
                incoming, self._incoming = self._incoming, []
                touched, self._touched = self._touched, set()
                self._wake_pending = False
                if not engines and not incoming:
                    self._thread = None
                    return
            for engine in incoming:
                engines[engine] = [0.0, 0.0]
                fd = engine._wake_r.fileno()
                by_fd[fd] = (engine, True)
                poller.register(fd, _POLL_IN)
                due.setdefault(engine, [False, False])
            for engine in touched:
                if engine in engines:
                    due.setdefault(engine, [False, False])
            now = time.monotonic()
            while deadlines and deadlines[0][0] <= now:
                when, _, engine = heapq.heappop(deadlines)
                state = engines.get(engine)
                if state is not None and state[0] == when:
                    state[0] = 0.0  # no live entry now; the step pushes the next one
                    due.setdefault(engine, [False, False])
            for engine, (readable, woken) in due.items():
                self._step(engine, readable, woken, engines, by_fd, poller)
            due = {}
            timeout = _MAX_WAIT_S
            if deadlines:
                timeout = min(timeout, deadlines[0][0] - time.monotonic())
            with self._lock:
                if self._touched or self._incoming:
                    timeout = 0.0  # notified from this thread while stepping
            try:
                events = self._wait(poller, deferral, max(0.0, timeout))
            except InterruptedError:
                continue
            for fd, mask in events:
                if fd == own_fd:
                    _drain(self._wake_r)
                    continue
                owner = by_fd.get(fd)
                if owner is None:
                    continue
                engine, is_wake = owner
                flags = due.setdefault(engine, [False, False])
                if is_wake:
                    flags[1] = True
                elif mask & _POLL_READABLE:
                    flags[0] = True

    @staticmethod
    def _wait(poller: _Poller, deferral: WakeupDeferral, timeout: float) -> list[tuple[int, int]]:
        """The next socket events. Listener hand-offs and consumers' wake-ups of the engines
        stepped wait while more input is already there (see WakeupDeferral), at most
        MAX_DEFER_S: the dispatch pool then takes many connections' messages per wake-up,
        and their acknowledgements come back together. Before a wait they run."""
        if deferral:
            if deferral.due(time.monotonic()):
                deferral.run()
            elif timeout > 0.0:
                events = poller.poll(0.0)
                if events:
                    return events
                deferral.run()
        return poller.poll(timeout)

    def _step(
        self,
        engine: Engine,
        readable: bool,
        woken: bool,
        engines: dict[Engine, list[float]],
        by_fd: dict[int, tuple[Engine, bool]],
        poller: _Poller,
    ) -> None:
        """One turn of one engine: the rest of its last wait, then up to its next wait."""
        state = engines.get(engine)
        if state is None:
            return
        try:
            # Hang-up or error with reading off (proton's input is full) is left for later.
            engine._after_wait(readable and engine._capacity > 0, woken)
            turn = engine._prepare()
        except BaseException as exc:  # noqa: BLE001 - ends this engine only
            self._remove(engine, engines, by_fd, poller)
            engine._finish(exc)
            return
        if turn is None:
            self._remove(engine, engines, by_fd, poller)
            engine._finish(None)
            return
        want_read, want_write, timeout = turn
        when = time.monotonic() + timeout
        if not 0.0 < state[0] <= when:
            # Only a deadline earlier than the live entry's needs a new entry. A busy engine
            # is stepped far more often than its deadline (about 5 s ahead) comes round, and
            # a new entry per step would leave one stale entry per step to pop later, each
            # an O(log n) heappop. With a later deadline the live entry steps the engine a
            # little early, once, and that step pushes the right one.
            state[0] = when
            heapq.heappush(self._deadlines, (when, next(self._seq), engine))
        mask = (_POLL_IN if want_read else 0) | (select.POLLOUT if want_write else 0)
        sock = engine._sock
        assert sock is not None
        if mask != state[1]:
            fd = sock.fileno()
            if mask and state[1]:
                poller.modify(fd, mask)
            elif mask:
                poller.register(fd, mask)
                by_fd[fd] = (engine, False)
            else:
                poller.unregister(fd)
                by_fd.pop(fd, None)
            state[1] = mask

    def _remove(
        self,
        engine: Engine,
        engines: dict[Engine, list[float]],
        by_fd: dict[int, tuple[Engine, bool]],
        poller: _Poller,
    ) -> None:
        state = engines.pop(engine, None)
        for fd, (owner, _) in list(by_fd.items()):
            if owner is engine:
                del by_fd[fd]
                try:
                    poller.unregister(fd)
                except (KeyError, ValueError, OSError):
                    pass
        if state is not None:
            with self._lock:
                self.load -= 1


class _Poller:
    """epoll where there is one (a wait costs O(ready sockets), not O(all)), else poll."""

    def __init__(self) -> None:
        self._epoll = select.epoll() if hasattr(select, "epoll") else None
        self._poll = select.poll() if self._epoll is None else None

    def register(self, fd: int, mask: int) -> None:
        if self._epoll is not None:
            self._epoll.register(fd, mask)
        else:
            assert self._poll is not None
            self._poll.register(fd, mask)

    def modify(self, fd: int, mask: int) -> None:
        if self._epoll is not None:
            self._epoll.modify(fd, mask)
        else:
            assert self._poll is not None
            self._poll.modify(fd, mask)

    def unregister(self, fd: int) -> None:
        if self._epoll is not None:
            self._epoll.unregister(fd)
        else:
            assert self._poll is not None
            self._poll.unregister(fd)

    def close(self) -> None:
        if self._epoll is not None:
            self._epoll.close()

    def poll(self, timeout_s: float) -> list[tuple[int, int]]:
        if self._epoll is not None:
            return self._epoll.poll(timeout_s)
        assert self._poll is not None
        return self._poll.poll(math.ceil(timeout_s * 1000.0))


def _drain(sock: socket.socket) -> None:
    try:
        while sock.recv(4096):
            pass
    except (BlockingIOError, InterruptedError):
        pass
