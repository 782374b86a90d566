"""Interop tests: jmspy against Apache Qpid JMS (Java) through the session's broker.

The Java client is built (see ``java_client.py``) before the first test, after collection,
outside any test's timeout. A missing ``java``, a missing ``mvn`` when a build is needed, or a
failed build fails every interop test with a one-line reason: these tests never skip.

Every test here is marked ``broker`` (``pytest_collection_modifyitems`` below), so the broker
tally in ``tests/conftest.py`` counts them and ``JMSPY_REQUIRE_BROKER_TESTS`` covers them.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import pytest
from interop_support import (
    INTEROP_DIR,
    InteropSetupError,
    JavaBuild,
    JavaClient,
    build_java_client,
)


@dataclasses.dataclass
class _State:
    build: JavaBuild | None = None
    error: str | None = None


_STATE = pytest.StashKey[_State]()


def _ensure_built(config: pytest.Config) -> _State:
    state = config.stash.setdefault(_STATE, _State())
    if state.build is None and state.error is None:
        try:
            state.build = build_java_client()
        except InteropSetupError as exc:
            state.error = str(exc)
        except Exception as exc:  # reported by the fixture, as an ERROR per interop test
            state.error = f"building the Java interop client failed: {exc!r}"
    return state


def _is_interop(item: pytest.Item) -> bool:
    return INTEROP_DIR in item.path.parents


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _is_interop(item):
            item.add_marker(pytest.mark.broker)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Build the Java client before the first test, outside any test's timeout."""
    config = session.config
    if config.option.collectonly or not any(_is_interop(item) for item in session.items):
        return
    state = _ensure_built(config)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if state.build is not None:
        how = "cached" if state.build.cached else "built with Maven"
        line = f"Java interop client {how} in {state.build.seconds:.2f}s: {state.build.jar}"
    else:
        line = f"Java interop client unavailable: {state.error}"
    if reporter is not None:
        reporter.write_line(f"jmspy: {line}")
    else:
        print(f"jmspy: {line}", file=sys.stderr)


@pytest.fixture(scope="session")
def java_build(request: pytest.FixtureRequest) -> JavaBuild:
    """The built Java client; a missing toolchain or a failed build fails the test."""
    state = _ensure_built(request.config)
    if state.build is None:
        pytest.fail(state.error or "the Java interop client was not built", pytrace=False)
    return state.build


@pytest.fixture(scope="session")
def java(java_build: JavaBuild, broker: Any) -> JavaClient:
    """The Qpid JMS command-line client, pointed at the session's broker."""
    return JavaClient(java_build, broker.url, broker.username, broker.password)


# The broker tests' helpers live in tests/broker/conftest.py, which does not reach this
# directory; these are the same fixtures.
