"""Self-tests for the scripted peer, driven by plain python-qpid-proton clients.

These prove the tool before client wire tests rely on it: what a client sends is recorded
exactly, and each scripted misbehaviour is visible to a real AMQP client.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from proton import (
    ConnectionException,
    Delivery,
    Event,
    Message,
    Receiver,
    Terminus,
    Timeout,
    symbol,
    ulong,
)
from proton.handlers import MessagingHandler
from proton.reactor import Container, LinkOption
from proton.utils import (
    BlockingConnection,
    ConnectionClosed,
    LinkDetached,
    SendException,
)

from .conftest import PeerFactory
from .peer import (
    AMQP_VALUE,
    APPLICATION_PROPERTIES,
    DEFAULT_OFFERED_CAPABILITIES,
    HEADER,
    MESSAGE_ANNOTATIONS,
    PROPERTIES,
    LinkScript,
    OpenRecord,
    Outcome,
    PeerError,
    ScriptedPeer,
)

pytestmark = pytest.mark.timeout(15)


class TargetCapabilities(LinkOption):
    """Link option that puts capabilities on the target, as a JMS client does (``queue``)."""

    def __init__(self, *caps: str) -> None:
        self.caps = caps

    def apply(self, link: Any) -> None:
        link.target.capabilities.put_array(False, 21)  # 21 = symbol
        link.target.capabilities.enter()
        for c in self.caps:
            link.target.capabilities.put_symbol(c)
        link.target.capabilities.exit()


def connect(peer: ScriptedPeer, **kw: Any) -> BlockingConnection:
    kw.setdefault("timeout", 3)
    return BlockingConnection(peer.url, **kw)


def remote_caps(value: Any) -> list[str]:
    """Capabilities as plain strings, from a SymbolList or a terminus capabilities Data."""
    if isinstance(value, list):
        return [str(x) for x in value]
    value.rewind()
    if not value.next():
        return []
    obj = value.get_object()
    return [str(x) for x in getattr(obj, "elements", [obj])]


def test_open_is_recorded_with_credentials_and_capabilities(peer: ScriptedPeer) -> None:
    conn = connect(
        peer,
        user="alice",
        password="secret",
        allowed_mechs="PLAIN",
        container_id="my-client",
        desired_capabilities=[symbol("DELAYED_DELIVERY"), symbol("ANONYMOUS-RELAY")],
        properties={symbol("product"): "test-client"},
    )
    try:
        opened = peer.wait_for_open()
        assert opened.container_id == "my-client"
        assert opened.hostname == "127.0.0.1"
        assert opened.desired_capabilities == ["DELAYED_DELIVERY", "ANONYMOUS-RELAY"]
        assert opened.properties == {"product": "test-client"}
        (sasl,) = peer.sasl
        assert (sasl.mechanism, sasl.username, sasl.password) == ("PLAIN", "alice", "secret")
        # The client sees the peer's Artemis-like open.
        assert conn.conn is not None
        assert remote_caps(conn.conn.remote_offered_capabilities) == list(
            DEFAULT_OFFERED_CAPABILITIES
        )
        assert conn.conn.remote_properties == {"product": "scripted-peer"}
    finally:
        conn.close()
    assert peer.wait_for_close().error is None
    assert any("@open(16)" in line for line in peer.trace)


def test_sender_attach_records_target_and_echo_adds_capabilities(make_peer: PeerFactory) -> None:
    peer = make_peer(links={"orders": LinkScript(extra_capabilities=["extra-cap"])})
    conn = connect(peer)
    try:
        sender = conn.create_sender("orders", options=TargetCapabilities("queue"))
        attach = peer.wait_for_attach("orders")
        assert attach.role == "sender"
        assert attach.target is not None
        assert attach.target.capabilities == ["queue"]
        assert attach.source is not None and attach.source.address is None
        assert attach.address == "orders"
        assert remote_caps(sender.link.remote_target.capabilities) == ["queue", "extra-cap"]
    finally:
        conn.close()


def test_transfer_is_split_into_sections_with_exact_values(peer: ScriptedPeer) -> None:
    conn = connect(peer)
    try:
        sender = conn.create_sender("q1")
        sender.send(
            Message(
                body="hello",
                durable=True,
                ttl=5,
                annotations={"x-opt-jms-msg-type": 5},
                properties={"a": 1, "b": "x"},
                id="ID:1",
                address="q1",
                subject="s",
                correlation_id="c1",
            )
        )
        (transfer,) = peer.wait_for_transfers(1)
    finally:
        conn.close()
    assert transfer.link_name == sender.link.name
    assert transfer.settled is False
    assert transfer.sections == [
        (HEADER, [True, None, 5000]),
        (MESSAGE_ANNOTATIONS, {"x-opt-jms-msg-type": 5}),
        (PROPERTIES, ["ID:1", None, "q1", "s", None, "c1"]),
        (APPLICATION_PROPERTIES, {"a": 1, "b": "x"}),
        (AMQP_VALUE, "hello"),
    ]
    assert transfer.section(HEADER) == [True, None, 5000]
    # The raw payload is what the sections were decoded from.
    msg = Message()
    msg.decode(transfer.payload)
    assert msg.body == "hello"
    # The default script accepted it, which is why send() returned.
    assert any("@disposition(21)" in line and "-> " in line for line in peer.trace)


def test_scripted_rejection_reaches_the_client(make_peer: PeerFactory) -> None:
    peer = make_peer(
        links={"bad": LinkScript(outcome=Outcome.rejected("amqp:not-allowed", "no thanks"))}
    )
    conn = connect(peer)
    try:
        sender = conn.create_sender("bad")
        with pytest.raises(SendException) as info:
            sender.send(Message(body=1))
        assert info.value.state == Delivery.REJECTED
    finally:
        conn.close()


def test_receiver_gets_enqueued_message_and_dispositions_are_recorded(
    peer: ScriptedPeer,
) -> None:
    peer.enqueue("inbox", Message(body="first", properties={"k": "v"}), delivery_count=3)
    peer.enqueue("inbox", Message(body="second"))
    conn = connect(peer)
    try:
        receiver = conn.create_receiver("inbox")
        first = receiver.receive(timeout=3)
        assert (first.body, first.properties, first.delivery_count) == ("first", {"k": "v"}, 3)
        receiver.accept()
        second = receiver.receive(timeout=3)
        assert second.body == "second"
        # proton 0.40's release() cannot set delivery-failed; set it on the delivery directly.
        assert receiver.fetcher is not None
        delivery = receiver.fetcher.unsettled[0]
        delivery.local.failed = True
        delivery.local.undeliverable = True
        receiver.settle(Delivery.MODIFIED)
    finally:
        # The blocking client only writes when it next runs its loop; close() flushes.
        conn.close()
    accepted, modified = peer.wait_for_dispositions(2)
    assert (accepted.role, accepted.kind, accepted.settled) == ("receiver", "accepted", True)
    assert accepted.delivery_tags == [b"peer-1"]
    assert modified.kind == "modified"
    assert modified.outcome is not None
    assert modified.outcome.delivery_failed is True
    assert modified.outcome.undeliverable_here is True
    assert modified.delivery_tag != accepted.delivery_tag
    flow = peer.wait_for_flow(lambda f: f.link_name == receiver.link.name)
    assert flow.link_credit == 1 and flow.drain is False


def test_rejected_credentials_fail_the_client(make_peer: PeerFactory) -> None:
    peer = make_peer(reject_credentials=True)
    with pytest.raises(ConnectionException):
        connect(peer, user="alice", password="wrong", allowed_mechs="PLAIN")
    assert peer.sasl[0].username == "alice"
    peer.wait_for_disconnects(1)
    assert peer.opens == []


def test_close_on_open_with_unauthorized_access(make_peer: PeerFactory) -> None:
    peer = make_peer(close_on_open_with=("amqp:unauthorized-access", "bad password"))
    with pytest.raises(ConnectionException) as info:
        connect(peer, user="alice", password="wrong", allowed_mechs="PLAIN")
    assert "unauthorized-access" in str(info.value)


def test_hang_on_open_makes_a_client_time_out(make_peer: PeerFactory) -> None:
    peer = make_peer(hang_on_open=True)
    started = time.monotonic()
    with pytest.raises(Timeout):
        connect(peer, timeout=1)
    assert time.monotonic() - started < 3
    peer.wait_for_open()


def test_close_connection_is_observed_by_the_client(peer: ScriptedPeer) -> None:
    conn = connect(peer)
    conn.create_sender("q")
    peer.close_connection("amqp:connection:forced", "broker shutting down")
    with pytest.raises(ConnectionClosed) as info:
        conn.wait(lambda: False, timeout=3)
    condition = info.value.connection.remote_condition
    assert condition is not None
    assert condition.name == "amqp:connection:forced"
    assert condition.description == "broker shutting down"
    conn.close()


def test_refused_attach_answers_null_target_then_detaches_with_error(
    make_peer: PeerFactory,
) -> None:
    peer = make_peer(links={"missing": LinkScript(refuse=("amqp:not-found", "no such queue"))})
    conn = connect(peer)
    try:
        with pytest.raises(LinkDetached) as info:
            conn.create_sender("missing")
        link = info.value.link
        assert link.remote_condition is not None
        assert link.remote_condition.name == "amqp:not-found"
        assert link.remote_target.type == Terminus.UNSPECIFIED  # a null target
    finally:
        conn.close()
    assert peer.wait_for_detach().closed is True
    assert any("-> @attach(18)" in line and "target" not in line for line in peer.trace)


def test_hang_on_attach_gets_no_answer(make_peer: PeerFactory) -> None:
    peer = make_peer(links={"slow": LinkScript(hang=True)})
    conn = connect(peer)
    try:
        with pytest.raises(Timeout):
            _open_sender(conn, "slow", timeout=1)
        assert peer.wait_for_attach("slow").role == "sender"
    finally:
        conn.close()


def _open_sender(conn: BlockingConnection, address: str, timeout: float) -> None:
    # BlockingConnection.create_sender waits with the connection timeout; shorten it.
    conn.timeout = timeout
    conn.create_sender(address)


def test_dynamic_receiver_gets_a_generated_address(peer: ScriptedPeer) -> None:
    conn = connect(peer)
    try:
        receiver = conn.create_receiver(None, dynamic=True)
        address = receiver.link.remote_source.address
        assert address is not None and address.startswith("dynamic.")
        attach = peer.wait_for_attach(role="receiver")
        assert attach.source is not None and attach.source.dynamic is True
        peer.enqueue(address, b"\x00Sw\xa1\x03raw")  # a raw amqp-value payload
        assert receiver.receive(timeout=3).body == "raw"
    finally:
        conn.close()


def test_sequential_connections_and_drop(peer: ScriptedPeer) -> None:
    first = connect(peer)
    first.create_sender("q")
    peer.drop()
    with pytest.raises(ConnectionException):
        first.wait(lambda: False, timeout=3)
    second = connect(peer, container_id="again")
    try:
        second.create_sender("q")
        opens = peer.wait_for_records(OpenRecord, count=2)
        assert [o.conn for o in opens] == [0, 1]
        assert opens[1].container_id == "again"
        assert [d.conn for d in peer.disconnects] == [0]
    finally:
        second.close()


def test_reconnect_after_a_reset_is_recorded_per_connection(peer: ScriptedPeer) -> None:
    first = connect(peer, container_id="client")
    first.create_sender("work", name="tx")
    first.create_receiver("inbox", name="rx")
    peer.wait_for_attach("inbox", name="rx")
    peer.drop(reset=True)
    with pytest.raises(ConnectionException):
        first.wait(lambda: False, timeout=3)
    peer.wait_for_disconnects(1)
    # The same links again on a new connection, as a client re-attaching after a reconnect.
    second = connect(peer, container_id="client")
    try:
        second.create_sender("work", name="tx")
        receiver = second.create_receiver("inbox", name="rx")
        peer.enqueue("inbox", Message(body="after reconnect"))
        assert receiver.receive(timeout=3).body == "after reconnect"
        receiver.accept()
    finally:
        # The blocking client only writes when it next runs its loop; close() flushes.
        second.close()
    peer.wait_for_close()
    before, after = peer.connections
    assert (before.index, after.index) == (0, 1)
    assert before.disconnected and not before.closes, "the first one was dropped, not closed"
    assert [(a.name, a.role) for a in before.attaches] == [("tx", "sender"), ("rx", "receiver")]
    assert [(a.name, a.role) for a in after.attaches] == [(a.name, a.role) for a in before.attaches]
    assert [o.container_id for o in before.opens + after.opens] == ["client", "client"]
    assert not before.transfers and not before.dispositions
    assert [d.kind for d in after.dispositions] == ["accepted"]
    assert len(after.closes) == 1


class DrainClient(MessagingHandler):
    """Attaches a receiver, drains 5 credits and stops once the peer answers the drain."""

    def __init__(self, url: str, address: str) -> None:
        super().__init__(prefetch=0, auto_accept=True)
        self.url, self.address = url, address
        self.bodies: list[Any] = []
        self.credit_after_drain: int | None = None
        self.receiver: Receiver | None = None
        self.backstop: Any = None

    def on_start(self, event: Event) -> None:
        conn = event.container.connect(self.url, reconnect=False)
        self.receiver = event.container.create_receiver(conn, self.address)
        # A backstop so a broken peer can't hang the test; cancelled once the drain completes.
        self.backstop = event.container.schedule(5, self)

    def on_link_opened(self, event: Event) -> None:
        if event.receiver is not None:
            event.receiver.drain(5)

    def on_message(self, event: Event) -> None:
        self.bodies.append(event.message.body)

    def on_link_flow(self, event: Event) -> None:
        link = event.link
        if isinstance(link, Receiver) and link.drain_mode and not link.draining():
            self.credit_after_drain = link.credit
            link.drain_mode = False
            self.backstop.cancel()
            link.connection.close()

    def on_timer_task(self, event: Event) -> None:
        if self.receiver is not None:
            self.receiver.connection.close()


def test_drain_is_answered_after_queued_messages(peer: ScriptedPeer) -> None:
    peer.enqueue("work", Message(body="a"))
    peer.enqueue("work", Message(body="b"))
    client = DrainClient(peer.url, "work")
    Container(client).run()
    assert client.bodies == ["a", "b"]
    assert client.credit_after_drain == 0
    flow = peer.wait_for_flow(lambda f: f.drain)
    assert flow.link_credit == 5


def test_callable_outcome_decides_per_message(make_peer: PeerFactory) -> None:
    def outcome(transfer: Any) -> Outcome:
        return Outcome.released() if b"skip" in transfer.payload else Outcome.accepted()

    peer = make_peer(links={"mixed": LinkScript(outcome=outcome)})
    conn = connect(peer)
    try:
        sender = conn.create_sender("mixed")
        sender.send(Message(body="keep"))
        with pytest.raises(SendException) as info:
            sender.send(Message(body="skip"))
        assert info.value.state == Delivery.RELEASED
    finally:
        conn.close()


def test_peer_thread_failure_is_raised_at_close() -> None:
    def explode(_attach: Any) -> LinkScript:
        raise RuntimeError("script bug")

    peer = ScriptedPeer(links=explode)
    conn = connect(peer)
    with pytest.raises(ConnectionException):
        conn.create_sender("anything")
    with pytest.raises(PeerError, match="script bug"):
        peer.close()


def test_selector_filter_is_recorded_as_described(peer: ScriptedPeer) -> None:
    from proton import Described
    from proton.reactor import Filter

    selector = Described(ulong(0x0000468C00000004), "color = 'red'")
    conn = connect(peer)
    try:
        conn.create_receiver("events", options=Filter({symbol("jms-selector"): selector}))
        attach = peer.wait_for_attach("events", role="receiver")
    finally:
        conn.close()
    assert attach.source is not None
    assert attach.source.filter == {"jms-selector": selector}


def test_close_with_echoes_then_detaches_a_receiver(make_peer: PeerFactory) -> None:
    peer = make_peer(links={"gone": LinkScript(close_with=("amqp:resource-deleted", "deleted"))})
    conn = connect(peer)
    try:
        with pytest.raises(LinkDetached) as info:
            conn.create_receiver("gone")
        link = info.value.link
        assert link.remote_source.address == "gone"  # echoed, unlike a refusal
        assert link.remote_condition is not None
        assert link.remote_condition.name == "amqp:resource-deleted"
    finally:
        conn.close()


def test_close_link_detaches_a_live_consumer(peer: ScriptedPeer) -> None:
    conn = connect(peer)
    try:
        receiver = conn.create_receiver("topic")
        peer.close_link(receiver.link.name, "amqp:resource-deleted", "queue deleted")
        with pytest.raises(LinkDetached):
            receiver.receive(timeout=3)
    finally:
        conn.close()
    with pytest.raises(KeyError):
        peer.close_link("no-such-link")


def test_hang_on_connect_never_answers_the_protocol_header(make_peer: PeerFactory) -> None:
    peer = make_peer(hang_on_connect=True)
    with pytest.raises(Timeout):
        connect(peer, timeout=0.5)
    assert peer.sasl == [] and peer.opens == []
    assert [c.conn for c in peer.connects] == [0]


def test_close_connection_while_hanging_on_open(make_peer: PeerFactory) -> None:
    peer = make_peer(hang_on_open=True)
    failures: list[BaseException] = []

    def close_once_opened() -> None:
        # The connecting client blocks this thread's sibling, so the close comes from here.
        try:
            peer.wait_for_open()
            peer.close_connection("amqp:connection:forced", "not today")
        except BaseException as e:
            failures.append(e)

    helper = threading.Thread(target=close_once_opened)
    helper.start()
    with pytest.raises(ConnectionClosed) as info:
        connect(peer)
    helper.join(5)
    assert failures == []
    # proton has released the connection by now; its message keeps the condition.
    assert "not today" in str(info.value)


def test_heartbeats_keep_an_idle_client_alive(peer: ScriptedPeer) -> None:
    conn = connect(peer, heartbeat=0.4)
    try:
        with pytest.raises(Timeout):  # a timeout, not a disconnect
            conn.wait(lambda: False, timeout=1.0)
    finally:
        conn.close()


def test_without_heartbeats_an_idle_client_gives_up(make_peer: PeerFactory) -> None:
    peer = make_peer(heartbeats=False)
    conn = connect(peer, heartbeat=0.4)
    with pytest.raises(ConnectionException) as info:
        conn.wait(lambda: False, timeout=2.0)
    assert not isinstance(info.value, Timeout)
    assert "idle" in str(info.value)


def test_multi_frame_transfer_and_non_closing_detach_are_recorded(peer: ScriptedPeer) -> None:
    body = b"x" * 100_000  # bigger than the 32 KiB default max frame: several transfer frames
    conn = connect(peer)
    try:
        sender = conn.create_sender("big")
        sender.send(Message(body=body))
        peer.enqueue("big-out", Message(body=body))
        receiver = conn.create_receiver("big-out")
        assert receiver.receive(timeout=3).body == body
        sender.link.detach()  # a durable-subscription style detach: closed=false
    finally:
        conn.close()
    (transfer,) = peer.wait_for_transfers(1, link_name=sender.link.name)
    assert transfer.frames > 1
    assert transfer.sections[-1] == (AMQP_VALUE, body)  # proton sends bytes as amqp-value
    detach = peer.wait_for_detach(sender.link.name)
    assert detach.closed is False and detach.error is None
