"""The brokers the conformance suite and the test session start for themselves, made one way.

``jmspy-conformance --broker SPEC`` and the pytest fixtures (``broker``, ``local_artemis``,
``rabbitmq`` in tests/conftest.py) both start brokers through :func:`started_broker`, so a
local Artemis always gets the address settings the checks and tests rely on
(:data:`~jmspy.conformance.settings.ARTEMIS_TEST_ADDRESS_SETTINGS`), and every broker is
stopped when the block ends, a failed start included.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from ..settings import ARTEMIS_TEST_ADDRESS_SETTINGS
from .artemis import ArtemisBroker
from .base import Broker, BrokerProvisioningError
from .qpid_broker_j import QpidBrokerJ
from .rabbitmq import RabbitMQBroker

__all__ = ["SPECS", "DockerUnavailable", "started_broker"]

#: What ``spec`` may name; ``container:IMAGE`` picks the image.
SPECS = "artemis, rabbitmq, activemq, qpid-broker-j or container[:IMAGE]"


class DockerUnavailable(BrokerProvisioningError):
    """A container broker was asked for and no Docker engine answers (the message says why)."""


@contextlib.contextmanager
def started_broker(
    spec: str, *, say: Callable[[str], None] | None = None, **options: Any
) -> Iterator[Broker]:
    """Start the broker ``spec`` names and stop it when the block ends, whatever happens.

    ``artemis``: a local Apache Artemis with the suite's address settings (``options`` are
    :class:`ArtemisBroker` keyword arguments and may replace them); ``rabbitmq``: a private
    RabbitMQ node (:class:`RabbitMQBroker` arguments); ``container[:IMAGE]``: Artemis in
    Docker (:class:`~.container.ArtemisContainerBroker` arguments). ``say`` hears one line
    before the start, which may take a while. Raises :class:`BrokerProvisioningError`
    (:class:`DockerUnavailable` for a container without Docker).
    """
    kind = spec.strip()
    lowered = kind.lower()
    tell = say or (lambda _line: None)
    broker: Any
    if lowered == "artemis":
        options.setdefault("broker_properties", ARTEMIS_TEST_ADDRESS_SETTINGS)
        tell("starting a local Apache Artemis ...")
        broker = ArtemisBroker(**options)
    elif lowered == "rabbitmq":
        tell("starting a local RabbitMQ node ...")
        broker = RabbitMQBroker(**options)
    elif lowered == "activemq":
        from .activemq import ActiveMQBroker

        tell("starting a local ActiveMQ Classic ...")
        broker = ActiveMQBroker(**options)
    elif lowered == "qpid-broker-j":
        tell("starting a local Apache Qpid Broker-J ...")
        broker = QpidBrokerJ(**options)
    elif lowered == "container" or lowered.startswith("container:"):
        # Imported here: the container module is the only one that needs testcontainers.
        from .container import ArtemisContainerBroker, docker_available

        image = kind.partition(":")[2] or None
        ok, reason = docker_available()
        if not ok:
            raise DockerUnavailable(reason)
        tell(f"starting container {image or 'apache/artemis'} ...")
        broker = ArtemisContainerBroker(image, **options)
    else:
        raise BrokerProvisioningError(f"unknown broker (use {SPECS})")
    try:
        broker.start()
        yield broker
    finally:
        broker.stop()
