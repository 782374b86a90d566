"""Freeing proton objects as jmspy does (proton_internals): a link or a session is freed once
nothing holds it, on the engine thread, never with unsettled deliveries or once the engine is
done; pn_refcount counts the wrappers of an object. Two in-memory proton connections are
pumped into each other: no sockets, no broker. (Split from test_proton_internals.py.)"""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

from proton import Link
from proton_pair_support import ProtonPair as _Pair
from proton_pair_support import send_one as _send_one

from jmspy._amqp import proton_internals
from jmspy._amqp.proton_internals import FreedEndpoints, collector_ref, dispatch_events


class _Marker:
    """Hung on a proton object's record: it goes when proton finalizes the object."""


def _closed_link_pair(pair: _Pair) -> tuple[Link, Link]:
    sender, receiver = pair.open_link_pair()
    sender.close()
    pair.pump()
    receiver.close()
    pair.pump()
    closed = Link.LOCAL_CLOSED | Link.REMOTE_CLOSED
    assert sender.state & closed == closed
    return sender, receiver


def _end_session_at_both_ends(pair: _Pair, session: Any) -> None:
    session.close()
    pair.pump()
    server_session = pair.server.session_head(0)
    assert server_session is not None
    server_session.close()
    pair.pump()


def _on_another_thread(work: Any) -> None:
    thread = threading.Thread(target=work)
    thread.start()
    thread.join(10)
    assert not thread.is_alive()


def test_pn_refcount_counts_the_wrappers_of_an_object() -> None:
    pair = _Pair()
    sender, _ = pair.open_link_pair()
    ref = proton_internals._address(sender._impl)
    before = proton_internals._refcount(ref)
    another = Link.wrap(sender._impl)
    assert proton_internals._refcount(ref) == before + 1
    del another
    assert proton_internals._refcount(ref) == before


def _dispatch(pair: _Pair) -> None:
    dispatch_events(collector_ref(pair.collector), None, lambda event: None)


def test_a_link_is_freed_and_goes_on_the_engine_thread_once_nothing_else_holds_it() -> None:
    pair = _Pair()
    sender, _ = _closed_link_pair(pair)
    sender.marker = _Marker()
    gone = weakref.ref(sender.marker)
    freed = FreedEndpoints(pair.client)
    assert freed.free_link(sender)
    assert len(freed) == 1
    _dispatch(pair)
    freed.reap()
    assert len(freed) == 1 and gone() is not None, "freed while a wrapper still holds it"
    holder = [sender]
    del sender
    # The application drops the last wrapper on its own thread: the link is not freed yet, so
    # its session keeps it, and nothing is destroyed there.
    _on_another_thread(holder.clear)
    gc.collect()
    assert gone() is not None
    freed.reap()
    assert len(freed) == 0
    # Freed and let go in the same call; its LINK_FINAL event, popped next on the engine
    # thread, holds the last reference.
    assert gone() is not None
    _dispatch(pair)
    assert gone() is None, "the link was not destroyed when its final event went"


def test_a_link_is_freed_once_and_not_with_unsettled_deliveries_or_of_another_connection() -> None:
    pair = _Pair()
    sender, receiver = pair.open_link_pair()
    _send_one(pair, sender)
    assert sender.unsettled == 1
    freed = FreedEndpoints(pair.client)
    assert not freed.free_link(sender), "freeing would settle a delivery still to be acknowledged"
    assert not freed.free_link(receiver), "the server's link is not this connection's"
    other = _Pair()
    other_sender, _ = _closed_link_pair(other)
    assert freed.free_link(other_sender) is False
    mine, _ = _closed_link_pair(_Pair())
    theirs = FreedEndpoints(mine.session.connection)
    assert theirs.free_link(mine) and not theirs.free_link(mine), "freed twice"


def test_freeing_a_session_frees_its_links_first_then_the_session() -> None:
    pair = _Pair()
    sender, _ = _closed_link_pair(pair)
    session = sender.session
    second = session.receiver("r")
    second.open()
    pair.pump()
    # A link still open on the session: freed, it would never be detached and would stay,
    # freed, until the connection goes; so the session is not freed.
    _end_session_at_both_ends(pair, session)
    freed = FreedEndpoints(pair.client)
    assert not freed.free_session(session)
    # Its links closed at both ends (as jmspy closes them before the session), it is.
    other = _Pair()
    sender, _ = _closed_link_pair(other)
    session = sender.session
    _end_session_at_both_ends(other, session)
    sender.marker = _Marker()
    session.marker = _Marker()
    link_gone, session_gone = weakref.ref(sender.marker), weakref.ref(session.marker)
    freed = FreedEndpoints(other.client)
    assert freed.free_session(session)
    assert len(freed) == 2
    assert not freed.free_session(session), "listed twice"
    del sender, session
    gc.collect()
    assert link_gone() is not None and session_gone() is not None
    _dispatch(other)
    freed.reap()  # the link: the session still has it, so it waits
    assert len(freed) == 1 and session_gone() is not None
    _dispatch(other)
    assert link_gone() is None and other.client.link_head(0) is None
    freed.reap()  # now the session
    _dispatch(other)
    assert len(freed) == 0 and session_gone() is None


def test_a_session_with_unsettled_deliveries_is_not_freed() -> None:
    pair = _Pair()
    sender, _ = pair.open_link_pair()
    _send_one(pair, sender)
    freed = FreedEndpoints(pair.client)
    assert not freed.free_session(sender.session)
    assert len(freed) == 0 and pair.client.link_head(0) is not None


def test_once_the_engine_is_done_nothing_is_freed() -> None:
    pair = _Pair()
    sender, _ = _closed_link_pair(pair)
    ref = proton_internals._address(sender._impl)
    freed = FreedEndpoints(pair.client)
    assert freed.free_link(sender)
    held = proton_internals._refcount(ref)
    freed.release_all()
    # Never freed: it goes with its connection, as without freeing.
    assert proton_internals._refcount(ref) == held and len(freed) == 0
    later, _ = pair.open_link_pair()
    assert not freed.free_link(later)
