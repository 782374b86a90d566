"""The message facade: the codec reaches a message only through it, and the split of
``jmspy.message`` into a package keeps every name importable from where it was."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import pytest

import jmspy.message
from jmspy._amqp.codec import decode_message, encode_message
from jmspy.destination import Queue
from jmspy.message import JByte, JChar, JFloat, JInt, JLong, JShort, TextMessage

ROOT = Path(__file__).resolve().parents[2]
CODEC = ROOT / "jmspy" / "_amqp" / "codec"


def _private_reach_ins(path: Path) -> list[str]:
    """``other._name`` where other is not self/cls (dunders excluded)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
            continue
        if node.attr.startswith("__") and node.attr.endswith("__"):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}:
            continue
        found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_codec_touches_no_private_attribute_of_another_object() -> None:
    paths = sorted(CODEC.glob("*.py"))
    assert paths, CODEC
    hits = [hit for path in paths for hit in _private_reach_ins(path)]
    assert hits == []


# Every public name jmspy.message exported before it became a package, and the other names
# code imported from it.
_FORMER_NAMES = (
    "DeliveryMode DEFAULT_PRIORITY DEFAULT_DELIVERY_MODE DEFAULT_TIME_TO_LIVE "
    "DEFAULT_DELIVERY_DELAY JavaType JByte JShort JInt JLong JFloat JChar DeserializationPolicy "
    "Message TextMessage BytesMessage MapMessage StreamMessage ObjectMessage message_for_body "
    "PYTHON_SERIALIZED_CONTENT_TYPE JAVA_SERIALIZED_CONTENT_TYPE TypedValue JMS_AMQP_PREFIX "
    "JMS_AMQP_REPLY_TO_GROUP_ID JMS_AMQP_TTL JMS_AMQP_TYPED_ENCODING JMS_AMQP_ACK_TYPE "
    "JMSX_GROUP_ID JMSX_GROUP_SEQ JMSX_USER_ID JMSX_DELIVERY_COUNT"
).split()


@pytest.mark.parametrize("name", _FORMER_NAMES)
def test_former_names_still_import_from_jmspy_message(name: str) -> None:
    assert hasattr(jmspy.message, name), name


def test_all_lists_the_same_names_as_before() -> None:
    assert set(jmspy.message.__all__) == set(_FORMER_NAMES[:22])


@pytest.mark.parametrize("cls", [JByte, JShort, JInt, JLong, JFloat, JChar])
def test_java_wrappers_pickle_under_their_public_module(cls: type) -> None:
    # Pickles made before the split name jmspy.message.JByte etc.; they must still load.
    value = cls("x") if cls is JChar else cls(1)
    data = pickle.dumps(value, protocol=5)
    assert b"jmspy.message" in data and b"jmspy.message.java" not in data
    assert pickle.loads(data) == value


def test_facade_round_trip_of_the_provider_set_fields() -> None:
    m = TextMessage("x")
    m.setJMSDestination(Queue("q"))
    m.set_user_id("alice")
    m.setStringProperty("JMSXGroupID", "g")
    m.setIntProperty("JMSXGroupSeq", 3)
    r = decode_message(encode_message(m, ttl=0, delivery_time_transmitted=False), None)
    assert (r.getStringProperty("JMSXUserID"), r.get_group_id(), r.get_group_seq()) == (
        "alice",
        "g",
        3,
    )
    assert r.get_delivery_count() == 1
    r.set_delivery_count(2)
    assert r.getJMSRedelivered() is True
    assert r.getIntProperty("JMSXDeliveryCount") == 2


@pytest.mark.parametrize("durable", [True, False])
@pytest.mark.parametrize("priority", [None, 0, 7])
@pytest.mark.parametrize("delivery_count", [0, 3])
def test_set_received_is_the_four_received_setters_at_once(
    durable: bool, priority: int | None, delivery_count: int
) -> None:
    """The decoder fills a message with one call; it must leave the message exactly as the
    four setters it stands for do."""
    values = ("ID:m", "user", "type", "ID:c", 123, 456, "g", 9)
    one, four = TextMessage("x"), TextMessage("x")
    one.set_received(durable, priority, delivery_count, *values, Queue("d"), Queue("r"), 789, False)
    four.set_received_header(durable, priority, delivery_count)
    four.set_received_properties(*values)
    four.set_received_destinations(Queue("d"), Queue("r"), 789)
    four.set_name_validation(False)
    assert vars(one) == vars(four)
