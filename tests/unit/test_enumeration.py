"""The JMS methods that return a java.util.Enumeration in Java return jmspy.Enumeration: still
the list they returned before (equality, len, indexing, iteration), and walkable the Java way
with hasMoreElements()/nextElement(), which raises NoSuchElementException past the end."""

from __future__ import annotations

import pytest

import jmspy
from jmspy.message import MapMessage, TextMessage


def _walk(enumeration: jmspy.Enumeration[str]) -> list[str]:
    walked = []
    while enumeration.hasMoreElements():
        walked.append(enumeration.nextElement())
    return walked


def test_an_enumeration_is_a_list_that_walks_itself_once() -> None:
    names = jmspy.Enumeration(["a", "b"])
    assert names == ["a", "b"] and len(names) == 2 and names[1] == "b"
    assert _walk(names) == ["a", "b"]
    assert not names.has_more_elements()
    with pytest.raises(jmspy.NoSuchElementException, match="no more elements"):
        names.next_element()
    assert list(names) == ["a", "b"]  # Python's iteration does not depend on the walk


def test_message_property_names_walk_the_java_way() -> None:
    message = TextMessage("x")
    message.setStringProperty("colour", "red")
    message.setIntProperty("size", 3)
    names = message.getPropertyNames()
    assert isinstance(names, jmspy.Enumeration)
    assert sorted(_walk(names)) == ["colour", "size"]


def test_map_names_walk_the_java_way() -> None:
    message = MapMessage()
    message.setString("first", "1")
    message.setInt("second", 2)
    assert _walk(message.getMapNames()) == ["first", "second"]


def test_jmsx_property_names_walk_the_java_way() -> None:
    connection = jmspy.ConnectionFactory("amqp://127.0.0.1:1").createConnection()
    try:
        names = connection.getMetaData().getJMSXPropertyNames()  # needs no broker
    finally:
        connection.close()
    assert "JMSXDeliveryCount" in _walk(names)
