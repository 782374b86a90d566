"""The connect-time byte exchange of an engine: the TLS handshake, then the SASL exchange, with
blocking waits bounded by jms.connectTimeout, before proton sees any byte."""

from __future__ import annotations

import select
import socket
import time

from ..errors import JMSException
from .engine_errors import EngineStopped
from .sasl import SaslClient
from .tls import TlsLayer

# What one socket read asks for, here and in the engine's loop.
READ_CHUNK = 256 * 1024


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
        remaining = deadline - time.monotonic()
        if remaining <= 0 or self._stop_requested:
            if self._stop_requested:
                raise EngineStopped("connection closed")
            hint = ""
            if self._tls is None and self._sasl is not None and not self._sasl.offered:
                hint = "; no answer to the AMQP header: if it is a TLS port, use amqps://"
            raise JMSException(
                f"{what} with {self.host}:{self.port} did not complete within "
                f"{self._connect_timeout_s * 1000:.0f} ms (jms.connectTimeout){hint}"
            )
        # The wake-up socket is watched so stop() ends the wait; its bytes are drained here, or
        # the byte written for the queued open would make every select return at once (a
        # busy loop). The queued work itself runs when the main loop starts.
        readers = [self._wake_r] if write else [self._wake_r, sock]
        readable, _, _ = select.select(readers, [sock] if write else [], [], remaining)
        if self._wake_r in readable:
            try:
                while self._wake_r.recv(4096):
                    pass
            except (BlockingIOError, InterruptedError):
                pass

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
