"""The proton internals jmspy relies on still exist and behave as jmspy uses them.

``jmspy._amqp.proton_internals`` is the one module that reaches into python-qpid-proton's
private API (``cproton``, the ``_impl`` handles); the provider also relies on proton keeping
attributes set on a wrapper in the C object's record. A proton release that changes any of
that fails here, with the name that changed, before it fails somewhere deep in the engine.
Two in-memory proton connections are pumped into each other: no sockets, no broker.
"""

from __future__ import annotations

import gc
import importlib
import importlib.metadata
import threading
import time
from collections.abc import Callable
from typing import Any

import proton._wrapper as proton_wrapper
from cproton import addressof
from proton import Collector, Data, Delivery, Described, Event, Link, Transport, ulong
from proton_pair_support import ProtonPair as _Pair
from proton_pair_support import send_one as _send_one

from jmspy._amqp import proton_internals
from jmspy._amqp.proton_internals import (
    DeliveryHandle,
    HeldWrappers,
    OrphanedRefs,
    accept_and_settle,
    accept_and_settle_all,
    collector_ref,
    delivery_link_ref,
    delivery_ref,
    dispatch_events,
    link_credit,
    link_ref,
    outcome_of,
    read_transfer,
    settle_all_with_state,
    settle_ref,
    start_transfer,
    transport_capacity,
    transport_closed,
    transport_peek,
    transport_pending,
    transport_pop,
    transport_push,
    transport_ref,
    transport_tick,
    wrap_delivery,
    wrap_link,
)

# Every private name proton_internals imports or reads, by module.
PRIVATE_NAMES = {
    "cproton": ("PN_ACCEPTED", "PN_DELIVERY", "PN_TRANSPORT"),
    "cproton_ffi": ("ffi", "lib"),
}

# Every C function of proton that proton_internals calls through ctypes, at cffi's address.
C_FUNCTIONS = (
    "pn_collector_peek",
    "pn_collector_pop",
    "pn_data_clear",
    "pn_data_decode",
    "pn_decref",
    "pn_delivery",
    "pn_delivery_aborted",
    "pn_delivery_link",
    "pn_delivery_local",
    "pn_delivery_partial",
    "pn_delivery_pending",
    "pn_delivery_readable",
    "pn_delivery_remote_state",
    "pn_delivery_settle",
    "pn_delivery_settled",
    "pn_delivery_update",
    "pn_delivery_updated",
    "pn_disposition_data",
    "pn_event_delivery",
    "pn_event_type",
    "pn_incref",
    "pn_link_advance",
    "pn_link_credit",
    "pn_link_free",
    "pn_link_head",
    "pn_link_next",
    "pn_link_recv",
    "pn_link_send",
    "pn_link_session",
    "pn_link_unsettled",
    "pn_session_connection",
    "pn_session_free",
    "pn_transport_capacity",
    "pn_transport_closed",
    "pn_transport_peek",
    "pn_transport_pending",
    "pn_transport_pop",
    "pn_transport_push",
    "pn_transport_tick",
)


def test_the_private_names_exist() -> None:
    missing = [
        f"{module}.{name}"
        for module, names in PRIVATE_NAMES.items()
        for name in names
        if not hasattr(importlib.import_module(module), name)
    ]
    assert missing == [], f"proton no longer has {missing}"
    for cls in (Delivery, Event, Link):
        assert hasattr(cls, "wrap"), f"proton.{cls.__name__}.wrap is gone"
    assert hasattr(Collector(), "_impl"), "proton.Collector() has no _impl handle"
    assert hasattr(Transport(), "_impl"), "proton.Transport() has no _impl handle"
    assert hasattr(Transport(), "_check"), "proton.Transport() has no _check"


def test_every_c_function_is_proton_s_and_pn_bytes_has_proton_s_layout() -> None:
    """proton_internals takes each function's C types from cffi (proton's headers); the one
    struct it passes by value, pn_bytes_t (a delivery tag), it lays out itself."""
    import ctypes

    import cproton_ffi

    ffi = cproton_ffi.ffi
    for name in C_FUNCTIONS:
        assert proton_internals._c_function(name) is not None, name
    struct = ffi.typeof("pn_bytes_t")
    ours = proton_internals._Bytes
    assert ffi.sizeof(struct) == ctypes.sizeof(ours)
    assert [(f, t.offset) for f, t in struct.fields] == [
        (f, getattr(ours, f).offset) for f, _ in ours._fields_
    ]


def test_proton_calls_keep_the_gil_unless_asked_to_release_it() -> None:
    import ctypes
    import os
    import subprocess
    import sys

    assert proton_internals._FUNCTYPE is ctypes.PYFUNCTYPE
    # The measuring switch calls them the binding's way; everything still works.
    code = (
        "import ctypes; from jmspy._amqp import proton_internals as p; "
        "assert p._FUNCTYPE is ctypes.CFUNCTYPE; "
        "from proton import Collector; "
        "from jmspy._amqp.proton_internals import collector_ref, dispatch_events; "
        "dispatch_events(collector_ref(Collector()), None, print); print('ok')"
    )
    env = dict(os.environ, JMSPY_PROTON_RELEASE_GIL="1")
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_the_installed_proton_is_within_the_declared_bound() -> None:
    """pyproject.toml declares the releases this module was checked against."""
    version = tuple(int(p) for p in importlib.metadata.version("python-qpid-proton").split(".")[:2])
    assert (0, 39) <= version < (0, 41), version


def test_dispatch_events_hands_delivery_events_to_the_shortcut_and_pops_them() -> None:
    pair = _Pair()
    sender, receiver = pair.open_link_pair()
    dispatch_events(collector_ref(pair.collector), None, lambda event: None)  # what opening raised
    sent = _send_one(pair, sender)
    incoming = receiver.current
    assert incoming is not None
    incoming.update(Delivery.ACCEPTED)
    incoming.settle()
    pair.pump()

    refs: list[object] = []
    events: list[Event] = []
    dispatch_events(collector_ref(pair.collector), refs.append, events.append)

    deliveries = [wrap_delivery(ref) for ref in refs]
    assert [d.tag for d in deliveries] == [sent.tag]
    assert all(isinstance(e, Event) and e.type != Event.DELIVERY for e in events)
    # Transport events (output pending) are dropped: nothing handles them.
    assert Event.TRANSPORT not in [e.type for e in events]
    assert deliveries[0].remote_state == Delivery.ACCEPTED
    # Popped: a second pass finds nothing.
    again: list[object] = []
    dispatch_events(collector_ref(pair.collector), again.append, again.append)
    assert again == []


def test_dispatch_events_drops_transport_events_and_passes_every_other() -> None:
    """Opening a link raises PN_TRANSPORT events (output pending) among the endpoint events;
    dispatch_events passes the endpoint events on and drops the transport ones."""
    pair = _Pair()
    pair.open_link_pair()
    events: list[Event] = []
    dispatch_events(collector_ref(pair.collector), None, events.append)
    kinds = [e.type for e in events]
    assert Event.CONNECTION_REMOTE_OPEN in kinds and Event.LINK_REMOTE_OPEN in kinds
    assert Event.TRANSPORT not in kinds
    # Popped all the same: nothing is left behind them.
    assert pair.collector.peek() is None


def test_dispatch_events_without_a_shortcut_wraps_every_delivery_event() -> None:
    pair = _Pair()
    sender, receiver = pair.open_link_pair()
    dispatch_events(collector_ref(pair.collector), None, lambda event: None)
    _send_one(pair, sender)
    events: list[Event] = []
    dispatch_events(collector_ref(pair.collector), None, events.append)
    assert Event.DELIVERY not in [e.type for e in events]  # the client saw no settlement yet
    receiver.current.update(Delivery.ACCEPTED)
    pair.pump()
    dispatch_events(collector_ref(pair.collector), None, events.append)
    delivered = [e for e in events if e.type == Event.DELIVERY]
    assert len(delivered) == 1 and delivered[0].delivery is not None
    assert delivered[0].delivery.tag == "tag-1"


def test_delivery_link_is_the_link_and_sees_attributes_set_on_another_wrapper() -> None:
    """The provider finds a link's context (when its map has no entry) through the wrapper
    of the delivery's link pointer, reading jmspy_ctx: proton must keep attributes set on one
    wrapper in the C object's record."""
    pair = _Pair()
    sender, _receiver = pair.open_link_pair()
    context = object()
    sender.jmspy_ctx = context  # type: ignore[attr-defined]
    delivery = _send_one(pair, sender)
    link = wrap_link(delivery_link_ref(delivery_ref(delivery)))
    assert link.name == "s"
    assert link.is_sender
    assert getattr(link, "jmspy_ctx", None) is context


def test_accept_and_settle_settles_with_the_accepted_outcome_on_the_wire() -> None:
    pair = _Pair()
    sender, receiver = pair.open_link_pair()
    sent = _send_one(pair, sender)
    incoming = receiver.current
    assert incoming is not None and not incoming.settled

    accept_and_settle(incoming)
    pair.pump()

    assert sent.remote_state == Delivery.ACCEPTED
    assert sent.settled  # the peer settled it


def test_only_proton_internals_imports_cproton() -> None:
    """Keeps the private API in one module: a new ``import cproton`` elsewhere fails here."""
    from pathlib import Path

    package = Path(proton_internals.__file__).resolve().parents[1]
    offenders = [
        str(path.relative_to(package.parent))
        for path in package.rglob("*.py")
        if path.name != "proton_internals.py"
        and any(
            marker in path.read_text(encoding="utf-8")
            for marker in ("import cproton", "from cproton", "proton._", "._impl")
        )
    ]
    assert offenders == [], f"proton internals used outside proton_internals.py: {offenders}"


def test_delivery_pointers_key_their_link_and_wrap_back() -> None:
    """The provider keys link contexts by the link pointer a delivery event gives: pointers to
    the same link must compare and hash equal, and wrap back to the same proton objects."""
    pair = _Pair()
    sender, _receiver = pair.open_link_pair()
    delivery = _send_one(pair, sender)
    key = delivery_link_ref(delivery_ref(delivery))
    assert key == link_ref(sender)
    assert {link_ref(sender): "ctx"}[key] == "ctx"
    assert wrap_link(key).name == "s"
    assert wrap_delivery(delivery_ref(delivery)).tag == "tag-1"


def test_read_transfer_reads_the_whole_payload_and_advances() -> None:
    pair = _Pair()
    sender, receiver = pair.open_link_pair()
    body = bytes(range(256)) * 40  # several frames' worth at proton's default frame size
    outgoing = sender.delivery(b"tag-2")
    sender.send(body[:100])
    pair.pump()
    incoming = receiver.current
    assert incoming is not None
    # Incomplete: the sender has not advanced yet.
    assert read_transfer(delivery_ref(incoming), link_ref(receiver)) is None
    sender.send(body[100:])
    sender.advance()
    pair.pump()
    payload = read_transfer(delivery_ref(incoming), link_ref(receiver))
    assert payload == body
    assert receiver.current is None or receiver.current != incoming  # advanced past it
    assert outgoing.tag == "tag-2"


def test_a_delivery_handle_keeps_the_delivery_and_settles_it_accepted() -> None:
    pair = _Pair()
    sender, receiver = pair.open_link_pair()
    sent = _send_one(pair, sender)
    incoming = receiver.current
    assert incoming is not None
    handle = DeliveryHandle(delivery_ref(incoming))
    del incoming
    assert handle.wrap().tag == "tag-1"
    accept_and_settle(handle)
    pair.pump()
    assert sent.remote_state == Delivery.ACCEPTED
    assert sent.settled


def _dropped_on_another_thread(handle: DeliveryHandle) -> None:
    """Let the last reference to ``handle`` go on a thread of its own, as an application
    thread drops a message."""
    box = [handle]
    del handle
    _on_thread("application", box.clear)


def _one_received() -> tuple[_Pair, Delivery, Delivery]:
    """A pair of connections with one transfer sent and received: (pair, sent, received)."""
    pair = _Pair()
    sender, receiver = pair.open_link_pair()
    sent = _send_one(pair, sender)
    incoming = receiver.current
    assert incoming is not None
    return pair, sent, incoming


def _counting_decref(monkeypatch: Any) -> list[int]:
    released: list[int] = []
    real = proton_internals._decref

    def counting(ref: int) -> int:
        released.append(ref)
        result: int = real(ref)
        return result

    monkeypatch.setattr(proton_internals, "_decref", counting)
    # adopt() binds the function at definition (see DeliveryHandle.__del__).
    monkeypatch.setattr(OrphanedRefs.adopt, "__defaults__", (counting,))
    return released


def test_a_handle_dropped_unsettled_leaves_its_reference_to_the_engine(monkeypatch: Any) -> None:
    pair, sent, incoming = _one_received()
    ref = delivery_ref(incoming)
    orphans = OrphanedRefs()
    released = _counting_decref(monkeypatch)

    _dropped_on_another_thread(DeliveryHandle(ref, orphans))

    assert orphans and released == []  # queued, not dropped on that thread
    orphans.release()  # the engine's next turn
    assert released == [ref] and not orphans
    accept_and_settle(incoming)  # proton's wrapper still held it: the delivery is intact
    pair.pump()
    assert sent.remote_state == Delivery.ACCEPTED


def test_once_the_engine_is_done_a_dropped_handle_lets_go_at_once(monkeypatch: Any) -> None:
    _pair, _sent, incoming = _one_received()
    ref = delivery_ref(incoming)
    orphans = OrphanedRefs()
    orphans.release(engine_done=True)
    released = _counting_decref(monkeypatch)

    _dropped_on_another_thread(DeliveryHandle(ref, orphans))

    assert released == [ref] and not orphans


def test_a_released_handle_leaves_nothing_behind() -> None:
    _pair, _sent, incoming = _one_received()
    orphans = OrphanedRefs()
    handles = [DeliveryHandle(delivery_ref(incoming), orphans)]
    accept_and_settle(handles[0])  # the engine settles and releases it

    _dropped_on_another_thread(handles.pop())

    assert not orphans


class _Holder:
    """Stands for a provider object carrying a wrapper, in a reference cycle as they are."""

    def __init__(self, wrapper: object) -> None:
        self.wrapper = wrapper
        self.me = self


def _recording_drops(monkeypatch: Any, wrapper: Any) -> list[str]:
    """The names of the threads proton's wrappers of ``wrapper``'s object go on."""
    dropped_on: list[str] = []
    original = proton_wrapper.Wrapper.__del__
    watched = addressof(wrapper._impl)

    def recording_del(other: Any) -> None:
        if addressof(other._impl) == watched:
            dropped_on.append(threading.current_thread().name)
        original(other)

    monkeypatch.setattr(proton_wrapper.Wrapper, "__del__", recording_del)
    return dropped_on


def _on_thread(name: str, work: Callable[[], object]) -> None:
    thread = threading.Thread(target=work, name=name)
    thread.start()
    thread.join(10)
    assert not thread.is_alive()


def _held_in_a_cycle(monkeypatch: Any) -> tuple[_Pair, HeldWrappers, _Holder, list[str]]:
    """A receiver link's wrapper held by a HeldWrappers and by a holder in a reference cycle:
    (the connections, the HeldWrappers, the holder, the threads the wrapper goes on)."""
    pair = _Pair()
    _sender, receiver = pair.open_link_pair()
    dropped_on = _recording_drops(monkeypatch, receiver)
    held = HeldWrappers()
    held.hold(receiver)
    return pair, held, _Holder(receiver), dropped_on


def test_a_held_wrapper_whose_holder_is_collected_elsewhere_goes_on_the_engine_thread(
    monkeypatch: Any,
) -> None:
    _pair, held, holder, dropped_on = _held_in_a_cycle(monkeypatch)
    del holder

    _on_thread("application", gc.collect)  # the holder's cycle goes on an application thread
    assert dropped_on == [] and len(held) == 1

    _on_thread("engine", lambda: held.sweep(time.monotonic()))
    assert dropped_on == ["engine"] and len(held) == 0


def test_a_sweep_keeps_what_is_still_held_and_waits_its_interval(monkeypatch: Any) -> None:
    _pair, held, holder, dropped_on = _held_in_a_cycle(monkeypatch)
    now = 1000.0

    held.sweep(now)  # the holder still carries it
    assert len(held) == 1
    del holder
    gc.collect()
    held.sweep(now + HeldWrappers.SWEEP_INTERVAL_S / 2)  # too soon after the last sweep
    assert len(held) == 1 and dropped_on == []
    held.sweep(now + HeldWrappers.SWEEP_INTERVAL_S)
    assert len(held) == 0 and dropped_on == [threading.current_thread().name]


def test_once_the_engine_has_ended_held_wrappers_go_with_their_holders() -> None:
    pair = _Pair()
    _sender, receiver = pair.open_link_pair()
    held = HeldWrappers()
    held.hold(receiver)
    held.clear()
    assert len(held) == 0


def test_accept_and_settle_all_accepts_every_handle() -> None:
    pair = _Pair()
    sender, receiver = pair.open_link_pair()
    sent: list[Delivery] = []
    handles: list[DeliveryHandle] = []
    for tag in (b"a", b"b", b"c"):
        delivery = sender.delivery(tag)
        sender.send(b"payload")
        sender.advance()
        sent.append(delivery)
    pair.pump()
    while receiver.current is not None:
        incoming = receiver.current
        handles.append(DeliveryHandle(delivery_ref(incoming)))
        receiver.advance()
    assert len(handles) == 3

    accept_and_settle_all(handles)
    pair.pump()

    assert [d.remote_state for d in sent] == [Delivery.ACCEPTED] * 3
    assert all(d.settled for d in sent)


def test_settle_all_with_state_sends_the_encoded_state_of_every_handle() -> None:
    """A transactional acceptance: transactional-state (0x34) with the fields (txn-id,
    accepted), encoded once and given to each delivery; the peer reads them back as sent."""
    pair = _Pair()
    sender, receiver = pair.open_link_pair()
    sent: list[Delivery] = []
    for tag in (b"a", b"b"):
        delivery = sender.delivery(tag)
        sender.send(b"payload")
        sender.advance()
        sent.append(delivery)
    pair.pump()
    handles: list[DeliveryHandle] = []
    while receiver.current is not None:
        handles.append(DeliveryHandle(delivery_ref(receiver.current)))
        receiver.advance()
    fields = Data()
    fields.put_object([b"txn-7", Described(ulong(0x24), [])])

    settle_all_with_state(handles, 0x34, fields.encode())
    pair.pump()

    assert [d.remote_state for d in sent] == [0x34, 0x34]
    assert [d.remote.data for d in sent] == [[b"txn-7", Described(ulong(0x24), [])]] * 2
    assert all(d.settled for d in sent)


def test_start_transfer_sends_one_whole_transfer_and_outcome_of_reads_its_settlement() -> None:
    pair = _Pair()
    sender, receiver = pair.open_link_pair()
    link = link_ref(sender)
    assert link_credit(link) == 10
    ref = start_transfer(link, b"tag-9", b"the payload")
    assert link_credit(link) == 9
    pair.pump()
    incoming = receiver.current
    assert incoming is not None and incoming.tag == "tag-9"
    assert read_transfer(delivery_ref(incoming), link_ref(receiver)) == b"the payload"
    assert outcome_of(ref) is None  # no news from the peer yet
    incoming.update(Delivery.ACCEPTED)
    incoming.settle()
    pair.pump()
    assert outcome_of(ref) == Delivery.ACCEPTED
    settle_ref(ref)
    assert wrap_delivery(ref).settled


def test_the_transport_functions_answer_as_the_transport_methods() -> None:
    pair = _Pair()
    pair.client.container = "container-1"
    pair.client.open()
    client, server = pair.client_transport, pair.server_transport
    client_ref, server_ref = transport_ref(client), transport_ref(server)
    pending = transport_pending(client, client_ref)
    assert pending == client.pending() > 0
    assert transport_capacity(server, server_ref) == server.capacity() > 0
    data = transport_peek(client, client_ref, pending)
    assert data == client.peek(pending) and data is not None
    transport_push(server, server_ref, data)
    transport_pop(client_ref, len(data))
    assert transport_pending(client, client_ref) == client.pending() == 0
    assert server.connection.remote_container == "container-1"  # proton read the open
    assert transport_tick(client_ref, 1000.0) == client.tick(1000.0)
    assert not transport_closed(client_ref)
    client.close_head()
    client.close_tail()
    assert transport_closed(client_ref) and client.closed
    assert transport_pending(client, client_ref) == -1  # PN_EOS once the head is closed
    assert transport_capacity(client, client_ref) == -1
    assert transport_peek(client, client_ref, 0) is None


def test_settling_releases_each_handle_on_the_calling_thread() -> None:
    """The engine drops its C reference where it settles (proton is not thread-safe, and the
    last Python reference may go on a listener's thread): a settled handle holds nothing,
    and releasing again or collecting it does not touch proton."""
    pair = _Pair()
    sender, receiver = pair.open_link_pair()
    sent: list[Delivery] = []
    for tag in (b"a", b"b", b"c"):
        sent.append(sender.delivery(tag))
        sender.send(b"payload")
        sender.advance()
    pair.pump()
    handles: list[DeliveryHandle] = []
    while receiver.current is not None:
        handles.append(DeliveryHandle(delivery_ref(receiver.current)))
        receiver.advance()
    accept_and_settle_all(handles[:1])
    accept_and_settle(handles[1])
    fields = Data()
    fields.put_object([b"txn-7", Described(ulong(0x24), [])])
    settle_all_with_state(handles[2:], 0x34, fields.encode())
    assert [h._ref for h in handles] == [0, 0, 0]
    for handle in handles:
        handle.release()  # a no-op now
    del handles
    pair.pump()
    # Settled as asked all the same.
    assert [d.remote_state for d in sent] == [Delivery.ACCEPTED, Delivery.ACCEPTED, 0x34]
    assert all(d.settled for d in sent)
    assert receiver.unsettled == 0
