"""The sink's sending side driven directly (no Spark) against the real broker."""

from __future__ import annotations

import datetime
import time
from typing import Any

import pytest

import jmspy
from jmspy.spark import ROW_ID_PROPERTY, JmsOptionError, JmsOptions, JmsWriteError
from jmspy.spark._writer import RowWriter, close_links


@pytest.fixture(autouse=True)
def _fresh_links() -> Any:
    yield
    close_links()


def receive_all(factory: Any, destination: jmspy.Destination, wait_ms: int = 1000) -> list[Any]:
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        consumer = session.createConsumer(destination)
        connection.start()
        received = []
        while (message := consumer.receive(wait_ms)) is not None:
            received.append(message)
        return received


def writer(jms_options: dict[str, str], columns: list[str], **extra: str) -> RowWriter:
    return RowWriter(JmsOptions.parse({**jms_options, **extra}), columns)


def test_every_column_reaches_the_message(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    columns = [
        "body",
        "properties",
        "priority",
        "time_to_live",
        "correlation_id",
        "type",
        "group_id",
        "delivery_mode",
    ]
    rows = [
        ("text body", {"region": "eu", "n": 3}, 8, 60_000, "c-1", "order", "g-1", 1),
        (bytearray(b"\x00\xff"), None, None, None, None, None, None, None),
        (None, {"only": "props"}, None, None, None, None, None, None),
    ]
    sent = writer(jms_options, columns, destination=unique_name).write(rows, "w:3:1")
    assert sent == 3
    received = receive_all(factory, jmspy.Queue(unique_name))
    by_row = {m.getStringProperty(ROW_ID_PROPERTY): m for m in received}
    assert sorted(by_row) == ["w:3:1:0", "w:3:1:1", "w:3:1:2"]
    first = by_row["w:3:1:0"]
    assert isinstance(first, jmspy.TextMessage) and first.getText() == "text body"
    assert first.getStringProperty("region") == "eu" and first.getIntProperty("n") == 3
    assert (first.getJMSPriority(), first.getJMSDeliveryMode()) == (8, 1)
    assert first.getJMSExpiration() - first.getJMSTimestamp() == 60_000
    assert (first.getJMSCorrelationID(), first.getJMSType()) == ("c-1", "order")
    assert first.getStringProperty("JMSXGroupID") == "g-1"
    second = by_row["w:3:1:1"]
    assert isinstance(second, jmspy.BytesMessage) and second.getBody(bytes) == b"\x00\xff"
    assert (second.getJMSPriority(), second.getJMSDeliveryMode()) == (4, 2)
    assert by_row["w:3:1:2"].getStringProperty("only") == "props"


def test_per_row_destination(factory: Any, jms_options: dict[str, str], unique_name: str) -> None:
    rows = [("a", f"queue://{unique_name}-a"), ("b", f"{unique_name}-b"), ("a2", None)]
    writer(jms_options, ["body", "destination"], destination=f"{unique_name}-a").write(
        rows, "w:0:0"
    )
    assert [m.getText() for m in receive_all(factory, jmspy.Queue(f"{unique_name}-a"))] == [
        "a",
        "a2",
    ]
    assert [m.getText() for m in receive_all(factory, jmspy.Queue(f"{unique_name}-b"))] == ["b"]


def test_delivery_delay_and_delivery_time_hold_messages_back(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    at = datetime.datetime.now(datetime.UTC) + datetime.timedelta(milliseconds=1500)
    rows = [("now", None, None), ("delay", 1200, None), ("at", None, at)]
    before = time.time_ns() // 1_000_000
    writer(jms_options, ["body", "delivery_delay", "delivery_time"], destination=unique_name).write(
        rows, "w:0:0"
    )
    arrivals: dict[str, tuple[int, Any]] = {}
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        consumer = session.createConsumer(session.createQueue(unique_name))
        connection.start()
        while len(arrivals) < 3 and (message := consumer.receive(5000)) is not None:
            arrivals[message.getText()] = (time.time_ns() // 1_000_000, message)
    assert sorted(arrivals) == ["at", "delay", "now"]
    for text in ("delay", "at"):
        arrived, message = arrivals[text]
        assert arrived >= message.getJMSDeliveryTime(), text
    assert arrivals["delay"][1].getJMSDeliveryTime() >= before + 1200
    assert abs(arrivals["at"][1].getJMSDeliveryTime() - at.timestamp() * 1000) < 100
    assert arrivals["now"][0] < arrivals["delay"][1].getJMSDeliveryTime()


@pytest.mark.parametrize(
    ("columns", "bad_row", "rule"),
    [
        (["body", "delivery_delay", "time_to_live"], ("bad", 5000, 1000), "DD-2"),
        (["body", "delivery_delay", "group_id"], ("bad", 1000, "g"), "DD-4"),
        (["body", "priority"], ("bad", 12), "DD-14"),
    ],
)
def test_a_row_that_breaks_a_rule_fails_the_task_and_sends_nothing(
    factory: Any,
    jms_options: dict[str, str],
    unique_name: str,
    columns: list[str],
    bad_row: tuple[Any, ...],
    rule: str,
) -> None:
    good = ("good",) + (None,) * (len(columns) - 1)
    rows = [good, good, bad_row, good]
    with pytest.raises(JmsWriteError, match=rf"row w:0:0:2 .*rule {rule}") as caught:
        writer(jms_options, columns, destination=unique_name).write(rows, "w:0:0")
    assert caught.value.rule_id == rule
    assert f"rule {rule}" in str(caught.value)
    # Transacted (Artemis): the partition's transaction rolled back with the task.
    assert receive_all(factory, jmspy.Queue(unique_name), wait_ms=300) == []


def test_without_transactions_earlier_rows_are_sent_and_identifiable(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    rows = [("ok0", None), ("ok1", None), ("bad", 42)]
    w = writer(jms_options, ["body", "priority"], destination=unique_name, transacted="false")
    with pytest.raises(JmsWriteError, match="DD-14"):
        w.write(rows, "w:0:7")
    # Spark retries the task: the same rows get the same row ids.
    w.write(rows[:2], "w:0:7")
    received = receive_all(factory, jmspy.Queue(unique_name))
    ids = sorted(m.getStringProperty(ROW_ID_PROPERTY) for m in received)
    assert ids == ["w:0:7:0", "w:0:7:0", "w:0:7:1", "w:0:7:1"]


def test_artemis_duplicate_detection_drops_a_retried_partition(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    w = writer(jms_options, ["body"], destination=unique_name, duplicateDetection="true")
    rows = [("a",), ("b",)]
    assert w.write(rows, "w:0:0") == 2
    assert w.write(rows, "w:0:0") == 2  # a retry of the same task
    received = receive_all(factory, jmspy.Queue(unique_name))
    assert sorted(m.getText() for m in received) == ["a", "b"]


def test_a_writer_connection_is_reused_by_the_next_task(
    jms_options: dict[str, str], unique_name: str
) -> None:
    from jmspy.spark import _writer

    w = writer(jms_options, ["body"], destination=unique_name)
    w.write([("a",)], "w:0:0")
    (link,) = _writer._LINKS.values()
    w.write([("b",)], "w:0:1")
    assert list(_writer._LINKS.values()) == [link]
    link.connection.close()
    link.failed = True  # what the ExceptionListener does when the connection drops
    w.write([("c",)], "w:0:2")
    assert list(_writer._LINKS.values()) != [link]


def test_writers_whose_links_differ_do_not_share_a_cached_connection(
    jms_options: dict[str, str], unique_name: str
) -> None:
    # Whether the link sends in transactions depends on duplicateDetection too: a writer with it
    # that reused a transacted connection would send its retry in a transaction, which Artemis
    # refuses whole; one without it on a plain connection would leave a failed task's rows
    # sent.
    from jmspy.spark import _writer

    plain = writer(jms_options, ["body"], destination=unique_name)  # transacted=auto: Artemis
    plain.write([("a",)], "w:0:0")
    deduplicated = writer(jms_options, ["body"], destination=unique_name, duplicateDetection="true")
    deduplicated.write([("b",)], "w:1:0")
    links = list(_writer._LINKS.values())
    assert sorted(link.transacted for link in links) == [False, True]


def test_the_cache_closes_idle_and_least_recently_used_connections(
    jms_options: dict[str, str], unique_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A worker serves many queries; each distinct set of options (a new client id, a changed
    # password) is a new cached connection, which must not stay open for the worker's life.
    from jmspy.spark import _writer

    monkeypatch.setattr(_writer, "_MAX_CACHED_LINKS", 2)
    for n in range(4):
        writer(jms_options, ["body"], destination=unique_name, clientId=f"c{n}").write(
            [("x",)], f"w:{n}:0"
        )
    assert sorted(link.connection.getClientID() for link in _writer._LINKS.values()) == [
        "c2",
        "c3",
    ]
    for link in _writer._LINKS.values():  # as if no task had used them for a while
        link.last_used -= _writer._IDLE_CLOSE_S + 1
    kept = writer(jms_options, ["body"], destination=unique_name, clientId="c4")
    kept.write([("x",)], "w:4:0")
    assert [link.connection.getClientID() for link in _writer._LINKS.values()] == ["c4"]
    # The closed ones are closed on the broker too: their client ids are free again.
    again = JmsOptions.parse({**jms_options, "clientId": "c2"}).factory().createConnection()
    again.close()


def test_a_connection_that_cannot_open_fails_with_a_write_error_naming_the_task() -> None:
    from jmspy.conformance.brokers.base import free_port

    refused = writer({"url": f"amqp://127.0.0.1:{free_port()}"}, ["body"], destination="q")
    with pytest.raises(JmsWriteError, match=r"rows w:7:3:\* were not sent.*JMSException"):
        refused.write([("a",)], "w:7:3")


def test_a_commit_the_broker_refuses_fails_with_a_write_error_saying_nothing_was_sent(
    factory: Any, jms_options: dict[str, str], unique_name: str
) -> None:
    # Artemis refuses a whole transaction that holds a message it has seen already (its
    # duplicate id): the commit is rolled back, so the task's rows were not sent.
    w = writer(jms_options, ["body", "properties"], destination=unique_name, transacted="true")
    w.write([("first", {"_AMQ_DUPL_ID": f"{unique_name}-1"})], "w:0:0")
    rows = [("again", {"_AMQ_DUPL_ID": f"{unique_name}-1"}), ("other", None)]
    with pytest.raises(JmsWriteError, match=r"the 2 row\(s\) w:0:1:0..1 were not sent \(the"):
        w.write(rows, "w:0:1")
    assert [m.getText() for m in receive_all(factory, jmspy.Queue(unique_name))] == ["first"]


@pytest.mark.parametrize(
    ("columns", "extra", "complaint"),
    [
        (["value"], {"destination": "q"}, "cannot write column"),
        (["properties"], {"destination": "q"}, "needs a 'body' column"),
        (["body"], {}, "needs option 'destination'"),
    ],
)
def test_column_errors(
    jms_options: dict[str, str], columns: list[str], extra: dict[str, str], complaint: str
) -> None:
    with pytest.raises(JmsOptionError, match=complaint):
        writer(jms_options, columns, **extra)
