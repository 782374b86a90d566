"""A temporary destination lives as long as the connection that created it: once that
connection is closed the client marks it deleted, as it does when a reconnect loses it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import jmspy

from .client_support import Clients, clients_fixture


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def test_a_temporary_queue_is_deleted_with_its_connection(make_peer: Any, clients: Clients) -> None:
    """The broker deletes it with the connection; the client says so (as after a reconnect),
    and another connection's send to it is refused by the client."""
    peer = make_peer(strict=False)
    owner = clients.connect(peer)
    temporary = owner.createSession().createTemporaryQueue()
    assert not temporary.deleted
    owner.close()
    assert temporary.deleted
    session = clients.connect(peer).createSession()
    with pytest.raises(jmspy.IllegalStateException, match="has been deleted"):
        session.createProducer(None).send(temporary, session.createTextMessage("late"))
