"""A TLS-terminating relay in front of a ScriptedPeer, for wire tests of ``amqps://``.

The client talks TLS to the relay; the relay decrypts and forwards the bytes to the peer's
plain port (and back), so the peer records exactly the frames the client encrypted. The relay
also records what only the TLS side can see: handshake failures, the client certificate's
subject, and whether the client sent close_notify.
"""

from __future__ import annotations

import select
import socket
import ssl
import threading
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class TlsSession:
    """What the relay saw of one client connection."""

    handshake_error: str | None = None
    client_subject: str | None = None
    version: str | None = None  # the negotiated protocol, e.g. "TLSv1.3"
    cipher: str | None = None  # the negotiated suite, OpenSSL's name
    close_notify: bool = False
    ended: threading.Event = field(default_factory=threading.Event)


class TlsRelay:
    def __init__(
        self,
        target_port: int,
        keystore: Path,
        *,
        client_ca: Path | None = None,
        plain: bool = False,
        max_version: ssl.TLSVersion | None = None,
    ) -> None:
        """``client_ca`` set: client certificates are required and checked against it.
        ``plain``: accept TCP and never answer (a server that does not speak TLS).
        ``max_version``: the newest protocol the relay accepts (an older server)."""
        self._target = ("127.0.0.1", target_port)
        self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._context.load_cert_chain(str(keystore))
        if max_version is not None:
            self._context.maximum_version = max_version
        if client_ca is not None:
            self._context.verify_mode = ssl.CERT_REQUIRED
            self._context.load_verify_locations(str(client_ca))
        self._plain = plain
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.sessions: list[TlsSession] = []
        self._closed = threading.Event()
        self._held: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._accept_thread = threading.Thread(target=self._accept, daemon=True)
        self._accept_thread.start()

    def close(self) -> None:
        self._closed.set()
        try:  # wakes the accept() call; close() alone does not on Linux
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        for s in self._held:
            s.close()
        for t in [self._accept_thread, *self._threads]:
            t.join(5.0)

    def __enter__(self) -> TlsRelay:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            if self._plain:
                self._held.append(conn)
                continue
            session = TlsSession()
            self.sessions.append(session)
            thread = threading.Thread(target=self._serve, args=(conn, session), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket, session: TlsSession) -> None:
        conn.settimeout(10.0)
        try:
            try:
                # Without ragged-EOF suppression a clean b"" means close_notify arrived and
                # a bare TCP close raises SSLEOFError.
                tls = self._context.wrap_socket(conn, server_side=True, suppress_ragged_eofs=False)
            except (ssl.SSLError, OSError) as exc:
                session.handshake_error = str(exc)
                conn.close()
                return
            session.version = tls.version()
            negotiated = tls.cipher()
            session.cipher = negotiated[0] if negotiated else None
            cert = tls.getpeercert()
            if cert:
                session.client_subject = ",".join(
                    f"{k}={v}" for rdn in cert.get("subject", ()) for k, v in rdn
                )
            with tls, socket.create_connection(self._target, timeout=10.0) as upstream:
                self._relay(tls, upstream, session)
        finally:
            session.ended.set()

    def _relay(self, tls: ssl.SSLSocket, upstream: socket.socket, session: TlsSession) -> None:
        while not self._closed.is_set():
            if tls.pending():
                readable = [tls]
            else:
                readable, _, _ = select.select([tls, upstream], [], [], 0.5)
            if tls in readable:
                try:
                    data = tls.recv(65536)
                except ssl.SSLZeroReturnError:
                    session.close_notify = True
                    return
                except ssl.SSLWantReadError:
                    continue
                except (ssl.SSLError, OSError):
                    return
                if not data:
                    session.close_notify = True
                    return
                upstream.sendall(data)
            if upstream in readable:
                data = upstream.recv(65536)
                if not data:
                    # The peer hung up (e.g. after its close frame); keep reading the client
                    # to see whether it ends the TLS session with close_notify.
                    self._drain_client(tls, session)
                    return
                tls.sendall(data)

    @staticmethod
    def _drain_client(tls: ssl.SSLSocket, session: TlsSession) -> None:
        tls.settimeout(10.0)
        while True:
            try:
                if not tls.recv(65536):
                    session.close_notify = True
                    return
            except ssl.SSLZeroReturnError:
                session.close_notify = True
                return
            except (ssl.SSLError, OSError):
                return
