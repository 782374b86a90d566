"""Local brokers provisioned by the project for tests, demos and the conformance suite.

``provision("artemis")`` returns a started :class:`ArtemisBroker` (Apache Artemis fetched
from Maven Central and run as a local Java process); the ``jmspy-broker`` command does the
same from a shell. :mod:`.container` offers the Docker/Testcontainers alternative.
"""

from __future__ import annotations

from typing import Any

from .artemis import ArtemisBroker, ArtemisDistribution, ensure_distribution
from .base import Broker, BrokerProvisioningError, cache_dir

__all__ = [
    "SUPPORTED_KINDS",
    "ArtemisBroker",
    "ArtemisDistribution",
    "Broker",
    "BrokerProvisioningError",
    "cache_dir",
    "ensure_distribution",
    "provision",
]

SUPPORTED_KINDS: tuple[str, ...] = ("artemis",)


def provision(kind: str, *, timeout: float = 60.0, **options: Any) -> ArtemisBroker:
    """Fetch if needed, create and start a broker of ``kind``; the caller stops it.

    ``options`` go to the broker's constructor (``port=``, ``broker_properties=``, ...).
    """
    normalized = kind.strip().lower()
    if normalized == "artemis":
        broker = ArtemisBroker(**options)
        try:
            return broker.start(timeout=timeout)
        except BaseException:
            broker.stop()
            raise
    raise BrokerProvisioningError(
        f"unknown broker kind {kind!r}; supported: {', '.join(SUPPORTED_KINDS)}"
    )
