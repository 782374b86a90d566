"""Throwaway TLS material for test brokers: a CA, a server and a client certificate.

Generated with the ``cryptography`` package at test time (never committed): the server
certificate names ``DNS:localhost`` and ``IP:127.0.0.1``; the client certificate has the
subject ``CN=jmspy-client,O=jmspy`` (what a certificate login module matches on). A second,
unrelated CA signs nothing the broker trusts, for verification-failure checks.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

CLIENT_DN = "CN=jmspy-client,O=jmspy"
KEY_PASSWORD = "changeit"


@dataclass(frozen=True)
class TlsMaterial:
    """Paths of the generated PEM (and PKCS#12) files."""

    directory: Path
    ca: Path  # the CA certificate (trust store for both sides)
    other_ca: Path  # a CA nobody's certificate is signed by
    server_keystore: Path  # key + certificate chain in one PEM (Artemis keyStoreType=PEM)
    server_cert: Path
    server_key: Path
    client_keystore: Path  # key + certificate chain in one PEM
    client_cert: Path
    client_key: Path
    client_p12: Path  # PKCS#12, password KEY_PASSWORD
    localhost_only_keystore: Path  # server cert naming only DNS:localhost (no IP SAN)


def generate(directory: str | Path) -> TlsMaterial:
    """Write a fresh CA, server and client certificate into ``directory``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.hazmat.primitives.serialization import pkcs12
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)

    def name(cn: str) -> x509.Name:
        return x509.Name(
            [
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, "jmspy"),
                x509.NameAttribute(NameOID.COMMON_NAME, cn),
            ]
        )

    def key() -> rsa.RSAPrivateKey:
        # RSA rather than EC: every Java PEM key store reads PKCS#8 RSA keys.
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def build(
        subject: str,
        subject_key: rsa.RSAPrivateKey,
        issuer: x509.Name | None,
        issuer_key: rsa.RSAPrivateKey,
        *,
        ca: bool = False,
        usage: x509.ObjectIdentifier | None = None,
        sans: list[x509.GeneralName] | None = None,
    ) -> x509.Certificate:
        builder = (
            x509.CertificateBuilder()
            .subject_name(name(subject))
            .issuer_name(issuer or name(subject))
            .public_key(subject_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if ca:
            builder = builder.add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
        if usage is not None:
            builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return builder.sign(issuer_key, hashes.SHA256())

    def pem_cert(cert: x509.Certificate) -> bytes:
        return cert.public_bytes(serialization.Encoding.PEM)

    def pem_key(k: rsa.RSAPrivateKey) -> bytes:
        return k.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    ca_key, other_key = key(), key()
    ca_cert = build("jmspy test CA", ca_key, None, ca_key, ca=True)
    other_cert = build("jmspy unrelated CA", other_key, None, other_key, ca=True)
    server_key, client_key, lonely_key = key(), key(), key()
    server_cert = build(
        "localhost",
        server_key,
        ca_cert.subject,
        ca_key,
        usage=ExtendedKeyUsageOID.SERVER_AUTH,
        sans=[x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))],
    )
    lonely_cert = build(
        "localhost",
        lonely_key,
        ca_cert.subject,
        ca_key,
        usage=ExtendedKeyUsageOID.SERVER_AUTH,
        sans=[x509.DNSName("localhost")],
    )
    client_cert = build(
        "jmspy-client", client_key, ca_cert.subject, ca_key, usage=ExtendedKeyUsageOID.CLIENT_AUTH
    )

    files = {
        "ca.pem": pem_cert(ca_cert),
        "other-ca.pem": pem_cert(other_cert),
        "server.pem": pem_cert(server_cert),
        "server.key": pem_key(server_key),
        "server-keystore.pem": pem_key(server_key) + pem_cert(server_cert) + pem_cert(ca_cert),
        "localhost-only-keystore.pem": pem_key(lonely_key)
        + pem_cert(lonely_cert)
        + pem_cert(ca_cert),
        "client.pem": pem_cert(client_cert),
        "client.key": pem_key(client_key),
        "client-keystore.pem": pem_key(client_key) + pem_cert(client_cert) + pem_cert(ca_cert),
        "client.p12": pkcs12.serialize_key_and_certificates(
            b"jmspy-client",
            client_key,
            client_cert,
            [ca_cert],
            serialization.BestAvailableEncryption(KEY_PASSWORD.encode()),
        ),
    }
    for filename, content in files.items():
        path = out / filename
        path.write_bytes(content)
        path.chmod(0o600)
    return TlsMaterial(
        directory=out,
        ca=out / "ca.pem",
        other_ca=out / "other-ca.pem",
        server_keystore=out / "server-keystore.pem",
        server_cert=out / "server.pem",
        server_key=out / "server.key",
        client_keystore=out / "client-keystore.pem",
        client_cert=out / "client.pem",
        client_key=out / "client.key",
        client_p12=out / "client.p12",
        localhost_only_keystore=out / "localhost-only-keystore.pem",
    )
