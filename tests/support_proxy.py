"""A minimal TCP proxy for tests that need a broker to stall: the TCP connection stays open
but nothing flows any more in either direction.

``StallingProxy(host, port)`` listens on a free local port and forwards every accepted
connection to ``host:port``. ``stall()`` stops forwarding: bytes are still read from both
sides (so neither side's writes block) but held back, as if the network or the broker hung
with its sockets open. ``resume()`` forwards what was held, in order, and carries on, so the
client sees late replies. ``client_closed`` is set when a client closes its end (seen even
while stalled). ``close()`` ends everything.
"""

from __future__ import annotations

import selectors
import socket
import threading


class StallingProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.setblocking(False)
        self.port = self._listener.getsockname()[1]
        self._stalled = threading.Event()
        self._closed = threading.Event()
        self._sockets: list[socket.socket] = []
        self._clients: set[socket.socket] = set()
        #: Set when a client closes its TCP connection (EOF or reset), stalled or not.
        self.client_closed = threading.Event()
        self._held: list[tuple[socket.socket, bytes]] = []
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ, None)
        self._wake_r, self._wake_w = socket.socketpair()
        self._selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._thread = threading.Thread(target=self._run, name="stalling-proxy", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"amqp://127.0.0.1:{self.port}"

    def stall(self) -> None:
        """From now on every byte is read and dropped, in both directions."""
        self._stalled.set()

    def resume(self) -> None:
        """Forward what the stall held back, then keep forwarding (from the proxy thread)."""
        self._stalled.clear()
        try:
            self._wake_w.send(b"r")
        except OSError:
            pass

    def close(self) -> None:
        self._closed.set()
        try:
            self._wake_w.send(b"\0")
        except OSError:
            pass
        self._thread.join(5)
        for sock in [self._listener, self._wake_r, self._wake_w, *self._sockets]:
            try:
                sock.close()
            except OSError:
                pass

    def __enter__(self) -> StallingProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self) -> None:
        while not self._closed.is_set():
            for key, _ in self._selector.select(0.5):
                if key.data == "wake":
                    if self._closed.is_set():
                        return
                    self._wake_r.recv(64)
                    self._flush_held()
                    continue
                if key.data is None:
                    self._accept()
                    continue
                self._pump(key.fileobj, key.data)  # type: ignore[arg-type]

    def _accept(self) -> None:
        try:
            client, _ = self._listener.accept()
        except BlockingIOError:
            return
        upstream = socket.create_connection(self.target, timeout=10)
        for sock in (client, upstream):
            sock.setblocking(False)
            self._sockets.append(sock)
        self._clients.add(client)
        self._selector.register(client, selectors.EVENT_READ, upstream)
        self._selector.register(upstream, selectors.EVENT_READ, client)

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            data = source.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            if source in self._clients:
                self.client_closed.set()
            for sock in (source, sink):
                try:
                    self._selector.unregister(sock)
                except (KeyError, ValueError):
                    pass
                sock.close()
            return
        if self._stalled.is_set():
            self._held.append((sink, data))  # the stall: read, but not passed on
            return
        self._flush_held()
        self._send(sink, data)

    def _flush_held(self) -> None:
        if self._stalled.is_set():
            return
        held, self._held = self._held, []
        for sink, data in held:
            self._send(sink, data)

    @staticmethod
    def _send(sink: socket.socket, data: bytes) -> None:
        try:
            sink.setblocking(True)
            sink.sendall(data)
        except OSError:
            pass
        finally:
            try:
                sink.setblocking(False)
            except OSError:
                pass
