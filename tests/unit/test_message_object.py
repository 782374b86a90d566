"""ObjectMessage bodies and the deserialization policy."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import pytest

from jmspy.errors import (
    MessageFormatException,
    MessageNotWriteableException,
)
from jmspy.message import (
    JAVA_SERIALIZED_CONTENT_TYPE,
    DeserializationPolicy,
    ObjectMessage,
)


@dataclasses.dataclass
class Order:
    """A user class for the deserialization allow-list tests (module tests.unit...)."""

    item: str
    qty: int


# ObjectMessage and the deserialization policy
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "obj",
    [
        {"a": [1, 2.5, "x", None, True, b"b", (1, 2)]},
        [1, 2],
        (1, "a"),
        "text",
        12345678901234567890,
        1.5,
        b"raw",
        True,
        {1, 2},
        frozenset({3}),
        bytearray(b"ba"),
    ],
)
def test_object_message_primitives_always_load(obj: Any) -> None:
    m = ObjectMessage(obj)
    assert m.getObject() == obj


def test_object_message_copies_at_set_time() -> None:
    data = {"k": [1]}
    m = ObjectMessage()
    m.setObject(data)
    data["k"].append(2)
    assert m.getObject() == {"k": [1]}
    assert m.getObject() is not m.getObject()


def test_object_message_pickle_protocol_5() -> None:
    m = ObjectMessage([1])
    raw = m.getSerializedBytes()
    assert raw is not None
    assert raw[:2] == b"\x80\x05"
    assert pickle.loads(raw) == [1]


def test_object_message_class_denied_by_default() -> None:
    m = ObjectMessage(Order("apple", 2))
    with pytest.raises(MessageFormatException, match="allowList") as info:
        m.getObject()
    assert f"{__name__}.Order" in str(info.value)
    assert m.isBodyAssignableTo(Order) is False


@pytest.mark.parametrize(
    "allow",
    [
        [f"{__name__}.Order"],  # exact class
        [__name__],  # its module
        [__name__.rsplit(".", 1)[0]],  # a parent package matches sub-packages
        ["*"],
    ],
)
def test_object_message_allowed(allow: list[str]) -> None:
    m = ObjectMessage(Order("apple", 2))
    m.set_deserialization_policy(DeserializationPolicy(allow_list=allow))
    assert m.getObject() == Order("apple", 2)
    assert m.getBody(Order) == Order("apple", 2)
    assert m.isBodyAssignableTo(Order)
    assert m.isBodyAssignableTo(object)
    assert not m.isBodyAssignableTo(str)
    with pytest.raises(MessageFormatException):
        m.getBody(str)


def test_object_message_prefix_is_not_a_substring_match() -> None:
    m = ObjectMessage(Order("apple", 2))
    m.set_deserialization_policy(DeserializationPolicy(allow_list=[f"{__name__}.Ord"]))
    with pytest.raises(MessageFormatException):
        m.getObject()


@pytest.mark.parametrize("deny", [[f"{__name__}.Order"], [__name__], ["*"]])
def test_object_message_deny_beats_allow(deny: list[str]) -> None:
    m = ObjectMessage(Order("apple", 2))
    m.set_deserialization_policy(DeserializationPolicy(allow_list=["*"], deny_list=deny))
    with pytest.raises(MessageFormatException, match="Order"):
        m.getObject()


def test_object_message_deny_does_not_affect_primitives() -> None:
    m = ObjectMessage({"a": 1})
    m.set_deserialization_policy(DeserializationPolicy(deny_list=["*"]))
    assert m.getObject() == {"a": 1}


def test_object_message_blocks_dangerous_globals() -> None:
    class Evil:
        def __reduce__(self) -> Any:
            return (eval, ("1+1",))

    m = ObjectMessage(Evil())
    with pytest.raises(MessageFormatException, match="builtins.eval"):
        m.getObject()


def test_policy_parse() -> None:
    p = DeserializationPolicy.parse("a.b, c ,", None)
    assert p.allow_list == ["a.b", "c"]
    assert p.deny_list == []
    assert p.is_allowed("a.b.C")
    assert p.is_allowed("c")
    assert not p.is_allowed("ab.C")


def test_object_message_unpicklable() -> None:
    with pytest.raises(MessageFormatException, match="serialize"):
        ObjectMessage(lambda: 1)


def test_object_message_java_serialized() -> None:
    m = ObjectMessage()
    m.set_serialized_body(b"\xac\xed\x00\x05", JAVA_SERIALIZED_CONTENT_TYPE)
    with pytest.raises(MessageFormatException, match="Java serialized"):
        m.getObject()
    assert m.getSerializedBytes() == b"\xac\xed\x00\x05"
    assert m.isBodyAssignableTo(object) is False


def test_object_message_corrupt_pickle() -> None:
    m = ObjectMessage()
    m.set_serialized_body(b"\x80\x05garbage", "application/x-python-serialized-object")
    with pytest.raises(MessageFormatException, match="deserialize"):
        m.getObject()


def test_object_message_typed_body() -> None:
    m = ObjectMessage()
    m.set_typed_body({"k": [1, 2]})
    got = m.getObject()
    assert got == {"k": [1, 2]}
    got["k"].append(3)
    assert m.getObject() == {"k": [1, 2]}  # a copy each time
    assert m.getSerializedBytes() is None
    assert m.getBody(dict) == {"k": [1, 2]}


def test_object_message_read_only_and_clear() -> None:
    m = ObjectMessage("x")
    m.set_read_only(True)
    with pytest.raises(MessageNotWriteableException):
        m.setObject("y")
    m.clearBody()
    assert m.getObject() is None
    m.setObject("y")
    m.setObject(None)
    assert m.getObject() is None


# ---------------------------------------------------------------------------------------------
