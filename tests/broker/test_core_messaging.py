"""The core client against a real Artemis: message types, headers, QoS, acknowledgement."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

import jmspy
from jmspy import DeliveryMode


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _drain(consumer: Any, timeout_ms: int = 500) -> list[Any]:
    out = []
    while True:
        message = consumer.receive(timeout_ms)
        if message is None:
            return out
        out.append(message)


def _set_all_property_types(message: Any) -> None:
    message.setBooleanProperty("aBool", True)
    message.setByteProperty("aByte", -7)
    message.setShortProperty("aShort", 1234)
    message.setIntProperty("anInt", 123456)
    message.setLongProperty("aLong", 2**40)
    message.setFloatProperty("aFloat", 1.5)
    message.setDoubleProperty("aDouble", 3.25)
    message.setStringProperty("aString", "héllo")


def _check_all_property_types(message: Any) -> None:
    assert message.getBooleanProperty("aBool") is True
    assert message.getByteProperty("aByte") == -7
    assert message.getShortProperty("aShort") == 1234
    assert message.getIntProperty("anInt") == 123456
    assert message.getLongProperty("aLong") == 2**40
    assert message.getFloatProperty("aFloat") == 1.5
    assert message.getDoubleProperty("aDouble") == 3.25
    assert message.getStringProperty("aString") == "héllo"
    # The Java type survives the trip: a short is not readable as a byte.
    with pytest.raises(jmspy.MessageFormatException):
        message.getByteProperty("aShort")


def _make_messages(session: Any) -> list[tuple[str, Any, Any]]:
    text = session.createTextMessage("text body ✓")
    data = session.createBytesMessage()
    data.writeInt(42)
    data.writeUTF("utf")
    data.writeBytes(b"\x00\x01\x02")
    mapped = session.createMapMessage()
    mapped.setString("s", "v")
    mapped.setInt("i", 7)
    mapped.setDouble("d", 2.5)
    mapped.setBytes("b", b"\xff")
    mapped.setBoolean("t", True)
    stream = session.createStreamMessage()
    stream.writeString("first")
    stream.writeLong(99)
    stream.writeBoolean(False)
    obj = session.createObjectMessage({"order": 17, "items": ["a", "b"]})
    plain = session.createMessage()
    return [
        ("text", text, "text body ✓"),
        ("bytes", data, None),
        ("map", mapped, {"s": "v", "i": 7, "d": 2.5, "b": b"\xff", "t": True}),
        ("stream", stream, None),
        ("object", obj, {"order": 17, "items": ["a", "b"]}),
        ("plain", plain, None),
    ]


def test_every_message_type_round_trips_with_headers_and_properties(
    connection: Any, unique_name: str
) -> None:
    session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
    queue = session.createQueue(unique_name)
    reply_to = session.createTopic(unique_name + ".replies")
    producer = session.createProducer(queue)
    producer.setPriority(6)
    producer.setTimeToLive(600_000)
    sent = _make_messages(session)
    before = _now_ms()
    for kind, message, _ in sent:
        message.setJMSType(f"type-{kind}")
        message.setJMSCorrelationID(f"corr-{kind}")
        message.setJMSReplyTo(reply_to)
        message.setStringProperty("JMSXGroupID", f"group-{kind}")
        message.setIntProperty("JMSXGroupSeq", 3)
        _set_all_property_types(message)
        producer.send(message)
    after = _now_ms()
    consumer = session.createConsumer(queue)
    connection.start()
    for kind, message, expected_body in sent:
        received = consumer.receive(10_000)
        assert received is not None, f"{kind} message not received"
        assert type(received) is type(message)
        assert received.getJMSMessageID() == message.getJMSMessageID()
        assert received.getJMSMessageID().startswith("ID:")
        assert received.getJMSDestination() == queue
        assert received.getJMSReplyTo() == reply_to
        assert received.getJMSCorrelationID() == f"corr-{kind}"
        assert received.getJMSType() == f"type-{kind}"
        assert received.getJMSPriority() == 6
        assert received.getJMSDeliveryMode() == DeliveryMode.PERSISTENT
        assert before <= received.getJMSTimestamp() <= after
        assert received.getJMSExpiration() == received.getJMSTimestamp() + 600_000
        assert received.getJMSDeliveryTime() == received.getJMSTimestamp()
        assert received.getJMSRedelivered() is False
        assert received.getIntProperty("JMSXDeliveryCount") == 1
        assert received.getStringProperty("JMSXGroupID") == f"group-{kind}"
        assert received.getIntProperty("JMSXGroupSeq") == 3
        _check_all_property_types(received)
        if kind == "bytes":
            assert received.readInt() == 42
            assert received.readUTF() == "utf"
            buf = bytearray(10)
            assert received.readBytes(buf) == 3
            assert bytes(buf[:3]) == b"\x00\x01\x02"
        elif kind == "stream":
            assert received.readString() == "first"
            assert received.readLong() == 99
            assert received.readBoolean() is False
        elif kind == "map":
            assert {n: received.getObject(n) for n in received.getMapNames()} == expected_body
        elif kind == "object":
            assert received.getObject() == expected_body
        elif kind == "text":
            assert received.getText() == expected_body
        # Received messages are read-only.
        with pytest.raises(jmspy.MessageNotWriteableException):
            received.setStringProperty("late", "x")
    assert consumer.receiveNoWait() is None


def test_correlation_id_as_bytes_round_trips(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    message = session.createTextMessage("x")
    message.setJMSCorrelationIDAsBytes(b"\x01\x02\xff")
    session.createProducer(queue).send(message)
    connection.start()
    received = session.createConsumer(queue).receive(10_000)
    assert received.getJMSCorrelationIDAsBytes() == b"\x01\x02\xff"


def test_non_persistent_messages_keep_their_delivery_mode(
    connection: Any, unique_name: str
) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    producer = session.createProducer(queue)
    producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)
    for i in range(50):
        producer.send(session.createTextMessage(str(i)))
    connection.start()
    consumer = session.createConsumer(queue)
    got = [consumer.receive(10_000) for _ in range(50)]
    assert [m.getText() for m in got] == [str(i) for i in range(50)]
    assert {m.getJMSDeliveryMode() for m in got} == {DeliveryMode.NON_PERSISTENT}


def test_broker_delivers_in_priority_order(connection: Any, unique_name: str) -> None:
    """Artemis orders its queue by priority; with all messages on the broker before the
    consumer attaches (credit >= N), they arrive highest priority first, FIFO within one."""
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    producer = session.createProducer(queue)
    order = [0, 9, 4, 7, 4, 1, 9]
    for index, priority in enumerate(order):
        message = session.createTextMessage(f"{priority}:{index}")
        producer.send(message, DeliveryMode.PERSISTENT, priority, 0)
    connection.start()
    consumer = session.createConsumer(queue)
    got = [consumer.receive(10_000).getText() for _ in order]
    expected = [f"{p}:{i}" for i, p in sorted(enumerate(order), key=lambda x: (-x[1], x[0]))]
    assert got == expected


def test_expired_message_is_never_received(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    producer = session.createProducer(queue)
    producer.send(session.createTextMessage("short-lived"), DeliveryMode.PERSISTENT, 4, 50)
    producer.send(session.createTextMessage("long-lived"), DeliveryMode.PERSISTENT, 4, 0)
    # Wait until the first message's expiration has certainly passed.
    deadline = time.monotonic() + 0.2
    while time.monotonic() < deadline:
        time.sleep(0.01)
    connection.start()
    consumer = session.createConsumer(queue)
    received = _drain(consumer, 1000)
    assert [m.getText() for m in received] == ["long-lived"]


def test_delivery_delay_is_honoured(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    producer = session.createProducer(queue)
    producer.setDeliveryDelay(1500)
    message = session.createTextMessage("later")
    producer.send(message)
    delivery_time = message.getJMSDeliveryTime()
    assert delivery_time == message.getJMSTimestamp() + 1500
    connection.start()
    consumer = session.createConsumer(queue)
    received = consumer.receive(15_000)
    arrived = _now_ms()
    assert received is not None
    assert arrived >= delivery_time, f"received {delivery_time - arrived} ms early"
    assert received.getJMSDeliveryTime() == delivery_time
    # Bounded lateness: the broker releases the message promptly once the delay is over.
    assert arrived - delivery_time < 5000


def test_client_acknowledge_and_recover(connection: Any, unique_name: str) -> None:
    session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
    queue = session.createQueue(unique_name)
    producer = session.createProducer(queue)
    for i in range(3):
        producer.send(session.createTextMessage(f"m{i}"))
    connection.start()
    consumer = session.createConsumer(queue)
    first = [consumer.receive(10_000) for _ in range(2)]
    assert [m.getText() for m in first] == ["m0", "m1"]
    session.recover()
    again = [consumer.receive(10_000) for _ in range(3)]
    assert [m.getText() for m in again] == ["m0", "m1", "m2"]
    assert [m.getJMSRedelivered() for m in again] == [True, True, False]
    assert [m.getIntProperty("JMSXDeliveryCount") for m in again] == [2, 2, 1]
    again[-1].acknowledge()
    consumer.close()
    # Everything was acknowledged: a new consumer sees nothing.
    assert session.createConsumer(queue).receive(500) is None


def test_client_acknowledge_unacked_messages_are_redelivered_after_close(
    factory: Any, unique_name: str
) -> None:
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.CLIENT_ACKNOWLEDGE)
        queue = session.createQueue(unique_name)
        session.createProducer(queue).send(session.createTextMessage("unacked"))
        connection.start()
        assert session.createConsumer(queue).receive(10_000).getText() == "unacked"
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        connection.start()
        again = session.createConsumer(session.createQueue(unique_name)).receive(10_000)
        assert again is not None and again.getText() == "unacked"
        assert again.getJMSRedelivered() is True
        assert again.getIntProperty("JMSXDeliveryCount") == 2


@pytest.mark.parametrize("mode", [jmspy.AUTO_ACKNOWLEDGE, jmspy.DUPS_OK_ACKNOWLEDGE])
def test_auto_and_dups_ok_acknowledge_consume_messages(
    factory: Any, unique_name: str, mode: int
) -> None:
    with factory.createConnection() as connection:
        session = connection.createSession(mode)
        queue = session.createQueue(unique_name)
        producer = session.createProducer(queue)
        for i in range(20):
            producer.send(session.createTextMessage(str(i)))
        connection.start()
        consumer = session.createConsumer(queue)
        assert [consumer.receive(10_000).getText() for _ in range(20)] == [
            str(i) for i in range(20)
        ]
    with factory.createConnection() as connection:
        session = connection.createSession()
        connection.start()
        assert session.createConsumer(session.createQueue(unique_name)).receive(500) is None


def test_message_listener_receives_on_the_session_thread(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    received: list[str] = []
    threads: set[str] = set()
    done = threading.Event()

    def on_message(message: Any) -> None:
        received.append(message.getText())
        threads.add(threading.current_thread().name)
        if len(received) == 10:
            done.set()

    consumer = session.createConsumer(queue)
    consumer.setMessageListener(on_message)
    with pytest.raises(jmspy.IllegalStateException):
        consumer.receive(10)
    producer = session.createProducer(queue)
    for i in range(10):
        producer.send(session.createTextMessage(str(i)))
    assert not done.wait(0.3), "a stopped connection must not deliver to listeners"
    connection.start()
    assert done.wait(10)
    assert received == [str(i) for i in range(10)]
    assert len(threads) == 1 and threading.current_thread().name not in threads


def test_listener_exception_redelivers_with_redelivered_flag(
    connection: Any, unique_name: str
) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    seen: list[tuple[str, bool, int]] = []
    done = threading.Event()

    class FailsOnce:
        def onMessage(self, message: Any) -> None:
            seen.append(
                (
                    message.getText(),
                    message.getJMSRedelivered(),
                    message.getIntProperty("JMSXDeliveryCount"),
                )
            )
            if len(seen) == 1:
                raise RuntimeError("simulated processing failure")
            done.set()

    session.createConsumer(queue).setMessageListener(FailsOnce())
    session.createProducer(queue).send(session.createTextMessage("poison?"))
    connection.start()
    assert done.wait(10)
    assert seen == [("poison?", False, 1), ("poison?", True, 2)]


def test_topic_delivers_to_every_subscriber(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    topic = session.createTopic(unique_name)
    subscribers = [session.createConsumer(topic) for _ in range(3)]
    connection.start()
    producer = session.createProducer(topic)
    producer.send(session.createTextMessage("news"))
    for subscriber in subscribers:
        message = subscriber.receive(10_000)
        assert message is not None and message.getText() == "news"
        assert message.getJMSDestination() == topic
        assert isinstance(message.getJMSDestination(), jmspy.Topic)


def test_anonymous_producer_sends_to_queue_and_topic(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    topic = session.createTopic(unique_name + ".t")
    topic_consumer = session.createConsumer(topic)
    connection.start()
    producer = session.createProducer(None)
    producer.send(queue, session.createTextMessage("to queue"))
    producer.send(topic, session.createTextMessage("to topic"))
    assert topic_consumer.receive(10_000).getText() == "to topic"
    assert session.createConsumer(queue).receive(10_000).getText() == "to queue"


def test_selector_filters_on_the_broker(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    producer = session.createProducer(queue)
    for colour in ["red", "green", "red", "blue"]:
        message = session.createTextMessage(colour)
        message.setStringProperty("colour", colour)
        producer.send(message)
    connection.start()
    consumer = session.createConsumer(queue, "colour = 'red'")
    assert [m.getText() for m in _drain(consumer, 1000)] == ["red", "red"]


def test_receive_no_wait_sees_a_message_just_sent(connection: Any, unique_name: str) -> None:
    session = connection.createSession()
    queue = session.createQueue(unique_name)
    connection.start()
    consumer = session.createConsumer(queue)
    session.createProducer(queue).send(session.createTextMessage("now"))
    message = consumer.receiveNoWait()
    assert message is not None and message.getText() == "now"


def test_closing_under_load_loses_nothing(factory: Any, unique_name: str) -> None:
    """Close a consumer while messages stream in; prefetched messages go back to the broker,
    so a second consumer gets everything the first did not."""
    total = 2000
    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        producer = session.createProducer(queue)
        producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)
        connection.start()
        consumer = session.createConsumer(queue)
        for i in range(total):
            producer.send(session.createTextMessage(str(i)))
        first = [consumer.receive(10_000).getText() for _ in range(100)]
        consumer.close()
        producer.close()
        second_consumer = session.createConsumer(queue)
        rest = [m.getText() for m in _drain(second_consumer, 2000)]
    assert sorted(int(x) for x in first + rest) == list(range(total))


def test_closing_connection_with_blocked_receiver_returns_none(
    factory: Any, unique_name: str
) -> None:
    connection = factory.createConnection()
    session = connection.createSession()
    consumer = session.createConsumer(session.createQueue(unique_name))
    connection.start()
    result: list[Any] = []
    finished = threading.Event()

    def receiver() -> None:
        result.append(consumer.receive())
        finished.set()

    threading.Thread(target=receiver, daemon=True).start()
    # Close only once the receiver is blocked: closing first would pass trivially.
    deadline = time.monotonic() + 10
    while consumer.getBlockedReceiveCount() == 0 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert consumer.getBlockedReceiveCount() == 1
    connection.close()
    assert finished.wait(10)
    assert result == [None]


def test_wrong_password_raises_security_exception(broker: Any) -> None:
    factory = jmspy.ConnectionFactory(broker.url, broker.username, "not-the-password")
    connection = factory.createConnection()
    with pytest.raises(jmspy.JMSSecurityException) as info:
        connection.start()
    assert "not-the-password" not in str(info.value)
    connection.close()
    # With a client id the open happens in createConnection itself.
    with pytest.raises(jmspy.JMSSecurityException):
        jmspy.ConnectionFactory(
            broker.url, broker.username, "wrong", client_id="wrong-pw-client"
        ).createConnection()


def test_broker_not_listening_fails_within_connect_timeout() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    factory = jmspy.ConnectionFactory(f"amqp://127.0.0.1:{port}", connect_timeout=2000)
    started = time.monotonic()
    with pytest.raises(jmspy.JMSException):
        factory.createConnection().start()
    assert time.monotonic() - started < 10


def test_duplicate_client_id_is_rejected(factory: Any, unique_name: str) -> None:
    with factory.createConnection() as first:
        first.setClientID(unique_name)
        second = factory.createConnection()
        with pytest.raises(jmspy.InvalidClientIDException):
            second.setClientID(unique_name)
        second.close()


def test_metadata_names_the_broker(connection: Any) -> None:
    meta = connection.getMetaData()
    assert meta.getJMSVersion() == "2.0"
    assert meta.getJMSProviderName() == "jmspy"
    assert meta.getBrokerProduct() == "apache-activemq-artemis"
    assert {"DELAYED_DELIVERY", "ANONYMOUS-RELAY", "SHARED-SUBS"} <= meta.getOfferedCapabilities()


def test_snake_case_aliases_and_iteration(factory: Any, unique_name: str) -> None:
    with factory.create_connection() as connection:
        session = connection.create_session(jmspy.AUTO_ACKNOWLEDGE)
        queue = session.create_queue(unique_name)
        producer = session.create_producer(queue)
        for i in range(3):
            producer.send(session.create_text_message(str(i)))
        connection.start()
        consumer = session.create_consumer(queue)
        texts = []
        for message in consumer:
            texts.append(message.get_text())
            if len(texts) == 3:
                break
        assert texts == ["0", "1", "2"]
        assert consumer.receive_no_wait() is None


def test_receive_no_wait_drains_when_the_broker_holds_more_than_the_credit(
    broker: Any, unique_name: str
) -> None:
    """A drain that the transfers themselves end (credit used up, no flow frame from the
    broker) must complete at once, not after the drain timeout."""
    # Long drain timeouts: on a busy machine a drain answered in 1-2 s must still count (a
    # receiveNoWait giving up early would return null with messages left); a drain that
    # waited for its timeout instead of ending with the transfers takes 30 s.
    factory = jmspy.ConnectionFactory(
        broker.url,
        broker.username,
        broker.password,
        drain_timeout=30000,
        receive_drain_timeout=30000,
        **{"jms.prefetchPolicy.queuePrefetch": 10},
    )
    with factory.createConnection() as connection:
        session = connection.createSession()
        queue = session.createQueue(unique_name)
        producer = session.createProducer(queue)
        producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT)
        for i in range(50):
            producer.send(session.createTextMessage(str(i)))
        producer.close()
        connection.start()
        consumer = session.createConsumer(queue)
        started = time.monotonic()
        texts = []
        # One early null is tolerated: receiveNoWait is allowed to return null when nothing is
        # immediately available, and Artemis 2.56 answers a few percent of drains with
        # "drained" (delivery-count advanced over the whole credit, no transfer) while it still
        # holds messages, seen in frame traces right after the first credit window. Two nulls
        # in a row end the loop (the Spark source confirms the end of the data the same way).
        nulls = 0
        while nulls < 2 and len(texts) < 50:
            message = consumer.receiveNoWait()
            if message is None:
                nulls += 1
                continue
            nulls = 0
            texts.append(message.getText())
        assert texts == [str(i) for i in range(50)]
        assert time.monotonic() - started < 25, "a drain waited for its timeout"
