"""TLS for ``amqps://`` with Python's ``ssl`` module, outside proton.

proton runs in plain mode; the engine moves bytes between the socket and proton's transport
through a :class:`TlsLayer` (an ``ssl.SSLObject`` over two ``ssl.MemoryBIO``). Doing TLS here
rather than in proton's own SSL layer means the frames proton writes can be amended on their
way out (``attach_amender``) exactly as on a plain connection, IP-address SANs are checked
the way Python checks them, and the system CA store is the default trust.

:func:`client_context` builds the ``ssl.SSLContext`` from the connection options (Qpid JMS
names where they exist):

* ``transport.trustStoreLocation``: PEM CA bundle; without it the system CAs are trusted.
* ``transport.keyStoreLocation``: the client certificate and key, either one PEM file holding
  the key and the certificate chain, or a PKCS#12 file (``.p12``/``.pfx``, or
  ``transport.keyStoreType=PKCS12``); ``transport.keyStorePassword`` unlocks it.
* ``transport.certificateLocation`` + ``transport.keyLocation``: the same as two PEM files.
* ``transport.verifyHost`` (default true): check the certificate names the host (DNS or IP SAN).
* ``transport.trustAll`` (default false): accept any certificate (tests only).
* ``transport.enabledProtocols`` / ``disabledProtocols`` / ``enabledCipherSuites`` /
  ``disabledCipherSuites``: the versions (TLSv1.2 and TLSv1.3 by default, nothing older) and
  cipher suites offered, resolved in :mod:`.tls_policy`.

Every failure is a :class:`~jmspy.errors.JMSException` (a :class:`JMSSecurityException` when
the peer's certificate or ours is refused) whose text names the host and the reason.
"""

from __future__ import annotations

import logging
import os
import ssl
import tempfile
from collections.abc import Callable

from ..errors import JMSException, JMSSecurityException
from ..options import ConnectionOptions

_READ_SIZE = 64 * 1024

log = logging.getLogger("jmspy.tls")


def client_context(options: ConnectionOptions) -> ssl.SSLContext:
    """The client SSLContext for these options (raises JMSException naming a bad option)."""
    trust = options.trust_store_location
    if trust is not None:
        _check_readable(trust, "transport.trustStoreLocation")
    try:
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=trust)
    except (ssl.SSLError, OSError, ValueError) as exc:
        raise JMSException(
            f"transport.trustStoreLocation={trust!r} is not a PEM CA bundle: {_reason(exc)}",
            linked=exc,
        ) from None
    # TLSv1.2 and TLSv1.3 unless transport.enabledProtocols / disabledProtocols /
    # enabledCipherSuites / disabledCipherSuites narrow them (tls_policy.py, rule SEC-6).
    options.tls_policy().apply(context)
    if options.trust_all:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif not options.verify_host:
        context.check_hostname = False
    _load_client_certificate(context, options)
    return context


def _load_client_certificate(context: ssl.SSLContext, options: ConnectionOptions) -> None:
    password = options.key_store_password.get_secret_value() if options.key_store_password else None
    cert, key = options.certificate_location, options.key_location
    if (cert is None) != (key is None):
        raise JMSException(
            "transport.certificateLocation and transport.keyLocation must be given together "
            f"(got certificateLocation={cert!r}, keyLocation={key!r})"
        )
    if cert is not None and key is not None:
        if options.key_store_location is not None:
            raise JMSException(
                "give the client certificate either as transport.keyStoreLocation or as "
                "transport.certificateLocation + transport.keyLocation, not both"
            )
        _check_readable(cert, "transport.certificateLocation")
        _check_readable(key, "transport.keyLocation")
        _load_pem(context, cert, key, password, "transport.certificateLocation")
        return
    store = options.key_store_location
    if store is None:
        return
    _check_readable(store, "transport.keyStoreLocation")
    kind = (options.key_store_type or "").upper()
    if not kind:
        kind = "PKCS12" if store.lower().endswith((".p12", ".pfx")) else "PEM"
    if kind == "PEM":
        _load_pem(context, store, None, password, "transport.keyStoreLocation")
    elif kind == "PKCS12":
        _load_pkcs12(context, store, password)
    else:
        raise JMSException(
            f"transport.keyStoreType={options.key_store_type!r} is not supported: "
            "use PEM or PKCS12 (convert a JKS store with keytool -importkeystore)"
        )


def _load_pem(
    context: ssl.SSLContext, cert: str, key: str | None, password: str | None, option: str
) -> None:
    # Without a password OpenSSL would ask for one on the controlling terminal and wait there
    # (a service started from a shell hangs in its connect); an empty one makes an encrypted
    # key fail at once, with the error below.
    secret: str | Callable[[], str] = password if password is not None else _no_password
    try:
        context.load_cert_chain(cert, key, secret)
    except (ssl.SSLError, OSError, ValueError) as exc:
        where = f"{option}={cert!r}" + (f" / transport.keyLocation={key!r}" if key else "")
        raise JMSException(
            f"could not load the client certificate from {where}: {_reason(exc)} "
            "(a PEM file with the certificate chain and its private key is expected; "
            "a wrong transport.keyStorePassword gives this error too)",
            linked=exc,
        ) from None


def _no_password() -> str:
    return ""


def _load_pkcs12(context: ssl.SSLContext, path: str, password: str | None) -> None:
    # ssl loads PEM files only: decode the PKCS#12 store with `cryptography` and hand the
    # PEM to ssl through a private temporary file that is removed at once.
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.serialization import pkcs12
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise JMSException(
            f"transport.keyStoreLocation={path!r} is PKCS12, which needs the 'cryptography' "
            "package; install it or use a PEM key store",
            linked=exc,
        ) from None
    try:
        with open(path, "rb") as handle:
            key, cert, extra = pkcs12.load_key_and_certificates(
                handle.read(), password.encode() if password is not None else None
            )
    except (ValueError, TypeError) as exc:
        raise JMSException(
            f"could not read the PKCS12 key store transport.keyStoreLocation={path!r}: {exc} "
            "(is transport.keyStorePassword right?)",
            linked=exc,
        ) from None
    if key is None or cert is None:
        raise JMSException(
            f"the PKCS12 key store transport.keyStoreLocation={path!r} holds no private key "
            "with a certificate"
        )
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ) + b"".join(c.public_bytes(serialization.Encoding.PEM) for c in [cert, *extra])
    fd, tmp = tempfile.mkstemp(prefix="jmspy-key-", suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(pem)
        _load_pem(context, tmp, None, None, "transport.keyStoreLocation")
    finally:
        os.unlink(tmp)


def _check_readable(path: str, option: str) -> None:
    if not os.path.isfile(path):
        raise JMSException(f"{option}={path!r}: no such file")
    if not os.access(path, os.R_OK):
        raise JMSException(f"{option}={path!r}: the file is not readable")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLError) and exc.reason:
        return str(exc.reason)
    return str(exc)


def _offered(context: ssl.SSLContext | None) -> str:
    """The versions a client context offers, e.g. "TLSv1.2-TLSv1.3"."""
    if context is None:
        return "?"
    low, high = (
        v.name.replace("_", ".") for v in (context.minimum_version, context.maximum_version)
    )
    return low if low == high else f"{low}-{high}"


# Alerts and errors that mean the two sides have no protocol version, or no cipher suite, in
# common (the server's alert, or the client's own finding).
_NO_COMMON_VERSION = ("PROTOCOL_VERSION", "UNSUPPORTED_PROTOCOL", "NO_PROTOCOLS_AVAILABLE")
_NO_COMMON_SUITE = ("NO_SHARED_CIPHER", "NO_CIPHERS_AVAILABLE", "NO_SUITABLE")


def handshake_error(
    exc: BaseException,
    where: str,
    server_hostname: str,
    context: ssl.SSLContext | None = None,
) -> JMSException:
    """Map an ssl error of the handshake (or of the first reads, TLS 1.3) to a JMS error."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        detail = exc.verify_message or _reason(exc)
        if "mismatch" in detail.lower():
            return JMSSecurityException(
                f"TLS to {where}: the server certificate does not name {server_hostname!r} "
                f"({detail}); connect with a name the certificate lists, or set "
                "transport.verifyHost=false",
                "TLS_HOSTNAME_MISMATCH",
                linked=exc,
            )
        return JMSSecurityException(
            f"TLS to {where}: server certificate verification failed: {detail} (trusted CAs: "
            "transport.trustStoreLocation, or the system store when it is not set)",
            "TLS_VERIFY_FAILED",
            linked=exc,
        )
    if isinstance(exc, ssl.SSLError):
        reason = _reason(exc)
        if any(marker in reason.upper() for marker in _NO_COMMON_VERSION):
            return JMSSecurityException(
                f"TLS to {where}: no protocol version both sides accept: {reason} (this "
                f"client offers {_offered(context)}: transport.enabledProtocols / "
                "transport.disabledProtocols)",
                "TLS_REFUSED",
                linked=exc,
            )
        if any(marker in reason.upper() for marker in _NO_COMMON_SUITE):
            return JMSSecurityException(
                f"TLS to {where}: no cipher suite both sides accept: {reason} "
                "(transport.enabledCipherSuites / transport.disabledCipherSuites)",
                "TLS_REFUSED",
                linked=exc,
            )
        if "CERTIFICATE" in reason.upper() or "ALERT" in reason.upper():
            # An alert from the server, e.g. it requires a client certificate we did not send
            # or does not trust the one we did (TLS 1.3 reports it on the first read).
            return JMSSecurityException(
                f"TLS to {where}: the server refused the handshake: {reason} (does it "
                "require a client certificate, transport.keyStoreLocation, or not trust the "
                "one given?)",
                "TLS_REFUSED",
                linked=exc,
            )
        return JMSException(f"TLS to {where} failed: {reason}", "TLS_ERROR", linked=exc)
    return JMSException(f"TLS to {where} failed: {exc}", "TLS_ERROR", linked=exc)


class TlsLayer:
    """TLS over memory buffers: ciphertext in and out for the socket, plaintext for proton."""

    def __init__(self, context: ssl.SSLContext, server_hostname: str, where: str) -> None:
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        # server_hostname sets SNI and the name checked; an IP literal is checked against
        # the certificate's IP-address SANs (and not sent as SNI).
        self._obj = context.wrap_bio(
            self._incoming, self._outgoing, server_hostname=server_hostname
        )
        self.server_hostname = server_hostname
        self.where = where
        self._context = context
        self.handshake_done = False
        self.closed_by_peer = False

    def do_handshake(self) -> bool:
        """Advance the handshake; True once it is complete."""
        try:
            self._obj.do_handshake()
        except ssl.SSLWantReadError:
            return False
        except (ssl.SSLError, OSError) as exc:
            raise handshake_error(exc, self.where, self.server_hostname, self._context) from None
        self.handshake_done = True
        negotiated = self._obj.cipher()
        log.debug(
            "TLS to %s: %s, %s",
            self.where,
            self._obj.version(),
            negotiated[0] if negotiated else "?",
        )
        return True

    def feed(self, ciphertext: bytes) -> None:
        """Bytes read from the socket."""
        self._incoming.write(ciphertext)

    def feed_eof(self) -> None:
        self._incoming.write_eof()

    def read(self) -> bytes:
        """All plaintext that the ciphertext fed so far decrypts to (b"" when none yet)."""
        chunks = []
        while True:
            try:
                chunk = self._obj.read(_READ_SIZE)
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:
                self.closed_by_peer = True
                break
            except ssl.SSLEOFError:
                # The peer closed TCP without close_notify; treat it as the end of the stream.
                self.closed_by_peer = True
                break
            except (ssl.SSLError, OSError) as exc:
                raise handshake_error(
                    exc, self.where, self.server_hostname, self._context
                ) from None
            if not chunk:
                self.closed_by_peer = True
                break
            chunks.append(chunk)
        return b"".join(chunks)

    def write(self, plaintext: bytes | bytearray | memoryview) -> None:
        """Encrypt plaintext; the records are then in :meth:`outgoing`."""
        view = memoryview(plaintext)
        while view:
            try:
                sent = self._obj.write(view)
            except (ssl.SSLError, OSError) as exc:
                raise handshake_error(
                    exc, self.where, self.server_hostname, self._context
                ) from None
            view = view[sent:]

    def outgoing(self) -> bytes:
        """Ciphertext to write to the socket."""
        return self._outgoing.read() if self._outgoing.pending else b""

    def close_notify(self) -> bytes:
        """Start the TLS shutdown; returns the close_notify record to send."""
        try:
            self._obj.unwrap()
        except (ssl.SSLWantReadError, ssl.SSLError, OSError, ValueError):
            # We do not wait for the peer's close_notify: the socket is closed next.
            pass
        return self.outgoing()
