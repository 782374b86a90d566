"""Values of the wrong Python type given to the JMS API are refused where they are given, with
the documented exception naming the value and the rule, and the connection stays usable: a
session mode that is a bool, a float or a list (rules JMS-3, JMS-16), a header of the wrong
type on a message or a JMSProducer (JMS-46), a destination given as a queue name (JMS-47)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import jmspy
from jmspy.message import TextMessage

from .client_support import Clients, clients_fixture
from .peer import ScriptedPeer


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


# True == 1 and 1.0 == 1 passed as AUTO_ACKNOWLEDGE; a list raised TypeError (unhashable).
NOT_MODES: list[Any] = [True, 1.0, [1], "1", None]


@pytest.mark.parametrize("mode", NOT_MODES, ids=repr)
def test_create_context_refuses_a_session_mode_that_is_not_an_int(
    peer: ScriptedPeer, clients: Clients, mode: Any
) -> None:
    factory = clients.factory(peer)
    with pytest.raises(jmspy.JMSRuntimeException, match=r"Invalid Session Mode: .*rule JMS-3"):
        factory.createContext(mode)
    context = factory.createContext(jmspy.CLIENT_ACKNOWLEDGE)
    try:
        with pytest.raises(jmspy.JMSRuntimeException, match="rule JMS-3"):
            context.createContext(mode)
    finally:
        context.close()


@pytest.mark.parametrize("mode", [m for m in NOT_MODES if not isinstance(m, bool)], ids=repr)
def test_create_session_refuses_a_session_mode_that_is_not_an_int(
    peer: ScriptedPeer, clients: Clients, mode: Any
) -> None:
    connection = clients.connect(peer)
    with pytest.raises(jmspy.JMSException, match=r"invalid session mode .*rule JMS-16"):
        connection.createSession(mode)
    with pytest.raises(jmspy.JMSException, match="rule JMS-16"):
        connection.createSession(False, mode)
    assert connection.createSession(jmspy.AUTO_ACKNOWLEDGE).getAcknowledgeMode() == 1


@pytest.mark.parametrize(
    ("setter", "value", "error"),
    [
        ("setJMSCorrelationID", 42, jmspy.JMSException),
        ("setJMSType", 123, jmspy.JMSException),
        ("setJMSReplyTo", "replies", jmspy.InvalidDestinationException),
        ("setJMSCorrelationIDAsBytes", 5, jmspy.MessageFormatException),
        ("setJMSCorrelationIDAsBytes", "abc", jmspy.MessageFormatException),
    ],
)
def test_message_header_setters_refuse_the_wrong_type(
    setter: str, value: Any, error: type[Exception]
) -> None:
    message = TextMessage("x")
    with pytest.raises(error, match=f"not {type(value).__name__}"):
        getattr(message, setter)(value)
    assert message.getJMSType() is None and message.getJMSReplyTo() is None


@pytest.mark.parametrize(
    ("setter", "value", "error"),
    [
        ("setJMSCorrelationID", 42, jmspy.JMSRuntimeException),
        ("setJMSType", 123, jmspy.JMSRuntimeException),
        ("setJMSReplyTo", "replies", jmspy.InvalidDestinationRuntimeException),
        ("setJMSCorrelationIDAsBytes", 5, jmspy.MessageFormatRuntimeException),
        ("setJMSCorrelationIDAsBytes", "abc", jmspy.MessageFormatRuntimeException),
    ],
)
def test_jms_producer_header_setters_refuse_the_wrong_type(
    peer: ScriptedPeer, clients: Clients, setter: str, value: Any, error: type[Exception]
) -> None:
    context = clients.factory(peer).createContext()
    try:
        producer = context.createProducer()
        with pytest.raises(error, match=f"not {type(value).__name__}"):
            getattr(producer, setter)(value)
        # Nothing was kept: the next send carries no such header, and the context still works.
        assert producer.getJMSType() is None and producer.getJMSCorrelationIDAsBytes() is None
        producer.send(context.createQueue("q"), "after the refusal")
    finally:
        context.close()
    assert [t.link_name for t in peer.transfers] != []


def test_jms_producer_send_refuses_a_queue_name_for_a_destination(
    peer: ScriptedPeer, clients: Clients
) -> None:
    context = clients.factory(peer).createContext()
    try:
        producer = context.createProducer()
        with pytest.raises(jmspy.InvalidDestinationRuntimeException, match=r"'q'.*rule JMS-47"):
            producer.send("q", "x")  # type: ignore[call-overload]
        producer.send(context.createQueue("q"), "after the refusal")
    finally:
        context.close()
    assert len(peer.transfers) == 1


@pytest.mark.parametrize("name", ["", "  ", None, 7], ids=repr)
def test_unsubscribe_refuses_a_name_that_is_empty_or_not_a_str(
    peer: ScriptedPeer, clients: Clients, name: Any
) -> None:
    """It went out as a link named "|global" (or "None|global") and waited a whole
    jms.requestTimeout for the broker."""
    session = clients.connect(peer).createSession()
    with pytest.raises(jmspy.InvalidDestinationException, match=repr(name)):
        session.unsubscribe(name)
    assert [a for a in peer.attaches if a.role == "receiver"] == []


class _OnlyOnCompletion:
    def onCompletion(self, message: Any) -> None:
        pass


class _Listener(_OnlyOnCompletion):
    def onException(self, message: Any, exception: BaseException) -> None:
        pass


# Each of these said something else: send(q, m, None) on an anonymous producer "takes
# deliveryMode, priority and timeToLive together", a half listener on a fixed producer "this
# producer was created for q", and a half listener given to setAsync failed only when the
# outcome came, on the completion thread.
@pytest.mark.parametrize("listener", [None, _OnlyOnCompletion(), "listener"], ids=repr)
@pytest.mark.parametrize("anonymous", [False, True], ids=["fixed", "anonymous"])
@pytest.mark.parametrize("with_settings", [False, True], ids=["plain", "mode-priority-ttl"])
def test_send_refuses_what_is_not_a_completion_listener(
    peer: ScriptedPeer, clients: Clients, listener: Any, anonymous: bool, with_settings: bool
) -> None:
    session = clients.connect(peer).createSession()
    queue = session.createQueue("q")
    producer = session.createProducer(None if anonymous else queue)
    message = session.createTextMessage("x")
    head = (queue, message) if anonymous else (message,)
    settings = (jmspy.DeliveryMode.PERSISTENT, 4, 0) if with_settings else ()
    expected = "must not be null" if listener is None else "is not a CompletionListener"
    with pytest.raises(jmspy.IllegalArgumentException, match=f"{expected}.*rule JMS-39"):
        producer.send(*head, *settings, listener)
    assert peer.transfers == []
    producer.send(*head, *settings)  # the producer and its connection are still usable
    assert len(peer.transfers) == 1


@pytest.mark.parametrize("listener", [_OnlyOnCompletion(), object(), 3], ids=repr)
def test_set_async_refuses_what_is_not_a_completion_listener(
    peer: ScriptedPeer, clients: Clients, listener: Any
) -> None:
    context = clients.factory(peer).createContext()
    try:
        producer = context.createProducer()
        with pytest.raises(jmspy.IllegalArgumentException, match=r"onException.*rule JMS-39"):
            producer.setAsync(listener)
        assert producer.getAsync() is None
        whole = _Listener()
        assert producer.setAsync(whole).getAsync() is whole
        assert producer.setAsync(None).getAsync() is None
    finally:
        context.close()


def test_jms_producer_typed_property_getters_follow_the_conversion_table(
    peer: ScriptedPeer, clients: Clients
) -> None:
    # JMS 2.0 JMSProducer has the typed getters of Message; a Java program that reads back
    # what it set ports as it is. A type that does not convert is a
    # MessageFormatRuntimeException (the runtime twin of the Message getter's exception).
    context = clients.factory(peer).createContext()
    try:
        producer = context.createProducer()
        producer.setProperty("count", "12").setProperty("ratio", 1.5).setProperty("on", True)
        assert producer.getIntProperty("count") == 12
        assert producer.get_long_property("count") == 12
        assert producer.getStringProperty("ratio") == "1.5"
        assert producer.getDoubleProperty("ratio") == 1.5
        assert producer.getBooleanProperty("on") is True
        assert producer.getBooleanProperty("unset") is False
        assert producer.getStringProperty("unset") is None
        with pytest.raises(jmspy.MessageFormatRuntimeException):
            producer.getIntProperty("ratio")
        with pytest.raises(jmspy.MessageFormatRuntimeException):
            producer.getByteProperty("on")
        with pytest.raises(jmspy.NumberFormatException):
            producer.getShortProperty("unset")
        with pytest.raises(jmspy.NumberFormatException):
            producer.getFloatProperty("unset")
    finally:
        context.close()
