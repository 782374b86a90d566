"""The provisioned RabbitMQ node is real and usable, and RabbitMQ 3.x behaves as documented.

The first half checks the node itself (credentials, the dead-letter setup, queues declared
with arguments, stop). The second half pins down the findings table in the docstring of
``jmspy.conformance.brokers.rabbitmq``, which the RabbitMQ adapter relies on: when another
RabbitMQ release behaves differently these fail, and the table needs another look.

The 3.x plugin answers a closing detach with a detach that lacks ``closed=true``, which
``BlockingLink.close()`` waits for in vain; links here are therefore dropped without waiting
and connections closed as a whole. Refused attaches and unsupported features end the whole
*session* (an ``end`` frame with an error), which the blocking API does not notice either, so
those probes use raw proton links and wait for the session instead.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from jmspy.conformance.brokers import RabbitMQBroker
from jmspy.conformance.brokers.base import free_port, port_accepts
from jmspy.conformance.brokers.rabbitmq import DEAD_LETTER_QUEUE
from proton import (
    Condition,
    ConnectionException,
    Data,
    Delivery,
    Endpoint,
    Link,
    Message,
    Terminus,
    Timeout,
    symbol,
)
from proton.reactor import LinkOption, Selector
from proton.utils import BlockingConnection

# --------------------------------------------------------------------------- helpers


def _open(info: Any, password: str | None = None) -> BlockingConnection:
    return BlockingConnection(
        info.url,
        user=info.username,
        password=info.password if password is None else password,
        allowed_mechs="PLAIN",
        timeout=10,
    )


@pytest.fixture
def conn(rabbitmq: Any) -> Iterator[BlockingConnection]:
    connection = _open(rabbitmq)
    try:
        yield connection
    finally:
        # A connection whose session the broker ended may already be gone.
        try:
            connection.close()
        except Exception:
            pass


def _name(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:10]}"


def _send(info: Any, address: str, *messages: Message) -> None:
    connection = _open(info)
    try:
        sender = connection.create_sender(address)
        for message in messages:
            sender.send(message)
    finally:
        connection.close()


def _receive(
    info: Any,
    address: str,
    count: int,
    *,
    until: Callable[[Message], bool] | None = None,
    quiet: float = 0.3,
    **options: Any,
) -> list[Message]:
    """``count`` messages from ``address`` (waiting up to 10 s for each), then whatever else
    arrives before it is quiet for ``quiet`` s, all accepted; with ``until``, messages up to
    the first that matches (the queue may hold others' messages)."""
    connection = _open(info)
    got: list[Message] = []
    try:
        receiver = connection.create_receiver(address, credit=100, **options)
        while True:
            waiting = len(got) < count or (until is not None and not any(map(until, got)))
            try:
                got.append(receiver.receive(timeout=10.0 if waiting else quiet))
            except Timeout:
                if waiting:
                    raise
                break
            receiver.accept()
            if until is not None and until(got[-1]):
                break
    finally:
        connection.close()
    return got


def _bodies(messages: list[Message]) -> list[Any]:
    return [m.body for m in messages]


def _attach(
    conn: BlockingConnection,
    address: str | None,
    *,
    receiver: bool,
    options: LinkOption | None = None,
    dynamic: bool = False,
) -> Link:
    """Attach without the blocking API; returns once the link is up or the session ended."""
    assert conn.conn is not None
    link: Link
    if receiver:
        link = conn.container.create_receiver(conn.conn, address, dynamic=dynamic, options=options)
    else:
        link = conn.container.create_sender(conn.conn, address, options=options)
    conn.wait(
        lambda: bool(link.state & Endpoint.REMOTE_ACTIVE) or _session_ended(link),
        timeout=10,
        msg=f"attaching {address}",
    )
    return link


def _session_ended(link: Link) -> bool:
    return bool(link.session.state & Endpoint.REMOTE_CLOSED)


def _session_error(conn: BlockingConnection, link: Link, timeout: float = 5.0) -> Condition:
    conn.wait(lambda: _session_ended(link), timeout=timeout, msg="waiting for the session end")
    condition = link.session.remote_condition
    assert condition is not None, "the session ended without an error"
    return condition


def _raw_receive(conn: BlockingConnection, link: Link) -> tuple[Delivery, Message]:
    link.flow(1)
    conn.wait(
        lambda: link.current is not None and not link.current.partial,
        timeout=5,
        msg="receiving",
    )
    delivery = link.current
    assert delivery is not None
    message = Message()
    message.decode(link.recv(delivery.pending))
    link.advance()
    return delivery, message


class _SettleSecond(LinkOption):
    def apply(self, link: Link) -> None:
        link.rcv_settle_mode = Link.RCV_SECOND


class _Coordinator(LinkOption):
    def apply(self, link: Link) -> None:
        link.target.type = Terminus.COORDINATOR
        caps = link.target.capabilities
        caps.put_array(False, Data.SYMBOL)
        caps.enter()
        caps.put_symbol(symbol("amqp:local-transactions"))
        caps.exit()


def _local(info: Any) -> RabbitMQBroker:
    if info.source != "local":
        pytest.skip("only the locally provisioned RabbitMQ node can be inspected")
    node: RabbitMQBroker = info.broker
    return node


# --------------------------------------------------------------------------- the node


def test_node_accepts_amqp10_with_its_credentials(rabbitmq: Any) -> None:
    assert rabbitmq.kind == "rabbitmq"
    assert re.fullmatch(r"amqp://[^:/]+:\d+", rabbitmq.url), rabbitmq.url
    connection = _open(rabbitmq)
    try:
        assert connection.conn is not None
        props = connection.conn.remote_properties or {}
        assert props.get(symbol("product")) == "RabbitMQ"
        if rabbitmq.source == "local":
            assert props.get(symbol("version")) == rabbitmq.version
            assert re.fullmatch(r"3\.\d+\.\d+", rabbitmq.version), rabbitmq.version
        # 3.x offers no connection capabilities at all: no DELAYED_DELIVERY, no relay.
        assert not connection.conn.remote_offered_capabilities
    finally:
        connection.close()


def test_wrong_password_and_anonymous_are_refused(rabbitmq: Any) -> None:
    with pytest.raises(ConnectionException, match="unauthorized-access"):
        _open(rabbitmq, password=rabbitmq.password + "-wrong").close()
    # The plugin's SASL ANONYMOUS login (as guest) is switched off on jmspy's nodes.
    with pytest.raises(ConnectionException):
        BlockingConnection(rabbitmq.url, allowed_mechs="ANONYMOUS", timeout=10).close()


def test_local_node_is_private_and_logged(rabbitmq: Any) -> None:
    node = _local(rabbitmq)
    assert node.running and node.pid is not None
    assert node.host == "127.0.0.1" and node.port not in (5672, node.dist_port, node.epmd_port)
    assert node.epmd_port != 4369
    assert node.node_name == f"jmspy-{node.port}@localhost"
    assert "Server startup complete" in node.log_path.read_text()
    installation = node.installation
    assert installation is not None and installation.version == node.version
    assert node.timings["start"] > 0


def test_rejected_message_is_dead_lettered_to_jmspy_dlq(rabbitmq: Any) -> None:
    queue = _name("jmspy.dl.")
    marker = _name("dead-")
    # /queue/ declares the queue; the policy for ^jmspy\.dl\. gives it the dead-letter exchange.
    _send(rabbitmq, f"/queue/{queue}", Message(body=marker))
    connection = _open(rabbitmq)
    try:
        receiver = connection.create_receiver(f"/queue/{queue}", credit=1)
        assert receiver.receive(timeout=5).body == marker
        receiver.reject()
        time.sleep(0.2)
    finally:
        connection.close()
    # jmspy.dlq is durable, so only /amq/queue/ (which never declares) can consume from it.
    dead = _receive(
        rabbitmq, f"/amq/queue/{DEAD_LETTER_QUEUE}", 0, until=lambda m: m.body == marker
    )
    assert marker in _bodies(dead)
    assert _receive(rabbitmq, f"/queue/{queue}", 0) == []


def test_declare_queue_with_priorities(rabbitmq: Any, conn: BlockingConnection) -> None:
    node = _local(rabbitmq)
    queue = _name("jmspy.prio.")
    node.declare_queue(queue, {"x-max-priority": 10})
    _send(
        rabbitmq,
        f"/amq/queue/{queue}",
        Message(body="p1", priority=1),
        Message(body="default"),  # priority 4 is the default, so proton leaves it out
        Message(body="p9", priority=9),
        Message(body="p5", priority=5),
    )
    assert node.queue_depth(queue) == 4
    # An absent priority ranks as 0 in the queue, not as JMS's default 4.
    got = _receive(rabbitmq, f"/amq/queue/{queue}", 4)
    assert _bodies(got) == ["p9", "p5", "p1", "default"]
    # /queue/ re-declares without arguments, which the broker refuses for this queue.
    link = _attach(conn, f"/queue/{queue}", receiver=True)
    assert _session_error(conn, link).name == "amqp:precondition-failed"


def test_stop_frees_the_ports_and_is_idempotent() -> None:
    port = free_port()
    node = RabbitMQBroker(port=port)
    with node:
        assert node.running and port_accepts("127.0.0.1", port)
        epmd_port, base = node.epmd_port, node.base_dir
        assert port_accepts("127.0.0.1", epmd_port)
    assert not node.running
    assert not port_accepts("127.0.0.1", port)
    assert not port_accepts("127.0.0.1", epmd_port)
    assert not base.exists()
    node.stop()
    assert node.timings["stop"] < 30


# --------------------------------------------------------------------------- 3.x behaviour


def test_addresses_that_reach_a_queue(rabbitmq: Any) -> None:
    queue = _name("jmspy.addr.")
    _send(rabbitmq, f"/queue/{queue}", Message(body="queue"))  # declares it
    _send(rabbitmq, queue, Message(body="bare"))
    _send(rabbitmq, f"/amq/queue/{queue}", Message(body="amq-queue"))
    # Accepted, but amq.direct has no binding for the key: the message is dropped.
    _send(rabbitmq, f"/exchange/amq.direct/{queue}", Message(body="direct"))
    # Accepted and dropped as well: /amq/queue/ never declares, and this queue does not exist.
    _send(rabbitmq, f"/amq/queue/{queue}.missing", Message(body="missing"))
    got = _receive(rabbitmq, f"/amq/queue/{queue}", 3)
    assert _bodies(got) == ["queue", "bare", "amq-queue"]
    # The address a message was sent to is not put into `to`.
    assert [m.address for m in got] == [None, None, None]


def test_topic_addresses_share_amq_topic(rabbitmq: Any) -> None:
    key = _name("jmspy.topic.")
    connection = _open(rabbitmq)
    try:
        subscriber = connection.create_receiver(f"/topic/{key}", credit=10)
        wildcard = connection.create_receiver(f"/topic/{key.rsplit('.', 1)[0]}.*", credit=10)
        _send(rabbitmq, f"/topic/{key}", Message(body="topic"))
        _send(rabbitmq, f"/exchange/amq.topic/{key}", Message(body="exchange"))
        for receiver in (subscriber, wildcard):
            got = [receiver.receive(timeout=5).body for _ in range(2)]
            receiver.accept()
            assert got == ["topic", "exchange"]
    finally:
        connection.close()


def test_delivery_time_is_ignored_and_ttl_expires(rabbitmq: Any) -> None:
    queue = _name("jmspy.time.")
    later = int(time.time() * 1000) + 60_000
    delayed = Message(body="delayed")
    delayed.annotations = {symbol("x-opt-delivery-time"): later}
    _send(rabbitmq, f"/queue/{queue}", delayed, Message(body="short", ttl=0.2), Message(body="x"))
    time.sleep(0.6)
    got = _receive(rabbitmq, f"/queue/{queue}", 2)
    assert _bodies(got) == ["delayed", "x"]
    assert got[0].annotations == {symbol("x-opt-delivery-time"): later}


def test_released_message_comes_back_uncounted(rabbitmq: Any, conn: BlockingConnection) -> None:
    queue = _name("jmspy.release.")
    _send(rabbitmq, f"/queue/{queue}", Message(body="again"))
    receiver = conn.create_receiver(f"/queue/{queue}", credit=1)
    first = receiver.receive(timeout=5)
    assert (first.first_acquirer, first.delivery_count) == (True, 0)
    receiver.release(delivered=False)
    second = receiver.receive(timeout=5)
    receiver.accept()
    assert second.body == "again"
    assert (second.first_acquirer, second.delivery_count) == (False, 0)


def test_selector_filter_is_ignored(rabbitmq: Any) -> None:
    queue = _name("jmspy.sel.")
    _send(
        rabbitmq,
        f"/queue/{queue}",
        Message(body="red", properties={"color": "red"}),
        Message(body="blue", properties={"color": "blue"}),
    )
    got = _receive(rabbitmq, f"/queue/{queue}", 2, options=Selector("color = 'red'"))
    assert _bodies(got) == ["red", "blue"]


def _null_target(conn: BlockingConnection, queue: str) -> Link:
    return _attach(conn, None, receiver=False)


def _dynamic_source(conn: BlockingConnection, queue: str) -> Link:
    return _attach(conn, None, receiver=True, dynamic=True)


def _settle_second(conn: BlockingConnection, queue: str) -> Link:
    return _attach(conn, f"/queue/{queue}", receiver=True, options=_SettleSecond())


def _coordinator(conn: BlockingConnection, queue: str) -> Link:
    return _attach(conn, None, receiver=False, options=_Coordinator())


def _drain(conn: BlockingConnection, queue: str) -> Link:
    link = _attach(conn, f"/queue/{queue}", receiver=True)
    link.drain(1)
    return link


def _modified(conn: BlockingConnection, queue: str) -> Link:
    link = _attach(conn, f"/queue/{queue}", receiver=True)
    delivery, _ = _raw_receive(conn, link)
    delivery.local.failed = True
    delivery.update(Delivery.MODIFIED)
    delivery.settle()
    return link


@pytest.mark.parametrize(
    ("probe", "condition"),
    [
        (_null_target, "amqp:invalid-field"),  # no anonymous relay
        (_dynamic_source, "amqp:not-implemented"),  # no temporary queues
        (_settle_second, "amqp:not-implemented"),
        (_coordinator, "amqp:not-implemented"),  # no transactions
        (_drain, "amqp:internal-error"),  # a crash in 3.10's classic queue
        (_modified, "amqp:invalid-field"),  # "Unrecognised state"
    ],
    ids=["null-target", "dynamic-source", "rcv-settle-second", "coordinator", "drain", "modified"],
)
def test_unsupported_features_end_the_session(
    rabbitmq: Any,
    conn: BlockingConnection,
    probe: Callable[[BlockingConnection, str], Link],
    condition: str,
) -> None:
    queue = _name("jmspy.unsupported.")
    _send(rabbitmq, f"/queue/{queue}", Message(body="m"))
    link = probe(conn, queue)
    assert _session_error(conn, link).name == condition
    # Only the session is gone; what it held unsettled is back in the queue.
    again = _receive(rabbitmq, f"/queue/{queue}", 1)
    assert _bodies(again) == ["m"]
