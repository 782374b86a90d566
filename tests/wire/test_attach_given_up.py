"""An attach the broker does not answer within jms.requestTimeout is given up: the create call
raises, and the link is closed at once (its detach goes out without a wait), so a late answer
from the broker leaves no orphan producer, browser or subscription link on either side."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

import jmspy

from .client_support import Clients, clients_fixture, wait_until
from .conftest import PeerFactory
from .peer import AttachRecord, DetachRecord, LinkScript


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _hang_on(address: str) -> Callable[[AttachRecord], LinkScript | None]:
    def scripts(attach: AttachRecord) -> LinkScript | None:
        return LinkScript(hang=True) if attach.address == address else None

    return scripts


CREATES: dict[str, Callable[[jmspy.Session], Any]] = {
    "producer": lambda s: s.createProducer(s.createQueue("silent")),
    "consumer": lambda s: s.createConsumer(s.createQueue("silent")),
    "browser": lambda s: s.createBrowser(s.createQueue("silent")).getEnumeration(),
}


@pytest.mark.parametrize("create", list(CREATES))
def test_an_unanswered_attach_is_detached_and_forgotten(
    make_peer: PeerFactory, clients: Clients, create: str
) -> None:
    peer = make_peer(links=_hang_on("silent"), strict=False)
    connection = clients.connect(peer, request_timeout=300)
    session = connection.createSession()
    for _ in range(3):
        with pytest.raises(jmspy.JMSException, match="did not complete"):
            CREATES[create](session)
    silent = [a.name for a in peer.attaches if a.address == "silent"]
    assert len(silent) == 3

    def detached() -> set[str | None]:
        return {r.link_name for r in peer.records() if isinstance(r, DetachRecord)}

    # Each given-up link is closed without waiting for the broker; before, none was, and
    # each stayed in the session until it closed.
    wait_until(lambda: set(silent) <= detached(), what="a detach for every given-up attach")
    assert all(r.closed for r in peer.records() if isinstance(r, DetachRecord))
    # Closed here as well: a reconnect (failover) re-creates only the links that are not, so
    # a given-up attach is not attached again on the next transport either.
    given_up = [link for link in session._amqp._links if link.spec.address == "silent"]
    assert all(link.closed for link in given_up)
    # The session and connection carry on.
    session.createProducer(session.createQueue("open")).send(session.createTextMessage("on"))
