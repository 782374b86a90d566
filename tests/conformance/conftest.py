"""Fixtures for running the conformance checks against the session's broker.

The session-wide ``broker`` fixture lives in ``tests/conftest.py``; the modules that use it
here mark themselves ``broker`` (``pytestmark``) so they count as broker tests.
"""

from __future__ import annotations

from typing import Any

import pytest
from jmspy.conformance.context import Target, probe_capabilities
from jmspy.conformance.model import CapabilityReport
from jmspy.conformance.settings import ARTEMIS_TEST_ADDRESS_SETTINGS


def _has_redelivery_settings(broker: Any) -> bool:
    """True when the session's Artemis was started with the suite's redelivery address
    settings (the jmspy.rd.* lines; RD-8 and RD-12 need them, else they are not applicable).
    The refused destination DD-9 needs is probed by the suite itself."""
    if broker.source != "local" or broker.kind != "artemis" or broker.broker is None:
        return False
    lines = set(getattr(broker.broker, "_properties", ()))
    wanted = {line for line in ARTEMIS_TEST_ADDRESS_SETTINGS if '"jmspy.rd.' in line}
    return wanted <= lines


@pytest.fixture(scope="session")
def conformance_target(broker: Any) -> Target:
    return Target(
        label=f"{broker.kind} {broker.version}",
        kind=broker.kind,
        url=broker.url,
        username=broker.username,
        password=broker.password,
        version=broker.version,
        source="provisioned" if broker.source == "local" else broker.source,
        address_settings=_has_redelivery_settings(broker),
    )


@pytest.fixture(scope="session")
def conformance_capabilities(conformance_target: Target) -> tuple[CapabilityReport, dict[str, Any]]:
    return probe_capabilities(conformance_target)
