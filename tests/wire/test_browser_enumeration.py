"""QueueBrowser.getEnumeration() is a java.util.Enumeration as well as a Python iterator:
Java's hasMoreElements()/nextElement() loop ports as it is (it raised AttributeError on the
generator it was), nextElement() past the end raises NoSuchElementException, and close() (or
``with``) releases the enumeration's link at once, also one never iterated (which held its
link until the browser was closed)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from proton import Message as AmqpMessage

import jmspy

from .client_support import Clients, clients_fixture
from .peer import ScriptedPeer


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


def _browser(peer: ScriptedPeer, clients: Clients, count: int) -> jmspy.QueueBrowser:
    for i in range(count):
        peer.enqueue("q", AmqpMessage(body=f"m{i}"))
    session = clients.connect(peer, start=True).createSession()
    return session.createBrowser(session.createQueue("q"))


def _browse_link(peer: ScriptedPeer) -> str:
    attach = peer.wait_for_attach("q", role="receiver")
    assert attach.name.startswith("jmspy:browser:"), attach.name
    return attach.name


def _enumeration(
    peer: ScriptedPeer, clients: Clients, count: int
) -> tuple[jmspy.QueueBrowser, jmspy.MessageEnumeration[jmspy.Message], str]:
    """A browser of ``count`` queued messages, its enumeration and that one's link name."""
    browser = _browser(peer, clients, count)
    enumeration = browser.getEnumeration()
    return browser, enumeration, _browse_link(peer)


def test_the_java_loop_walks_the_enumeration_and_its_end_releases_the_link(
    peer: ScriptedPeer, clients: Clients
) -> None:
    _, enumeration, link = _enumeration(peer, clients, 3)
    texts = []
    while enumeration.hasMoreElements():
        texts.append(enumeration.nextElement().getText())
    assert texts == ["m0", "m1", "m2"]
    assert not enumeration.has_more_elements()
    with pytest.raises(jmspy.NoSuchElementException, match="no more elements"):
        enumeration.nextElement()
    assert peer.wait_for_detach(link).closed


def test_has_more_elements_keeps_the_element_for_next_element(
    peer: ScriptedPeer, clients: Clients
) -> None:
    enumeration = _browser(peer, clients, 2).getEnumeration()
    assert enumeration.hasMoreElements() and enumeration.hasMoreElements()
    assert next(enumeration).getText() == "m0"  # Python's next() and Java's calls mix
    assert enumeration.nextElement().getText() == "m1"
    assert list(enumeration) == []


def test_closing_an_enumeration_never_iterated_releases_its_link(
    peer: ScriptedPeer, clients: Clients
) -> None:
    browser, enumeration, link = _enumeration(peer, clients, 2)
    enumeration.close()
    assert peer.wait_for_detach(link).closed  # the browser is still open
    assert not enumeration.hasMoreElements()
    # The browser is still usable (the scripted peer has no copy semantics: the closed link
    # took its messages, so the new enumeration is empty).
    assert list(browser.getEnumeration()) == []
    assert len([a for a in peer.attaches if a.address == "q"]) == 2


def test_leaving_a_with_block_releases_the_link_of_an_enumeration_half_read(
    peer: ScriptedPeer, clients: Clients
) -> None:
    browser = _browser(peer, clients, 3)
    with browser.getEnumeration() as enumeration:
        link = _browse_link(peer)
        assert enumeration.nextElement().getText() == "m0"
    assert peer.wait_for_detach(link).closed
    with pytest.raises(jmspy.NoSuchElementException):
        enumeration.nextElement()
