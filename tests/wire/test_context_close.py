"""The connection a JMSContext shares with the contexts created from it closes with the last
of them, also when one context's close fails part way, and a context cannot be created on it
once it has closed (a createContext() that raced the close of the context it was called on)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import jmspy
from jmspy.context import JMSContext
from jmspy.session import Session

from .client_support import Clients, clients_fixture
from .peer import ScriptedPeer


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def test_a_context_whose_session_close_fails_still_releases_the_shared_connection(
    peer: ScriptedPeer, clients: Clients, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session's close failed after it had closed the session (an error out of a
    consumer's close, say): the context stayed open and kept its share, so the connection
    stayed open after every context sharing it was closed."""
    context = clients.factory(peer).createContext()
    other = context.createContext(jmspy.AUTO_ACKNOWLEDGE)
    context.createConsumer(context.createQueue("q"))  # the context's session exists
    close_within_deadline = Session._close_within_deadline

    def failing(session: Session) -> None:
        close_within_deadline(session)
        raise RuntimeError("a consumer's close failed")

    monkeypatch.setattr(Session, "_close_within_deadline", failing)
    with pytest.raises(RuntimeError, match="consumer's close failed"):
        context.close()
    monkeypatch.undo()
    with pytest.raises(jmspy.IllegalStateRuntimeException, match="closed"):
        context.createProducer()
    other.close()
    peer.wait_for_close()


def test_no_context_joins_a_connection_its_last_context_closed(
    peer: ScriptedPeer, clients: Clients
) -> None:
    context = clients.factory(peer).createContext()
    shared = context._shared
    context.close()
    peer.wait_for_close()
    # What a createContext() that had passed its closed check when the close ran would do.
    with pytest.raises(jmspy.IllegalStateRuntimeException, match="JMSContext is closed"):
        JMSContext(shared, jmspy.AUTO_ACKNOWLEDGE)
