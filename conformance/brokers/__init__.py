"""Local brokers provisioned by the project for tests, demos and the conformance suite.

``provision("artemis")`` returns a started :class:`ArtemisBroker` (Apache Artemis fetched
from Maven Central and run as a local Java process); ``provision("rabbitmq")`` a started
:class:`RabbitMQBroker` (a private node of the distribution's ``rabbitmq-server`` package
with the AMQP 1.0 plugin); ``provision("activemq")`` a started :class:`ActiveMQBroker`
(ActiveMQ Classic from Maven Central, a local Java process); ``provision("qpid-broker-j")`` a
started :class:`QpidBrokerJ` (Apache Qpid Broker-J from Maven Central, a local Java process).
The ``jmspy-broker`` command does the same from a shell.
:mod:`.container` offers the Docker/Testcontainers alternative for Artemis.
"""

from __future__ import annotations

from typing import Any, Literal, overload

from .activemq import ActiveMQBroker
from .artemis import ArtemisBroker, ArtemisDistribution, ensure_distribution
from .base import Broker, BrokerProvisioningError, cache_dir
from .qpid_broker_j import QpidBrokerJ
from .rabbitmq import QueueSpec, RabbitMQBroker, RabbitMQInstallation, ensure_installation

__all__ = [
    "SUPPORTED_KINDS",
    "ActiveMQBroker",
    "ArtemisBroker",
    "ArtemisDistribution",
    "Broker",
    "BrokerProvisioningError",
    "QpidBrokerJ",
    "QueueSpec",
    "RabbitMQBroker",
    "RabbitMQInstallation",
    "cache_dir",
    "ensure_distribution",
    "ensure_installation",
    "provision",
]

SUPPORTED_KINDS: tuple[str, ...] = ("artemis", "rabbitmq", "activemq", "qpid-broker-j")


@overload
def provision(
    kind: Literal["artemis"], *, timeout: float = 60.0, **options: Any
) -> ArtemisBroker: ...
@overload
def provision(
    kind: Literal["rabbitmq"], *, timeout: float = 60.0, **options: Any
) -> RabbitMQBroker: ...
@overload
def provision(
    kind: Literal["qpid-broker-j"], *, timeout: float = 60.0, **options: Any
) -> QpidBrokerJ: ...
@overload
def provision(
    kind: str, *, timeout: float = 60.0, **options: Any
) -> ArtemisBroker | RabbitMQBroker | ActiveMQBroker | QpidBrokerJ: ...
def provision(
    kind: str, *, timeout: float = 60.0, **options: Any
) -> ArtemisBroker | RabbitMQBroker | ActiveMQBroker | QpidBrokerJ:
    """Fetch if needed, create and start a broker of ``kind``; the caller stops it.

    ``options`` go to the broker's constructor (``port=``, ``broker_properties=`` for
    Artemis, ``queues=`` for RabbitMQ, ...). RabbitMQ is never installed from here: a
    missing package is a :class:`BrokerProvisioningError` naming the fix.
    """
    normalized = kind.strip().lower()
    broker: ArtemisBroker | RabbitMQBroker | ActiveMQBroker | QpidBrokerJ
    if normalized == "artemis":
        broker = ArtemisBroker(**options)
    elif normalized == "rabbitmq":
        broker = RabbitMQBroker(**options)
    elif normalized == "activemq":
        broker = ActiveMQBroker(**options)
    elif normalized == "qpid-broker-j":
        broker = QpidBrokerJ(**options)
    else:
        raise BrokerProvisioningError(
            f"unknown broker kind {kind!r}; supported: {', '.join(SUPPORTED_KINDS)}"
        )
    try:
        return broker.start(timeout=timeout)
    except BaseException:
        broker.stop()
        raise
