"""Helpers for the jmspy client wire tests (tests/wire/test_client_*.py).

The tests drive the real jmspy API against a :class:`~tests.wire.peer.ScriptedPeer` and assert on
the frames it recorded. Everything here waits with deadlines; nothing sleeps.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import jmspy
from jmspy import Connection, ConnectionFactory

from .peer import AttachRecord, DispositionRecord, LinkScript, ScriptedPeer, TransferRecord

T = TypeVar("T")

# Short timeouts so a misbehaving client fails a test quickly instead of hanging it; tests that
# are about a timeout set their own.
FAST_OPTIONS: dict[str, Any] = {
    "connect_timeout": 5000,
    "close_timeout": 1000,
    "request_timeout": 5000,
    "send_timeout": 5000,
    "drain_timeout": 2000,
}

# Properties list indexes (AMQP 1.0 part 3.2.4).
P_MESSAGE_ID = 0
P_USER_ID = 1
P_TO = 2
P_SUBJECT = 3
P_REPLY_TO = 4
P_CORRELATION_ID = 5
P_CONTENT_TYPE = 6
P_ABSOLUTE_EXPIRY = 8
P_CREATION_TIME = 9
P_GROUP_ID = 10
P_GROUP_SEQUENCE = 11

OUTCOMES = ["amqp:accepted:list", "amqp:rejected:list", "amqp:released:list", "amqp:modified:list"]


class Clients:
    """Creates client connections for one test and closes them all at the end."""

    def __init__(self) -> None:
        self._connections: list[Connection] = []

    def factory(
        self,
        peer: ScriptedPeer | str,
        username: str | None = None,
        password: str | None = None,
        *,
        query: str = "",
        **options: Any,
    ) -> ConnectionFactory:
        url = peer if isinstance(peer, str) else peer.url
        if query:
            url = f"{url}?{query}"
        merged = {**FAST_OPTIONS, **options}
        return ConnectionFactory(url, username, password, **merged)

    def track(self, connection: Connection) -> Connection:
        self._connections.append(connection)
        return connection

    def connect(
        self,
        peer: ScriptedPeer | str,
        username: str | None = None,
        password: str | None = None,
        *,
        start: bool = False,
        query: str = "",
        **options: Any,
    ) -> Connection:
        factory = self.factory(peer, username, password, query=query, **options)
        connection = self.track(factory.createConnection())
        if start:
            connection.start()
        return connection

    def close_all(self) -> None:
        for connection in reversed(self._connections):
            try:
                connection.close()
            except jmspy.JMSException:
                pass


def clients_fixture() -> Iterator[Clients]:
    """Body of each test module's ``clients`` fixture. Tests request the peer fixture first, so
    the connections are closed before their peer."""
    made = Clients()
    try:
        yield made
    finally:
        made.close_all()


def wire_barrier(connection: Connection) -> None:
    """Return once everything the client queued so far has reached the peer, and everything
    the peer sent before has been processed by the client.

    A session begin is answered by the peer; frames are written and processed in order on both
    sides, so any disposition or flow the client queued earlier is recorded before the begin.
    """
    connection.createSession().close()


def wait_until(predicate: Callable[[], T], timeout: float = 5.0, what: str = "condition") -> T:
    """Wait for a client-side condition that no frame announces (e.g. a thread is blocked)."""
    deadline = time.monotonic() + timeout
    idle = threading.Event()
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        idle.wait(0.002)


def dispositions_for(peer: ScriptedPeer, tag: bytes) -> list[DispositionRecord]:
    return [d for d in peer.dispositions if tag in d.delivery_tags]


def wait_for_disposition(peer: ScriptedPeer, tag: bytes, timeout: float = 5.0) -> DispositionRecord:
    return peer.wait_for_records(
        DispositionRecord, lambda d: tag in d.delivery_tags, timeout=timeout
    )[0]


def sections_of(transfer: TransferRecord) -> dict[int, Any]:
    """The transfer's sections by descriptor code (each section appears at most once here)."""
    codes = transfer.section_codes
    assert len(codes) == len(set(codes)), f"repeated sections: {codes}"
    return dict(transfer.sections)


def prop(properties: list[Any], index: int) -> Any:
    """A properties field; trailing nulls are trimmed on the wire, so short means absent."""
    return properties[index] if index < len(properties) else None


@contextlib.contextmanager
def refusing_reconnects(peer: ScriptedPeer) -> Iterator[None]:
    """Inside, the peer closes every new connection at its open (a broker that is up but not
    serving yet), so failover keeps trying; afterwards it serves again."""
    serving = peer.options
    peer.options = dataclasses.replace(
        serving, close_on_open_with=("amqp:connection:forced", "not serving yet")
    )
    try:
        yield
    finally:
        peer.options = serving


def in_thread(call: Callable[[], None]) -> tuple[threading.Event, list[BaseException]]:
    """Run ``call`` on a thread; the event is set when it returned, the list holds what it
    raised."""
    done = threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - checked by the test
            errors.append(exc)
        done.set()

    threading.Thread(target=run, name="test-caller", daemon=True).start()
    return done, errors


def no_credit_on(address: str) -> Callable[[AttachRecord], LinkScript | None]:
    """Link scripts: the peer gives the client's links to ``address`` no credit (a broker
    whose address is full)."""

    def scripts(attach: AttachRecord) -> LinkScript | None:
        return LinkScript(credit=0) if attach.address == address else None

    return scripts


def grant_credit(peer: ScriptedPeer, address: str, credit: int) -> None:
    """The peer grants ``credit`` on its receiving end of the client's links to ``address``
    (a broker whose address is no longer full)."""

    def run() -> None:
        for conn in peer._live(None):
            for (is_sender, _name), state in list(conn.links.items()):
                if not is_sender and state.address == address:
                    state.link.flow(credit)
            conn.process()

    peer._call(run)


class FirstRestore:
    """A ConnectionListener that records the first restore of a failover connection."""

    def __init__(self) -> None:
        self.restored = threading.Event()

    def onConnectionInterrupted(self, uri: str) -> None:
        pass

    def onConnectionRestored(self, uri: str) -> None:
        self.restored.set()
