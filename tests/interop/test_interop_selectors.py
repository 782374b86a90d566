"""One selector string, written once, selects the same messages for Qpid JMS and jmspy.

The same messages (sent by jmspy, or by Qpid JMS) go to two queues; a Java consumer on one and a
jmspy consumer on the other use SELECTOR. Both must get exactly the messages the reference
predicate (``_matches``, the selector spelled out in Python) picks. The
selector mixes application properties of several Java types with the JMS header identifiers
JMSType, JMSPriority, JMSCorrelationID and JMSDeliveryMode, so a header or property encoded
differently by one client would show up as a different selection.
"""

from __future__ import annotations

from typing import Any

import pytest
from interop_support import JavaClient, JsonObject, queue, send_with_jmspy

import jmspy

SELECTOR = (
    "(color IN ('red', 'green') AND weight > 2.5 AND seq <> 8)"
    " OR (JMSType = 'special' AND JMSPriority >= 6)"
    " OR JMSCorrelationID LIKE 'vip-%'"
    " OR (color IS NULL AND size BETWEEN 100 AND 180 AND flag = TRUE)"
    " OR (JMSDeliveryMode = 'NON_PERSISTENT' AND seq > 10)"
)
COUNT = 16
COLORS = ["red", "green", "blue", None]


def _fields(seq: int) -> dict[str, Any]:
    return {
        "seq": seq,
        "color": COLORS[seq % 4],
        "weight": seq * 0.75,
        "size": seq * 20,
        "flag": seq % 3 != 2,
        "jmsType": "special" if seq % 4 == 1 else "normal",
        "priority": seq * 7 % 10,
        "correlationId": f"vip-{seq}" if seq % 10 == 0 else f"c-{seq}",
        "persistent": seq % 3 != 0,
    }


def _matches(f: dict[str, Any]) -> bool:
    """SELECTOR, in Python."""
    return bool(
        (f["color"] in ("red", "green") and f["weight"] > 2.5 and f["seq"] != 8)
        or (f["jmsType"] == "special" and f["priority"] >= 6)
        or f["correlationId"].startswith("vip-")
        or (f["color"] is None and 100 <= f["size"] <= 180 and f["flag"])
        or (not f["persistent"] and f["seq"] > 10)
    )


def _spec(seq: int) -> JsonObject:
    f = _fields(seq)
    properties: list[JsonObject] = [
        {"name": "seq", "type": "int", "value": seq},
        {"name": "weight", "type": "double", "value": f["weight"]},
        {"name": "size", "type": "short", "value": f["size"]},
        {"name": "flag", "type": "boolean", "value": f["flag"]},
    ]
    if f["color"] is not None:
        properties.append({"name": "color", "type": "string", "value": f["color"]})
    return {
        "type": "text",
        "body": f"message {seq}",
        "jmsType": f["jmsType"],
        "priority": f["priority"],
        "correlationId": f["correlationId"],
        "deliveryMode": "PERSISTENT" if f["persistent"] else "NON_PERSISTENT",
        "properties": properties,
    }


EXPECTED = [seq for seq in range(COUNT) if _matches(_fields(seq))]


@pytest.mark.parametrize("producer", ["jmspy", "qpid-jms"])
def test_same_selector_same_messages(
    producer: str, java: JavaClient, factory: Any, unique_name: str
) -> None:
    # Some messages match and some do not; each OR branch alone selects at least one.
    assert EXPECTED == [0, 1, 4, 5, 7, 9, 10, 12, 13, 15]
    specs = [_spec(seq) for seq in range(COUNT)]
    for_java, for_python = queue(unique_name + "-java"), queue(unique_name + "-python")
    if producer == "jmspy":
        with factory.createConnection() as connection:
            session = connection.createSession()
            send_with_jmspy(session, for_java, specs)
            send_with_jmspy(session, for_python, specs)
    else:
        java.send(for_java, specs)
        java.send(for_python, specs)

    result = java.receive(for_java, count=COUNT, timeout_ms=1000, selector=SELECTOR)
    java_seqs = [m["properties"]["seq"]["value"] for m in result["messages"]]

    python_seqs = []
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
        consumer = session.createConsumer(session.createQueue(for_python["name"]), SELECTOR)
        assert consumer.getMessageSelector() == SELECTOR
        connection.start()
        while (message := consumer.receive(1000)) is not None:
            python_seqs.append(message.getIntProperty("seq"))

    # The broker hands out higher priorities first, so compare the selections, not the order.
    assert sorted(java_seqs) == EXPECTED
    assert sorted(python_seqs) == EXPECTED
