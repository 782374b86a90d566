"""An encrypted PEM private key without transport.keyStorePassword fails at once.

With no password, OpenSSL's own callback asks for one on the process's controlling terminal
and waits: a service started from a shell would hang in its connect with a prompt nobody
sees. The child below has a terminal (a pseudo-terminal the test holds), so the old
behaviour shows as the prompt arriving there; the fixed one raises, naming the option."""

from __future__ import annotations

import os
import pty
import select
import signal
import time
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from jmspy.conformance.brokers.certs import generate

DEADLINE_S = 60.0


def _encrypted_key(tmp_path: Path) -> tuple[Path, Path]:
    material = generate(tmp_path)
    key = serialization.load_pem_private_key(material.client_key.read_bytes(), None)
    encrypted = tmp_path / "client-key-encrypted.pem"
    encrypted.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret-pass"),
        )
    )
    return material.client_cert, encrypted


def test_an_encrypted_key_without_its_password_raises_instead_of_prompting(
    tmp_path: Path,
) -> None:
    cert, key = _encrypted_key(tmp_path)
    pid, terminal = pty.fork()
    if pid == 0:  # the child: its controlling terminal is the pseudo-terminal
        code = 3
        try:
            import ssl

            from jmspy._amqp.tls import _load_pem

            try:
                _load_pem(
                    ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT),
                    str(cert),
                    str(key),
                    None,
                    "transport.certificateLocation",
                )
            except Exception as exc:  # noqa: BLE001 - reported to the parent
                os.write(1, f"RAISED {type(exc).__name__}: {exc}\n".encode())
                code = 0
        finally:
            os._exit(code)
    output = b""
    deadline = time.monotonic() + DEADLINE_S
    try:
        while b"RAISED" not in output and b"pass phrase" not in output.lower():
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no answer from the child within {DEADLINE_S} s: {output!r}"
            ready, _, _ = select.select([terminal], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(terminal, 4096)
                except OSError:  # the child ended and closed the terminal
                    break
                if not chunk:
                    break
                output += chunk
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        os.close(terminal)
    text = output.decode(errors="replace")
    assert "pass phrase" not in text.lower(), f"OpenSSL prompted on the terminal: {text!r}"
    assert "RAISED JMSException" in text, text
    assert "transport.keyStorePassword" in text, text
