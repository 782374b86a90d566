"""Fixtures for failover tests: brokers that may be crashed, and a TCP proxy that fails.

The session's ``broker`` is shared by every broker test and must never be killed, so these
tests get brokers of their own, made like it (``local_artemis`` in tests/conftest.py):

* ``failover_artemis``: a local Artemis for this module that a test may ``kill()`` (SIGKILL
  of the whole process group, data kept) and ``restart()`` (same directory, same port);
* ``second_artemis``: another one, for failover from one broker to the other;
* ``fault_proxy``: a :class:`~jmspy.conformance.faultproxy.FaultProxy` in front of
  ``failover_artemis`` for this test only (freeze, cut, refuse, retarget);
* ``failover_rabbitmq``: a private RabbitMQ 3.x node (the installed ``rabbitmq-server``) for
  this module, killable and restartable the same way.

Whatever a test did to them, every test starts with its brokers running (a killed broker
is restarted by ``_brokers_running`` before the next test). Tests crash them with
``info.broker.kill()``, never ``stop()``: stop deletes the data a restart needs. Under
``--broker=container`` these tests are skipped, like every test that provisions local
Artemis brokers.

Everything under tests/failover is marked ``broker`` (see BROKER_TESTS_DIRS).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator
from typing import Any

import pytest
from jmspy.conformance.brokers import BrokerProvisioningError
from jmspy.conformance.brokers.base import port_below_ephemeral_range
from jmspy.conformance.faultproxy import FaultProxy

#: Artemis takes 5-20 s to start on a busy 2-core machine; a restart as much again.
RESTART_TIMEOUT = 120.0

_KILLABLE = ("failover_artemis", "second_artemis", "failover_rabbitmq")


def _local_only(request: pytest.FixtureRequest) -> None:
    if request.config.getoption("--broker") == "container" and not os.environ.get(
        "JMSPY_BROKER_URL"
    ):
        pytest.skip("local Artemis provisioning is not exercised with --broker=container")


def _start_killable(stack: contextlib.ExitStack, local_artemis: Any) -> Any:
    """A local Artemis on a port from :func:`port_below_ephemeral_range`; with a fixed
    port there is one launch attempt, so a port taken meanwhile means another pick."""
    for attempt in range(3):
        try:
            return stack.enter_context(local_artemis(port=port_below_ephemeral_range()))
        except BrokerProvisioningError as exc:
            text = str(exc)
            if attempt == 2 or not ("already in use" in text or "BindException" in text):
                raise
    raise AssertionError("unreachable")


@pytest.fixture(scope="module")
def failover_artemis(request: pytest.FixtureRequest, local_artemis: Any) -> Iterator[Any]:
    """A dedicated local Artemis (BrokerInfo; ``.broker`` is the ArtemisBroker) that tests
    may kill and restart; shared by the tests of one module and stopped after them."""
    _local_only(request)
    with contextlib.ExitStack() as stack:
        yield _start_killable(stack, local_artemis)


@pytest.fixture(scope="module")
def second_artemis(request: pytest.FixtureRequest, local_artemis: Any) -> Iterator[Any]:
    """Another dedicated local Artemis, independent of ``failover_artemis``."""
    _local_only(request)
    with contextlib.ExitStack() as stack:
        yield _start_killable(stack, local_artemis)


@dataclasses.dataclass(frozen=True)
class KillableNode:
    """What a test needs of a killable RabbitMQ node (the shape of BrokerInfo)."""

    url: str
    username: str
    password: str
    broker: Any


@pytest.fixture(scope="module")
def failover_rabbitmq() -> Iterator[KillableNode]:
    """A private RabbitMQ node (RabbitMQBroker) on a port below the ephemeral range that
    tests may kill and restart; never the session's ``rabbitmq`` node, stopped after the
    module."""
    from jmspy.conformance.brokers import RabbitMQBroker

    for attempt in range(3):
        node = RabbitMQBroker(port=port_below_ephemeral_range())
        try:
            node.start(timeout=RESTART_TIMEOUT)
            break
        except BrokerProvisioningError as exc:
            node.stop()
            text = str(exc)
            taken = "port-taken" in text or "already in use" in text
            if attempt == 2 or not taken:
                raise
    try:
        yield KillableNode(node.url, node.username, node.password, node)
    finally:
        node.stop()


@pytest.fixture(autouse=True)
def _brokers_running(request: pytest.FixtureRequest) -> None:
    """Restart, before each test, any killable broker it uses that an earlier test left down."""
    for name in _KILLABLE:
        if name in request.fixturenames:
            broker = request.getfixturevalue(name).broker
            if not broker.running:
                broker.restart(timeout=RESTART_TIMEOUT)


@pytest.fixture
def fault_proxy(failover_artemis: Any) -> Iterator[FaultProxy]:
    """A FaultProxy forwarding to ``failover_artemis``; closed after the test."""
    with FaultProxy(failover_artemis.host, failover_artemis.port) as proxy:
        yield proxy
