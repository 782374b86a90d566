"""Text a broker chooses cannot forge log lines or rewrite a terminal.

The product and version of its open, the description of an error condition and the SASL
mechanism names reach the ``jmspy`` log and exception messages; their control characters
(line feeds, escape sequences, bidi overrides) are shown escaped.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator

import pytest

import jmspy

from .client_support import Clients, clients_fixture
from .conftest import PeerFactory

FORGED = "\nERROR jmspy forged: credentials rejected\x1b[2J\u202e"
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e]")


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def test_open_product_and_version_are_logged_escaped(
    make_peer: PeerFactory, clients: Clients, caplog: pytest.LogCaptureFixture
):
    peer = make_peer(properties={"product": "broker" + FORGED, "version": "1" + FORGED})
    with caplog.at_level(logging.DEBUG, logger="jmspy"):
        clients.connect(peer, "alice", "pw").createSession()
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("jmspy")]
    connected = [line for line in lines if line.startswith("connected to")]
    assert connected, lines
    assert "broker\\nERROR jmspy forged" in connected[0]
    assert not [line for line in lines if CONTROL.search(line)]


def test_error_description_is_escaped_in_the_exception(make_peer: PeerFactory, clients: Clients):
    peer = make_peer(close_on_open_with=("amqp:unauthorized-access", "denied" + FORGED))
    with pytest.raises(jmspy.JMSSecurityException) as err:
        clients.connect(peer, "alice", "pw").createSession()
    text = str(err.value)
    assert "denied\\nERROR jmspy forged" in text
    assert not CONTROL.search(text)


def test_sasl_mechanism_names_are_escaped(make_peer: PeerFactory, clients: Clients):
    # Symbols are ASCII: the line feed and the escape sequence, without the bidi override.
    peer = make_peer(sasl_mechanisms=("X-EVIL" + FORGED.rstrip("\u202e"),))
    with pytest.raises(jmspy.JMSSecurityException) as err:
        clients.connect(peer, "alice", "pw").createSession()
    text = str(err.value)
    assert "X-EVIL\\nERROR" in text
    assert not CONTROL.search(text)


def test_the_broker_name_in_exception_messages_is_escaped(make_peer: PeerFactory, clients: Clients):
    # How error messages name the broker (a delivery delay it cannot honour, rule DD-1...).
    peer = make_peer(properties={"product": "broker" + FORGED})
    connection = clients.connect(peer, "alice", "pw")
    connection.createSession()
    name = connection.wire.broker_name()
    assert name.startswith("broker\\nERROR jmspy forged") and not CONTROL.search(name), name
