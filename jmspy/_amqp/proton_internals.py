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

from cproton import (
    PN_ACCEPTED,
    PN_DELIVERY,
    isnull,
    pn_collector_peek,
    pn_collector_pop,
    pn_delivery_link,
    pn_delivery_settle,
    pn_delivery_update,
    pn_event_delivery,
    pn_event_type,
)
from proton import Collector, Delivery, Event, Link

__all__ = ["accept_and_settle", "delivery_link", "dispatch_events"]


def delivery_link(delivery: Delivery) -> Link:
    """The link of ``delivery``, without building the session/connection wrappers that
    ``delivery.link`` builds on the way."""
    link: Link = Link.wrap(pn_delivery_link(delivery._impl))
    return link


def accept_and_settle(delivery: Delivery) -> None:
    """``delivery.update(Delivery.ACCEPTED); delivery.settle()`` without copying the (empty)
    local data, annotations and condition into proton first, as ``update`` does: the
    acknowledgement of every received message goes through here."""
    impl = delivery._impl
    pn_delivery_update(impl, PN_ACCEPTED)
    pn_delivery_settle(impl)


def dispatch_events(
    collector: Collector,
    on_delivery: Callable[[Delivery], None] | None,
    on_event: Callable[[Event], None],
) -> None:
    """Hand every pending event of ``collector`` to ``on_delivery`` (delivery events, when
    given) or ``on_event`` (all others), popping each after its handler returns.

    Delivery events (one per settled send, one per received transfer) skip proton's Event
    wrapper, which builds delivery, link, session, connection and transport wrappers each
    time: 6-8 us of engine time per message.
    """
    impl = collector._impl
    while True:
        event = pn_collector_peek(impl)
        if isnull(event):
            return
        if on_delivery is not None and pn_event_type(event) == PN_DELIVERY:
            on_delivery(Delivery.wrap(pn_event_delivery(event)))
        else:
            on_event(Event.wrap(event))
        pn_collector_pop(impl)
