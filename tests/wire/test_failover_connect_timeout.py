"""The first connect of a failover connection is bounded by jms.connectTimeout as a whole:
each server of the pool gets only what is left of it, not a full jms.connectTimeout each."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator

import pytest

import jmspy

from .client_support import Clients, clients_fixture
from .peer import ScriptedPeer


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _failed_first_use_seconds(clients: Clients, servers: str) -> float:
    """How long the first use of ``failover:(servers)`` with jms.connectTimeout=3000 takes to
    fail with a connect error."""
    factory = clients.factory(f"failover:({servers})", connect_timeout=3000)
    began = time.monotonic()
    with pytest.raises(jmspy.JMSException, match="connect"):
        connection = clients.track(factory.createConnection())
        connection.createSession()
    return time.monotonic() - began


def test_first_failover_connect_to_silent_servers_ends_within_the_connect_timeout(
    clients: Clients,
) -> None:
    """Four servers that accept TCP and never answer, jms.connectTimeout=3000: the first use
    fails in about 3 s. A full timeout for each server (and a join after each) took 12 s or
    more; the bound of 8 s leaves room for a busy machine and still tells the two apart."""
    with contextlib.ExitStack() as stack:
        peers = [stack.enter_context(ScriptedPeer(hang_on_connect=True)) for _ in range(4)]
        took = _failed_first_use_seconds(clients, ",".join(peer.url for peer in peers))
    assert took < 8.0, f"the first connect took {took:.1f} s against jms.connectTimeout=3000"


def test_first_failover_connect_to_a_refusing_server_ends_within_the_connect_timeout(
    clients: Clients,
) -> None:
    """A server that refuses at once, jms.connectTimeout=3000: the reconnect back-off must not
    sleep past the deadline and try once more. The stop was checked before each sleep only,
    so the doubling delays took the first use to 5.1 s; the bound leaves room for a busy
    machine and still tells the two apart."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Nothing listens on the port now: every connect is refused.
    took = _failed_first_use_seconds(clients, f"amqp://127.0.0.1:{port}")
    assert took < 4.0, f"the first connect took {took:.1f} s against jms.connectTimeout=3000"
