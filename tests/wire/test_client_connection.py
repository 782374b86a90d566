"""jmspy on the wire: connection open, SASL, credentials and connection-level failures.

The expected values are Qpid JMS's (shared/reference/qpid-jms.md section 2.4): the client asks
for exactly four capabilities, sends its client id as container-id and identifies itself with
product/version/platform properties.
"""

from __future__ import annotations

import platform
import re
import socket
import threading
import time
from collections.abc import Iterator

import pytest

import jmspy
from jmspy import (
    CLIENT_ACKNOWLEDGE,
    IllegalStateException,
    JMSException,
    JMSSecurityException,
)

from .client_support import Clients, clients_fixture, wait_until
from .conftest import PeerFactory
from .peer import OpenRecord, ScriptedPeer

DESIRED = ["sole-connection-for-container", "DELAYED_DELIVERY", "ANONYMOUS-RELAY", "SHARED-SUBS"]
PASSWORD = "pa55-w0rd-never-shown"


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


# ---- the open frame ---------------------------------------------------------------------------


def test_open_desires_exactly_the_qpid_jms_capabilities(peer: ScriptedPeer, clients: Clients):
    connection = clients.connect(peer)
    connection.createSession()

    assert peer.wait_for_open().desired_capabilities == DESIRED


def test_open_offers_no_capabilities(peer: ScriptedPeer, clients: Clients):
    clients.connect(peer).createSession()

    assert peer.wait_for_open().offered_capabilities == []


def test_container_id_is_the_factory_client_id_and_opens_at_once(
    peer: ScriptedPeer, clients: Clients
):
    clients.connect(peer, client_id="orders-service")

    # With a client id the open is not deferred: it is on the wire when createConnection returns.
    assert [o.container_id for o in peer.opens] == ["orders-service"]


def test_container_id_is_the_client_id_from_the_url(peer: ScriptedPeer, clients: Clients):
    clients.connect(peer, query="jms.clientID=from-url")

    assert peer.wait_for_open().container_id == "from-url"


def test_container_id_is_the_id_given_to_set_client_id(peer: ScriptedPeer, clients: Clients):
    connection = clients.connect(peer)
    assert peer.connects == []  # no client id yet: nothing is sent before the first use

    connection.setClientID("set-later")

    assert [o.container_id for o in peer.opens] == ["set-later"]
    assert connection.getClientID() == "set-later"


def test_container_id_is_generated_with_id_prefix_without_client_id(
    peer: ScriptedPeer, clients: Clients
):
    clients.connect(peer).createSession()
    clients.connect(peer).createSession()

    first, second = peer.wait_for_records(OpenRecord, count=2)
    assert first.container_id.startswith("ID:")
    assert re.fullmatch(r"ID:[0-9a-f-]{36}:\d+", first.container_id), first.container_id
    assert first.container_id != second.container_id


def test_open_is_deferred_until_first_use_without_client_id(peer: ScriptedPeer, clients: Clients):
    connection = clients.connect(peer)

    assert peer.connects == []
    assert peer.opens == []
    connection.createSession()
    assert len(peer.opens) == 1


def test_start_is_a_first_use_that_opens(peer: ScriptedPeer, clients: Clients):
    connection = clients.connect(peer)

    connection.start()

    assert len(peer.opens) == 1


def test_open_properties_identify_the_client(peer: ScriptedPeer, clients: Clients):
    clients.connect(peer).createSession()

    properties = peer.wait_for_open().properties
    assert set(properties) == {"product", "version", "platform"}
    assert properties["product"] == "jmspy"
    assert properties["version"] == jmspy.__version__
    assert isinstance(properties["platform"], str)
    assert platform.python_version() in properties["platform"]


def test_open_hostname_is_the_url_host(peer: ScriptedPeer, clients: Clients):
    clients.connect(peer).createSession()

    assert peer.wait_for_open().hostname == peer.host


def test_open_hostname_is_the_vhost_when_configured(peer: ScriptedPeer, clients: Clients):
    clients.connect(peer, query="amqp.vhost=tenant-a").createSession()

    assert peer.wait_for_open().hostname == "tenant-a"


def test_an_empty_vhost_sends_no_hostname(peer: ScriptedPeer, clients: Clients):
    # As Qpid JMS: amqp.vhost given empty is how a user sends no hostname at all (a broker
    # that picks the virtual host from it then uses its default), in the open and in SASL.
    clients.connect(peer, "alice", "pw", query="amqp.vhost=").createSession()

    assert peer.wait_for_open().hostname is None
    assert peer.sasl[0].hostname is None


def test_offered_capabilities_and_product_of_the_peer_are_in_the_metadata(
    make_peer: PeerFactory, clients: Clients
):
    peer = make_peer(
        offered_capabilities=["ANONYMOUS-RELAY", "x-custom-capability"],
        properties={"product": "fake-broker", "version": "9.8.7"},
    )
    connection = clients.connect(peer)

    metadata = connection.getMetaData()

    offered = metadata.getOfferedCapabilities()
    assert offered == frozenset({"ANONYMOUS-RELAY", "x-custom-capability"})
    assert metadata.getBrokerProduct() == "fake-broker"
    assert metadata.getBrokerVersion() == "9.8.7"


# ---- SASL and credentials ---------------------------------------------------------------------


def test_sasl_plain_carries_the_factory_credentials(peer: ScriptedPeer, clients: Clients):
    clients.connect(peer, "alice", PASSWORD).createSession()

    (sasl,) = peer.sasl
    assert sasl.mechanism == "PLAIN"
    assert (sasl.username, sasl.password) == ("alice", PASSWORD)
    assert sasl.initial_response == b"\0alice\0" + PASSWORD.encode()


def test_sasl_plain_carries_create_connection_credentials(peer: ScriptedPeer, clients: Clients):
    factory = clients.factory(peer, "factory-user", "factory-password")
    connection = clients.track(factory.createConnection("bob", "bobs-secret"))
    connection.createSession()

    (sasl,) = peer.sasl
    assert (sasl.mechanism, sasl.username, sasl.password) == ("PLAIN", "bob", "bobs-secret")


def test_sasl_anonymous_without_credentials(peer: ScriptedPeer, clients: Clients):
    clients.connect(peer).createSession()

    (sasl,) = peer.sasl
    assert sasl.mechanism == "ANONYMOUS"
    assert sasl.username is None and sasl.password is None


def test_credentials_are_not_in_reprs(peer: ScriptedPeer, clients: Clients):
    factory = clients.factory(peer, "alice", PASSWORD)
    connection = clients.track(factory.createConnection())
    connection.createSession()

    for text in (repr(factory), str(factory), repr(connection), str(connection)):
        assert PASSWORD not in text
    assert PASSWORD not in repr(factory.options)


def _exception_texts(exc: BaseException) -> list[str]:
    """str/repr of the exception and of everything linked to it."""
    texts = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        texts += [str(current), repr(current), " ".join(map(str, current.args))]
        current = current.__cause__ or current.__context__
    return texts


def test_peer_closing_the_open_with_unauthorized_access_is_a_security_exception(
    make_peer: PeerFactory, clients: Clients
):
    peer = make_peer(close_on_open_with=("amqp:unauthorized-access", "bad user or password"))
    connection = clients.connect(peer, "alice", PASSWORD)

    with pytest.raises(JMSSecurityException) as caught:
        connection.createSession()

    assert "amqp:unauthorized-access" in str(caught.value)
    for text in _exception_texts(caught.value):
        assert PASSWORD not in text
    assert PASSWORD not in repr(connection)


def test_unauthorized_access_is_raised_by_start(make_peer: PeerFactory, clients: Clients):
    peer = make_peer(close_on_open_with=("amqp:unauthorized-access", "bad user or password"))
    connection = clients.connect(peer, "alice", PASSWORD)

    with pytest.raises(JMSSecurityException) as caught:
        connection.start()

    for text in _exception_texts(caught.value):
        assert PASSWORD not in text


def test_artemis_style_establishment_failure_is_a_security_exception(
    make_peer: PeerFactory, clients: Clients
):
    # Artemis marks the open it sends before closing for a bad password with this property.
    peer = make_peer(
        close_on_open_with=("amqp:unauthorized-access", "AMQ229031: Unable to validate user"),
        properties={
            "product": "apache-activemq-artemis",
            "amqp:connection-establishment-failed": True,
        },
    )
    connection = clients.connect(peer, "alice", PASSWORD)

    with pytest.raises(JMSSecurityException) as caught:
        connection.createSession()

    for text in _exception_texts(caught.value):
        assert PASSWORD not in text


def test_sasl_rejection_is_a_security_exception(make_peer: PeerFactory, clients: Clients):
    peer = make_peer(reject_credentials=True)
    connection = clients.connect(peer, "alice", PASSWORD)

    with pytest.raises(JMSSecurityException) as caught:
        connection.createSession()

    assert peer.sasl[0].password == PASSWORD  # it was sent, and refused
    for text in _exception_texts(caught.value):
        assert PASSWORD not in text
    assert PASSWORD not in repr(connection)


def test_client_id_connection_reports_security_failure_from_create_connection(
    make_peer: PeerFactory, clients: Clients
):
    peer = make_peer(reject_credentials=True)
    factory = clients.factory(peer, "alice", PASSWORD, client_id="cid")

    with pytest.raises(JMSSecurityException) as caught:
        factory.createConnection()

    for text in _exception_texts(caught.value):
        assert PASSWORD not in text


# ---- connect failures -------------------------------------------------------------------------


def test_peer_that_never_answers_the_open_fails_within_connect_timeout(
    make_peer: PeerFactory, clients: Clients
):
    peer = make_peer(hang_on_open=True)
    connection = clients.connect(peer, connect_timeout=500)

    started = time.monotonic()
    with pytest.raises(JMSException) as caught:
        connection.createSession()

    assert time.monotonic() - started < 5.0
    assert "jms.connectTimeout" in str(caught.value)
    assert len(peer.opens) == 1  # the open was sent; only the answer was missing


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_nothing_listening_fails_quickly(clients: Clients):
    connection = clients.connect(f"amqp://127.0.0.1:{_closed_port()}")

    started = time.monotonic()
    with pytest.raises(JMSException):
        connection.createSession()

    assert time.monotonic() - started < 5.0


# ---- failures of an open connection -----------------------------------------------------------


class _Listener:
    def __init__(self) -> None:
        self.called = threading.Event()
        self.errors: list[JMSException] = []

    def onException(self, exception: JMSException) -> None:
        self.errors.append(exception)
        self.called.set()


def _blocked_receive(connection: jmspy.Connection):
    """A consumer whose receive() is blocked in a thread: (session, consumer, thread, results)."""
    session = connection.createSession()
    consumer = session.createConsumer(session.createQueue("blocked"))
    results: list[object] = []

    def receive() -> None:
        try:
            results.append(consumer.receive())
        except BaseException as exc:  # noqa: BLE001 - asserted by the test
            results.append(exc)

    thread = threading.Thread(target=receive, daemon=True)
    thread.start()
    # No frame shows that receive() is waiting; the consumer's count of blocked receives does.
    wait_until(lambda: consumer.getBlockedReceiveCount() == 1, what="receive() to block")
    return session, consumer, thread, results


@pytest.mark.parametrize("how", ["close_connection", "drop"])
def test_connection_loss_fails_blocked_receive_and_calls_exception_listener(
    peer: ScriptedPeer, clients: Clients, how: str
):
    connection = clients.connect(peer)
    listener = _Listener()
    connection.setExceptionListener(listener)
    connection.start()
    _session, _consumer, thread, results = _blocked_receive(connection)

    if how == "close_connection":
        peer.close_connection("amqp:connection:forced", "broker shutting down")
    else:
        peer.drop()

    thread.join(5.0)
    assert not thread.is_alive()
    assert len(results) == 1 and isinstance(results[0], JMSException), results
    assert listener.called.wait(5.0)
    assert isinstance(listener.errors[0], JMSException)
    if how == "close_connection":
        assert "amqp:connection:forced" in str(listener.errors[0])
    assert len(listener.errors) == 1


def test_exception_listener_may_be_a_plain_callable(peer: ScriptedPeer, clients: Clients):
    connection = clients.connect(peer)
    called = threading.Event()
    errors: list[JMSException] = []
    connection.setExceptionListener(lambda e: (errors.append(e), called.set()))
    connection.createSession()

    peer.drop()

    assert called.wait(5.0)
    assert isinstance(errors[0], JMSException)


@pytest.mark.parametrize("how", ["close_connection", "drop"])
def test_every_call_after_connection_loss_raises_illegal_state(
    peer: ScriptedPeer, clients: Clients, how: str
):
    connection = clients.connect(peer)
    listener = _Listener()
    connection.setExceptionListener(listener)
    connection.start()
    session = connection.createSession(CLIENT_ACKNOWLEDGE)
    queue = session.createQueue("q")
    producer = session.createProducer(queue)
    consumer = session.createConsumer(queue)

    if how == "close_connection":
        peer.close_connection("amqp:connection:forced", None)
    else:
        peer.drop()
    assert listener.called.wait(5.0)

    calls = {
        "Connection.createSession": connection.createSession,
        "Connection.start": connection.start,
        "Connection.stop": connection.stop,
        "Connection.getMetaData().getOfferedCapabilities": lambda: (
            connection.getMetaData().getOfferedCapabilities()
        ),
        "Session.createProducer": lambda: session.createProducer(queue),
        "Session.createConsumer": lambda: session.createConsumer(queue),
        "MessageProducer.send": lambda: producer.send(session.createTextMessage("x")),
        "MessageConsumer.receive": lambda: consumer.receive(100),
        "MessageConsumer.receiveNoWait": consumer.receiveNoWait,
    }
    wrong = []
    for name, call in calls.items():
        try:
            call()
        except IllegalStateException:
            continue
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            wrong.append(f"{name} raised {type(exc).__name__}: {exc}")
        else:
            wrong.append(f"{name} did not raise")
    assert wrong == []

    connection.close()  # closing a failed connection is allowed and quiet
