"""amqps:// against a scripted peer behind a TLS relay (tests/wire/tls_proxy.py).

The certificates are generated per test session (jmspy.conformance.brokers.certs); the relay
decrypts, so the peer's records are the frames the client actually sent over TLS.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from jmspy.conformance.brokers.certs import KEY_PASSWORD, TlsMaterial, generate

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


@pytest.fixture
def relay(peer: ScriptedPeer, certs: TlsMaterial) -> Iterator[TlsRelay]:
    with TlsRelay(peer.port, certs.server_keystore) as r:
        yield r


def _url(host: str, relay: TlsRelay) -> str:
    return f"amqps://{host}:{relay.port}"


def _open(clients: Clients, url: str, **options: object) -> jmspy.Connection:
    """Connect for real: a connection opens lazily, on its first session (jms.awaitClientID)."""
    conn = clients.connect(url, **options)
    conn.createSession()
    return conn


def test_amqps_attach_is_amended_like_plain(
    peer: ScriptedPeer, relay: TlsRelay, certs: TlsMaterial, clients: Clients
):
    # The attach amender used to be off under TLS (proton encrypted the frames itself).
    conn = _open(clients, _url("localhost", relay), trust_store_location=str(certs.ca))
    session = conn.createSession()

    session.createConsumer(session.createQueue("q"))

    source = peer.wait_for_attach("q", role="receiver").source
    assert source is not None and source.default_outcome is not None
    assert source.default_outcome.kind == "modified"
    assert source.default_outcome.delivery_failed is True
    assert relay.sessions and relay.sessions[0].handshake_error is None


def test_amqps_ip_host_is_checked_against_ip_san(
    peer: ScriptedPeer, relay: TlsRelay, certs: TlsMaterial, clients: Clients
):
    conn = _open(clients, _url("127.0.0.1", relay), trust_store_location=str(certs.ca))
    conn.createSession()
    assert peer.wait_for_open().hostname == "127.0.0.1"


def test_hostname_mismatch_is_a_security_exception_naming_the_host(
    peer: ScriptedPeer, certs: TlsMaterial, clients: Clients
):
    # This server certificate names DNS:localhost only, no IP SAN.
    with TlsRelay(peer.port, certs.localhost_only_keystore) as relay:
        with pytest.raises(jmspy.JMSSecurityException) as err:
            _open(clients, _url("127.0.0.1", relay), trust_store_location=str(certs.ca))
        assert "'127.0.0.1'" in str(err.value)
        assert "mismatch" in str(err.value)
        assert "transport.verifyHost" in str(err.value)
        # verifyHost=false keeps the CA check but skips the name.
        _open(
            clients, _url("127.0.0.1", relay), trust_store_location=str(certs.ca), verify_host=False
        )


def test_unknown_ca_is_a_security_exception_with_the_reason(
    relay: TlsRelay, certs: TlsMaterial, clients: Clients
):
    with pytest.raises(jmspy.JMSSecurityException) as err:
        _open(clients, _url("localhost", relay), trust_store_location=str(certs.other_ca))
    text = str(err.value)
    assert f"localhost:{relay.port}" in text
    assert "verification failed" in text
    assert "certificate" in text


def test_without_trust_store_the_system_store_is_used_and_verification_stays_on(
    relay: TlsRelay, clients: Clients
):
    # The test CA is not a system CA: the handshake must fail, not silently trust.
    with pytest.raises(jmspy.JMSSecurityException, match="verification failed"):
        _open(clients, _url("localhost", relay))


def test_trust_all_accepts_an_unknown_ca(
    peer: ScriptedPeer, relay: TlsRelay, certs: TlsMaterial, clients: Clients
):
    conn = _open(clients, _url("localhost", relay), trust_all=True)
    conn.createSession()
    peer.wait_for_open()


def test_missing_trust_store_is_named(relay: TlsRelay, tmp_path: Path, clients: Clients):
    missing = tmp_path / "nope.pem"
    with pytest.raises(jmspy.JMSException) as err:
        _open(clients, _url("localhost", relay), trust_store_location=str(missing))
    assert "transport.trustStoreLocation" in str(err.value)
    assert str(missing) in str(err.value)


def test_missing_key_store_is_named(
    relay: TlsRelay, certs: TlsMaterial, tmp_path: Path, clients: Clients
):
    missing = tmp_path / "client.p12"
    with pytest.raises(jmspy.JMSException) as err:
        _open(
            clients,
            _url("localhost", relay),
            trust_store_location=str(certs.ca),
            key_store_location=str(missing),
        )
    assert "transport.keyStoreLocation" in str(err.value) and str(missing) in str(err.value)


def test_wrong_pkcs12_password_is_named(relay: TlsRelay, certs: TlsMaterial, clients: Clients):
    with pytest.raises(jmspy.JMSException) as err:
        _open(
            clients,
            _url("localhost", relay),
            trust_store_location=str(certs.ca),
            key_store_location=str(certs.client_p12),
            key_store_password="wrong",
        )
    assert "transport.keyStoreLocation" in str(err.value)
    assert "transport.keyStorePassword" in str(err.value)


@pytest.mark.parametrize("store", ["pem", "p12", "pair"])
def test_mutual_tls_presents_the_client_certificate(
    peer: ScriptedPeer, certs: TlsMaterial, clients: Clients, store: str
):
    options = {
        "pem": {"key_store_location": str(certs.client_keystore)},
        "p12": {"key_store_location": str(certs.client_p12), "key_store_password": KEY_PASSWORD},
        "pair": {
            "certificate_location": str(certs.client_cert),
            "key_location": str(certs.client_key),
        },
    }[store]
    with TlsRelay(peer.port, certs.server_keystore, client_ca=certs.ca) as relay:
        conn = _open(
            clients, _url("localhost", relay), trust_store_location=str(certs.ca), **options
        )
        conn.createSession()
        assert relay.sessions[0].client_subject is not None
        assert "commonName=jmspy-client" in relay.sessions[0].client_subject


def test_mutual_tls_without_client_certificate_fails(
    peer: ScriptedPeer, certs: TlsMaterial, clients: Clients
):
    with TlsRelay(peer.port, certs.server_keystore, client_ca=certs.ca) as relay:
        with pytest.raises(jmspy.JMSException) as err:
            _open(clients, _url("localhost", relay), trust_store_location=str(certs.ca))
        # TLS 1.3 reports the server's refusal on the first read, as an alert.
        assert f"localhost:{relay.port}" in str(err.value)


def test_handshake_is_bounded_by_connect_timeout_without_spinning(
    peer: ScriptedPeer, certs: TlsMaterial, clients: Clients
):
    with TlsRelay(peer.port, certs.server_keystore, plain=True) as silent:
        started, cpu_started = time.monotonic(), time.process_time()
        with pytest.raises(jmspy.JMSException) as err:
            _open(
                clients,
                _url("localhost", silent),
                trust_store_location=str(certs.ca),
                connect_timeout=3000,
            )
        waited, cpu = time.monotonic() - started, time.process_time() - cpu_started
    assert "jms.connectTimeout" in str(err.value)
    assert 2.0 < waited < 30  # bounded by the timeout, not exact
    # Waiting for the server must sleep in select, not spin: a busy loop burns the whole wait.
    assert cpu < 0.2 * waited, f"{cpu:.2f} s CPU while waiting {waited:.2f} s"


def test_close_sends_close_notify(
    peer: ScriptedPeer, relay: TlsRelay, certs: TlsMaterial, clients: Clients
):
    conn = _open(clients, _url("localhost", relay), trust_store_location=str(certs.ca))
    conn.createSession()
    conn.close()
    session = relay.sessions[0]
    assert session.ended.wait(10.0)
    assert session.close_notify


# ---- versions and cipher suites (rule SEC-6), seen at the relay ----------------------------


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
