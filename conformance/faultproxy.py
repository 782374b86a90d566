"""A local TCP proxy that fails on demand, for failover and reconnect tests.

:class:`FaultProxy` listens on ``127.0.0.1`` (a free port) and forwards every accepted
connection to a target broker. Between the client and the broker it can inject the faults
a network or a broker host produces:

* :meth:`~FaultProxy.freeze`: nothing is forwarded in either direction, yet every socket
  stays open: the client sees silence (a hung broker, a dead link without FIN/RST) and only
  its idle timeout or a request timeout can tell. :meth:`~FaultProxy.thaw` resumes, bytes
  sent meanwhile included.
* :meth:`~FaultProxy.cut`: every connection is closed with a RST (``SO_LINGER`` 0) on both
  sides: the client gets ECONNRESET (or EOF) at once, like a crashed broker host.
* :meth:`~FaultProxy.refuse`: new connections are accepted and at once reset, so a
  reconnect attempt fails fast, as against a broker that is down.
* :meth:`~FaultProxy.retarget`: new connections go to another broker (a failover target).

One daemon thread runs a ``selectors`` loop; every call from another thread is executed by
that thread and has taken effect when the call returns (after ``freeze()`` not one more
byte is forwarded). Buffers are bounded: a side is not read while more than
:data:`BUFFER_LIMIT` bytes wait for the other. Only loopback is ever bound or targeted,
so a test cannot turn the proxy into a relay to somewhere else.
"""

from __future__ import annotations

import errno
import selectors
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from types import TracebackType
from typing import Self, TypeVar

__all__ = ["BUFFER_LIMIT", "FaultProxy"]

#: Bytes buffered per direction before the proxy stops reading the sending side.
BUFFER_LIMIT = 256 * 1024

_LOOPBACK = "127.0.0.1"
_LOOPBACK_NAMES = (_LOOPBACK, "localhost")
_CHUNK = 64 * 1024
T = TypeVar("T")


def _loopback(host: str, what: str) -> str:
    if host not in _LOOPBACK_NAMES:
        raise ValueError(f"FaultProxy {what} must be 127.0.0.1 (or localhost), not {host!r}")
    return _LOOPBACK


def _check_port(port: int, what: str) -> int:
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        raise ValueError(f"FaultProxy {what} must be a TCP port 1-65535, not {port!r}")
    return port


def _reset(sock: socket.socket) -> None:
    """Close ``sock`` so the other side gets a RST rather than a FIN."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass  # already dead: a plain close is all there is
    try:
        sock.close()
    except OSError:
        pass


class _Side:
    """One socket of a proxied connection and the bytes waiting to be written to it."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.out = bytearray()
        self.eof = False  # it sent FIN: nothing more to read
        self.shut = False  # we sent it FIN (after its peer's EOF and a drained buffer)


class _Pipe:
    """A client connection and its upstream connection to the target."""

    def __init__(self, client: socket.socket, upstream: socket.socket) -> None:
        self.client = _Side(client)
        self.upstream = _Side(upstream)
        self.connected = False  # the non-blocking connect to the target completed

    def other(self, side: _Side) -> _Side:
        return self.upstream if side is self.client else self.client

    @property
    def done(self) -> bool:
        return all(s.eof and s.shut for s in (self.client, self.upstream))


class FaultProxy:
    """Forward TCP from ``127.0.0.1:port`` to ``target_host:target_port``, faults on demand.

    >>> with FaultProxy(broker.host, broker.port) as proxy:
    ...     connection = connect(proxy.url)
    ...     proxy.freeze()      # the client hears nothing any more
    ...     proxy.cut()         # every connection reset

    ``listen_port`` 0 (the default) takes a free port; :attr:`port` and :attr:`url` say which.
    """

    def __init__(
        self,
        target_host: str,
        target_port: int,
        listen_host: str = _LOOPBACK,
        listen_port: int = 0,
    ) -> None:
        self._target = (_loopback(target_host, "target"), _check_port(target_port, "target"))
        host = _loopback(listen_host, "listen_host")
        if listen_port != 0:
            _check_port(listen_port, "listen_port")
        self._frozen = False
        # Only the broker's side is frozen: requests still reach it, its answers do not come
        # back (puts a request "in doubt" deterministically).
        self._replies_frozen = False
        self._bytes_upstream = 0
        self._refusing = False
        self._pipes: list[_Pipe] = []
        self._accepted = 0
        self._bytes = 0
        self._cond = threading.Condition()
        self._commands: deque[tuple[Callable[[], object], Future[object]]] = deque()
        self._stopping = False
        self._closed = False
        self._error: BaseException | None = None

        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._listener.bind((host, listen_port))
            self._listener.listen(64)
        except OSError:
            self._listener.close()
            raise
        self._listener.setblocking(False)
        self._port: int = self._listener.getsockname()[1]
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ, "listener")
        self._selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._thread = threading.Thread(
            target=self._run, name=f"fault-proxy-{self._port}", daemon=True
        )
        self._thread.start()

    # ------------------------------------------------------------------ what it is

    @property
    def host(self) -> str:
        return _LOOPBACK

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"amqp://{_LOOPBACK}:{self._port}"

    @property
    def target(self) -> tuple[str, int]:
        """Where new connections are forwarded to."""
        return self._target

    @property
    def connections(self) -> int:
        """Proxied connections currently open (accepted and not yet closed)."""
        with self._cond:
            return len(self._pipes)

    @property
    def accepted(self) -> int:
        """Connections accepted and forwarded since the proxy was made (refused ones not)."""
        with self._cond:
            return self._accepted

    @property
    def bytes_forwarded(self) -> int:
        """Bytes written to either side so far, both directions together."""
        with self._cond:
            return self._bytes

    @property
    def bytes_held(self) -> int:
        """Bytes from the target waiting in the proxy for clients (while replies are frozen)."""
        return self._call(lambda: sum(len(pipe.client.out) for pipe in self._pipes))

    @property
    def bytes_to_target(self) -> int:
        """Bytes written towards the target (client to broker) so far."""
        with self._cond:
            return self._bytes_upstream

    @property
    def frozen(self) -> bool:
        return self._frozen

    def __repr__(self) -> str:
        state = "closed" if self._closed else "frozen" if self._frozen else "forwarding"
        return f"<FaultProxy {self.url} -> {self._target[0]}:{self._target[1]} {state}>"

    # ------------------------------------------------------------------ faults

    def freeze(self) -> None:
        """Stop forwarding both ways; every socket stays open (new connections too)."""
        self._call(lambda: setattr(self, "_frozen", True))

    def freeze_replies(self) -> None:
        """Stop forwarding from the target to clients only; what clients send still reaches
        the target, whose answers are read and held in the proxy (:attr:`bytes_held`) until
        :meth:`thaw`, or dropped by :meth:`cut`."""
        self._call(lambda: setattr(self, "_replies_frozen", True))

    def thaw(self) -> None:
        """Forward again, starting with whatever was sent while frozen."""

        def run() -> None:
            self._frozen = False
            self._replies_frozen = False

        self._call(run)

    def cut(self) -> int:
        """Reset every open connection on both sides; returns how many there were.

        The proxy keeps listening: a client that reconnects gets a new connection (unless
        :meth:`refuse` or :meth:`freeze` say otherwise).
        """
        return self._call(self._cut_all)

    def refuse(self, refusing: bool = True) -> None:
        """While ``refusing``, new connections are accepted and at once reset (open ones
        are left alone; :meth:`cut` them if the broker should look down)."""
        self._call(lambda: setattr(self, "_refusing", bool(refusing)))

    def retarget(self, host: str, port: int) -> None:
        """Forward connections accepted from now on to ``host:port`` (127.0.0.1 only)."""
        target = (_loopback(host, "target"), _check_port(port, "target"))
        self._call(lambda: setattr(self, "_target", target))

    def wait_for_connections(self, count: int = 1, timeout: float = 10.0) -> int:
        """Wait until at least ``count`` connections are open; returns how many are."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self._pipes) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(
                        f"{self!r}: {len(self._pipes)} connection(s) open after "
                        f"{timeout}s, wanted {count}"
                    )
                self._cond.wait(remaining)
            return len(self._pipes)

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Reset every connection, stop listening and end the thread. Idempotent.

        Raises what the proxy thread failed with, if it did.
        """
        if not self._closed:
            self._closed = True
            self._stopping = True
            self._wake()
            self._thread.join(timeout=10)
            if self._thread.is_alive():  # pragma: no cover - the loop wakes within 0.5 s
                raise RuntimeError(f"{self!r}: proxy thread did not stop within 10 s")
            self._cut_all()
            for sock in (self._listener, self._wake_r, self._wake_w):
                sock.close()
            self._selector.close()
        if self._error is not None:
            raise RuntimeError(f"{self!r} failed: {self._error!r}") from self._error

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ the thread

    def _call(self, fn: Callable[[], T], timeout: float = 10.0) -> T:
        """Run ``fn`` on the proxy thread and wait for it (the sockets are the thread's)."""
        if self._closed or not self._thread.is_alive():
            raise RuntimeError(f"{self!r} is closed")
        future: Future[T] = Future()
        with self._cond:
            self._commands.append((fn, future))  # type: ignore[arg-type]
        self._wake()
        return future.result(timeout)

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass  # a wake byte is already pending, or we are closing

    def _run(self) -> None:
        try:
            while not self._stopping:
                for key, mask in self._selector.select(0.5):
                    if key.data == "listener":
                        self._accept()
                    elif key.data == "wake":
                        self._drain_wake()
                    else:
                        self._io(key.data, key.fileobj, mask)
                self._run_commands()
                self._update_interest()
        except BaseException as exc:  # surfaced by close()
            self._error = exc
        finally:
            with self._cond:
                commands, self._commands = list(self._commands), deque()
            for _fn, future in commands:
                future.set_exception(RuntimeError("fault proxy stopped"))

    def _drain_wake(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except OSError:
            pass

    def _run_commands(self) -> None:
        while True:
            with self._cond:
                if not self._commands:
                    return
                fn, future = self._commands.popleft()
            try:
                future.set_result(fn())
            except Exception as exc:
                future.set_exception(exc)

    def _accept(self) -> None:
        try:
            client, _addr = self._listener.accept()
        except OSError:
            return
        if self._refusing:
            _reset(client)
            return
        client.setblocking(False)
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        upstream = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        upstream.setblocking(False)
        upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        code = upstream.connect_ex(self._target)
        if code not in (0, errno.EINPROGRESS):
            # Nothing listens there: the client sees what it would see at the broker.
            _reset(upstream)
            _reset(client)
            return
        pipe = _Pipe(client, upstream)
        with self._cond:
            self._pipes.append(pipe)
            self._accepted += 1
            self._cond.notify_all()

    def _io(self, pipe: _Pipe, sock: object, mask: int) -> None:
        if pipe not in self._pipes:
            return  # closed earlier in this round
        side = pipe.client if sock is pipe.client.sock else pipe.upstream
        if side is pipe.upstream and not pipe.connected:
            err = side.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                self._close_pipe(pipe)  # the target refused: reset the client
                return
            pipe.connected = True
        if self._frozen:
            return
        if mask & selectors.EVENT_WRITE and not self._write(pipe, side):
            return
        if mask & selectors.EVENT_READ:
            self._read(pipe, side)

    def _read(self, pipe: _Pipe, side: _Side) -> None:
        other = pipe.other(side)
        try:
            data = side.sock.recv(_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close_pipe(pipe)  # a reset on one side resets the other
            return
        if not data:
            side.eof = True
        else:
            other.out += data
        self._write(pipe, other)

    def _write(self, pipe: _Pipe, side: _Side) -> bool:
        """Flush what waits for ``side``; False when that closed the pipe."""
        if side is pipe.upstream and not pipe.connected:
            return True
        if side is pipe.client and self._replies_frozen:
            return True  # held: the target's answers wait here until thaw()
        if side.out:
            try:
                sent = side.sock.send(side.out)
            except (BlockingIOError, InterruptedError):
                return True
            except OSError:
                self._close_pipe(pipe)
                return False
            del side.out[:sent]
            with self._cond:
                self._bytes += sent
                if side is pipe.upstream:
                    self._bytes_upstream += sent
        other = pipe.other(side)
        if not side.out and other.eof and not side.shut:
            # The other side finished sending and all of it is through: pass the FIN on.
            side.shut = True
            try:
                side.sock.shutdown(socket.SHUT_WR)
            except OSError:
                self._close_pipe(pipe)
                return False
        if pipe.done:
            self._close_pipe(pipe, reset=False)
            return False
        return True

    def _update_interest(self) -> None:
        for pipe in list(self._pipes):
            for side in (pipe.client, pipe.upstream):
                events = 0
                if side is pipe.upstream and not pipe.connected:
                    events = selectors.EVENT_WRITE  # the connect's completion
                elif not self._frozen:
                    other = pipe.other(side)
                    if not side.eof and len(other.out) < BUFFER_LIMIT:
                        events |= selectors.EVENT_READ
                    if side.out and not (self._replies_frozen and side is pipe.client):
                        events |= selectors.EVENT_WRITE
                self._interest(side.sock, events, pipe)

    def _interest(self, sock: socket.socket, events: int, pipe: _Pipe) -> None:
        try:
            current = self._selector.get_key(sock).events
        except KeyError:
            current = 0
        if events == current:
            return
        if not events:
            self._selector.unregister(sock)
        elif current:
            self._selector.modify(sock, events, pipe)
        else:
            self._selector.register(sock, events, pipe)

    def _close_pipe(self, pipe: _Pipe, *, reset: bool = True) -> None:
        for side in (pipe.client, pipe.upstream):
            try:
                self._selector.unregister(side.sock)
            except (KeyError, ValueError):
                pass
            if reset:
                _reset(side.sock)
            else:
                side.sock.close()
        with self._cond:
            if pipe in self._pipes:
                self._pipes.remove(pipe)
            self._cond.notify_all()

    def _cut_all(self) -> int:
        with self._cond:
            pipes = list(self._pipes)
        for pipe in pipes:
            self._close_pipe(pipe)
        return len(pipes)
