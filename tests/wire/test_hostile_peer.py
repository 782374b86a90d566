"""A hostile or broken server: each behaviour gives a JMSException from start() within
jms.connectTimeout (plus a generous margin for a busy machine), and no engine thread is left
behind.

The server here is a raw TCP socket, not the scripted peer: it must be able to send what no
AMQP implementation would.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from proton import UNDESCRIBED, Array, Data, symbol, ubyte, uint

import jmspy
from jmspy.errors import JMSException

CONNECT_TIMEOUT_MS = 2000
MARGIN_S = 8.0  # start() must fail well within timeout + margin even on a loaded machine

AMQP_HEADER = b"AMQP\x00\x01\x00\x00"
SASL_HEADER = b"AMQP\x03\x01\x00\x00"
Behaviour = Callable[[socket.socket, threading.Event], None]


def _frame(frame_type: int, code: int, fields: list[object]) -> bytes:
    d = Data()
    d.put_described()
    d.enter()
    d.put_ulong(code)
    d.put_object(fields)
    d.exit()
    body = bytes(d.encode())
    return struct.pack(">IBBH", 8 + len(body), 2, frame_type, 0) + body


def _symbols(*names: str) -> Array:
    return Array(UNDESCRIBED, Data.SYMBOL, *[symbol(n) for n in names])


SASL_MECHANISMS = _frame(1, 0x40, [_symbols("PLAIN", "ANONYMOUS")])


def _garbage(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n" + bytes(range(256)) * 4)
    stop.wait(30)


def _truncated_frame(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(SASL_HEADER + SASL_MECHANISMS[: len(SASL_MECHANISMS) // 2])
    stop.wait(30)


def _huge_frame_size(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(SASL_HEADER + struct.pack(">IBBH", 0xFFFFFFFF, 2, 1, 0) + b"\x00" * 64)
    stop.wait(30)


def _frame_under_8_bytes(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(SASL_HEADER + struct.pack(">I", 4) + b"\x02\x01\x00\x00" * 4)
    stop.wait(30)


def _silence_after_sasl_header(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(SASL_HEADER)
    stop.wait(30)


def _one_byte_per_second(conn: socket.socket, stop: threading.Event) -> None:
    for byte in SASL_HEADER + SASL_MECHANISMS:
        conn.sendall(bytes([byte]))
        if stop.wait(1.0):
            return


def _amqp_header_then_close(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(AMQP_HEADER)


def _accept_and_close(conn: socket.socket, stop: threading.Event) -> None:
    return


def _recv_exactly(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise OSError("client closed")
        data += chunk
    return data


def _complete_sasl(conn: socket.socket, outcome: int = 0) -> None:
    """Answer the client's SASL exchange (any credentials) with ``outcome``."""
    conn.sendall(SASL_HEADER + SASL_MECHANISMS)
    _recv_exactly(conn, 8)  # the client's SASL header
    size = struct.unpack(">I", _recv_exactly(conn, 4))[0]
    _recv_exactly(conn, size - 4)  # sasl-init
    conn.sendall(_frame(1, 0x44, [ubyte(outcome)]))


def _sasl_ok_then_silence(conn: socket.socket, stop: threading.Event) -> None:
    _complete_sasl(conn)
    stop.wait(30)


def _sasl_ok_then_garbage(conn: socket.socket, stop: threading.Event) -> None:
    _complete_sasl(conn)
    conn.sendall(AMQP_HEADER + b"\xff" * 64)
    stop.wait(30)


def _sasl_outcome_out_of_range(conn: socket.socket, stop: threading.Event) -> None:
    _complete_sasl(conn, outcome=9)
    stop.wait(30)


def _no_common_mechanism(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(SASL_HEADER + _frame(1, 0x40, [_symbols("GSSAPI")]))
    stop.wait(30)


def _open_with_a_4gb_frame_after_it(conn: socket.socket, stop: threading.Event) -> None:
    _complete_sasl(conn)
    conn.sendall(AMQP_HEADER + struct.pack(">IBBH", 0xFFFFFFF0, 2, 0, 0))
    stop.wait(30)


BEHAVIOURS: dict[str, Behaviour] = {
    "sasl-ok-then-silence": _sasl_ok_then_silence,
    "sasl-ok-then-garbage": _sasl_ok_then_garbage,
    "sasl-outcome-out-of-range": _sasl_outcome_out_of_range,
    "no-common-sasl-mechanism": _no_common_mechanism,
    "4gb-frame-after-sasl": _open_with_a_4gb_frame_after_it,
    "garbage": _garbage,
    "truncated-frame": _truncated_frame,
    "4gb-frame-size": _huge_frame_size,
    "frame-under-8-bytes": _frame_under_8_bytes,
    "silence-after-sasl-header": _silence_after_sasl_header,
    "one-byte-per-second": _one_byte_per_second,
    "amqp-header-then-close": _amqp_header_then_close,
    "accept-and-close": _accept_and_close,
}


class HostileServer:
    def __init__(self, behaviour: Behaviour) -> None:
        self._behaviour = behaviour
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._acceptor = threading.Thread(target=self._accept, name="hostile-accept", daemon=True)
        self._acceptor.start()

    def _accept(self) -> None:
        # A closed listener does not wake a blocked accept() on Linux: poll the stop flag.
        self._listener.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(t)
            t.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                self._behaviour(conn, self._stop)
            except OSError:
                pass  # the client gave up and closed: expected

    def close(self) -> None:
        self._stop.set()
        self._acceptor.join(5)
        self._listener.close()
        for t in self._threads:
            t.join(5)


@pytest.fixture(params=sorted(BEHAVIOURS))
def hostile(request: pytest.FixtureRequest) -> Iterator[HostileServer]:
    server = HostileServer(BEHAVIOURS[request.param])
    try:
        yield server
    finally:
        server.close()


def _engine_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("jmspy-engine")]


def _wait_no_engine_threads(before: set[threading.Thread], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    idle = threading.Event()
    while True:
        left = [t for t in _engine_threads() if t not in before]
        if not left:
            return
        assert time.monotonic() < deadline, f"engine threads left behind: {left}"
        idle.wait(0.05)


def test_hostile_server_fails_start_within_connect_timeout(hostile: HostileServer) -> None:
    before = set(_engine_threads())
    factory = jmspy.ConnectionFactory(
        f"amqp://127.0.0.1:{hostile.port}",
        "alice",
        "secret",
        connect_timeout=CONNECT_TIMEOUT_MS,
        close_timeout=1000,
    )
    connection = factory.createConnection()
    started = time.monotonic()
    with pytest.raises(JMSException):
        connection.start()
    elapsed = time.monotonic() - started
    connection.close()
    assert elapsed < CONNECT_TIMEOUT_MS / 1000 + MARGIN_S, f"start() took {elapsed:.1f} s"
    _wait_no_engine_threads(before)


@pytest.mark.parametrize("name", ["garbage", "silence-after-sasl-header", "sasl-ok-then-garbage"])
def test_hostile_server_fails_create_context_within_connect_timeout(name: str) -> None:
    hostile = HostileServer(BEHAVIOURS[name])
    try:
        _create_context_fails(hostile)
    finally:
        hostile.close()


def _create_context_fails(hostile: HostileServer) -> None:
    before = set(_engine_threads())
    factory = jmspy.ConnectionFactory(
        f"amqp://127.0.0.1:{hostile.port}", connect_timeout=CONNECT_TIMEOUT_MS, close_timeout=1000
    )
    started = time.monotonic()
    with pytest.raises(jmspy.JMSRuntimeException):
        context = factory.createContext()
        context.createProducer().send(context.createQueue("q"), "x")
    assert time.monotonic() - started < CONNECT_TIMEOUT_MS / 1000 + MARGIN_S
    _wait_no_engine_threads(before)


def test_peer_asking_for_a_1_ms_idle_timeout_is_refused() -> None:
    """proton sends an empty frame every half of the peer's idle-time-out: a peer asking for
    1 ms had the client burn most of a core on heartbeats (350 KB in 2 s). Such an open is
    refused; the server sees only the client's few opening frames."""
    received = bytearray()
    done = threading.Event()

    def open_with_tiny_idle_timeout(conn: socket.socket, stop: threading.Event) -> None:
        _complete_sasl(conn)
        conn.sendall(AMQP_HEADER + _frame(0, 0x10, ["hostile", None, None, None, uint(1)]))
        conn.settimeout(0.2)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and not stop.is_set():
            try:
                data = conn.recv(65536)
            except TimeoutError:
                continue
            if not data:
                break
            received.extend(data)
        done.set()

    hostile = HostileServer(open_with_tiny_idle_timeout)
    try:
        before = set(_engine_threads())
        factory = jmspy.ConnectionFactory(
            f"amqp://127.0.0.1:{hostile.port}", connect_timeout=CONNECT_TIMEOUT_MS
        )
        connection = factory.createConnection()
        with pytest.raises(JMSException, match="idle-time-out of 1 ms"):
            connection.start()
        connection.close()
        assert done.wait(10)
        assert len(received) < 4096, f"{len(received)} bytes of heartbeats"
        _wait_no_engine_threads(before)
    finally:
        hostile.close()
