"""The provisioned broker is real and usable, and ArtemisBroker's lifecycle holds up."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from jmspy.conformance.brokers import ArtemisBroker, cache_dir
from jmspy.conformance.brokers.base import free_port, port_accepts
from proton import ConnectionException
from proton.utils import BlockingConnection

ArtemisFactory = Callable[..., ArtemisBroker]  # the artemis_factory fixture (tests/broker)


def _open(url: str, user: str, password: str) -> BlockingConnection:
    return BlockingConnection(url, user=user, password=password, allowed_mechs="PLAIN", timeout=10)


def test_broker_accepts_tcp(broker: Any) -> None:
    with socket.create_connection((broker.host, broker.port), timeout=5):
        pass


def test_url_and_credentials_are_sane(broker: Any) -> None:
    assert re.fullmatch(r"amqps?://[^:/]+:\d+", broker.url), broker.url
    assert 0 < broker.port < 65536
    assert broker.username and broker.password
    assert broker.kind
    if broker.source == "local":
        assert broker.kind == "artemis"
        assert broker.host == "127.0.0.1"
        assert re.fullmatch(r"\d+\.\d+\.\d+", broker.version), broker.version


def test_amqp_open_with_the_credentials(broker: Any) -> None:
    connection = _open(broker.url, broker.username, broker.password)
    try:
        # The broker's open frame names the product; Artemis still says activemq-artemis.
        assert connection.conn is not None
        props = connection.conn.remote_properties or {}
        if broker.kind == "artemis":
            assert "artemis" in str(props.get("product", "")).lower()
    finally:
        connection.close()


def test_wrong_password_is_refused(broker: Any) -> None:
    if broker.source != "local":
        pytest.skip("only the locally provisioned broker is known to require login")
    # Artemis accepts any SASL PLAIN exchange and refuses at AMQP open instead.
    with pytest.raises(ConnectionException):
        _open(broker.url, broker.username, broker.password + "-wrong").close()


def test_second_broker_applies_broker_properties(
    broker: Any, artemis_factory: ArtemisFactory
) -> None:
    lines = [
        'addressSettings."redelivery.#".redeliveryDelay=100',
        # Observable from a client: with security off, a wrong password gets in.
        "securityEnabled=false",
    ]
    second = artemis_factory(broker_properties=lines)
    assert second.running
    assert second.port != broker.port
    written = (second.instance_dir / "etc" / "broker.properties").read_text()
    for line in lines:
        assert line in written.splitlines()
    _open(second.url, "nobody", "not-the-password").close()


def test_fixed_port_and_idempotent_stop_frees_the_port(artemis_factory: ArtemisFactory) -> None:
    port = free_port()
    one = artemis_factory(port=port)
    assert one.port == port and one.url == f"amqp://127.0.0.1:{port}"
    assert port_accepts("127.0.0.1", port)
    instance = one.instance_dir
    one.stop()
    one.stop()
    assert not one.running and one.pid is None
    assert not port_accepts("127.0.0.1", port)
    # The port is really free again, not just refusing connections.
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
    assert not instance.exists(), "an instance in a temp dir we created is removed on stop"


def test_cli_detached_broker_outlives_the_command(artemis_factory: ArtemisFactory) -> None:
    port = free_port()
    cli = [sys.executable, "-m", "jmspy.conformance.brokers"]
    started = subprocess.run(
        [*cli, "start", "artemis", "--port", str(port)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    try:
        assert started.returncode == 0, started.stderr
        assert f"export JMSPY_BROKER_URL=amqp://127.0.0.1:{port}" in started.stdout
        assert "export JMSPY_BROKER_USER=admin" in started.stdout
        assert "export JMSPY_BROKER_PASSWORD=admin" in started.stdout
        # The CLI has exited; the broker must still answer.
        _open(f"amqp://127.0.0.1:{port}", "admin", "admin").close()
        status = subprocess.run(
            [*cli, "status", "--json"], capture_output=True, text=True, timeout=30, check=False
        )
        records = json.loads(status.stdout)
        assert any(r["port"] == port for r in records), status.stdout
    finally:
        stopped = subprocess.run(
            [*cli, "stop", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert stopped.returncode == 0, stopped.stderr
    assert not port_accepts("127.0.0.1", port)
    state = cache_dir() / "brokers.json"
    if state.exists():
        assert all(r["port"] != port for r in json.loads(state.read_text()))
