"""Every use of python-qpid-proton's private API in jmspy, in one place.

The engine's hot path skips proton's public event wrappers (see ``dispatch_events``), and that
needs the C binding (``cproton``) and the ``_impl`` handles of proton's wrapper objects. Those
are not proton's documented API and may change in any release, so nothing else in jmspy
imports ``cproton`` or reads ``_impl``: it calls the functions here. ``pyproject.toml`` bounds
python-qpid-proton to the releases these were checked against, and
``tests/unit/test_proton_internals.py`` fails when the installed proton no longer has them or
they behave differently.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cproton import (
    PN_ACCEPTED,
    PN_DELIVERY,
    PN_TRANSPORT,
    isnull,
    pn_collector_peek,
    pn_collector_pop,
    pn_data_clear,
    pn_data_decode,
    pn_decref,
    pn_delivery_aborted,
    pn_delivery_link,
    pn_delivery_local,
    pn_delivery_partial,
    pn_delivery_pending,
    pn_delivery_readable,
    pn_delivery_remote_state,
    pn_delivery_settle,
    pn_delivery_settled,
    pn_delivery_update,
    pn_delivery_updated,
    pn_disposition_data,
    pn_event_delivery,
    pn_event_type,
    pn_incref,
    pn_link_advance,
    pn_link_credit,
)
from cproton import pn_delivery as _pn_delivery
from cproton_ffi import ffi, lib
from proton import Collector, Delivery, Event, Link

__all__ = [
    "DeliveryHandle",
    "DeliveryRef",
    "LinkRef",
    "accept_and_settle",
    "accept_and_settle_all",
    "settle_all_with_state",
    "delivery_aborted",
    "delivery_link_ref",
    "delivery_ref",
    "dispatch_events",
    "link_credit",
    "link_ref",
    "outcome_of",
    "read_transfer",
    "settle_ref",
    "start_transfer",
    "wrap_delivery",
    "wrap_link",
]

# A proton C object as the C binding hands it out (a cffi pointer). Pointers to the same
# object compare and hash equal, so a link's pointer can key a dict; it is only valid while
# proton keeps the object, which a DeliveryHandle or a proton wrapper guarantees.
DeliveryRef = Any
LinkRef = Any


class DeliveryHandle:
    """A received delivery, held by its C pointer (one reference, as a proton wrapper holds).

    proton's ``Delivery`` wrapper costs two dispositions, a record lookup and an attribute
    dict per transfer; a consumer needs the wrapper only for the rare outcomes (released,
    rejected, modified, transactional), so it is built on demand by :meth:`wrap`.
    """

    __slots__ = ("_ref",)

    def __init__(self, ref: DeliveryRef) -> None:
        pn_incref(ref)
        self._ref = ref

    def __del__(self, _decref: Callable[[Any], None] = pn_decref) -> None:
        # The function is bound at definition: at interpreter exit the module's globals may
        # already be gone when the last handles are collected.
        _decref(self._ref)

    def wrap(self) -> Delivery:
        """proton's wrapper for this delivery."""
        return wrap_delivery(self._ref)


def delivery_link_ref(ref: DeliveryRef) -> LinkRef:
    """The C pointer of the link a delivery is on."""
    return pn_delivery_link(ref)


def delivery_ref(delivery: Delivery) -> DeliveryRef:
    """The C pointer of a proton delivery."""
    return delivery._impl


def link_ref(link: Link) -> LinkRef:
    """The C pointer of a proton link (the key :func:`delivery_link_ref` gives back)."""
    return link._impl


def wrap_link(ref: LinkRef) -> Link:
    """proton's wrapper for a link pointer."""
    link: Link = Link.wrap(ref)
    return link


def wrap_delivery(ref: DeliveryRef) -> Delivery:
    """proton's wrapper for a delivery pointer."""
    delivery: Delivery = Delivery.wrap(ref)
    return delivery


def read_transfer(ref: DeliveryRef, link: LinkRef) -> bytearray | None:
    """The whole payload of a received transfer, the link advanced past it; None while the
    transfer is incomplete (more frames to come) or has no data to read.

    One exact-size buffer filled by proton: ``Receiver.recv`` allocates one of the size asked
    for, then copies what was read out of it, and reads the delivery state through wrappers.
    """
    if not pn_delivery_readable(ref) or pn_delivery_partial(ref):
        return None
    size = pn_delivery_pending(ref)
    payload = bytearray(size)
    if size:
        read = lib.pn_link_recv(link, ffi.from_buffer(payload), size)
        if 0 <= read < size:  # proton handed over less than it said was pending
            del payload[read:]
    pn_link_advance(link)
    return payload


def start_transfer(link: LinkRef, tag: bytes, payload: bytes) -> DeliveryRef:
    """Write one whole transfer on a sender link (``link.delivery(tag)``, ``link.stream``,
    ``link.advance`` without the wrappers) and return its delivery pointer, which stays valid
    until jmspy settles the delivery or the connection is released."""
    ref = _pn_delivery(link, tag)
    lib.pn_link_send(link, ffi.from_buffer(payload), len(payload))
    pn_link_advance(link)
    return ref


def link_credit(link: LinkRef) -> int:
    """The link's credit."""
    credit: int = pn_link_credit(link)
    return credit


def outcome_of(ref: DeliveryRef) -> int | None:
    """A sent delivery's remote state when the peer has decided it (0 when it settled without
    an outcome), else None (no news: a delivery event for another reason)."""
    state: int = pn_delivery_remote_state(ref)
    if state == 0 and not (pn_delivery_updated(ref) and pn_delivery_settled(ref)):
        return None
    return state


def delivery_aborted(ref: DeliveryRef) -> bool:
    """Whether the sender aborted the transfer."""
    return bool(pn_delivery_aborted(ref))


def settle_ref(ref: DeliveryRef) -> None:
    """Settle a delivery (no outcome of ours)."""
    pn_delivery_settle(ref)


def accept_and_settle(delivery: Delivery | DeliveryHandle) -> None:
    """``delivery.update(Delivery.ACCEPTED); delivery.settle()`` without copying the (empty)
    local data, annotations and condition into proton first, as ``update`` does: the
    acknowledgement of every received message goes through here."""
    impl = delivery._ref if isinstance(delivery, DeliveryHandle) else delivery._impl
    pn_delivery_update(impl, PN_ACCEPTED)
    pn_delivery_settle(impl)


def accept_and_settle_all(handles: list[DeliveryHandle]) -> None:
    """:func:`accept_and_settle` for many received deliveries, in order, in one call."""
    update = pn_delivery_update
    settle = pn_delivery_settle
    for handle in handles:
        ref = handle._ref
        update(ref, PN_ACCEPTED)
        settle(ref)


def settle_all_with_state(handles: list[DeliveryHandle], state_type: int, encoded: bytes) -> None:
    """Settle received deliveries, in order, with the outcome ``state_type`` whose fields are
    the AMQP-encoded ``encoded`` (a transactional-state list, say): what
    ``delivery.local.data = fields; delivery.update(state_type); delivery.settle()`` does,
    with the fields encoded once for all instead of built through proton.Data per delivery."""
    clear = pn_data_clear
    decode = pn_data_decode
    local = pn_delivery_local
    data_of = pn_disposition_data
    update = pn_delivery_update
    settle = pn_delivery_settle
    for handle in handles:
        ref = handle._ref
        data = data_of(local(ref))
        clear(data)
        decode(data, encoded)
        update(ref, state_type)
        settle(ref)


def dispatch_events(
    collector: Collector,
    on_delivery: Callable[[DeliveryRef], None] | None,
    on_event: Callable[[Event], None],
) -> None:
    """Hand every pending event of ``collector`` to ``on_delivery`` (the delivery's C pointer,
    for delivery events, when given) or ``on_event`` (all others), popping each after its
    handler returns.

    Delivery events (one per settled send, one per received transfer) skip proton's Event
    wrapper, which builds delivery, link, session, connection and transport wrappers each
    time: 6-8 us of engine time per message. ``PN_TRANSPORT`` events (proton raises one
    whenever the transport has output, about one per engine pass) are dropped unseen: nothing
    in jmspy handles them, and with many connections each pass moves one or two messages.
    """
    impl = collector._impl
    while True:
        event = pn_collector_peek(impl)
        if isnull(event):
            return
        kind = pn_event_type(event)
        if on_delivery is not None and kind == PN_DELIVERY:
            on_delivery(pn_event_delivery(event))
        elif kind != PN_TRANSPORT:
            on_event(Event.wrap(event))
        pn_collector_pop(impl)
