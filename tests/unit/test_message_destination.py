"""Destinations: kinds, AMQP type codes, equality and temporary destination deletion."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from jmspy.destination import (
    Destination,
    Queue,
    TemporaryQueue,
    TemporaryTopic,
    Topic,
    destination_for_type_code,
)
from jmspy.errors import IllegalStateException, InvalidDestinationException


@pytest.mark.parametrize(
    ("cls", "kind", "code", "temporary"),
    [
        (Queue, "queue", 0, False),
        (Topic, "topic", 1, False),
        (TemporaryQueue, "temporary-queue", 2, True),
        (TemporaryTopic, "temporary-topic", 3, True),
    ],
)
def test_kinds_and_type_codes(
    cls: type[Destination], kind: str, code: int, temporary: bool
) -> None:
    d = cls("name")
    assert d.kind == kind
    assert d.type_code == code
    assert d.is_temporary is temporary
    assert d.address == "name"
    assert str(d) == "name"
    assert d.toString() == "name"
    assert repr(d) == f"{cls.__name__}('name')"
    assert destination_for_type_code(code, "name") == d


def test_names() -> None:
    assert Queue("q").getQueueName() == "q"
    assert Topic("t").getTopicName() == "t"
    assert TemporaryQueue("tq").getQueueName() == "tq"
    assert TemporaryTopic("tt").getTopicName() == "tt"
    assert isinstance(TemporaryQueue("x"), Queue)
    assert isinstance(TemporaryTopic("x"), Topic)


def test_equality_by_kind_and_name() -> None:
    assert Queue("a") == Queue("a")
    assert hash(Queue("a")) == hash(Queue("a"))
    assert Queue("a") != Queue("b")
    assert Queue("a") != Topic("a")
    assert Queue("a") != TemporaryQueue("a")
    assert TemporaryQueue("a", owner=object()) == TemporaryQueue("a", owner=object())
    assert len({Queue("a"), Queue("a"), Topic("a")}) == 2
    assert Queue("a") != "a"


@pytest.mark.parametrize("cls", [Queue, Topic, TemporaryQueue, TemporaryTopic])
@pytest.mark.parametrize("name", [None, ""])
def test_empty_names_rejected(cls: type[Destination], name: Any) -> None:
    with pytest.raises(InvalidDestinationException, match=repr(name)):
        cls(name)


def test_base_class_is_abstract() -> None:
    with pytest.raises(TypeError):
        Destination("x")


def test_temporary_delete_calls_hook() -> None:
    deleted: list[Any] = []
    owner = object()
    tq = TemporaryQueue("tq", owner=owner, on_delete=deleted.append)
    assert tq.owner is owner
    assert not tq.deleted
    tq.delete()
    assert deleted == [tq]
    assert tq.deleted
    tt = TemporaryTopic("tt")
    tt.delete()  # no hook: nothing to do
    assert tt.deleted


def test_temporary_delete_failure_keeps_destination() -> None:
    def refuse(_d: Any) -> None:
        raise IllegalStateException("A consumer is consuming from the temporary destination")

    tq = TemporaryQueue("tq", on_delete=refuse)
    with pytest.raises(IllegalStateException):
        tq.delete()
    assert not tq.deleted


def test_unknown_type_code() -> None:
    with pytest.raises(KeyError):
        destination_for_type_code(9, "x")


@pytest.mark.parametrize("d", [Queue("q"), Topic("t"), TemporaryQueue("tq", owner=object())])
def test_pickle_keeps_kind_and_name_only(d: Destination) -> None:
    copy = pickle.loads(pickle.dumps(d))
    assert copy == d
    assert type(copy) is type(d)
