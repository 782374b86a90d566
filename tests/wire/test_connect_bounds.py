"""The engine's connect is bounded and can be interrupted: resolving the host name and the TCP
connect to each of its addresses share the one jms.connectTimeout deadline, and Engine.stop()
(a close) ends either wait at once, also when a failover connection's reconnect thread is
waiting for a transport to open."""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from proton import Connection, Event, Transport

from jmspy import JMSException
from jmspy._amqp.engine import Engine
from jmspy._amqp.engine_errors import EngineStopped

from .client_support import Clients, clients_fixture, wait_until
from .conftest import PeerFactory


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


class FakeDns:
    """``socket.getaddrinfo`` for made-up names, the real one for every other host.

    ``addresses[name]``: the (IPv4 address, port) pairs the name resolves to, in order.
    A name under ``.invalid`` resolves to nothing until ``release`` is set (a resolver that
    never answers in time), then fails as an unknown name; ``entered`` is set once asked."""

    def __init__(self, real: Callable[..., Any]) -> None:
        self._real = real
        self.addresses: dict[str, list[tuple[str, int]]] = {}
        self.entered = threading.Event()
        self.release = threading.Event()
        self.asked = 0  # lookups of a name under .invalid

    def __call__(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host.endswith(".invalid"):
            self.asked += 1
            self.entered.set()
            self.release.wait(60.0)  # bounded only so that a broken test cannot hang the run
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        if isinstance(host, str) and host in self.addresses:
            return [
                (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", address)
                for address in self.addresses[host]
            ]
        return self._real(host, port, *args, **kwargs)


def _threads(prefix: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(prefix) and t.is_alive()]


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDns]:
    fake = FakeDns(socket.getaddrinfo)
    monkeypatch.setattr(socket, "getaddrinfo", fake)
    try:
        yield fake
    finally:
        # No thread is left blocked in the fake resolver once the test is over.
        fake.release.set()
        wait_until(
            lambda: not _threads("jmspy-resolve-") and not _threads("jmspy-engine-broker.invalid"),
            timeout=10.0,
            what="the threads blocked in the fake resolver to end",
        )


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port on 127.0.0.1 whose TCP connects never complete: its listener never accepts and
    its accept queue is full, so the kernel drops every further SYN (as a black-holed address
    does; a non-routable address is not portable: some sandboxes answer every connect)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=5.0):  # fills the queue
            with socket.socket() as probe:
                probe.setblocking(False)
                probe.connect_ex(("127.0.0.1", port))
                _, connected, _ = select.select([], [probe], [], 0.5)
            if connected:
                pytest.skip("this system completes connects to a listener whose queue is full")
            yield port


def _wait_gone(prefix: str, timeout: float, what: str) -> None:
    wait_until(lambda: not _threads(prefix), timeout=timeout, what=what)


# ---- the first connect --------------------------------------------------------------------


def test_every_address_of_a_name_shares_the_one_connect_deadline(
    dns: FakeDns, silent_port: int, clients: Clients
) -> None:
    """A name with eight addresses that never answer, jms.connectTimeout=2000: the connect
    fails at the timeout (about 2 s), naming it, with the engine thread gone. create_connection
    gave every address a full timeout: the engine thread went on for 16 s, and the opener
    waited 2 s more for it (4 s in all) before it gave up on it. The bounds are loose (a busy
    machine passes); the engine thread's lifetime is what tells the two apart."""
    dns.addresses["blackhole.test"] = [("127.0.0.1", silent_port)] * 8
    factory = clients.factory(f"amqp://blackhole.test:{silent_port}", connect_timeout=2000)
    connection = clients.track(factory.createConnection())
    began = time.monotonic()
    with pytest.raises(JMSException) as caught:
        connection.connect()
    took = time.monotonic() - began
    assert "jms.connectTimeout" in str(caught.value)
    assert "blackhole.test" in str(caught.value)
    assert took < 6.0, f"the connect took {took:.1f} s against jms.connectTimeout=2000"
    _wait_gone(
        "jmspy-engine-blackhole.test",
        timeout=5.0,
        what="the engine thread to end with the failed connect",
    )


def test_a_name_that_is_not_resolved_in_time_fails_at_the_connect_timeout(
    dns: FakeDns, clients: Clients
) -> None:
    """A resolver that never answers: the connect fails at jms.connectTimeout, and the engine
    thread ends with it (the resolver thread is left to finish by itself). getaddrinfo on the
    engine thread kept it blocked for as long as the resolver took."""
    factory = clients.factory("amqp://broker.invalid:5672", connect_timeout=1500)
    connection = clients.track(factory.createConnection())
    began = time.monotonic()
    with pytest.raises(JMSException) as caught:
        connection.connect()
    took = time.monotonic() - began
    assert dns.entered.is_set()
    assert "jms.connectTimeout" in str(caught.value)
    assert "broker.invalid" in str(caught.value)
    assert took < 6.0, f"the connect took {took:.1f} s against jms.connectTimeout=1500"
    _wait_gone(
        "jmspy-engine-broker.invalid",
        timeout=5.0,
        what="the engine thread to end while the resolver is still stuck",
    )
    assert not dns.release.is_set()


# ---- Engine.stop() during the connect ---------------------------------------------------------


class _Handler:
    def __init__(self) -> None:
        self.failed = threading.Event()
        self.error: BaseException | None = None

    def on_proton_event(self, event: Event) -> None:
        pass

    def on_engine_failed(self, error: BaseException) -> None:
        self.error = error
        self.failed.set()


def _engine(host: str, port: int, handler: _Handler, connect_timeout_s: float) -> Engine:
    connection = Connection()
    transport = Transport(Transport.CLIENT)
    transport.bind(connection)
    return Engine(
        host=host,
        port=port,
        connection=connection,
        transport=transport,
        handler=handler,
        connect_timeout_s=connect_timeout_s,
        name=f"jmspy-engine-{host}:{port}",
    )


def test_stop_ends_a_connect_waiting_for_the_resolver_at_once(dns: FakeDns) -> None:
    handler = _Handler()
    engine = _engine("broker.invalid", 5672, handler, connect_timeout_s=30.0)
    engine.start()
    try:
        assert dns.entered.wait(10.0), "the engine never asked the resolver"
        engine.stop()
        assert engine.join(10.0), "the engine thread is still waiting for the resolver"
    finally:
        engine.abort()
    assert handler.failed.is_set()
    assert isinstance(handler.error, EngineStopped)
    assert not dns.release.is_set()


def test_connects_waiting_for_one_name_share_one_lookup(dns: FakeDns) -> None:
    """During a resolver outage every connect attempt started a lookup thread of its own that
    lived as long as the system resolver took (failover retries every few ms with a short
    delay). Attempts that gave up, and those still waiting, now share the one lookup in
    flight, and each waiter gets its answer when it comes."""
    for _ in range(3):  # attempts that give up at their connect timeout, as failover's do
        handler = _Handler()
        engine = _engine("broker.invalid", 5672, handler, connect_timeout_s=0.2)
        engine.start()
        try:
            assert handler.failed.wait(10.0), "the connect did not give up"
            assert "jms.connectTimeout" in str(handler.error)
        finally:
            engine.abort()
    waiting = [_Handler() for _ in range(3)]
    engines = [_engine("broker.invalid", 5672, h, connect_timeout_s=30.0) for h in waiting]
    for engine in engines:
        engine.start()
    try:
        wait_until(
            lambda: len(_threads("jmspy-engine-broker.invalid")) == 3,
            what="three engines waiting for the name",
        )
        assert len(_threads("jmspy-resolve-")) == 1
        assert dns.asked == 1
        dns.release.set()
        for handler in waiting:
            assert handler.failed.wait(10.0), "a waiter did not get the lookup's answer"
            assert isinstance(handler.error, socket.gaierror), repr(handler.error)
    finally:
        for engine in engines:
            engine.abort()
    assert dns.asked == 1


def test_stop_ends_a_tcp_connect_at_once(silent_port: int) -> None:
    handler = _Handler()
    engine = _engine("127.0.0.1", silent_port, handler, connect_timeout_s=30.0)
    engine.start()
    try:
        wait_until(lambda: engine.thread.is_alive(), what="the engine thread to start")
        engine.stop()
        assert engine.join(10.0), "the engine thread is still in the TCP connect"
    finally:
        engine.abort()
    assert isinstance(handler.error, EngineStopped)


def test_a_refused_address_is_followed_by_the_next_one(
    dns: FakeDns, make_peer: PeerFactory, clients: Clients
) -> None:
    """As create_connection did: the addresses of a name are tried in turn."""
    peer = make_peer()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    dns.addresses["two.test"] = [("127.0.0.1", closed_port), ("127.0.0.1", peer.port)]
    connection = clients.track(clients.factory(f"amqp://two.test:{peer.port}").createConnection())
    connection.connect()
    connection.close()
    assert len(peer.opens) == 1


def test_refused_everywhere_is_a_connect_error(dns: FakeDns, clients: Clients) -> None:
    ports = []
    for _ in range(2):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            ports.append(probe.getsockname()[1])
    dns.addresses["refused.test"] = [("127.0.0.1", port) for port in ports]
    factory = clients.factory(f"amqp://refused.test:{ports[0]}")
    connection = clients.track(factory.createConnection())
    with pytest.raises(JMSException, match="could not connect") as caught:
        connection.connect()
    assert isinstance(caught.value.linked_exception, ConnectionRefusedError)


# ---- closing a failover connection while it reconnects -------------------------------------


def _unreachable(kind: str, silent_port: int, make_peer: PeerFactory) -> str:
    """The URL of a server the reconnect hangs on: one that drops SYNs, one that accepts TCP
    and never answers, or one whose name is never resolved (needs the ``dns`` fixture)."""
    if kind == "silent-tcp":
        return f"amqp://127.0.0.1:{silent_port}"
    if kind == "silent-peer":
        return make_peer(hang_on_connect=True, strict=False).url
    return f"amqp://broker.invalid:{silent_port}"


@pytest.mark.parametrize("kind", ["silent-tcp", "silent-peer", "unresolved"])
def test_close_while_reconnecting_to_a_silent_server_returns_promptly(
    kind: str,
    dns: FakeDns,
    silent_port: int,
    make_peer: PeerFactory,
    clients: Clients,
) -> None:
    """jms.connectTimeout=60000, jms.closeTimeout=20000: a close while the reconnect thread
    waits for a transport to the silent server returns at once, and leaves no engine or
    failover thread behind. Cancelling the reconnect only joined that thread, which waited
    out the whole close timeout (and the connect went on after the close had returned)."""
    peer = make_peer()
    silent = _unreachable(kind, silent_port, make_peer)
    silent_host = silent.removeprefix("amqp://")
    url = (
        f"failover:({peer.url},{silent})?failover.reconnectDelay=20"
        "&failover.maxReconnectDelay=100&failover.maxReconnectAttempts=-1"
    )
    before = set(threading.enumerate())
    factory = clients.factory(url, connect_timeout=60000, close_timeout=20000)
    connection = clients.track(factory.createConnection())
    connection.connect()
    peer.drop(reset=True)
    # The reconnect rotates to the next server of the pool: the silent one.
    wait_until(
        lambda: _threads(f"jmspy-engine-{silent_host}"),
        timeout=10.0,
        what="the reconnect to the silent server",
    )
    if kind == "unresolved":
        assert dns.entered.wait(10.0), "the reconnect never asked the resolver"
    took: list[float] = []
    error: list[BaseException] = []

    def close() -> None:
        began = time.monotonic()
        try:
            connection.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the test thread
            error.append(exc)
        took.append(time.monotonic() - began)

    closer = threading.Thread(target=close, name="test-close", daemon=True)
    closer.start()
    closer.join(40.0)
    assert took, "close() did not return within 40 s"
    assert not error, f"close() raised {error[0]!r}"
    assert took[0] < 8.0, f"close() took {took[0]:.1f} s against jms.closeTimeout=20000"

    def left() -> list[threading.Thread]:
        return [
            t
            for t in threading.enumerate()
            if t not in before
            and t.is_alive()
            and t.name.startswith(("jmspy-engine", "jmspy-failover"))
        ]

    wait_until(lambda: not left(), timeout=5.0, what="no engine or failover thread left")
