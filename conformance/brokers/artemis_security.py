"""TLS acceptors and SASL login modules for a local :class:`~.artemis.ArtemisBroker`.

Each function registers a step that edits the instance after ``artemis create`` (before the
broker starts) and returns what a client needs to reach it:

* :func:`add_tls_acceptor`: an extra AMQP acceptor with ``sslEnabled=true`` and PEM key and
  trust stores (``keyStoreType=PEM``/``trustStoreType=PEM``, Artemis 2.32+), optionally with
  ``needClientAuth`` and its own ``saslMechanisms``.
* :func:`enable_scram`: SCRAM users (a ``amqp-sasl-scram`` JAAS scope the SASL layer uses,
  and ``SCRAMLoginModule`` in the broker's domain so the authenticated name gets its roles).
* :func:`enable_certificate_login`: the ``CertLogin`` domain (``TextFileCertificateLoginModule``)
  for EXTERNAL: a client certificate's subject DN maps to a user and its roles.

Mechanism names go to the acceptor as is: Artemis advertises the configured list in that order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from .artemis import ArtemisBroker
from .base import BrokerProvisioningError, free_port
from .certs import TlsMaterial

SCRAM_SCOPE = "amqp-sasl-scram"
CERT_DOMAIN = "CertLogin"
_JAAS = "org.apache.activemq.artemis.spi.core.security.jaas"


def add_acceptor(
    broker: ArtemisBroker, name: str, params: Mapping[str, str], port: int | None = None
) -> int:
    """Add an AMQP acceptor ``name`` with URI parameters; returns its port."""
    chosen = port or free_port(broker.host)
    query = ";".join(["protocols=AMQP", *(f"{k}={v}" for k, v in params.items())])
    uri = f"tcp://{broker.host}:{chosen}?{query}"

    def step(instance: Path) -> None:
        broker_xml = instance / "etc" / "broker.xml"
        text = broker_xml.read_text()
        element = f'<acceptor name="{name}">{_xml_escape(uri)}</acceptor>'
        new, count = re.subn(r"(\s*)</acceptors>", rf"\g<1>   {element}\g<1></acceptors>", text)
        if count != 1:
            raise BrokerProvisioningError(f"could not find </acceptors> in {broker_xml}")
        broker_xml.write_text(new)

    broker.add_setup(step)
    return chosen


def add_tls_acceptor(
    broker: ArtemisBroker,
    material: TlsMaterial,
    *,
    name: str = "tls",
    need_client_auth: bool = False,
    sasl_mechanisms: Sequence[str] | None = None,
    keystore: Path | None = None,
    port: int | None = None,
) -> int:
    """A TLS acceptor using ``material``'s server key store and CA; returns its port."""
    params = {
        "sslEnabled": "true",
        "keyStorePath": str(keystore or material.server_keystore),
        "keyStoreType": "PEM",
        # The PEM key store has no password, but Artemis' key manager wants a non-null one.
        "keyStorePassword": "unused",
        "trustStorePath": str(material.ca),
        "trustStoreType": "PEM",
    }
    if need_client_auth:
        params["needClientAuth"] = "true"
    if sasl_mechanisms:
        params["saslMechanisms"] = ",".join(sasl_mechanisms)
        if any(m.startswith("SCRAM-") for m in sasl_mechanisms):
            params["saslLoginConfigScope"] = SCRAM_SCOPE
    return add_acceptor(broker, name, params, port)


def add_sasl_acceptor(
    broker: ArtemisBroker, mechanisms: Sequence[str], *, name: str = "sasl", port: int | None = None
) -> int:
    """A plain (non-TLS) acceptor offering exactly ``mechanisms``; returns its port."""
    params = {"saslMechanisms": ",".join(mechanisms)}
    if any(m.startswith("SCRAM-") for m in mechanisms):
        params["saslLoginConfigScope"] = SCRAM_SCOPE
    return add_acceptor(broker, name, params, port)


def enable_scram(broker: ArtemisBroker, users: Mapping[str, str], role: str = "amq") -> None:
    """SCRAM users (name -> password) with ``role``.

    The users file holds plain passwords, which ``SCRAMPropertiesLoginModule`` accepts (it
    derives the SCRAM keys at login); production setups store the ``ENC(...)`` keys its
    ``main`` prints instead.
    """

    def step(instance: Path) -> None:
        etc = instance / "etc"
        (etc / "scram-users.properties").write_text("".join(f"{u}={p}\n" for u, p in users.items()))
        (etc / "scram-roles.properties").write_text(f"{role}={','.join(users)}\n")
        login = etc / "login.config"
        text = login.read_text()
        # The broker's domain first takes an identity SCRAM already proved; the properties
        # module stays for PLAIN users.
        text = text.replace(
            "activemq {\n",
            f"activemq {{\n   {_JAAS}.SCRAMLoginModule sufficient;\n",
            1,
        )
        text += (
            f"\n{SCRAM_SCOPE} {{\n"
            f"   {_JAAS}.SCRAMPropertiesLoginModule required\n"
            '       org.apache.activemq.jaas.properties.user="scram-users.properties"\n'
            '       org.apache.activemq.jaas.properties.role="scram-roles.properties";\n'
            "};\n"
        )
        login.write_text(text)

    broker.add_setup(step)


def enable_certificate_login(
    broker: ArtemisBroker, users: Mapping[str, str], role: str = "amq"
) -> None:
    """Client certificates as identities: user name -> subject DN (RFC 2253), with ``role``."""

    def step(instance: Path) -> None:
        etc = instance / "etc"
        (etc / "cert-users.properties").write_text(
            "".join(f"{u}={_dn_pattern(dn)}\n" for u, dn in users.items())
        )
        (etc / "cert-roles.properties").write_text(f"{role}={','.join(users)}\n")
        login = etc / "login.config"
        login.write_text(
            login.read_text() + f"\n{CERT_DOMAIN} {{\n"
            f"   {_JAAS}.TextFileCertificateLoginModule required\n"
            '       org.apache.activemq.jaas.textfiledn.user="cert-users.properties"\n'
            '       org.apache.activemq.jaas.textfiledn.role="cert-roles.properties";\n'
            "};\n"
        )
        bootstrap = etc / "bootstrap.xml"
        text = bootstrap.read_text()
        new, count = re.subn(
            r'<jaas-security domain="([^"]+)"\s*/>',
            rf'<jaas-security domain="\g<1>" certificate-domain="{CERT_DOMAIN}"/>',
            text,
        )
        if count != 1:
            raise BrokerProvisioningError(f"could not find <jaas-security> in {bootstrap}")
        bootstrap.write_text(new)

    broker.add_setup(step)


def _dn_pattern(dn: str) -> str:
    # The module compares DN strings exactly, and Java writes "CN=a, O=b" where RFC 2253 has
    # "CN=a,O=b": match either spelling with a regular expression (/.../ in the file; the
    # backslash is doubled because the file is a Java properties file).
    parts = [re.sub(r"([^\w=\- ])", r"\\\\\1", p.strip()) for p in dn.split(",")]
    return "/" + ",\\\\s*".join(parts) + "/"


def _xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
