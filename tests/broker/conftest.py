"""Fixtures for tests that need a real broker (everything here is marked ``broker``).

The session-wide ``broker`` fixture lives in ``tests/conftest.py``. This file adds helpers
for tests that share that broker (unique names) or need a broker of their own
(``artemis_factory``).
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from jmspy.conformance.brokers import ArtemisBroker

ArtemisFactory = Callable[..., ArtemisBroker]


@pytest.fixture
def unique_name(request: pytest.FixtureRequest) -> str:
    """A queue/topic name no other test (or earlier run on the same broker) uses.

    Broker tests share one broker for the session, and a durable broker keeps messages
    between runs, so fixed names would leak state from one test into another.
    """
    base = re.sub(r"[^A-Za-z0-9]+", "-", request.node.name).strip("-")[:40]
    return f"jmspy-{base}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def artemis_factory(request: pytest.FixtureRequest) -> Iterator[ArtemisFactory]:
    """Start extra local Artemis brokers with their own options; all stopped afterwards.

    ``artemis_factory(broker_properties=[...], port=..., start=False)`` takes the
    ArtemisBroker keyword arguments. With ``--broker=container`` these tests are skipped:
    that mode exists for machines where the local Java broker is not wanted.
    """
    if request.config.getoption("--broker") == "container" and not os.environ.get(
        "JMSPY_BROKER_URL"
    ):
        pytest.skip("local Artemis provisioning is not exercised with --broker=container")
    started: list[ArtemisBroker] = []

    def make(*, start: bool = True, **options: Any) -> ArtemisBroker:
        broker = ArtemisBroker(**options)
        started.append(broker)
        return broker.start() if start else broker

    yield make
    for broker in started:
        broker.stop()


@pytest.fixture
def factory(broker: Any) -> Any:
    """A ConnectionFactory for the session's broker (short timeouts so failures show fast)."""
    import jmspy

    return jmspy.ConnectionFactory(
        broker.url, broker.username, broker.password, connect_timeout=10000
    )


@pytest.fixture
def connection(factory: Any) -> Iterator[Any]:
    """A started-later connection, closed after the test whatever happens."""
    conn = factory.createConnection()
    try:
        yield conn
    finally:
        conn.close()
