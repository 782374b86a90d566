"""The engine thread: one per connection, the only thread that touches proton objects.

The thread owns the socket, the proton ``Transport``/``Connection``/``Collector`` and a queue of
work handed over by API threads. API threads never call proton; they append a callable with
:meth:`Engine.submit` (cheap, no round trip) or wait for a result with :class:`Completion`.
The wake-up byte is written only when the queue goes from empty to non-empty, so a burst of
sends or acknowledgements costs one wake-up, not one per message.

When anything goes wrong on the thread (socket error, protocol error, a bug in a handler) the
engine stops, closes the socket and calls ``on_engine_failed`` exactly once; the provider fails
every waiter from there, so no API call can hang.
"""

from __future__ import annotations

import collections
import heapq
import itertools
import logging
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from proton import Collector, Connection, Event, Transport

from .._deferred_wakeups import WakeupDeferral
from ..errors import JMSException
from .attach_amender import AttachAmender
from .completion import Completion
from .engine_errors import EngineStopped, IdleTimeoutExpired
from .preamble import READ_CHUNK, ConnectPreamble
from .proton_internals import (
    FreedEndpoints,
    HeldWrappers,
    OrphanedRefs,
    collector_ref,
    dispatch_events,
    transport_capacity,
    transport_closed,
    transport_peek,
    transport_pending,
    transport_pop,
    transport_push,
    transport_ref,
    transport_tick,
)
from .redact import redact_frame
from .sasl import SaslClient
from .tls import TlsLayer

log = logging.getLogger("jmspy.engine")
frame_log = logging.getLogger("jmspy.frames")

T = TypeVar("T")

_REAP_INTERVAL_S = 0.1
_REAP_WAKE_S = 0.5
# One socket read of the engine's loop at most: about 60 messages of 1 KiB, so that one turn
# does not hold the first of them back much longer than reading seven would (a turn spends
# about 10 us of Python per message).
SOCKET_READ_BYTES = 64 * 1024


class SharedLoop(Protocol):
    """The loop thread(s) serving many engines (see event_loop.SharedEventLoop)."""

    def owns(self, thread: threading.Thread) -> bool: ...

    def add(self, engine: Engine) -> None: ...

    def touch(self, engine: Engine) -> None: ...

    def notify(self, engine: Engine) -> None: ...


class TransportBound:
    """Work that belongs to the transport of the engine it is submitted to (re-creating the
    links on it, declaring it lost): a stopped engine drops it rather than handing it to the
    next transport of a failover connection, where it would act a second time."""

    __slots__ = ("_work",)

    def __init__(self, work: Callable[[], None]) -> None:
        self._work = work

    def __call__(self) -> None:
        self._work()


class EngineHandler(Protocol):
    def on_proton_event(self, event: Event) -> None: ...

    def on_engine_failed(self, error: BaseException) -> None: ...


class Engine(ConnectPreamble):
    """Runs proton over one TCP connection on its own thread."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        connection: Connection,
        transport: Transport,
        handler: EngineHandler,
        connect_timeout_s: float,
        tcp_no_delay: bool = True,
        tcp_keep_alive: bool = False,
        send_buffer_size: int | None = None,
        receive_buffer_size: int | None = None,
        name: str = "jmspy-engine",
        tls: ssl.SSLContext | None = None,
        server_hostname: str | None = None,
        sasl: SaslClient | None = None,
        shared_loop: SharedLoop | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.connection = connection
        self.transport = transport
        self.handler = handler
        self._connect_timeout_s = connect_timeout_s
        self._sock_opts = (tcp_no_delay, tcp_keep_alive, send_buffer_size, receive_buffer_size)
        self._collector = Collector()
        connection.collect(self._collector)
        # Addresses for proton_internals' calls on every turn (valid while these objects live,
        # as long as the engine).
        self._collector_ref = collector_ref(self._collector)
        self._transport_ref = transport_ref(transport)
        # References of received deliveries let go on other threads, dropped here each turn.
        self.orphans = OrphanedRefs()
        # Proton's wrappers of this connection's links and sessions, let go of here.
        self.held_wrappers = HeldWrappers()
        # Links and sessions freed on this connection, let go of once only the engine holds them
        # (looked at every _REAP_INTERVAL_S: a closed consumer the application keeps holds its
        # link for as long, and need not cost every turn).
        self.freed = FreedEndpoints(connection, self._wake_to_reap)
        self._reap_wake_pending = False
        self._next_reap = 0.0
        self._work: collections.deque[Callable[[], None]] = collections.deque()
        # Run once after the current pass over proton's events (engine thread only): lets a
        # consumer link hand over all the transfers of one read at once.
        self._after_dispatch: list[Callable[[], None]] = []
        self._wake_pending = False
        self._wake_lock = threading.Lock()
        # True while the engine's own thread waits in select(): only then does queued work
        # need a wake-up byte (see submit_lazy).
        self._parked = False
        # Consumers' wake-ups deferred while more input is already there (own thread only).
        self._deferral = WakeupDeferral()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._timer_seq = itertools.count()
        self._sock: socket.socket | None = None
        # Bytes taken from proton but not yet written to the socket. Taking all of proton's
        # output each time keeps proton's buffer at frame boundaries, which the attach
        # amender relies on.
        self._outbuf = bytearray()
        # TLS is done here (not by proton), so amended frames go out on amqps:// too.
        self.amender = AttachAmender(enabled=True)
        where = f"{host}:{port}"
        self._tls = TlsLayer(tls, server_hostname or host, where) if tls is not None else None
        self._sasl = sasl
        # Decrypted (or SASL-leftover) bytes proton had no capacity for yet.
        self._plain_in = bytearray()
        self._eof = False
        self._deadline = 0.0
        self._stopped = threading.Event()
        # Set once _finish has run to its end: what joining the engine waits for.
        self._finished = threading.Event()
        self._capacity = 0
        self._stop_requested = False
        self._abort_requested = False
        # Dead-peer detection from our own clock: proton's tick() only notices input when it
        # runs, which can be up to a whole idle timeout late (detection at 2x the timeout).
        self._idle_timeout_s = float(transport.idle_timeout or 0.0)
        self._last_input = time.monotonic()
        self.failure: BaseException | None = None
        # transport.sharedEventLoopThreads: the socket is served by a loop thread shared with
        # other connections; this engine's own thread only connects (TCP, TLS, SASL) and ends.
        self._shared_loop = shared_loop
        target = self._run if shared_loop is None else self._connect_then_share
        self._thread = threading.Thread(target=target, name=name, daemon=True)

    # ---- API side -------------------------------------------------------------------------

    def start(self) -> None:
        # The TLS/SASL preamble gives up a little before the opener's wait for
        # jms.connectTimeout ends, so the opener sees the reason, not a bare timeout.
        timeout = self._connect_timeout_s
        self._deadline = time.monotonic() + timeout - min(0.25, timeout * 0.05)
        self._thread.start()

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    def on_engine_thread(self) -> bool:
        current = threading.current_thread()
        if self._shared_loop is not None and self._shared_loop.owns(current):
            return True
        return current is self._thread

    @property
    def running(self) -> bool:
        return not self._stopped.is_set()

    def submit(self, work: Callable[[], None]) -> None:
        """Queue work for the engine thread; raises EngineStopped if the engine is gone."""
        if self._stopped.is_set():
            raise EngineStopped(self.failure)
        self._work.append(work)
        self._wake()

    def _wake(self) -> None:
        # Only the first wake-up after the engine drained the queue writes a byte.
        if not self._wake_pending:
            with self._wake_lock:
                if not self._wake_pending:
                    self._wake_pending = True
                    if self._shared_loop is not None:
                        # One wake-up of the shared loop covers every engine woken meanwhile.
                        self._shared_loop.notify(self)
                        return
                    try:
                        self._wake_w.send(b"\0")
                    except (BlockingIOError, OSError):
                        pass  # the buffer is full of wake-ups already, or we are closing

    def submit_lazy(self, work: Callable[[], None]) -> None:
        """Queue work that may wait for the engine's next turn: no wake-up byte unless the
        engine is waiting in select(). A running engine takes the work before it waits again
        (it looks at the queue after marking itself parked), so nothing is left behind."""
        if self._shared_loop is not None or self._stopped.is_set():
            self.submit(work)
            return
        self._work.append(work)
        if self._parked:
            self._wake()

    def call(
        self,
        work: Callable[[Completion[T]], None],
        timeout_s: float,
        what: str,
        timeout_error: Callable[[str], BaseException],
    ) -> T:
        """Run ``work(completion)`` on the engine thread and wait for the completion."""
        completion: Completion[T] = Completion()

        def run() -> None:
            try:
                work(completion)
            except BaseException as exc:  # noqa: BLE001 - handed to the waiter
                completion.fail(exc)

        self.submit(run)
        return completion.wait(
            timeout_s, lambda: timeout_error(f"{what} did not complete within {timeout_s:g} s")
        )

    def after_dispatch(self, work: Callable[[], None]) -> None:
        """Run work once the events pending now are all handled (engine thread only)."""
        self._after_dispatch.append(work)

    def flush_after_dispatch(self) -> None:
        """Run the deferred work now (engine thread only): before an event that completes
        something a thread waits for, so that thread finds the transfers that came before."""
        while self._after_dispatch:
            after, self._after_dispatch = self._after_dispatch, []
            for work in after:
                work()

    def _wake_to_reap(self) -> None:
        """Engine thread: make sure the engine takes a turn to reap what FreedEndpoints lists,
        even when the connection is idle (one wake-up pending at a time; while something stays
        listed, say a closed consumer the application keeps, one every _REAP_WAKE_S)."""
        if self._reap_wake_pending:
            return
        self._reap_wake_pending = True

        def woken() -> None:
            self._reap_wake_pending = False

        self.schedule(_REAP_WAKE_S, woken)

    def schedule(self, delay_s: float, work: Callable[[], None]) -> None:
        """Run work on the engine thread after a delay (engine thread only)."""
        heapq.heappush(self._timers, (time.monotonic() + delay_s, next(self._timer_seq), work))
        if self._shared_loop is not None:
            # Possibly scheduled from another connection's handler on the same loop thread:
            # make the loop take the new deadline into account.
            self._shared_loop.touch(self)

    def stop(self) -> None:
        """Ask the thread to stop after flushing what it can (any thread)."""
        self._stop_requested = True
        try:
            self._wake_w.send(b"\0")
        except OSError:
            pass

    def abort(self) -> None:
        """Stop at once without flushing (a close whose deadline passed; any thread)."""
        self._abort_requested = True
        self.stop()

    def join(self, timeout_s: float) -> bool:
        if self.on_engine_thread():
            return False
        if not self._thread.is_alive() and not self._thread.ident:
            # Never started: a close racing a reconnect that built this engine and has not
            # started it yet (Thread.join would raise); stop() is already requested.
            return True
        if self._shared_loop is None:
            self._thread.join(timeout_s)
            return not self._thread.is_alive()
        return self._finished.wait(timeout_s)

    # ---- engine thread ----------------------------------------------------------------

    def _run(self) -> None:
        error: BaseException | None = None
        self._deferral.enter()
        try:
            self._open_socket()
            self._loop()
        except BaseException as exc:  # noqa: BLE001 - every failure ends in on_engine_failed
            error = exc
        finally:
            self._deferral.leave()
            self._finish(error)

    def _finish(self, error: BaseException | None) -> None:
        """The engine is done (its own thread, or the shared loop's): release the socket and
        tell the handler, exactly once."""
        if error is not None and not isinstance(error, OSError | EngineStopped | JMSException):
            log.error("engine thread for %s:%s failed", self.host, self.port, exc_info=error)
        try:
            self._stopped.set()
            self.orphans.release(engine_done=True)
            self.freed.release_all()
            self._close_socket()
            self.failure = error or EngineStopped("connection closed")
            # Work queued after the last drain still holds completions; run it so that
            # every waiter is failed by the provider instead of waiting for a timeout.
            try:
                self.handler.on_engine_failed(self.failure)
            except Exception:
                log.exception("engine failure handler raised")
            # A connection that fails over takes the work over for its next transport; work
            # bound to this transport has nothing left to act on.
            for work in [w for w in self._work if isinstance(w, TransportBound)]:
                self._work.remove(work)
            take = getattr(self.handler, "take_leftover_work", None)
            if take is None or not take(self._work):
                self._drain_work_after_stop()
            self.held_wrappers.clear()
            # Events still queued hold their objects (a freed link's LINK_FINAL, say): let them
            # go here, on this thread, not in a collection on whichever thread drops the
            # collector later.
            self._collector.release()
        finally:
            self._finished.set()

    def _connect_then_share(self) -> None:
        """Shared-loop mode: connect on this short-lived thread (the blocking TCP connect and
        TLS/SASL preamble must not stall the other connections), then hand over."""
        loop = self._shared_loop
        assert loop is not None
        try:
            self._open_socket()
        except BaseException as exc:  # noqa: BLE001 - every failure ends in on_engine_failed
            self._finish(exc)
            return
        loop.add(self)

    def _drain_work_after_stop(self) -> None:
        while self._work:
            work = self._work.popleft()
            try:
                work()
            except Exception:
                pass

    def _open_socket(self) -> None:
        no_delay, keep_alive, sndbuf, rcvbuf = self._sock_opts
        # jms.connectTimeout bounds name resolution, the TCP connect, the TLS handshake and
        # SASL together; stop() ends any of them (see ConnectPreamble._connect).
        deadline = self._deadline
        sock = self._connect(deadline)
        self._sock = sock  # closed by _finish whatever fails from here on
        if no_delay:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if keep_alive:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        if sndbuf:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
        if rcvbuf:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.setblocking(False)
        self._preamble(sock, deadline)
        self._last_input = time.monotonic()

    def _close_socket(self) -> None:
        if self._tls is not None and self._sock is not None and self._tls.handshake_done:
            try:  # close_notify, best effort: the socket is closed right after
                self._sock.send(bytes(self._outbuf) + self._tls.close_notify())
            except OSError:
                pass
        for s in (self._sock, self._wake_r, self._wake_w):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass

    def _run_work(self) -> None:
        # Clear the flag before draining so a submit racing with the drain re-arms the wake-up.
        with self._wake_lock:
            self._wake_pending = False
        work = self._work
        # Once a stop is requested (a closing or lost transport) no more work runs here: what
        # is left is failed, or handed to the next transport by a failover connection.
        while work and not self._stop_requested:
            work.popleft()()

    def _run_timers(self, now: float) -> bool:
        """Run the timers due by ``now``; whether any ran."""
        timers = self._timers
        if not timers or timers[0][0] > now:
            return False
        while timers and timers[0][0] <= now:
            _, _, work = heapq.heappop(timers)
            work()
        return True

    def _dispatch_events(self) -> None:
        # Delivery events take a shortcut past proton's Event wrapper (see dispatch_events).
        handler = self.handler
        on_delivery = getattr(handler, "on_delivery_fast", None)
        while True:
            dispatch_events(self._collector_ref, on_delivery, self._on_other_event)
            if not self._after_dispatch:
                return
            # Hand-overs may act on proton and raise events of their own: those are handled
            # in this turn too, not left for the next wake-up.
            self.flush_after_dispatch()

    def _on_other_event(self, event: Event) -> None:
        if self._after_dispatch:
            self.flush_after_dispatch()
        self.handler.on_proton_event(event)

    def _loop(self) -> None:
        sock = self._sock
        assert sock is not None
        wake_r = self._wake_r
        deferral = self._deferral
        while True:
            turn = self._prepare()
            if turn is None:
                return
            want_read, want_write, timeout = turn
            readers = [wake_r, sock] if want_read else [wake_r]
            writers = [sock] if want_write else []
            if deferral:
                # Consumers' wake-ups wait while more input is already there (see
                # WakeupDeferral), at most MAX_DEFER_S; before a wait they run.
                if deferral.due(time.monotonic()):
                    deferral.run()
                elif timeout > 0.0:
                    readable, writable, _ = select.select(readers, writers, [], 0.0)
                    if readable or writable:
                        self._after_wait(sock in readable, wake_r in readable)
                        continue
                    deferral.run()
            self._parked = True
            if self._work:
                timeout = 0.0  # queued by submit_lazy since _prepare looked
            try:
                readable, _, _ = select.select(readers, writers, [], timeout)
            finally:
                self._parked = False
            self._after_wait(sock in readable, wake_r in readable)

    def _prepare(self) -> tuple[bool, bool, float] | None:
        """One turn of the loop up to the wait: run queued work, events and timers, write.

        Returns what to wait for (socket readable, socket writable, at most how long), or None
        when the engine is done. The per-connection thread and the shared loop both use it.
        """
        transport = self.transport
        ref = self._transport_ref
        sock = self._sock
        assert sock is not None
        if self.orphans:
            self.orphans.release()
        self._run_work()
        self._dispatch_events()
        now = time.monotonic()
        if self._run_timers(now):
            self._dispatch_events()  # what the timers raised
        self.held_wrappers.sweep(now)
        if self.freed and now >= self._next_reap:
            self._next_reap = now + _REAP_INTERVAL_S
            self.freed.reap()
            self._dispatch_events()  # proton's final events of what went
            if self.freed:
                self._wake_to_reap()
        self._write(sock)
        # pending()/capacity() make proton process input and may raise events (e.g. a
        # SASL failure); dispatch them before leaving so the reason reaches the provider.
        if (
            transport_closed(ref)
            or self._abort_requested
            or (
                self._stop_requested and transport_pending(transport, ref) <= 0 and not self._outbuf
            )
        ):
            self._dispatch_events()
            return None
        capacity = transport_capacity(transport, ref)
        if capacity < 0 and transport_pending(transport, ref) < 0 and not self._outbuf:
            self._dispatch_events()
            return None
        self._capacity = capacity
        want_write = bool(self._outbuf) or transport_pending(transport, ref) > 0
        deadline = transport_tick(ref, now)
        timeout = 5.0
        if deadline:
            timeout = min(timeout, max(0.0, deadline - now))
        if self._timers:
            timeout = min(timeout, max(0.0, self._timers[0][0] - now))
        idle = self._idle_timeout_s
        if idle:
            timeout = min(timeout, max(0.0, self._last_input + idle - now))
        if self._work or (self._plain_in and capacity > 0):
            timeout = 0.0
        return capacity > 0, want_write, timeout

    def _after_wait(self, sock_readable: bool, woken: bool) -> None:
        """The rest of a turn after the wait: idle check, wake-up bytes, input."""
        capacity = self._capacity
        idle = self._idle_timeout_s
        if idle and capacity > 0 and not sock_readable:
            self._check_idle(idle)
        if woken:
            try:
                while self._wake_r.recv(4096):
                    pass
            except (BlockingIOError, InterruptedError):
                pass
        if sock_readable or (self._plain_in and capacity > 0):
            assert self._sock is not None
            self._read(self._sock, capacity)

    def _check_idle(self, idle: float) -> None:
        # Only after a select that saw the socket unreadable: bytes waiting unread are input.
        silent_s = time.monotonic() - self._last_input
        if silent_s >= idle:
            raise IdleTimeoutExpired(
                f"idle timeout expired: nothing received for {silent_s * 1000:.0f} ms "
                f"(amqp.idleTimeout={idle * 1000:.0f} ms)"
            )

    def _read(self, sock: socket.socket, capacity: int) -> None:
        if self._plain_in:
            self._push_plain(capacity)
            return
        if self._tls is not None:
            self._read_tls(sock, capacity)
            return
        transport = self.transport
        try:
            # More than proton's input buffer takes at once (8 KiB, seven 1 KiB messages):
            # _push_input hands it over piece by piece, proton reading the frames of each
            # piece as it takes it, so one system call (and one turn) carries a run of
            # messages instead of seven.
            data = sock.recv(SOCKET_READ_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            log.debug("socket read failed: %s", exc)
            transport.close_tail()
            transport.close_head()
            raise
        if data:
            self._last_input = time.monotonic()
            self._push_input(data)
        else:
            transport.close_tail()

    def _push_input(self, data: bytes | bytearray) -> None:
        """Give proton as much of ``data`` as it takes, piece by piece (each push reads the
        frames in it and frees the buffer again, and proton grows the buffer when a frame
        needs more); what it does not take (its input closed, or its buffer at the largest
        frame it allows) stays in ``_plain_in``, to be pushed when it has room."""
        transport = self.transport
        ref = self._transport_ref
        size = len(data)
        pos = 0
        while pos < size:
            capacity = transport_capacity(transport, ref)
            if capacity <= 0:
                break
            end = min(size, pos + capacity)
            transport_push(transport, ref, data if pos == 0 and end == size else data[pos:end])
            pos = end
        if pos < size:
            self._plain_in += data[pos:]

    def _write(self, sock: socket.socket) -> None:
        transport = self.transport
        ref = self._transport_ref
        outbuf = self._outbuf
        while True:
            pending = transport_pending(transport, ref)
            if pending > 0:
                chunk: bytes | bytearray | None = transport_peek(transport, ref, pending)
                if chunk:
                    transport_pop(ref, len(chunk))
                    if self.amender.active:  # only while links attach
                        chunk = self.amender.amend(bytes(chunk))
                    if self._tls is not None:
                        self._tls.write(chunk)
                        chunk = self._tls.outgoing()
                    outbuf += chunk
            if not outbuf:
                return
            try:
                sent = sock.send(outbuf)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                log.debug("socket write failed: %s", exc)
                transport.close_head()
                transport.close_tail()
                raise
            del outbuf[:sent]
            if outbuf:
                return

    # ---- TLS and SASL (the byte path between the socket and proton) ----------------------

    def _read_tls(self, sock: socket.socket, capacity: int) -> None:
        tls = self._tls
        assert tls is not None
        try:
            data = sock.recv(READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            log.debug("socket read failed: %s", exc)
            self.transport.close_tail()
            self.transport.close_head()
            raise
        if data:
            self._last_input = time.monotonic()
            tls.feed(data)
        else:
            tls.feed_eof()
        self._plain_in += tls.read()
        # Reading may produce TLS records to send back (e.g. a key update).
        self._outbuf += tls.outgoing()
        self._eof = not data or tls.closed_by_peer
        self._push_plain(capacity)

    def _push_plain(self, capacity: int) -> None:
        if self._plain_in and capacity > 0:
            plain, self._plain_in = self._plain_in, bytearray()
            self._push_input(plain)
        if self._eof and not self._plain_in:
            self.transport.close_tail()

    def enable_frame_trace(self) -> None:
        def tracer(_transport: Transport, message: str) -> None:
            # SASL frames carry the password: redact before any handler sees the line.
            frame_log.debug("%s:%s %s", self.host, self.port, redact_frame(message))

        self.transport.tracer = tracer
        self.transport.trace(Transport.TRACE_FRM)


def noop(*_args: Any) -> None:
    return None
