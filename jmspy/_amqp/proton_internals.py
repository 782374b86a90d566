"""Every use of python-qpid-proton's private API in jmspy, in one place.

The engine's hot path skips proton's public event wrappers (see ``dispatch_events``) and calls
proton's C functions with the GIL held (see ``_c_function``), and that needs the C binding
(``cproton``, ``cproton_ffi``) and the ``_impl`` handles of proton's wrapper objects. Those are
not proton's documented API and may change in any release, so nothing else in jmspy imports
``cproton`` or reads ``_impl``: it calls the functions here. ``pyproject.toml`` bounds
python-qpid-proton to the releases these were checked against, and
``tests/unit/test_proton_internals.py`` fails when the installed proton no longer has them or
they behave differently.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from cproton import PN_ACCEPTED, PN_DELIVERY, PN_TRANSPORT
from cproton_ffi import __file__ as _cproton_ffi_path
from cproton_ffi import ffi, lib
from proton import Collector, Delivery, Event, Link, Transport

__all__ = [
    "CollectorRef",
    "DeliveryHandle",
    "DeliveryRef",
    "HeldWrappers",
    "FreedEndpoints",
    "LinkRef",
    "OrphanedRefs",
    "TransportRef",
    "collector_ref",
    "accept_and_settle",
    "accept_and_settle_all",
    "settle_all_with_state",
    "delivery_aborted",
    "delivery_settled",
    "delivery_link_ref",
    "delivery_ref",
    "dispatch_events",
    "link_credit",
    "link_ref",
    "outcome_of",
    "read_transfer",
    "settle_ref",
    "start_transfer",
    "transport_capacity",
    "transport_closed",
    "transport_peek",
    "transport_pending",
    "transport_pop",
    "transport_push",
    "transport_ref",
    "transport_tick",
    "wrap_delivery",
    "wrap_link",
]

# Proton's C functions on the hot paths, called with the GIL held.
#
# python-qpid-proton's binding (cffi) releases the GIL around every call into proton, however
# short. With other Python threads waiting (a session's dispatch thread, the application's
# threads, other connections' engines) each release hands the GIL over, and the engine waits to
# get it back: at 100 connections with a thread each, a rebuilt binding that keeps the GIL moved
# 2.6 times the messages at 0.3 times the CPU per message (docs/performance.md). Proton's calls
# never block, so the engine calls the functions on its paths per message and per turn through
# ctypes with the GIL kept (PYFUNCTYPE), at the addresses cffi gives for them. Pointers are
# then plain ints (0 or None for NULL). JMSPY_PROTON_RELEASE_GIL=1 calls them the way the binding
# does (releasing the GIL), to measure the difference.
_RELEASE_GIL = os.environ.get("JMSPY_PROTON_RELEASE_GIL", "") == "1"
_FUNCTYPE = ctypes.CFUNCTYPE if _RELEASE_GIL else ctypes.PYFUNCTYPE


class _Bytes(ctypes.Structure):
    """pn_bytes_t (a delivery tag is one), passed by value."""

    _fields_ = [("size", ctypes.c_size_t), ("start", ctypes.c_char_p)]


# C types as cffi reads them from proton's headers -> ctypes. A ``char *`` is bytes given to
# proton (c_char_p) except where proton writes into it (_WRITES_INTO: an address).
_PRIMITIVES: dict[str, Any] = {
    "_Bool": ctypes.c_bool,
    "int": ctypes.c_int,
    "size_t": ctypes.c_size_t,
    "ssize_t": ctypes.c_ssize_t,
    "int64_t": ctypes.c_int64,
    "uint64_t": ctypes.c_uint64,
}
_WRITES_INTO = frozenset({"pn_link_recv", "pn_transport_peek"})


def _ctype(kind: str, cname: str, function: str) -> Any:
    if kind == "pointer":
        if cname == "char *" and function not in _WRITES_INTO:
            return ctypes.c_char_p
        return ctypes.c_void_p
    if kind == "enum":
        return ctypes.c_int
    if kind == "struct" and cname == "struct pn_bytes_t":
        return _Bytes
    if kind == "void":
        return None
    if kind == "primitive" and cname in _PRIMITIVES:
        return _PRIMITIVES[cname]
    raise TypeError(f"{function}: no ctypes type for the C type {cname!r}")


def _c_function(name: str) -> Any:
    """Proton's C function ``name`` as a ctypes function (see _FUNCTYPE), its C types taken
    from cffi's reading of proton's headers, so they cannot drift from proton's."""
    pointer = ffi.addressof(lib, name)
    declared = ffi.typeof(pointer)
    restype = _ctype(declared.result.kind, declared.result.cname, name)
    argtypes = [_ctype(arg.kind, arg.cname, name) for arg in declared.args]
    return _FUNCTYPE(restype, *argtypes)(int(ffi.cast("uintptr_t", pointer)))


_collector_peek = _c_function("pn_collector_peek")
_collector_pop = _c_function("pn_collector_pop")
_event_type = _c_function("pn_event_type")
_event_delivery = _c_function("pn_event_delivery")
_incref = _c_function("pn_incref")
_decref = _c_function("pn_decref")
_delivery_new = _c_function("pn_delivery")
_delivery_link = _c_function("pn_delivery_link")
_delivery_readable = _c_function("pn_delivery_readable")
_delivery_partial = _c_function("pn_delivery_partial")
_delivery_pending = _c_function("pn_delivery_pending")
_delivery_aborted = _c_function("pn_delivery_aborted")
_delivery_update = _c_function("pn_delivery_update")
_delivery_settle = _c_function("pn_delivery_settle")
_delivery_settled = _c_function("pn_delivery_settled")
_delivery_updated = _c_function("pn_delivery_updated")
_delivery_remote_state = _c_function("pn_delivery_remote_state")
_delivery_local = _c_function("pn_delivery_local")
_disposition_data = _c_function("pn_disposition_data")
_data_clear = _c_function("pn_data_clear")
_data_decode = _c_function("pn_data_decode")
_link_recv = _c_function("pn_link_recv")
_link_send = _c_function("pn_link_send")
_link_advance = _c_function("pn_link_advance")
_link_credit = _c_function("pn_link_credit")
_transport_pending = _c_function("pn_transport_pending")
_transport_capacity = _c_function("pn_transport_capacity")
_transport_closed = _c_function("pn_transport_closed")
_transport_tick = _c_function("pn_transport_tick")
_transport_push = _c_function("pn_transport_push")
_transport_pop = _c_function("pn_transport_pop")
_transport_peek = _c_function("pn_transport_peek")
_link_free = _c_function("pn_link_free")
_link_head = _c_function("pn_link_head")
_link_next = _c_function("pn_link_next")
_link_session = _c_function("pn_link_session")
_link_unsettled = _c_function("pn_link_unsettled")
_link_state = _c_function("pn_link_state")
_session_free = _c_function("pn_session_free")
_session_connection = _c_function("pn_session_connection")
# pn_refcount is part of proton's object API but not of the binding's declarations: taken
# from the same library, with the same calling convention as the rest.
_refcount_address = ctypes.cast(ctypes.CDLL(_cproton_ffi_path).pn_refcount, ctypes.c_void_p).value
if not _refcount_address:  # pragma: no cover - a proton build without its object API
    raise ImportError("python-qpid-proton's library has no pn_refcount")
_refcount = _FUNCTYPE(ctypes.c_int, ctypes.c_void_p)(_refcount_address)

_PN_EOS = -1

# A proton C object as jmspy's hot paths hold it: its address, an int. Addresses of the same
# object are equal, so a link's can key a dict; it is only valid while proton keeps the object,
# which a DeliveryHandle or a proton wrapper guarantees.
DeliveryRef = int
LinkRef = int
CollectorRef = int
TransportRef = int


def _address(impl: Any) -> int:
    """The address of a proton object the binding handed out (a cffi pointer)."""
    return int(ffi.cast("uintptr_t", impl))


class OrphanedRefs:
    """References to proton objects whose Python holder went on another thread, for the engine
    of their connection to drop.

    Proton is not thread-safe, and the last Python reference to a holder can go on any thread
    (an application thread, a garbage collection): a :class:`DeliveryHandle` dropped
    unsettled. While the engine runs, the reference is queued here and the engine drops it on
    its next turn (:meth:`release`); once
    the engine has finished (:meth:`release` with ``engine_done``), nothing touches that
    connection's proton objects any more and a late one is dropped at once.
    """

    __slots__ = ("_refs", "_lock", "_engine_done")

    def __init__(self) -> None:
        self._refs: list[int] = []
        # Re-entrant: a collection inside release() may run a handle's __del__ on this thread.
        self._lock = threading.RLock()
        self._engine_done = False

    def __bool__(self) -> bool:
        return bool(self._refs)

    def adopt(self, ref: int, _decref: Callable[[int], int] = _decref) -> None:
        """Take a reference from a holder that is going (any thread; bound as in
        :meth:`DeliveryHandle.__del__`, for holders collected at interpreter exit)."""
        with self._lock:
            if not self._engine_done:
                self._refs.append(ref)
                return
        _decref(ref)

    def release(self, engine_done: bool = False) -> None:
        """Drop the queued references (the engine's thread; ``engine_done``: its last call)."""
        with self._lock:
            refs, self._refs = self._refs, []
            if engine_done:
                self._engine_done = True
        for ref in refs:
            _decref(ref)


def _reference_counts(wrappers: list[object]) -> list[int]:
    """``sys.getrefcount`` of each of ``wrappers``, counted the same way every time (the list,
    the loop's name and the call's argument are references too)."""
    return [sys.getrefcount(wrapper) for wrapper in wrappers]


# What _reference_counts gives for an object held by its list alone.
_HELD_BY_THE_LIST_ONLY = _reference_counts([object()])[0]


class HeldWrappers:
    """Proton's wrappers of a connection's links and sessions, which its engine lets go of on
    its own thread.

    A wrapper's ``__del__`` decrements the proton object's reference count without the GIL,
    and proton is not thread-safe: on another thread it could overlap the engine's own change
    of the same count (a lost update is a leak or an early free). The provider objects that
    carry the wrappers (a consumer's receiver link, a session) form reference cycles once
    closed, and the garbage collector frees them on whichever thread it runs, usually an
    application's. So the engine holds a reference to every wrapper it makes for them, and a
    holder going anywhere only lowers the wrapper's Python count; now and then (:meth:`sweep`,
    at most every :data:`SWEEP_INTERVAL_S`) the engine lets go of the wrappers nothing else
    holds, which then go on its thread. Python's counts are exact under the GIL, so no weak
    reference callback or collection order is relied on. Engine thread only.
    """

    SWEEP_INTERVAL_S = 0.5

    __slots__ = ("_wrappers", "_next_sweep")

    def __init__(self) -> None:
        self._wrappers: list[object] = []
        self._next_sweep = 0.0

    def __len__(self) -> int:
        return len(self._wrappers)

    def hold(self, wrapper: object) -> None:
        """Keep ``wrapper`` until nothing else holds it (engine thread)."""
        self._wrappers.append(wrapper)

    def sweep(self, now: float) -> None:
        """Let go of the wrappers only this holds, if the last sweep was long enough ago."""
        if now < self._next_sweep or not self._wrappers:
            return
        self._next_sweep = now + self.SWEEP_INTERVAL_S
        counts = _reference_counts(self._wrappers)
        if min(counts) > _HELD_BY_THE_LIST_ONLY:
            return
        kept = [
            w for w, n in zip(self._wrappers, counts, strict=True) if n > _HELD_BY_THE_LIST_ONLY
        ]
        self._wrappers = kept  # the others' last reference goes here, on this thread

    def clear(self) -> None:
        """The engine has ended: nothing touches the connection's proton objects any more."""
        self._wrappers = []


_CLOSED = Link.LOCAL_CLOSED | Link.REMOTE_CLOSED


class FreedEndpoints:
    """Links and sessions of one connection that are done with, freed by its engine once
    nothing but proton's own lists holds them.

    Proton keeps a link or session it was never asked to free, with its record, for as long as
    the connection: one that opens and closes consumers or sessions for months would keep every
    one. A freed one is destroyed when its last reference goes, and destroying it edits its
    parent's lists and calls back into Python, so it must happen on the engine's thread with
    nothing else touching the object. An earlier design freed at once and held a reference
    until the engine was the last holder; objects still referenced when a transport ended were
    then destroyed wherever their last reference went (a collection on another thread), and
    proton's heap was corrupted under load. So nothing here is ever left freed but alive:
    :meth:`reap` frees an object only when a reference of the engine's own is the only one
    (no wrapper, event or delivery holds it; proton's incref of a parent-owned endpoint marks it
    referenced instead of counting, so the count is then 1), and drops that reference in the
    same call, so the object goes on the engine thread (a link through the LINK_FINAL event the
    engine pops next, once its detach is written, which one engine step after its close it is).
    What is not freed when the engine ends goes with the connection, as without freeing.
    """

    __slots__ = ("_done", "_connection", "_engine_done", "_on_listed")

    def __init__(self, connection: Any, on_listed: Callable[[], None] | None = None) -> None:
        # Told (engine thread) when something is listed, so that an idle engine still reaps.
        self._on_listed = on_listed
        # address -> True for a session, False for a link, in the order they were done with:
        # a session after its links, which go first.
        self._done: dict[int, bool] = {}
        self._connection = _address(connection._impl)
        self._engine_done = False

    def __bool__(self) -> bool:
        return bool(self._done)

    def __len__(self) -> int:
        return len(self._done)

    def free_link(self, link: Link) -> bool:
        """Engine thread: a link closed at both ends with nothing unsettled (proton settles
        what is left when freeing, which would drop an acknowledgement still to come) is to be
        freed. Whether it will be; a link of an earlier transport, or one already listed, not."""
        ref = _address(link._impl)
        if (
            not self._owns_link(ref)
            or _link_unsettled(ref) > 0
            or _link_state(ref) & _CLOSED != _CLOSED
        ):
            return False
        self._done[ref] = False
        self._listed()
        return True

    def free_session(self, session: Any) -> bool:
        """Engine thread: a session ended at both ends is to be freed, with the links it still
        has. Not when one of them has unsettled deliveries (see free_link): the session then
        stays until the connection closes, as every session did before."""
        ref = _address(session._impl)
        if ref in self._done or self._engine_done or _session_connection(ref) != self._connection:
            return False
        links = []
        link = _link_head(self._connection, 0)
        while link:
            if _link_session(link) == ref:
                if _link_unsettled(link) > 0 or _link_state(link) & _CLOSED != _CLOSED:
                    # Unsettled deliveries, or a link not closed at both ends, whose detach
                    # would never be written: freed, it would stay alive, freed, until the
                    # connection goes, which is what must not happen.
                    return False
                links.append(link)
            link = _link_next(link, 0)
        for link in links:
            self._done.setdefault(link, False)
        self._done[ref] = True
        self._listed()
        return True

    def _listed(self) -> None:
        if self._on_listed is not None:
            self._on_listed()

    def _owns_link(self, ref: int) -> bool:
        return (
            ref not in self._done
            and not self._engine_done
            and _session_connection(_link_session(ref)) == self._connection
        )

    def _has_links(self, session_ref: int) -> bool:
        link = _link_head(self._connection, 0)
        while link:
            if _link_session(link) == session_ref:
                return True
            link = _link_next(link, 0)
        return False

    def reap(self) -> None:
        """Engine thread, between steps: free, and destroy here, what only proton's lists
        hold; the rest waits for a later reap. A session waits until its links are gone."""
        for ref, is_session in list(self._done.items()):
            if is_session and self._has_links(ref):
                continue
            _incref(ref)
            if _refcount(ref) == 1:
                del self._done[ref]
                (_session_free if is_session else _link_free)(ref)
            _decref(ref)

    def release_all(self) -> None:
        """The engine's last call: nothing runs proton for this connection after it, and what
        was not freed goes with the connection."""
        self._engine_done = True
        self._done = {}


class DeliveryHandle:
    """A received delivery, held by its address (one reference, as a proton wrapper holds).

    proton's ``Delivery`` wrapper costs two dispositions, a record lookup and an attribute
    dict per transfer; a consumer needs the wrapper only for the rare outcomes (released,
    rejected, modified, transactional), so it is built on demand by :meth:`wrap`.

    Proton is not thread-safe, and the last Python reference to a handle often goes on the
    thread that ran the listener: the engine thread drops the C reference itself
    (:meth:`release`) once it has settled the delivery. A handle that goes still holding its
    reference (a message dropped unsettled) hands it to its engine's :class:`OrphanedRefs`.
    """

    __slots__ = ("_ref", "_orphans")

    def __init__(self, ref: DeliveryRef, orphans: OrphanedRefs | None = None) -> None:
        _incref(ref)
        self._ref = ref
        self._orphans = orphans

    def __del__(self, _decref: Callable[[int], int] = _decref) -> None:
        # The function is bound at definition: at interpreter exit the module's globals may
        # already be gone when the last handles are collected.
        ref = self._ref
        if ref:
            orphans = self._orphans
            if orphans is not None:
                orphans.adopt(ref)
            else:
                _decref(ref)

    def release(self) -> None:
        """Drop the reference (engine thread); the handle is not used after this."""
        ref = self._ref
        if ref:
            self._ref = 0
            _decref(ref)

    def wrap(self) -> Delivery:
        """proton's wrapper for this delivery."""
        return wrap_delivery(self._ref)


def delivery_link_ref(ref: DeliveryRef) -> LinkRef:
    """The address of the link a delivery is on."""
    link: int = _delivery_link(ref)
    return link


def delivery_ref(delivery: Delivery) -> DeliveryRef:
    """The address of a proton delivery."""
    return _address(delivery._impl)


def link_ref(link: Link) -> LinkRef:
    """The address of a proton link (the key :func:`delivery_link_ref` gives back)."""
    return _address(link._impl)


def collector_ref(collector: Collector) -> CollectorRef:
    """The address of a proton collector (what :func:`dispatch_events` reads)."""
    return _address(collector._impl)


def transport_ref(transport: Transport) -> TransportRef:
    """The address of a proton transport (what the ``transport_*`` functions take)."""
    return _address(transport._impl)


def wrap_link(ref: LinkRef) -> Link:
    """proton's wrapper for a link."""
    link: Link = Link.wrap(ffi.cast("pn_link_t *", ref))
    return link


def wrap_delivery(ref: DeliveryRef) -> Delivery:
    """proton's wrapper for a delivery."""
    delivery: Delivery = Delivery.wrap(ffi.cast("pn_delivery_t *", ref))
    return delivery


def read_transfer(ref: DeliveryRef, link: LinkRef) -> bytearray | None:
    """The whole payload of a received transfer, the link advanced past it; None while the
    transfer is incomplete (more frames to come) or has no data to read.

    One exact-size buffer filled by proton: ``Receiver.recv`` allocates one of the size asked
    for, then copies what was read out of it, and reads the delivery state through wrappers.
    """
    if not _delivery_readable(ref) or _delivery_partial(ref):
        return None
    size = _delivery_pending(ref)
    payload = bytearray(size)
    if size:
        start = ctypes.c_char.from_buffer(payload)
        read = _link_recv(link, ctypes.addressof(start), size)
        del start  # releases the buffer, which may be shortened next
        if 0 <= read < size:  # proton handed over less than it said was pending
            del payload[read:]
    _link_advance(link)
    return payload


def start_transfer(link: LinkRef, tag: bytes, payload: bytes) -> DeliveryRef:
    """Write one whole transfer on a sender link (``link.delivery(tag)``, ``link.stream``,
    ``link.advance`` without the wrappers) and return its delivery's address, which stays valid
    until jmspy settles the delivery or the connection is released."""
    ref: int = _delivery_new(link, _Bytes(len(tag), tag))
    data = payload if type(payload) is bytes else bytes(payload)
    _link_send(link, data, len(data))
    _link_advance(link)
    return ref


def link_credit(link: LinkRef) -> int:
    """The link's credit."""
    credit: int = _link_credit(link)
    return credit


def outcome_of(ref: DeliveryRef) -> int | None:
    """A sent delivery's remote state when the peer has decided it (0 when it settled without
    an outcome), else None (no news: a delivery event for another reason)."""
    state: int = _delivery_remote_state(ref)
    if state == 0 and not (_delivery_updated(ref) and _delivery_settled(ref)):
        return None
    return state


def delivery_settled(ref: DeliveryRef) -> bool:
    """Whether the peer settled the delivery."""
    return bool(_delivery_settled(ref))


def delivery_aborted(ref: DeliveryRef) -> bool:
    """Whether the sender aborted the transfer."""
    return bool(_delivery_aborted(ref))


def settle_ref(ref: DeliveryRef) -> None:
    """Settle a delivery (no outcome of ours)."""
    _delivery_settle(ref)


def accept_and_settle(delivery: Delivery | DeliveryHandle) -> None:
    """``delivery.update(Delivery.ACCEPTED); delivery.settle()`` without copying the (empty)
    local data, annotations and condition into proton first, as ``update`` does: the
    acknowledgement of every received message goes through here."""
    if isinstance(delivery, DeliveryHandle):
        _delivery_update(delivery._ref, PN_ACCEPTED)
        _delivery_settle(delivery._ref)
        delivery.release()
        return
    ref = _address(delivery._impl)
    _delivery_update(ref, PN_ACCEPTED)
    _delivery_settle(ref)


def accept_and_settle_all(handles: list[DeliveryHandle]) -> None:
    """:func:`accept_and_settle` for many received deliveries, in order, in one call; each
    handle is released after (see :meth:`DeliveryHandle.release`)."""
    update = _delivery_update
    settle = _delivery_settle
    for handle in handles:
        ref = handle._ref
        update(ref, PN_ACCEPTED)
        settle(ref)
        handle.release()


def settle_all_with_state(
    handles: list[DeliveryHandle], state_type: int, encoded: bytes | bytearray
) -> None:
    """Settle received deliveries, in order, with the outcome ``state_type`` whose fields are
    the AMQP-encoded ``encoded`` (a transactional-state list, say): what
    ``delivery.local.data = fields; delivery.update(state_type); delivery.settle()`` does,
    with the fields encoded once for all instead of built through proton.Data per delivery.
    Each handle is released after (see :meth:`DeliveryHandle.release`)."""
    fields = bytes(encoded)  # ctypes passes bytes as they are, nothing else
    size = len(fields)
    for handle in handles:
        ref = handle._ref
        data = _disposition_data(_delivery_local(ref))
        _data_clear(data)
        _data_decode(data, fields, size)
        _delivery_update(ref, state_type)
        _delivery_settle(ref)
        handle.release()


def dispatch_events(
    collector: CollectorRef,
    on_delivery: Callable[[DeliveryRef], None] | None,
    on_event: Callable[[Event], None],
) -> None:
    """Hand every pending event of the collector at ``collector`` to ``on_delivery`` (the
    delivery's address, for delivery events, when given) or ``on_event`` (all others), popping
    each after its handler returns.

    Delivery events (one per settled send, one per received transfer) skip proton's Event
    wrapper, which builds delivery, link, session, connection and transport wrappers each
    time: 6-8 us of engine time per message. ``PN_TRANSPORT`` events (proton raises one
    whenever the transport has output, about one per engine pass) are dropped unseen: nothing
    in jmspy handles them, and with many connections each pass moves one or two messages.
    """
    peek = _collector_peek
    kind_of = _event_type
    while True:
        event = peek(collector)
        if not event:
            return
        kind = kind_of(event)
        if on_delivery is not None and kind == PN_DELIVERY:
            on_delivery(_event_delivery(event))
        elif kind != PN_TRANSPORT:
            on_event(Event.wrap(ffi.cast("pn_event_t *", event)))
        _collector_pop(collector)


# ---- the transport, per engine turn (the engine's own thread) ------------------------------


def transport_pending(transport: Transport, ref: TransportRef) -> int:
    """``transport.pending()``: output bytes waiting (PN_EOS, -1, once the head is closed)."""
    pending: int = _transport_pending(ref)
    if pending < _PN_EOS:
        transport._check(pending)  # raises proton's exception for the error code
    return pending


def transport_capacity(transport: Transport, ref: TransportRef) -> int:
    """``transport.capacity()``: input bytes it can take (PN_EOS once the tail is closed)."""
    capacity: int = _transport_capacity(ref)
    if capacity < _PN_EOS:
        transport._check(capacity)
    return capacity


def transport_closed(ref: TransportRef) -> bool:
    """``transport.closed``: head and tail both closed."""
    return bool(_transport_closed(ref))


def transport_tick(ref: TransportRef, now: float) -> float:
    """``transport.tick(now)``: process timers; the next deadline in seconds (0: none)."""
    return float(_transport_tick(ref, int(now * 1000))) / 1000.0


def transport_push(transport: Transport, ref: TransportRef, data: bytes | bytearray) -> None:
    """``transport.push(data)``: input for proton, all of it (the caller asked capacity())."""
    if type(data) is not bytes:
        data = bytes(data)  # ctypes passes bytes as they are, nothing else
    pushed: int = _transport_push(ref, data, len(data))
    if pushed != len(data):
        transport._check(pushed)
        raise OverflowError(f"proton took {pushed} of {len(data)} bytes")


def transport_peek(transport: Transport, ref: TransportRef, size: int) -> bytearray | None:
    """``transport.peek(size)``: the first ``size`` bytes of output (None at the end), in the
    buffer proton wrote them to (no second copy)."""
    buffer = bytearray(size)
    if size > 0:
        start = ctypes.c_char.from_buffer(buffer)
        got: int = _transport_peek(ref, ctypes.addressof(start), size)
        del start  # releases the buffer
    else:
        got = _transport_peek(ref, None, 0)
    if got == _PN_EOS:
        return None
    if got < 0:
        transport._check(got)
    return buffer


def transport_pop(ref: TransportRef, size: int) -> None:
    """``transport.pop(size)``: drop output proton has handed over."""
    _transport_pop(ref, size)
