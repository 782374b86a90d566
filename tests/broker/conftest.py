"""Fixtures for tests that need a real broker (everything here is marked ``broker``).

The session-wide ``broker`` fixture lives in ``tests/conftest.py``. This file adds helpers
for tests that share that broker (unique names) or need a broker of their own
(``artemis_factory``), and a started connection to each broker in turn
(``started_any_broker_connection``; ``connection``, in tests/conftest.py, is a stopped one to
the main broker).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from jmspy.conformance.brokers import ArtemisBroker

ArtemisFactory = Callable[..., ArtemisBroker]


@pytest.fixture
def started_any_broker_connection(any_broker: Any) -> Iterator[Any]:
    """A started connection to each broker of ``any_broker`` in turn, closed after the test."""
    conn = any_broker.factory().createConnection()
    conn.start()
    try:
        yield conn
    finally:
        conn.close()


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
