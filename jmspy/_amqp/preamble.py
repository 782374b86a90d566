"""The connect-time work of an engine: name resolution and the TCP connect, then the TLS
handshake and the SASL exchange, with every wait bounded by jms.connectTimeout and ended by
``Engine.stop()``, before proton sees any byte."""

from __future__ import annotations

import errno
import ipaddress
import os
import select
import socket
import time
from typing import Any

from ..errors import JMSException
from .engine_errors import EngineStopped
from .name_lookup import look_up
from .sasl import SaslClient
from .tls import TlsLayer

# What one socket read asks for, here and in the engine's loop.
READ_CHUNK = 256 * 1024

# What a non-blocking connect_ex returns while the connect is under way (on Windows, Winsock's
# own WSAEWOULDBLOCK).
_CONNECT_PENDING = frozenset(
    {
        errno.EINPROGRESS,
        errno.EWOULDBLOCK,
        errno.EAGAIN,
        getattr(errno, "WSAEWOULDBLOCK", errno.EWOULDBLOCK),
    }
)


def _is_ip_literal(host: str) -> bool:
    """An address, not a name: getaddrinfo answers it at once, without asking a resolver."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class ConnectPreamble:
    """Part of :class:`~jmspy._amqp.engine.Engine`: what runs on the thread that connects (the
    engine's own, or the short-lived connecting thread of a shared loop)."""

    host: str
    port: int
    _tls: TlsLayer | None
    _sasl: SaslClient | None
    _plain_in: bytearray
    _connect_timeout_s: float
    _stop_requested: bool
    _wake_r: socket.socket
    _wake_w: socket.socket

    def _connect(self, deadline: float) -> socket.socket:
        """A non-blocking socket connected to ``host:port``, by ``deadline``.

        Unlike ``socket.create_connection``: resolving the name is bounded too, every address
        shares what is left of the one deadline (not a full timeout each), and ``stop()`` ends
        any of the waits at once, so a close never waits for a connect to give up. As with
        create_connection, the addresses are tried in turn and the last one's OSError is
        raised when none connects."""
        last: OSError | None = None
        for family, kind, proto, _, address in self._resolve(deadline):
            try:
                sock = socket.socket(family, kind, proto)
            except OSError as exc:  # say, an IPv6 address on a host without IPv6
                last = exc
                continue
            try:
                sock.setblocking(False)
                self._connect_one(sock, address, deadline)
            except OSError as exc:
                sock.close()
                last = exc
                continue
            except BaseException:
                sock.close()  # the deadline passed or stop() was called: nothing else to try
                raise
            return sock
        if last is not None:
            raise last
        raise OSError(f"getaddrinfo returned no address for {self.host}")

    def _connect_one(self, sock: socket.socket, address: Any, deadline: float) -> None:
        err = sock.connect_ex(address)
        if err in _CONNECT_PENDING:
            what = f"the TCP connect to {self.host}:{self.port}"
            while sock not in self._wait_ready([self._wake_r], [sock], deadline, what):
                pass
            err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            # OSError picks the subclass from the errno (ConnectionRefusedError, ...), as
            # create_connection raised them.
            raise OSError(err, os.strerror(err))

    def _resolve(self, deadline: float) -> list[tuple[Any, ...]]:
        """The addresses of ``host:port``. A name is looked up on a thread of its own (see
        name_lookup), which this thread stops waiting for at the deadline or at stop()."""
        if _is_ip_literal(self.host):
            return socket.getaddrinfo(
                self.host, self.port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST
            )
        lookup = look_up(self.host, self.port, self._wake_w)
        try:
            while not lookup.done.is_set():
                self._wait_ready(
                    [self._wake_r], [], deadline, f"resolving the host name {self.host}"
                )
        finally:
            lookup.leave(self._wake_w)
        return lookup.result()

    def _preamble(self, sock: socket.socket, deadline: float) -> None:
        """TLS handshake, then the SASL exchange, before proton sees any byte."""
        tls = self._tls
        if tls is not None:
            while not tls.do_handshake():
                self._send_blocking(sock, tls.outgoing(), deadline, "the TLS handshake")
                data = self._recv_blocking(sock, deadline, "the TLS handshake")
                if not data:
                    raise JMSException(
                        f"{tls.where} closed the connection during the TLS handshake "
                        "(is it a TLS port?)"
                    )
                tls.feed(data)
            self._send_blocking(sock, tls.outgoing(), deadline, "the TLS handshake")
        sasl = self._sasl
        if sasl is None:
            return
        self._send_plain(sock, sasl.start(), deadline)
        while not sasl.done:
            data = self._recv_plain(sock, deadline)
            out = sasl.feed(data)
            if out:
                self._send_plain(sock, out, deadline)
        self._plain_in += sasl.leftover

    def _send_plain(self, sock: socket.socket, data: bytes, deadline: float) -> None:
        if self._tls is not None:
            self._tls.write(data)
            data = self._tls.outgoing()
        self._send_blocking(sock, data, deadline, "SASL authentication")

    def _recv_plain(self, sock: socket.socket, deadline: float) -> bytes:
        while True:
            data = self._recv_blocking(sock, deadline, "SASL authentication")
            if not data:
                hint = "" if self._tls is not None else " (a TLS port? then use amqps://)"
                raise JMSException(
                    f"{self.host}:{self.port} closed the connection during SASL "
                    f"authentication{hint}"
                )
            if self._tls is None:
                return data
            self._tls.feed(data)
            # TLS 1.3: a refused client certificate shows up here, as an alert on read.
            plain = self._tls.read()
            if plain:
                return plain
            if self._tls.closed_by_peer:
                raise JMSException(
                    f"{self.host}:{self.port} closed the TLS session during SASL authentication"
                )

    def _wait(self, sock: socket.socket, deadline: float, what: str, write: bool) -> None:
        hint = ""
        if self._tls is None and self._sasl is not None and not self._sasl.offered:
            hint = "; no answer to the AMQP header: if it is a TLS port, use amqps://"
        self._wait_ready(
            [self._wake_r] if write else [self._wake_r, sock],
            [sock] if write else [],
            deadline,
            f"{what} with {self.host}:{self.port}",
            hint,
        )

    def _wait_ready(
        self,
        readers: list[socket.socket],
        writers: list[socket.socket],
        deadline: float,
        what: str,
        hint: str = "",
    ) -> set[socket.socket]:
        """One wait in select for ``readers`` (which include ``_wake_r``) or ``writers``; the
        sockets ready (``_wake_r`` left out). Raises EngineStopped once stop() was called, and
        the JMSException of jms.connectTimeout once ``deadline`` passed."""
        remaining = deadline - time.monotonic()
        if self._stop_requested:
            raise EngineStopped("connection closed")
        if remaining <= 0:
            raise JMSException(
                f"{what} did not complete within "
                f"{self._connect_timeout_s * 1000:.0f} ms (jms.connectTimeout){hint}"
            )
        # The wake-up socket is watched so stop() ends the wait; its bytes are drained here, or
        # the byte written for the queued open would make every select return at once (a
        # busy loop). The queued work itself runs when the main loop starts.
        readable, writable, _ = select.select(readers, writers, [], remaining)
        ready = set(readable) | set(writable)
        if self._wake_r in ready:
            ready.discard(self._wake_r)
            try:
                while self._wake_r.recv(4096):
                    pass
            except (BlockingIOError, InterruptedError):
                pass
        return ready

    def _send_blocking(self, sock: socket.socket, data: bytes, deadline: float, what: str) -> None:
        view = memoryview(data)
        while view:
            try:
                sent = sock.send(view)
            except (BlockingIOError, InterruptedError):
                self._wait(sock, deadline, what, write=True)
                continue
            view = view[sent:]

    def _recv_blocking(self, sock: socket.socket, deadline: float, what: str) -> bytes:
        while True:
            try:
                return sock.recv(READ_CHUNK)
            except (BlockingIOError, InterruptedError):
                self._wait(sock, deadline, what, write=False)
