"""TLS and SASL against a real Artemis with TLS acceptors (PEM stores), SCRAM and EXTERNAL.

One broker of its own for the module (the session broker has no TLS acceptor), with:
``tls`` (TLS, Artemis' default mechanisms), ``mtls`` (needClientAuth, EXTERNAL, certificate
login) and ``scram`` (plain TCP, SCRAM-SHA-512 and SCRAM-SHA-256 only).
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from jmspy.conformance.brokers import ArtemisBroker
from jmspy.conformance.brokers import artemis_security as sec
from jmspy.conformance.brokers.certs import CLIENT_DN, KEY_PASSWORD, TlsMaterial, generate

import jmspy

SCRAM_USER, SCRAM_PASSWORD = "scott", "tiger-Tiger-1"
TIMEOUTS = {"connect_timeout": 20000, "request_timeout": 20000, "close_timeout": 5000}


@dataclass
class SecureArtemis:
    broker: ArtemisBroker
    certs: TlsMaterial
    tls_port: int
    mtls_port: int
    scram_port: int


@pytest.fixture(scope="module")
def secure(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SecureArtemis]:
    if request.config.getoption("--broker") == "container" and not os.environ.get(
        "JMSPY_BROKER_URL"
    ):
        pytest.skip("local Artemis provisioning is not exercised with --broker=container")
    certs = generate(tmp_path_factory.mktemp("artemis-tls"))
    broker = ArtemisBroker()
    tls = sec.add_tls_acceptor(broker, certs, name="tls")
    mtls = sec.add_tls_acceptor(
        broker, certs, name="mtls", need_client_auth=True, sasl_mechanisms=["EXTERNAL"]
    )
    scram = sec.add_sasl_acceptor(broker, ["SCRAM-SHA-256", "SCRAM-SHA-512"], name="scram")
    sec.enable_scram(broker, {SCRAM_USER: SCRAM_PASSWORD})
    sec.enable_certificate_login(broker, {"certuser": CLIENT_DN})
    broker.start(timeout=120)
    try:
        yield SecureArtemis(broker, certs, tls, mtls, scram)
    finally:
        broker.stop()


def _round_trip(url: str, username: str | None = None, password: str | None = None, **options: Any):
    factory = jmspy.ConnectionFactory(url, username, password, **{**TIMEOUTS, **options})
    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(f"tls-sasl-{uuid.uuid4().hex[:8]}")
        session.createProducer(queue).send(session.createTextMessage("over the wire"))
        connection.start()
        received = session.createConsumer(queue).receive(10000)
        assert received is not None
        return received.getText()


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1"])
def test_amqps_round_trip_verifies_the_broker(secure: SecureArtemis, host: str) -> None:
    url = f"amqps://{host}:{secure.tls_port}"
    text = _round_trip(url, "admin", "admin", trust_store_location=str(secure.certs.ca))
    assert text == "over the wire"


@pytest.mark.parametrize(
    ("options", "agreed"),
    [
        ({}, "TLSv1.3, TLS_"),
        ({"enabled_protocols": "TLSv1.2"}, "TLSv1.2, "),
        ({"disabled_protocols": "TLSv1.2"}, "TLSv1.3, TLS_"),
        # Java's name of a suite Artemis (Java's SSLEngine) offers; no TLS 1.3 suite listed,
        # so TLSv1.2 with exactly that suite (OpenSSL's name in the log).
        (
            {"enabled_cipher_suites": "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"},
            "TLSv1.2, ECDHE-RSA-AES256-GCM-SHA384",
        ),
    ],
    ids=["default", "tls12", "tls13", "java-suite-name"],
)
def test_amqps_with_pinned_versions_and_suites(
    secure: SecureArtemis,
    options: dict[str, str],
    agreed: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = f"amqps://localhost:{secure.tls_port}"
    with caplog.at_level(logging.DEBUG, logger="jmspy.tls"):
        text = _round_trip(
            url, "admin", "admin", trust_store_location=str(secure.certs.ca), **options
        )
    assert text == "over the wire"
    handshakes = [r.getMessage() for r in caplog.records if r.name == "jmspy.tls"]
    assert handshakes and all(f"localhost:{secure.tls_port}: {agreed}" in h for h in handshakes), (
        handshakes
    )


def test_amqps_unknown_ca_is_a_security_exception(secure: SecureArtemis) -> None:
    factory = jmspy.ConnectionFactory(
        f"amqps://localhost:{secure.tls_port}",
        "admin",
        "admin",
        trust_store_location=str(secure.certs.other_ca),
        **TIMEOUTS,
    )
    with pytest.raises(jmspy.JMSSecurityException, match="verification failed"):
        factory.createConnection().start()


def test_amqp_to_a_tls_port_fails_with_a_clear_error(secure: SecureArtemis) -> None:
    factory = jmspy.ConnectionFactory(
        f"amqp://localhost:{secure.tls_port}", "admin", "admin", connect_timeout=5000
    )
    with pytest.raises(jmspy.JMSException, match="amqps://"):
        factory.createConnection().start()


@pytest.mark.parametrize("store", ["pem", "p12"])
def test_sasl_external_with_client_certificate(secure: SecureArtemis, store: str) -> None:
    key_store = {
        "pem": {"key_store_location": str(secure.certs.client_keystore)},
        "p12": {
            "key_store_location": str(secure.certs.client_p12),
            "key_store_password": KEY_PASSWORD,
        },
    }[store]
    text = _round_trip(
        f"amqps://localhost:{secure.mtls_port}",
        trust_store_location=str(secure.certs.ca),
        **key_store,
    )
    assert text == "over the wire"


def test_need_client_auth_without_certificate_is_a_security_exception(
    secure: SecureArtemis,
) -> None:
    factory = jmspy.ConnectionFactory(
        f"amqps://localhost:{secure.mtls_port}",
        trust_store_location=str(secure.certs.ca),
        **TIMEOUTS,
    )
    with pytest.raises(jmspy.JMSSecurityException) as err:
        factory.createConnection().start()
    assert f"localhost:{secure.mtls_port}" in str(err.value)


def test_scram_default_is_the_strongest_common_mechanism(
    secure: SecureArtemis, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="jmspy.sasl"):
        text = _round_trip(f"amqp://127.0.0.1:{secure.scram_port}", SCRAM_USER, SCRAM_PASSWORD)
    assert text == "over the wire"
    assert "using SCRAM-SHA-512" in caplog.text


def test_scram_sha256_when_configured(
    secure: SecureArtemis, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="jmspy.sasl"):
        _round_trip(
            f"amqp://127.0.0.1:{secure.scram_port}?amqp.saslMechanisms=SCRAM-SHA-256",
            SCRAM_USER,
            SCRAM_PASSWORD,
        )
    assert "using SCRAM-SHA-256" in caplog.text


def test_scram_wrong_password_is_a_security_exception(secure: SecureArtemis) -> None:
    factory = jmspy.ConnectionFactory(
        f"amqp://127.0.0.1:{secure.scram_port}", SCRAM_USER, "not-tiger", **TIMEOUTS
    )
    with pytest.raises(jmspy.JMSSecurityException) as err:
        factory.createConnection().start()
    assert "SCRAM-SHA-512" in str(err.value) and "not-tiger" not in str(err.value)


def test_mechanism_mismatch_names_what_the_broker_offered(secure: SecureArtemis) -> None:
    factory = jmspy.ConnectionFactory(
        f"amqp://127.0.0.1:{secure.scram_port}?amqp.saslMechanisms=PLAIN",
        SCRAM_USER,
        SCRAM_PASSWORD,
        **TIMEOUTS,
    )
    with pytest.raises(jmspy.JMSSecurityException) as err:
        factory.createConnection().start()
    assert "[SCRAM-SHA-256 SCRAM-SHA-512]" in str(err.value)


# ---- the SEC conformance family against this broker ------------------------------------------


def _sec_results(target_url: str, username: str, password: str) -> dict[str, Any]:
    from jmspy.conformance.catalogue import catalogue, select
    from jmspy.conformance.context import Target
    from jmspy.conformance.runner import run_target

    target = Target(
        label="secure", kind="artemis", url=target_url, username=username, password=password
    )
    run = run_target(target, select(catalogue(), ["SEC"]))
    assert run.error is None, run.error
    return {r.check_id: r for r in run.results}


def test_sec_checks_pass_over_tls(secure: SecureArtemis) -> None:
    from jmspy.conformance.model import Outcome

    url = f"amqps://localhost:{secure.tls_port}?transport.trustStoreLocation={secure.certs.ca}"
    results = _sec_results(url, "admin", "admin")
    assert {k: r.outcome for k, r in results.items()} == {
        f"SEC-{i}": Outcome.PASSED for i in range(1, 7)
    }, [(r.check_id, r.summary, r.evidence) for r in results.values()]
    assert "PLAIN" in results["SEC-2"].summary


def test_sec1_fails_when_the_client_stops_verifying(
    secure: SecureArtemis, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jmspy.conformance.model import Outcome

    from jmspy._amqp import tls

    original = tls.client_context

    def trusting(options: Any) -> Any:
        context = original(options)
        context.check_hostname = False
        context.verify_mode = tls.ssl.CERT_NONE
        return context

    monkeypatch.setattr("jmspy._amqp.provider.client_context", trusting)
    url = f"amqps://localhost:{secure.tls_port}?transport.trustStoreLocation={secure.certs.ca}"
    results = _sec_results(url, "admin", "admin")
    assert results["SEC-1"].outcome is Outcome.FAILED, results["SEC-1"]
