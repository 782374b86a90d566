"""The TLS versions and cipher suites a connection offers (rule SEC-6), seen from the server
side of a TLS relay: what was negotiated, and what a server that cannot meet the client's
settings does to the connection."""

from __future__ import annotations

import ssl
from collections.abc import Iterator

import pytest
from jmspy.conformance.brokers.certs import TlsMaterial, generate

import jmspy

from .client_support import Clients, clients_fixture
from .peer import ScriptedPeer
from .tls_proxy import TlsRelay


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> TlsMaterial:
    return generate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def clients(peer: ScriptedPeer) -> Iterator[Clients]:
    yield from clients_fixture()


def _negotiated(
    peer: ScriptedPeer, certs: TlsMaterial, clients: Clients, **options: object
) -> tuple[str | None, str | None]:
    """Connect through a fresh relay with these options: (protocol, OpenSSL suite name)."""
    with TlsRelay(peer.port, certs.server_keystore) as relay:
        conn = clients.connect(
            f"amqps://localhost:{relay.port}", trust_store_location=str(certs.ca), **options
        )
        conn.createSession()
        peer.wait_for_open()
        session = relay.sessions[0]
        conn.close()
        return session.version, session.cipher


def test_by_default_tls13_is_negotiated(peer: ScriptedPeer, certs: TlsMaterial, clients: Clients):
    assert _negotiated(peer, certs, clients)[0] == "TLSv1.3"


def test_enabled_protocols_limits_the_version(
    peer: ScriptedPeer, certs: TlsMaterial, clients: Clients
):
    assert _negotiated(peer, certs, clients, enabled_protocols="TLSv1.2")[0] == "TLSv1.2"


def test_disabled_protocols_removes_a_version(
    peer: ScriptedPeer, certs: TlsMaterial, clients: Clients
):
    assert _negotiated(peer, certs, clients, disabled_protocols="TLSv1.3")[0] == "TLSv1.2"


def test_a_java_cipher_suite_name_is_the_one_negotiated(
    peer: ScriptedPeer, certs: TlsMaterial, clients: Clients
):
    # No TLS 1.3 suite listed: TLSv1.3 is left out, as with Java's SSLEngine.
    version, cipher = _negotiated(
        peer, certs, clients, enabled_cipher_suites="TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
    )
    assert (version, cipher) == ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256")


def test_disabled_cipher_suites_are_not_offered(
    peer: ScriptedPeer, certs: TlsMaterial, clients: Clients
):
    # The server's preferred TLS 1.2 suites, with the one it would pick taken away each time.
    first = _negotiated(peer, certs, clients, enabled_protocols="TLSv1.2")[1]
    assert first is not None
    second = _negotiated(
        peer, certs, clients, enabled_protocols="TLSv1.2", disabled_cipher_suites=first
    )[1]
    assert second is not None and second != first


def test_a_server_without_the_enabled_version_fails_the_connect_naming_the_endpoint(
    peer: ScriptedPeer, certs: TlsMaterial, clients: Clients
):
    with TlsRelay(peer.port, certs.server_keystore, max_version=ssl.TLSVersion.TLSv1_2) as relay:
        with pytest.raises(jmspy.JMSException) as err:
            conn = clients.connect(
                f"amqps://localhost:{relay.port}",
                trust_store_location=str(certs.ca),
                enabled_protocols="TLSv1.3",
                connect_timeout=10_000,
            )
            conn.createSession()
        text = str(err.value)
        assert isinstance(err.value, jmspy.JMSSecurityException)
        assert f"localhost:{relay.port}" in text
        assert "no protocol version both sides accept" in text
        assert "this client offers TLSv1.3" in text
        # The relay records the handshake on its own thread: wait for it to be done.
        assert relay.sessions and relay.sessions[0].ended.wait(10)
        assert "protocol" in (relay.sessions[0].handshake_error or "").lower()
