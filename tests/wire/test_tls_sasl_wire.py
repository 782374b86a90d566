"""jmspy's own SASL client through the engine, against the scripted peer (plain and over TLS)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from jmspy.conformance.brokers.certs import TlsMaterial, generate

import jmspy

from .client_support import Clients, clients_fixture
from .conftest import PeerFactory
from .peer import ScriptedPeer
from .tls_proxy import TlsRelay


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> TlsMaterial:
    return generate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def clients(peer: ScriptedPeer) -> Iterator[Clients]:
    yield from clients_fixture()


def test_plain_over_tls_carries_credentials_and_hostname(
    peer: ScriptedPeer, certs: TlsMaterial, clients: Clients
):
    with TlsRelay(peer.port, certs.server_keystore) as relay:
        conn = clients.connect(
            f"amqps://localhost:{relay.port}",
            "alice",
            "s3cret",
            trust_store_location=str(certs.ca),
        )
        conn.createSession()
    (sasl,) = peer.sasl
    assert (sasl.mechanism, sasl.username, sasl.password) == ("PLAIN", "alice", "s3cret")
    assert sasl.hostname == "localhost"


def test_vhost_is_the_sasl_hostname(peer: ScriptedPeer, clients: Clients):
    clients.connect(peer, "alice", "pw", vhost="tenant-a").createSession()
    assert peer.sasl[0].hostname == "tenant-a"


def test_mismatch_names_the_offered_mechanisms(make_peer: PeerFactory, clients: Clients):
    only_anonymous = make_peer(sasl_mechanisms=("ANONYMOUS",))
    with pytest.raises(jmspy.JMSSecurityException) as err:
        clients.connect(only_anonymous, "alice", "pw-Zq9x").createSession()
    text = str(err.value)
    assert "the server offers [ANONYMOUS]" in text
    assert "amqp.saslMechanisms" in text
    assert "pw-Zq9x" not in text


def test_configured_mechanism_is_used(make_peer: PeerFactory, clients: Clients):
    both = make_peer(sasl_mechanisms=("PLAIN", "ANONYMOUS"))
    clients.connect(both, query="amqp.saslMechanisms=ANONYMOUS").createSession()
    assert both.sasl[0].mechanism == "ANONYMOUS"


def test_unknown_mechanism_option_is_refused(peer: ScriptedPeer, clients: Clients):
    with pytest.raises(jmspy.JMSException, match="GSSAPI"):
        clients.connect(peer, "alice", "pw", sasl_mechanisms="GSSAPI").createSession()
