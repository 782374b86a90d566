"""The client side of the AMQP SASL layer (AMQP 1.0 section 5.3), done by jmspy, not proton.

proton's SASL depends on how it was built: with Cyrus it offers what the host's SASL plugins
offer (SCRAM only with ``libsasl2-modules``), and it cannot do EXTERNAL over TLS that proton
did not do itself, because Cyrus needs proton's TLS to tell it the client's identity; without
Cyrus it has PLAIN, ANONYMOUS and EXTERNAL only. Its errors also do not say what the server
offered. So the engine runs the SASL exchange itself, on the (TLS-decrypted) byte stream, and
hands the stream to a proton transport without a SASL layer once the outcome is ``ok``.

Mechanisms: SCRAM-SHA-512, SCRAM-SHA-256, SCRAM-SHA-1 (RFC 5802/7677), EXTERNAL (the TLS
client certificate), PLAIN and ANONYMOUS. ``amqp.saslMechanisms`` (comma or space separated)
restricts the choice; without it the strongest mechanism that both sides support and that the
configured credentials allow is used, in the order of :data:`PREFERENCE` (as Qpid JMS does).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import secrets
import struct
from collections.abc import Callable
from typing import Any

from proton import Data, Described

from ..errors import JMSException, JMSSecurityException
from .redact import peer_text

log = logging.getLogger("jmspy.sasl")
_frame_log = logging.getLogger("jmspy.frames")

SASL_HEADER = b"AMQP\x03\x01\x00\x00"
AMQP_HEADER = b"AMQP\x00\x01\x00\x00"
_MECHANISMS, _INIT, _CHALLENGE, _RESPONSE, _OUTCOME = 0x40, 0x41, 0x42, 0x43, 0x44
_SYMBOLIC = {
    "amqp:sasl-mechanisms:list": _MECHANISMS,
    "amqp:sasl-challenge:list": _CHALLENGE,
    "amqp:sasl-outcome:list": _OUTCOME,
}
_OUTCOMES = {0: "ok", 1: "auth", 2: "sys", 3: "sys-perm", 4: "sys-temp"}
_SCRAM = {"SCRAM-SHA-512": "sha512", "SCRAM-SHA-256": "sha256", "SCRAM-SHA-1": "sha1"}

# Strongest first. EXTERNAL is only applicable with a client certificate, the password
# mechanisms only with a user name and password, ANONYMOUS only without a user name (sending
# no credentials when some were configured would hide a configuration mistake).
PREFERENCE = ("SCRAM-SHA-512", "SCRAM-SHA-256", "EXTERNAL", "SCRAM-SHA-1", "PLAIN", "ANONYMOUS")
SUPPORTED = frozenset(PREFERENCE)

# A SASL frame is buffered whole before it is read, so its announced size is bounded (the
# size field alone could make the client hold up to 4 GiB). AMQP allows 512 bytes before open
# (section 2.7.1); the bound leaves room for servers that send larger challenges.
MAX_SASL_FRAME = 64 * 1024


def parse_mechanisms(value: str | None) -> tuple[str, ...] | None:
    """``amqp.saslMechanisms`` as a tuple (None when not set); unknown names are an error."""
    if value is None or not value.strip():
        return None
    names = tuple(n.upper() for n in value.replace(",", " ").split())
    unknown = [n for n in names if n not in SUPPORTED]
    if unknown:
        raise JMSException(
            f"amqp.saslMechanisms={value!r}: unsupported mechanism(s) {', '.join(unknown)}; "
            f"supported: {', '.join(PREFERENCE)}"
        )
    return names


class SaslClient:
    """One SASL exchange: feed it the server's bytes, send what it returns."""

    def __init__(
        self,
        *,
        username: str | None,
        password: str | None,
        allowed: tuple[str, ...] | None,
        hostname: str | None,
        has_client_certificate: bool,
        where: str,
        trace: bool = False,
    ) -> None:
        self._trace = trace
        self._username = username
        self._password = password
        self._allowed = allowed
        self._hostname = hostname
        self._has_cert = has_client_certificate
        self._where = where
        self._buf = bytearray()
        self._header_seen = False
        self._step: Callable[[bytes | None], bytes | None] | None = None
        self._scram_final_verified = True
        self.offered: tuple[str, ...] = ()
        self.mechanism: str | None = None
        self.done = False
        #: Bytes that followed the outcome frame (the start of the AMQP stream).
        self.leftover = b""

    def start(self) -> bytes:
        """The bytes the client sends first."""
        return SASL_HEADER

    def feed(self, data: bytes) -> bytes:
        """Process bytes from the server; returns bytes to send (may be empty)."""
        self._buf += data
        out = bytearray()
        while not self.done:
            if not self._header_seen:
                if len(self._buf) < 8:
                    break
                header = bytes(self._buf[:8])
                del self._buf[:8]
                if header != SASL_HEADER:
                    raise self._header_error(header)
                self._header_seen = True
                continue
            if len(self._buf) < 8:
                break
            size, doff, frame_type = struct.unpack(">IBB", self._buf[:6])
            if size < 8 or doff < 2 or frame_type != 1:
                raise JMSException(
                    f"SASL with {self._where}: malformed frame (size {size}, type {frame_type})"
                )
            if size > MAX_SASL_FRAME:
                raise JMSSecurityException(
                    f"SASL with {self._where}: the server announced a frame of {size} bytes, "
                    f"more than the {MAX_SASL_FRAME} a SASL frame may have",
                    "amqp:sasl:frame-too-large",
                )
            if len(self._buf) < size:
                break
            body = bytes(self._buf[doff * 4 : size])
            del self._buf[:size]
            if not body:
                continue  # an empty frame carries nothing
            code, fields = _decode(body)
            out += self._on_frame(code, fields)
        if self.done:
            self.leftover = bytes(self._buf)
            self._buf.clear()
        return bytes(out)

    # ---- frames -----------------------------------------------------------------------

    def _trace_frame(self, direction: str, text: str) -> None:
        """amqp.traceFrames: the SASL frames in the frame log, payloads never shown (they
        carry the credentials)."""
        if self._trace:
            _frame_log.debug("%s %s %s", self._where, direction, text)

    def _on_frame(self, code: int, fields: list[Any]) -> bytes:
        if self._trace:
            names = {_MECHANISMS: "sasl-mechanisms", _CHALLENGE: "sasl-challenge"}
            names[_OUTCOME] = "sasl-outcome"
            if code == _MECHANISMS:
                shown = f"[sasl-server-mechanisms={list(_symbols(fields[0] if fields else None))}]"
            elif code == _OUTCOME:
                shown = f"[code={fields[0] if fields else None}]"
            else:
                shown = "[challenge=<redacted>]"
            self._trace_frame("<-", f"@{names.get(code, hex(code))}({code}) {shown}")
        self._check_order(code)
        if code == _MECHANISMS:
            # The names are the server's text, shown in logs and errors: escaped.
            self.offered = tuple(peer_text(m) for m in _symbols(fields[0] if fields else None))
            self.mechanism = self._choose()
            initial = self._begin(self.mechanism)
            log.debug(
                "SASL with %s: server offers %s, using %s",
                self._where,
                " ".join(self.offered),
                self.mechanism,
            )
            self._trace_frame(
                "->",
                f"@sasl-init({_INIT}) [mechanism=:{self.mechanism}, initial-response="
                f"<{len(initial or b'')} bytes redacted>, hostname={self._hostname!r}]",
            )
            return _encode(_INIT, [_Sym(self.mechanism), initial, self._hostname])
        if code == _CHALLENGE:
            challenge = _bytes(fields[0] if fields else b"")
            assert self._step is not None  # _check_order refused a challenge without a step
            response = self._step(challenge)
            self._trace_frame("->", f"@sasl-response({_RESPONSE}) [response=<redacted>]")
            return _encode(_RESPONSE, [response if response is not None else b""])
        if code == _OUTCOME:
            outcome = int(fields[0]) if fields else 2
            additional = _bytes(fields[1]) if len(fields) > 1 and fields[1] is not None else None
            self._on_outcome(outcome, additional)
            return b""
        raise JMSException(f"SASL with {self._where}: unexpected frame {code:#x}")

    def _check_order(self, code: int) -> None:
        """The server offers mechanisms once, before anything else (AMQP 1.0 section 5.3.2),
        and challenges only a mechanism that has further steps. An outcome before the client
        chose a mechanism would end the exchange with no authentication at all: a client
        restricted to SCRAM (which checks the server knows the password) would accept any
        server."""
        if code == _MECHANISMS:
            problem = "offered mechanisms a second time" if self.offered else ""
        elif self.mechanism is None:
            problem = "sent a SASL challenge or outcome before offering any mechanism"
        elif code == _CHALLENGE and self._step is None:
            problem = f"sent a challenge, which {self.mechanism} does not have"
        else:
            problem = ""
        if problem:
            raise JMSSecurityException(
                f"SASL with {self._where}: the server {problem}; no authentication took place",
                "amqp:sasl:protocol",
            )

    def _on_outcome(self, outcome: int, additional: bytes | None) -> None:
        name = _OUTCOMES.get(outcome, str(outcome))
        if outcome == 0:
            if additional and self._step is not None and not self._scram_final_verified:
                self._step(additional)
            if not self._scram_final_verified:
                raise JMSSecurityException(
                    f"SASL {self.mechanism} with {self._where}: the server reported success "
                    "without proving it knows the password (no SCRAM server signature)",
                    "amqp:sasl:auth",
                )
            self.done = True
            return
        who = f" as {self._username!r}" if self._username else ""
        hint = {
            "auth": "wrong user name or password, or the user may not use this mechanism",
            "sys": "the server could not authenticate (for EXTERNAL: no client certificate?)",
            "sys-perm": "permanent server-side failure",
            "sys-temp": "temporary server-side failure",
        }.get(name, "")
        cls = JMSException if name == "sys-temp" else JMSSecurityException
        raise cls(
            f"authentication failed for {self._where}{who}: SASL {self.mechanism} outcome "
            f"{name} ({hint})",
            f"amqp:sasl:{name}",
        )

    def _header_error(self, header: bytes) -> JMSException:
        if header == AMQP_HEADER:
            return JMSSecurityException(
                f"{self._where} does not accept SASL (it answered with the plain AMQP header)"
            )
        return JMSException(
            f"{self._where} did not answer with an AMQP SASL header (got {header!r}); "
            "is it an AMQP 1.0 port, and does amqps:// vs amqp:// match the port?"
        )

    # ---- mechanisms ---------------------------------------------------------------------

    def _applicable(self, mechanism: str) -> bool:
        if mechanism == "EXTERNAL":
            return self._has_cert
        if mechanism == "ANONYMOUS":
            return self._username is None
        return self._username is not None and self._password is not None

    def _choose(self) -> str:
        offered = set(self.offered)
        candidates = self._allowed if self._allowed is not None else PREFERENCE
        ranked = sorted(
            (m for m in candidates if m in offered and self._applicable(m)),
            key=PREFERENCE.index,
        )
        if ranked:
            return ranked[0]
        allowed = " ".join(candidates)
        usable = [m for m in candidates if self._applicable(m)]
        raise JMSSecurityException(
            f"no usable SASL mechanism for {self._where}: the server offers "
            f"[{' '.join(self.offered) or 'nothing'}], the client allows [{allowed}] "
            f"(amqp.saslMechanisms), and of those the configured credentials allow "
            f"[{' '.join(usable) or 'none'}]",
            "amqp:sasl:no-mechanism",
        )

    def _begin(self, mechanism: str) -> bytes | None:
        if mechanism == "ANONYMOUS":
            return b""
        if mechanism == "EXTERNAL":
            # The identity is the certificate; an authzid would be refused by Artemis.
            return b""
        user = (self._username or "").encode()
        password = (self._password or "").encode()
        if mechanism == "PLAIN":
            return b"\0" + user + b"\0" + password
        scram = _Scram(_SCRAM[mechanism], self._username or "", self._password or "")
        self._scram_final_verified = False

        def step(data: bytes | None) -> bytes | None:
            response = scram.step(data or b"")
            self._scram_final_verified = scram.verified
            return response

        self._step = step
        return scram.client_first()


class _Scram:
    """The SCRAM client (RFC 5802), without channel binding (gs2 header ``n,,``)."""

    def __init__(self, hash_name: str, username: str, password: str, nonce: str = "") -> None:
        self._hash = hash_name
        self._username = username.replace("=", "=3D").replace(",", "=2C")
        self._password = password.encode()
        self._nonce = nonce or base64.b64encode(secrets.token_bytes(24)).decode()
        self._client_first_bare = f"n={self._username},r={self._nonce}"
        self._server_signature: bytes | None = None
        self.verified = False

    def client_first(self) -> bytes:
        return ("n,," + self._client_first_bare).encode()

    def step(self, challenge: bytes) -> bytes | None:
        if self._server_signature is None:
            return self._client_final(challenge)
        self._verify(challenge)
        return b""

    def _client_final(self, server_first: bytes) -> bytes:
        attrs = _attributes(server_first)
        nonce, salt, iterations = attrs.get("r", ""), attrs.get("s"), attrs.get("i")
        if not nonce.startswith(self._nonce) or salt is None or iterations is None:
            raise JMSSecurityException(
                "SCRAM: the server's first message is invalid (nonce, salt or iteration count)",
                "amqp:sasl:auth",
            )
        salted = hashlib.pbkdf2_hmac(
            self._hash, self._password, base64.b64decode(salt), int(iterations)
        )
        client_key = self._hmac(salted, b"Client Key")
        stored_key = hashlib.new(self._hash, client_key).digest()
        without_proof = f"c={base64.b64encode(b'n,,').decode()},r={nonce}"
        auth_message = ",".join(
            (self._client_first_bare, server_first.decode(), without_proof)
        ).encode()
        signature = self._hmac(stored_key, auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        self._server_signature = self._hmac(self._hmac(salted, b"Server Key"), auth_message)
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def _verify(self, server_final: bytes) -> None:
        attrs = _attributes(server_final)
        if "e" in attrs:
            raise JMSSecurityException(f"SCRAM: the server refused: {attrs['e']}", "amqp:sasl:auth")
        expected = self._server_signature or b""
        if not hmac.compare_digest(base64.b64decode(attrs.get("v", "")), expected):
            raise JMSSecurityException(
                "SCRAM: the server's signature is wrong (it does not know the password)",
                "amqp:sasl:auth",
            )
        self.verified = True

    def _hmac(self, key: bytes, message: bytes) -> bytes:
        return hmac.new(key, message, self._hash).digest()


def _attributes(message: bytes) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for part in message.decode("utf-8", "replace").split(","):
        if len(part) >= 2 and part[1] == "=":
            attrs[part[0]] = part[2:]
    return attrs


# ---- frame codec (proton.Data does the AMQP type encoding) ---------------------------------


class _Sym(str):
    """A string to be encoded as an AMQP symbol."""


def _encode(code: int, fields: list[Any]) -> bytes:
    data = Data()
    data.put_described()
    data.enter()
    data.put_ulong(code)
    data.put_list()
    data.enter()
    for value in fields:
        if value is None:
            data.put_null()
        elif isinstance(value, _Sym):
            data.put_symbol(str(value))
        elif isinstance(value, bytes):
            data.put_binary(value)
        else:
            data.put_string(str(value))
    data.exit()
    data.exit()
    body = data.encode()
    return struct.pack(">IBBH", 8 + len(body), 2, 1, 0) + body


def _decode(body: bytes) -> tuple[int, list[Any]]:
    data = Data()
    data.decode(body)
    data.rewind()
    data.next()
    value = data.get_object()
    if not isinstance(value, Described):
        raise JMSException(f"malformed SASL frame body: {value!r}")
    descriptor: Any = value.descriptor
    code = _SYMBOLIC.get(str(descriptor), -1) if isinstance(descriptor, str) else int(descriptor)
    fields = value.value
    # Binary values are memoryviews over the Data's memory, reused once it is freed: copy now.
    return code, [_owned(f) for f in fields] if isinstance(fields, list | tuple) else []


def _owned(value: Any) -> Any:
    if isinstance(value, memoryview):
        return value.tobytes()
    if hasattr(value, "elements"):  # an Array of symbols (sasl-server-mechanisms)
        return tuple(str(v) for v in value.elements)
    return value


def _symbols(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (str(value),)
    elements = getattr(value, "elements", value)
    return tuple(str(v) for v in elements)


def _bytes(value: Any) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    return str(value).encode()


def open_hostname(vhost: str | None, host: str) -> str | None:
    """The hostname of the SASL init and the AMQP open: ``amqp.vhost`` when given, the URL's
    host when not, and none at all for an empty ``amqp.vhost`` (as Qpid JMS: some brokers
    pick the virtual host from it, and an empty option is how a user sends none)."""
    if vhost is None:
        return host
    return vhost or None


def client_for(options: Any, endpoint: Any) -> SaslClient:
    """The SASL client for a connection's options (``ConnectionOptions``, ``Endpoint``)."""
    password = options.password.get_secret_value() if options.password is not None else None
    has_cert = endpoint.tls and bool(options.key_store_location or options.certificate_location)
    return SaslClient(
        username=options.username,
        password=password,
        allowed=parse_mechanisms(options.sasl_mechanisms),
        hostname=open_hostname(options.vhost, endpoint.host),
        has_client_certificate=has_cert,
        where=endpoint.display(),
        trace=bool(getattr(options, "trace_frames", False)),
    )
