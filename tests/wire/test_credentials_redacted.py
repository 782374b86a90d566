"""No credential in any log line, repr or exception text, with every jmspy log at DEBUG.

``amqp.traceFrames=true`` logs every frame on ``jmspy.frames``; the SASL PLAIN initial
response is ``\\0user\\0password``. These tests enable DEBUG on all ``jmspy*`` loggers, connect
with a distinctive password (accepted, refused by SASL, refused at open), and look for the
password in every form it could leak in: clear, base64, the PLAIN bytes and their repr.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator

import pytest
from log_capture import LogCapture

import jmspy
from jmspy.errors import JMSException, JMSSecurityException

from .client_support import Clients, clients_fixture
from .conftest import PeerFactory
from .peer import ScriptedPeer

USER = "alice"
SECRET = "Zq7-unusual-Pa55phrase-91x"
KEYSTORE_SECRET = "Kx4-keystore-Pa55phrase-02y"


def _forbidden(secret: str = SECRET) -> list[str]:
    plain = b"\0" + USER.encode() + b"\0" + secret.encode()
    return [
        secret,
        base64.b64encode(secret.encode()).decode(),
        base64.b64encode(plain).decode(),
        repr(plain),
        repr(plain)[2:-1],  # the escaped bytes as proton prints them inside b"..."
        plain.decode(),
    ]


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


@pytest.fixture
def captured() -> Iterator[LogCapture]:
    handler = LogCapture()
    root = logging.getLogger("jmspy")
    saved = root.level
    root.setLevel(logging.DEBUG)
    root.addHandler(handler)
    # Every logger under jmspy, including ones created later, inherits DEBUG from "jmspy".
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("jmspy."):
            logging.getLogger(name).setLevel(logging.NOTSET)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(saved)


def _exception_texts(exc: BaseException) -> list[str]:
    texts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        texts += [str(current), repr(current), " ".join(map(str, current.args))]
        current = current.__cause__ or current.__context__
    return texts


def _assert_clean(texts: list[str], secret: str = SECRET) -> None:
    for text in texts:
        for form in _forbidden(secret):
            assert form not in text, f"credential ({form!r}) leaked in: {text[:300]}"


def test_trace_of_a_successful_login_has_no_password(
    peer: ScriptedPeer, clients: Clients, captured: LogCapture
) -> None:
    factory = clients.factory(
        peer, USER, SECRET, query="amqp.traceFrames=true", key_store_password=KEYSTORE_SECRET
    )
    connection = clients.track(factory.createConnection())
    connection.start()
    session = connection.createSession()
    producer = session.createProducer(session.createQueue("q"))
    producer.send(session.createTextMessage("hello"))
    connection.close()

    assert peer.sasl[0].password == SECRET  # the password did go over the wire
    assert any("sasl-init" in line for line in captured.lines), "frame trace was not captured"
    assert any("mechanism=:PLAIN" in line for line in captured.lines)
    _assert_clean(captured.lines)
    _assert_clean(captured.lines, KEYSTORE_SECRET)
    for shown in (repr(factory), repr(connection), repr(factory.options), str(factory.options)):
        _assert_clean([shown])
        _assert_clean([shown], KEYSTORE_SECRET)


def test_sasl_refusal_logs_and_raises_without_password(
    make_peer: PeerFactory, clients: Clients, captured: LogCapture
) -> None:
    peer = make_peer(reject_credentials=True)
    connection = clients.connect(peer, USER, SECRET, query="amqp.traceFrames=true")
    with pytest.raises(JMSSecurityException) as caught:
        connection.start()
    assert peer.sasl[0].password == SECRET
    assert any("sasl-init" in line for line in captured.lines)
    _assert_clean(captured.lines)
    _assert_clean(_exception_texts(caught.value))
    _assert_clean([repr(connection)])


def test_refused_open_logs_and_raises_without_password(
    make_peer: PeerFactory, clients: Clients, captured: LogCapture
) -> None:
    peer = make_peer(close_on_open_with=("amqp:unauthorized-access", "bad user or password"))
    connection = clients.connect(peer, USER, SECRET, query="amqp.traceFrames=true")
    with pytest.raises(JMSException) as caught:
        connection.createSession()
    assert any("sasl-init" in line for line in captured.lines)
    _assert_clean(captured.lines)
    _assert_clean(_exception_texts(caught.value))


def test_bad_option_error_does_not_echo_the_password() -> None:
    with pytest.raises(jmspy.IllegalArgumentException) as caught:
        jmspy.ConnectionFactory("amqp://localhost", USER, SECRET, connect_timeout=-1)
    _assert_clean(_exception_texts(caught.value))
    with pytest.raises(jmspy.IllegalArgumentException) as caught:
        jmspy.ConnectionFactory("amqp://localhost", USER, 12345, connect_timeout=-1)  # type: ignore[arg-type]
    assert "12345" not in str(caught.value)


@pytest.mark.parametrize(
    "line",
    [
        '0 -> @sasl-init(65) [mechanism=:PLAIN, initial-response=b"\\x00u\\x00' + SECRET + '"]',
        '0 -> @sasl-init(65) [mechanism=:PLAIN, initial-response=b"\\x00u\\x00a\\"b'
        + SECRET
        + '", hostname="h"]',
        # proton cuts long trace lines: no closing quote
        '0 -> @sasl-init(65) [mechanism=:PLAIN, initial-response=b"\\x00u\\x00' + SECRET,
        '0 -> @sasl-response(67) [response=b"' + SECRET + '"]',
        '0 <- @sasl-challenge(66) [challenge=b"' + SECRET + '"]',
    ],
)
def test_redact_frame_forms(line: str) -> None:
    from jmspy._amqp.redact import redact_frame

    shown = redact_frame(line)
    assert SECRET not in shown
    assert "@sasl-" in shown
    if "hostname" in line:
        assert 'hostname="h"' in shown
