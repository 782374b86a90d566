"""A server cannot skip, reorder or inflate the SASL exchange (AMQP 1.0 section 5.3).

Raw TCP servers, as in test_hostile_peer: they send what no AMQP implementation would. The
outcome-first servers complete a valid AMQP open afterwards, so a client that accepted the
skipped exchange would be connected, unauthenticated, with start() returning normally.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator

import pytest
from proton import ubyte

import jmspy

from .test_hostile_peer import (
    AMQP_HEADER,
    SASL_HEADER,
    Behaviour,
    HostileServer,
    _frame,
    _recv_exactly,
    _symbols,
)

CONNECT_TIMEOUT_MS = 5000
SASL_OK = _frame(1, 0x44, [ubyte(0)])
OPEN = _frame(0, 0x10, ["hostile-broker"])


def _outcome_first(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(SASL_HEADER + SASL_OK + AMQP_HEADER + OPEN)
    stop.wait(30)


def _challenge_for_plain(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(SASL_HEADER + _frame(1, 0x40, [_symbols("PLAIN")]))
    _recv_exactly(conn, 8)
    size = struct.unpack(">I", _recv_exactly(conn, 4))[0]
    _recv_exactly(conn, size - 4)
    conn.sendall(_frame(1, 0x42, [b"more?"]))
    stop.wait(30)


def _endless_frame(conn: socket.socket, stop: threading.Event) -> None:
    # Announces a 2 GiB frame and keeps its body coming; a client that buffers it whole grows
    # until the connect timeout ends it.
    conn.sendall(SASL_HEADER + struct.pack(">IBBH", 0x7FFFFFFF, 2, 1, 0))
    chunk = b"\x00" * 65536
    while not stop.is_set():
        conn.sendall(chunk)


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[HostileServer]:
    behaviour: Behaviour = request.param
    s = HostileServer(behaviour)
    try:
        yield s
    finally:
        s.close()


def _start(port: int, **options: object) -> None:
    factory = jmspy.ConnectionFactory(
        f"amqp://127.0.0.1:{port}",
        "alice",
        "secret",
        connect_timeout=CONNECT_TIMEOUT_MS,
        close_timeout=1000,
        **options,
    )
    connection = factory.createConnection()
    try:
        connection.start()
    finally:
        connection.close()


@pytest.mark.parametrize("server", [_outcome_first], indirect=True)
@pytest.mark.parametrize("mechanisms", ["SCRAM-SHA-256", None])
def test_outcome_before_mechanisms_is_refused(server: HostileServer, mechanisms: str | None):
    """With SCRAM required the client must see the server prove it knows the password; a
    bare outcome ``ok`` proves nothing, under any configuration."""
    with pytest.raises(jmspy.JMSSecurityException, match="SASL with") as err:
        _start(server.port, sasl_mechanisms=mechanisms)
    assert "before offering any mechanism" in str(err.value)


@pytest.mark.parametrize("server", [_challenge_for_plain], indirect=True)
def test_challenge_to_a_mechanism_without_steps_is_a_security_error(server: HostileServer):
    with pytest.raises(jmspy.JMSSecurityException, match="challenge, which PLAIN does not have"):
        _start(server.port)


@pytest.mark.parametrize("server", [_endless_frame], indirect=True)
def test_oversized_sasl_frame_is_refused_at_its_header(server: HostileServer):
    started = time.monotonic()
    with pytest.raises(jmspy.JMSSecurityException, match="SASL with") as err:
        _start(server.port)
    assert "2147483647 bytes" in str(err.value)
    # Refused on the header, not by the connect timeout.
    assert time.monotonic() - started < CONNECT_TIMEOUT_MS / 1000
