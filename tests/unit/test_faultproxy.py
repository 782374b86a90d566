"""FaultProxy against plain local sockets: forwarding, freeze/thaw, cut, refuse, retarget, close.

The "server" is a listening socket owned by the test, so the test holds both ends of every
proxied connection and can check each direction separately.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from jmspy.conformance.faultproxy import BUFFER_LIMIT, FaultProxy

pytestmark = pytest.mark.timeout(60)

#: How long "nothing arrives" is watched for; silence cannot be awaited as an event.
QUIET = 0.5


def wait_until(predicate: Callable[[], object], timeout: float = 10.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")
        time.sleep(0.02)


def recv_exactly(sock: socket.socket, size: int, timeout: float = 10.0) -> bytes:
    sock.settimeout(timeout)
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise AssertionError(f"EOF after {len(data)} of {size} bytes")
        data += chunk
    return bytes(data)


def nothing_arrives(sock: socket.socket) -> bool:
    sock.settimeout(QUIET)
    try:
        data = sock.recv(1)
    except TimeoutError:
        return True
    raise AssertionError(f"expected silence, got {data!r}")


def assert_reset_on_connect(port: int) -> None:
    """A new connection to ``port`` is reset: at connect already, or at the first read."""
    with pytest.raises(ConnectionResetError):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.settimeout(10)
            data = sock.recv(1)
            raise AssertionError(f"expected a reset, got {data!r}")


@pytest.fixture
def server() -> Iterator[socket.socket]:
    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(10)
    yield srv
    srv.close()


@pytest.fixture
def proxy(server: socket.socket) -> Iterator[FaultProxy]:
    with FaultProxy("127.0.0.1", server.getsockname()[1]) as p:
        yield p


@pytest.fixture
def pair(proxy: FaultProxy, server: socket.socket) -> Iterator[tuple[socket.socket, socket.socket]]:
    """(client end, server end) of one connection through the proxy."""
    client = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
    upstream, _addr = server.accept()
    try:
        yield client, upstream
    finally:
        client.close()
        upstream.close()


def test_url_port_and_counters(
    proxy: FaultProxy, pair: tuple[socket.socket, socket.socket]
) -> None:
    client, upstream = pair
    assert proxy.url == f"amqp://127.0.0.1:{proxy.port}" and proxy.port > 0
    client.sendall(b"hello")
    assert recv_exactly(upstream, 5) == b"hello"
    upstream.sendall(b"world!")
    assert recv_exactly(client, 6) == b"world!"
    wait_until(lambda: proxy.bytes_forwarded == 11, what="11 bytes counted")
    assert proxy.connections == 1 and proxy.accepted == 1


def test_a_megabyte_each_way_passes_the_bounded_buffers(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    client, upstream = pair
    payload = bytes(range(256)) * (4 * BUFFER_LIMIT // 256)
    # Both sides send first and read afterwards: only bounded buffering lets this finish.
    senders = [
        threading.Thread(target=client.sendall, args=(payload,), daemon=True),
        threading.Thread(target=upstream.sendall, args=(payload,), daemon=True),
    ]
    for t in senders:
        t.start()
    assert recv_exactly(upstream, len(payload), timeout=30) == payload
    assert recv_exactly(client, len(payload), timeout=30) == payload
    for t in senders:
        t.join(10)
        assert not t.is_alive()


def test_freeze_stops_both_directions_and_thaw_delivers_what_waited(
    proxy: FaultProxy, pair: tuple[socket.socket, socket.socket]
) -> None:
    client, upstream = pair
    client.sendall(b"before")
    assert recv_exactly(upstream, 6) == b"before"
    proxy.freeze()
    assert proxy.frozen
    client.sendall(b"up")
    upstream.sendall(b"down")
    assert nothing_arrives(upstream) and nothing_arrives(client)
    # Silence, not a close: both ends are still connected.
    assert proxy.connections == 1
    for sock in (client, upstream):
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
    proxy.thaw()
    assert recv_exactly(upstream, 2) == b"up"
    assert recv_exactly(client, 4) == b"down"


def test_a_connection_made_while_frozen_is_silent_until_thaw(
    proxy: FaultProxy, server: socket.socket
) -> None:
    proxy.freeze()
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as client:
        upstream, _ = server.accept()
        with upstream:
            client.sendall(b"open")
            assert nothing_arrives(upstream)
            proxy.thaw()
            assert recv_exactly(upstream, 4) == b"open"


def test_cut_resets_both_ends(proxy: FaultProxy, pair: tuple[socket.socket, socket.socket]) -> None:
    client, upstream = pair
    client.sendall(b"x")
    assert recv_exactly(upstream, 1) == b"x"
    assert proxy.cut() == 1
    for sock in (client, upstream):
        sock.settimeout(10)
        with pytest.raises(ConnectionResetError):  # a RST (SO_LINGER 0), not a FIN
            sock.recv(1)
    assert proxy.connections == 0


def test_cut_of_a_frozen_connection_resets_it(
    proxy: FaultProxy, pair: tuple[socket.socket, socket.socket]
) -> None:
    client, _upstream = pair
    proxy.freeze()
    assert proxy.cut() == 1
    client.settimeout(10)
    with pytest.raises(ConnectionResetError):
        client.recv(1)


def test_refuse_resets_new_connections_until_lifted(
    proxy: FaultProxy, server: socket.socket, pair: tuple[socket.socket, socket.socket]
) -> None:
    client, upstream = pair
    proxy.refuse(True)
    assert_reset_on_connect(proxy.port)
    assert proxy.accepted == 1
    # The connection that was already open is left alone.
    client.sendall(b"still")
    assert recv_exactly(upstream, 5) == b"still"
    proxy.refuse(False)
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as again:
        other, _ = server.accept()
        with other:
            again.sendall(b"ok")
            assert recv_exactly(other, 2) == b"ok"
    assert proxy.accepted == 2


def test_a_target_that_refuses_resets_the_client() -> None:
    with socket.create_server(("127.0.0.1", 0)) as gone:
        port = gone.getsockname()[1]
    with FaultProxy("127.0.0.1", port) as proxy:
        assert_reset_on_connect(proxy.port)
        wait_until(lambda: proxy.connections == 0, what="the pipe to be dropped")


def test_retarget_moves_new_connections_only(
    proxy: FaultProxy, server: socket.socket, pair: tuple[socket.socket, socket.socket]
) -> None:
    client, upstream = pair
    with socket.create_server(("127.0.0.1", 0)) as second:
        second.settimeout(10)
        proxy.retarget("localhost", second.getsockname()[1])
        assert proxy.target == ("127.0.0.1", second.getsockname()[1])
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as moved:
            there, _ = second.accept()
            with there:
                moved.sendall(b"new")
                assert recv_exactly(there, 3) == b"new"
    client.sendall(b"old")
    assert recv_exactly(upstream, 3) == b"old"


def test_half_close_is_passed_on(pair: tuple[socket.socket, socket.socket]) -> None:
    client, upstream = pair
    client.sendall(b"last words")
    client.shutdown(socket.SHUT_WR)
    assert recv_exactly(upstream, 10) == b"last words"
    upstream.settimeout(10)
    assert upstream.recv(1) == b""  # the FIN came through
    upstream.sendall(b"reply")
    assert recv_exactly(client, 5) == b"reply"


def _proxy_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("fault-proxy-")]


def test_close_resets_connections_and_leaves_no_thread(server: socket.socket) -> None:
    before = set(_proxy_threads())
    proxy = FaultProxy("127.0.0.1", server.getsockname()[1])
    assert set(_proxy_threads()) - before, "the proxy runs a thread"
    client = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
    upstream, _ = server.accept()
    with client, upstream:
        proxy.close()
        proxy.close()  # idempotent
        wait_until(lambda: not set(_proxy_threads()) - before, what="the proxy thread to end")
        client.settimeout(10)
        with pytest.raises(ConnectionResetError):
            client.recv(1)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", proxy.port), timeout=5).close()
    with pytest.raises(RuntimeError, match="closed"):
        proxy.freeze()


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (("10.0.0.1", 5672), "target must be 127.0.0.1"),
        (("127.0.0.1", 5672, "0.0.0.0"), "listen_host must be 127.0.0.1"),
        (("127.0.0.1", 0), "target must be a TCP port"),
        (("127.0.0.1", 70000), "target must be a TCP port"),
    ],
)
def test_only_loopback_and_real_ports(args: tuple[object, ...], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        FaultProxy(*args)


def test_retarget_refuses_other_hosts(proxy: FaultProxy) -> None:
    with pytest.raises(ValueError, match="'192.168.1.1'"):
        proxy.retarget("192.168.1.1", 5672)
    assert proxy.target[0] == "127.0.0.1"


def test_wait_for_connections(proxy: FaultProxy, server: socket.socket) -> None:
    with pytest.raises(TimeoutError, match="0 connection"):
        proxy.wait_for_connections(1, timeout=0.2)
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10):
        assert proxy.wait_for_connections(1) == 1
        server.accept()[0].close()
