"""Fixtures for wire tests: a scripted AMQP peer per test (see tests/wire/peer.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from .peer import ScriptedPeer
from .peer_coordinator import coordinator  # noqa: F401 - a fixture for the tests that ask

PeerFactory = Callable[..., ScriptedPeer]


@pytest.fixture
def peer() -> Iterator[ScriptedPeer]:
    """A default ScriptedPeer (Artemis-like capabilities, accepts any credentials), strict:
    frames nobody expected fail the test at teardown (see peer_strict.py)."""
    p = ScriptedPeer(strict=True)
    try:
        yield p
    finally:
        # close() re-raises failures from the peer thread, failing the test at teardown.
        p.close()


@pytest.fixture
def make_peer() -> Iterator[PeerFactory]:
    """``make_peer(**options)`` builds ScriptedPeers (strict unless ``strict=False``) that are
    all closed after the test."""
    made: list[ScriptedPeer] = []

    def factory(**options: Any) -> ScriptedPeer:
        p = ScriptedPeer(**{"strict": True, **options})
        made.append(p)
        return p

    yield factory
    errors: list[BaseException] = []
    for p in made:
        try:
            p.close()
        except BaseException as e:  # close them all before reporting the first failure
            errors.append(e)
    if errors:
        raise errors[0]
