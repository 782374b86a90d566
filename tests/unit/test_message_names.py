"""Property names (JMS 3.5.1), JMSX/header/vendor names and the read-only state of a message."""

from __future__ import annotations

from typing import Any

import pytest

from jmspy.destination import Queue
from jmspy.errors import (
    IllegalArgumentException,
    JMSException,
    MessageFormatException,
    MessageNotWriteableException,
)
from jmspy.message import (
    BytesMessage,
    DeliveryMode,
    JavaType,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)

ALL_TYPES = [Message, TextMessage, BytesMessage, MapMessage, StreamMessage, ObjectMessage]


# ---------------------------------------------------------------------------------------------
# Property names
# ---------------------------------------------------------------------------------------------

RESERVED = ["NULL", "TRUE", "FALSE", "NOT", "AND", "OR", "BETWEEN", "LIKE", "IN", "IS", "ESCAPE"]


@pytest.mark.parametrize("name", RESERVED)
def test_reserved_words_rejected(name: str) -> None:
    m = Message()
    with pytest.raises(IllegalArgumentException, match=name):
        m.setStringProperty(name, "x")
    with pytest.raises(IllegalArgumentException):
        m.getStringProperty(name)
    assert m.propertyExists(name) is False


@pytest.mark.parametrize("name", [n.lower() for n in RESERVED] + ["Null", "True", "NULLS"])
def test_reserved_words_are_case_sensitive(name: str) -> None:
    m = Message()
    m.setStringProperty(name, "x")
    assert m.getStringProperty(name) == "x"


@pytest.mark.parametrize("name", [None, ""])
@pytest.mark.parametrize(
    "setter",
    [
        "setBooleanProperty",
        "setByteProperty",
        "setShortProperty",
        "setIntProperty",
        "setLongProperty",
        "setFloatProperty",
        "setDoubleProperty",
        "setStringProperty",
        "setObjectProperty",
    ],
)
def test_empty_names_rejected_on_every_setter(setter: str, name: Any) -> None:
    value = {"setBooleanProperty": True, "setStringProperty": "s", "setObjectProperty": "s"}.get(
        setter, 1
    )
    with pytest.raises(IllegalArgumentException):
        getattr(Message(), setter)(name, value)


@pytest.mark.parametrize("name", [None, ""])
def test_empty_names_rejected_on_get(name: Any) -> None:
    with pytest.raises(IllegalArgumentException):
        Message().getStringProperty(name)


@pytest.mark.parametrize(
    "name", ["1abc", "a-b", "a b", "a.b", "sentry-trace", "a+", "-", "#x", "x\n", "x\r", "é-", 5]
)
def test_invalid_identifiers_rejected(name: Any) -> None:
    with pytest.raises(IllegalArgumentException, match="invalid"):
        Message().setStringProperty(name, "x")


@pytest.mark.parametrize(
    "name", ["a", "_a", "$a", "a1", "a_b$c", "é", "naïve", "日本", "JMS_X", "€x", "a\x00b"]
)
def test_valid_identifiers_accepted(name: str) -> None:
    m = Message()
    m.setIntProperty(name, 1)
    assert m.getIntProperty(name) == 1
    assert m.propertyExists(name)
    assert name in m.getPropertyNames()


def test_name_error_precedes_value_error() -> None:
    with pytest.raises(IllegalArgumentException):
        Message().setObjectProperty("a-b", [1])


def test_property_names_and_clear() -> None:
    m = Message()
    m.setIntProperty("a", 1)
    m.setStringProperty("b", "x")
    m.setIntProperty("JMS_IBM_Retain", 1)  # an ordinary vendor property
    assert m.getPropertyNames() == ["a", "b", "JMS_IBM_Retain"]
    m.setIntProperty("a", 2)  # overwrite keeps one entry
    assert m.getPropertyNames() == ["a", "b", "JMS_IBM_Retain"]
    m.clearProperties()
    assert m.getPropertyNames() == []
    assert not m.propertyExists("a")


def test_received_illegal_names_are_hidden() -> None:
    m = Message()
    m._properties = {"sentry-trace": (JavaType.STRING, "abc"), "ok": (JavaType.INT, 1)}
    assert m.getPropertyNames() == ["ok"]
    assert m.propertyExists("sentry-trace") is False
    with pytest.raises(IllegalArgumentException):
        m.getStringProperty("sentry-trace")
    # With jms.validatePropertyNames=false the names are visible.
    m._validate_names = False
    assert m.getPropertyNames() == ["sentry-trace", "ok"]
    assert m.getStringProperty("sentry-trace") == "abc"
    assert m.propertyExists("sentry-trace")


# ---------------------------------------------------------------------------------------------
# JMSX, JMS header and vendor names
# ---------------------------------------------------------------------------------------------


def test_jmsx_group_properties_use_dedicated_fields() -> None:
    m = Message()
    m.setStringProperty("JMSXGroupID", "g1")
    m.setIntProperty("JMSXGroupSeq", 3)
    m.setStringProperty("JMSXUserID", "alice")
    m.setStringProperty("JMSXAppID", "app")  # ordinary property
    assert m._group_id == "g1"
    assert m._group_seq == 3
    assert m._user_id == "alice"
    assert m._properties == {"JMSXAppID": (JavaType.STRING, "app")}
    assert m.getStringProperty("JMSXGroupID") == "g1"
    assert m.getIntProperty("JMSXGroupSeq") == 3
    assert m.getLongProperty("JMSXGroupSeq") == 3
    assert m.getObjectProperty("JMSXUserID") == "alice"
    assert sorted(m.getPropertyNames()) == [
        "JMSXAppID",
        "JMSXGroupID",
        "JMSXGroupSeq",
        "JMSXUserID",
    ]
    assert m.propertyExists("JMSXGroupID")
    m.clearProperties()
    assert m.getPropertyNames() == []
    assert m.getStringProperty("JMSXGroupID") is None


def test_jmsx_group_seq_from_string() -> None:
    m = Message()
    m.setStringProperty("JMSXGroupSeq", "7")
    assert m._group_seq == 7
    with pytest.raises(MessageFormatException):
        m.setStringProperty("JMSXGroupSeq", "x")


def test_jmsx_delivery_count_is_provider_set() -> None:
    m = Message()
    with pytest.raises(MessageNotWriteableException):
        m.setIntProperty("JMSXDeliveryCount", 2)
    assert not m.propertyExists("JMSXDeliveryCount")
    m.set_delivery_count(2)
    assert m.getIntProperty("JMSXDeliveryCount") == 2
    assert m.getJMSRedelivered() is True
    assert "JMSXDeliveryCount" in m.getPropertyNames()


def test_jmsx_user_id_falls_back_to_application_property() -> None:
    m = Message()
    m._properties = {"JMSXUserID": (JavaType.STRING, "bob")}
    assert m.getStringProperty("JMSXUserID") == "bob"
    m._user_id = "alice"
    assert m.getStringProperty("JMSXUserID") == "alice"


def test_headers_reachable_as_properties_but_not_listed() -> None:
    m = Message()
    m.setJMSType("t")
    m.setJMSPriority(7)
    m.setJMSDestination(Queue("q"))
    m.setJMSCorrelationID("c")
    m.setJMSTimestamp(5)
    assert m.getStringProperty("JMSType") == "t"
    assert m.getIntProperty("JMSPriority") == 7
    assert m.getStringProperty("JMSDestination") == "q"
    assert m.getStringProperty("JMSDeliveryMode") == "PERSISTENT"
    assert m.getStringProperty("JMSCorrelationID") == "c"
    assert m.getLongProperty("JMSTimestamp") == 5
    assert m.getBooleanProperty("JMSRedelivered") is False
    assert m.getPropertyNames() == []
    assert not m.propertyExists("JMSType")


def test_headers_settable_as_properties() -> None:
    m = Message()
    m.setStringProperty("JMSType", "t")
    m.setIntProperty("JMSPriority", 2)
    m.setStringProperty("JMSDeliveryMode", "NON_PERSISTENT")
    m.setStringProperty("JMSCorrelationID", "c")
    assert m.getJMSType() == "t"
    assert m.getJMSPriority() == 2
    assert m.getJMSDeliveryMode() == DeliveryMode.NON_PERSISTENT
    assert m.getJMSCorrelationID() == "c"
    m.setBooleanProperty("JMSDeliveryMode", True)
    assert m.getJMSDeliveryMode() == DeliveryMode.PERSISTENT
    with pytest.raises(JMSException):
        m.setIntProperty("JMSPriority", 11)
    assert m.getPropertyNames() == []


@pytest.mark.parametrize("name", ["JMSDestination", "JMSReplyTo"])
def test_destination_headers_not_settable_as_properties(name: str) -> None:
    with pytest.raises(JMSException, match=name):
        Message().setStringProperty(name, "q")


def test_amqp_ttl_vendor_property() -> None:
    m = Message()
    m.setLongProperty("JMS_AMQP_TTL", 2**32 - 1)
    assert m.getLongProperty("JMS_AMQP_TTL") == 2**32 - 1
    assert "JMS_AMQP_TTL" in m.getPropertyNames()
    m.setIntProperty("JMS_AMQP_TTL", 0)
    for bad in (-1, 2**32):
        with pytest.raises(MessageFormatException, match="JMS_AMQP_TTL"):
            m.setLongProperty("JMS_AMQP_TTL", bad)


def test_typed_encoding_only_on_object_message() -> None:
    with pytest.raises(MessageFormatException, match="ObjectMessage"):
        TextMessage().setBooleanProperty("JMS_AMQP_TYPED_ENCODING", True)
    om = ObjectMessage()
    om.setBooleanProperty("JMS_AMQP_TYPED_ENCODING", True)
    assert om.uses_typed_encoding()
    assert om.getBooleanProperty("JMS_AMQP_TYPED_ENCODING") is True


def test_ack_type_needs_client_acknowledge() -> None:
    m = Message()
    with pytest.raises(JMSException, match="does not allow"):
        m.setIntProperty("JMS_AMQP_ACK_TYPE", 1)
    m.set_acknowledge_callback(lambda: None)
    m.set_read_only(True)  # it stays settable on a received message
    m.setIntProperty("JMS_AMQP_ACK_TYPE", 5)
    assert m._ack_type == 5
    assert m.getIntProperty("JMS_AMQP_ACK_TYPE") == 5
    for bad in (0, 6):
        with pytest.raises(JMSException):
            m.setIntProperty("JMS_AMQP_ACK_TYPE", bad)


# ---------------------------------------------------------------------------------------------
# Read-only state
# ---------------------------------------------------------------------------------------------

PROPERTY_SETTERS: list[tuple[str, Any]] = [
    ("setBooleanProperty", True),
    ("setByteProperty", 1),
    ("setShortProperty", 1),
    ("setIntProperty", 1),
    ("setLongProperty", 1),
    ("setFloatProperty", 1.0),
    ("setDoubleProperty", 1.0),
    ("setStringProperty", "x"),
    ("setObjectProperty", "x"),
]


@pytest.mark.parametrize(("setter", "value"), PROPERTY_SETTERS)
def test_read_only_properties(setter: str, value: Any) -> None:
    m = TextMessage("t")
    m.setIntProperty("before", 1)
    m.set_read_only(True)
    with pytest.raises(MessageNotWriteableException):
        getattr(m, setter)("p", value)
    # Headers stay settable (the provider sets several of them on a received message).
    m.setJMSType("ok")
    assert m.getIntProperty("before") == 1
    m.clearProperties()
    getattr(m, setter)("p", value)
    assert m.propertyExists("p")
    assert not m.propertyExists("before")
    # clearProperties does not touch the body or its read-only state.
    assert m.getText() == "t"
    with pytest.raises(MessageNotWriteableException):
        m.setText("u")


def test_read_only_check_precedes_value_check() -> None:
    m = Message()
    m.set_read_only(True)
    with pytest.raises(MessageNotWriteableException):
        m.setObjectProperty("p", [1])


def test_read_only_jmsx_properties() -> None:
    m = Message()
    m.set_read_only(True)
    with pytest.raises(MessageNotWriteableException):
        m.setStringProperty("JMSXGroupID", "g")


def test_set_read_only_false_restores_writes() -> None:
    m = TextMessage()
    m.set_read_only(True)
    m.set_read_only(False)
    m.setText("x")
    m.setIntProperty("p", 1)
