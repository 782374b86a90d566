"""The snake_case twins (jmspy/_twins/, written by scripts/gen_twins.py): up to date with the
camelCase API, one for every public camelCase method, same signature, called by name so that a
subclass's override applies; the exception root and the public names of every module."""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import inspect
import pkgutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import jmspy
import jmspy.errors
from jmspy import (
    BytesMessage,
    IllegalStateException,
    IllegalStateRuntimeException,
    JMSError,
    JMSException,
    JMSRuntimeException,
    MapMessage,
    Queue,
    StreamMessage,
    TextMessage,
    Topic,
)
from jmspy._pythonic import snake_case

ROOT = Path(__file__).resolve().parents[2]


@functools.cache  # one import: the generator memoises ruff's output
def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_twins", ROOT / "scripts/gen_twins.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_twins"] = module
    spec.loader.exec_module(module)
    return module


def _api_classes() -> list[type]:
    classes = []
    for module_name, class_name in _generator().API:
        classes.append(getattr(importlib.import_module(module_name), class_name))
    return classes


def _camel_methods(cls: type) -> list[str]:
    return [
        name
        for name in dir(cls)
        if not name.startswith("_") and name != name.lower() and callable(getattr(cls, name))
    ]


# ---- generated code ----------------------------------------------------------------------


def test_generated_twins_are_up_to_date() -> None:
    gen = _generator()
    stale = [
        str(path.relative_to(ROOT))
        for path, text in gen.generate().items()
        if not path.exists() or path.read_text() != text
    ]
    assert stale == [], "run: python scripts/gen_twins.py"
    assert gen.main(["--check"]) == 0


def test_generator_notices_a_changed_camel_case_signature() -> None:
    """The up-to-date check can fail: a camelCase signature changed in the source changes
    the generated twin (here getText made to return str)."""
    gen = _generator()
    module = "jmspy.message.text_message"
    source = gen.module_path(module).read_text()
    changed = source.replace("def getText(self) -> str | None:", "def getText(self) -> str:")
    assert changed != source
    before = gen.generate()
    gen._TREES[module] = ast.parse(changed)
    try:
        after = gen.generate()
    finally:
        gen._TREES.pop(module)
    path = gen.OUT / "message_text_message.py"
    assert before[path] != after[path]
    assert "def get_text(self) -> str:" in after[path]


def test_generator_and_package_share_the_naming_rule() -> None:
    gen = _generator()
    for name in ("getJMSCorrelationIDAsBytes", "createSession", "readUTF", "getJMSXPropertyNames"):
        assert gen.snake_case(name) == snake_case(name)
    assert snake_case("getJMSCorrelationIDAsBytes") == "get_jms_correlation_id_as_bytes"
    assert snake_case("readUTF") == "read_utf"
    assert snake_case("getJMSXPropertyNames") == "get_jmsx_property_names"


# ---- every camelCase method has its twin -------------------------------------------------


def test_every_public_camel_case_method_has_a_typed_twin() -> None:
    missing, count = [], 0
    for cls in [*_api_classes(), TextMessage, BytesMessage, IllegalStateRuntimeException]:
        for camel in _camel_methods(cls):
            twin = getattr(cls, snake_case(camel), None)
            if twin is None:
                missing.append(f"{cls.__name__}.{camel}")
                continue
            count += 1
            # A real method of a generated mixin, not the camelCase function under a 2nd name.
            assert twin is not getattr(cls, camel)
            assert twin.__module__.startswith("jmspy._twins."), (cls, camel)
            assert f".{camel}`" in (twin.__doc__ or ""), (cls, camel)
    assert missing == []
    assert count > 250


def test_twin_has_the_camel_case_signature() -> None:
    checked = 0
    for cls in _api_classes():
        for camel in _camel_methods(cls):
            camel_sig = inspect.signature(getattr(cls, camel))
            twin_sig = inspect.signature(getattr(cls, snake_case(camel)))
            assert str(twin_sig) == str(camel_sig) or _overridden(cls, camel), (cls, camel)
            checked += 1
    assert checked > 250


def _overridden(cls: type, camel: str) -> bool:
    """An override lower in the hierarchy (TextMessage.clearBody): the twin keeps the
    signature of the method it was generated from, higher up."""
    defining = next(k for k in cls.__mro__ if camel in vars(k))
    return any(camel in vars(k) for k in cls.__mro__ if k is not defining and k is not object)


def test_no_runtime_aliases_left() -> None:
    """One mechanism: no snake_case name is the camelCase function attached a second time."""
    for cls in _api_classes():
        for name, value in vars(cls).items():
            if callable(value) and not name.startswith("_") and name == name.lower():
                function_name = getattr(value, "__name__", name)
                assert function_name == function_name.lower(), (cls, name, function_name)
    assert not hasattr(importlib.import_module("jmspy._pythonic"), "add_snake_case_aliases")


# ---- called by name: overrides apply -----------------------------------------------------


def test_twin_calls_a_subclass_override() -> None:
    class Shouting(TextMessage):
        def getText(self) -> str | None:
            text = super().getText()
            return None if text is None else text.upper()

    message = Shouting()
    message.set_text("quiet")
    assert message.get_text() == "QUIET"
    assert message.getText() == "QUIET"


def test_twins_work_on_every_message_type() -> None:
    stream = StreamMessage()
    stream.write_int(7)
    stream.write_string("x")
    stream.reset()
    assert (stream.read_int(), stream.read_string()) == (7, "x")
    mapped = MapMessage()
    mapped.set_long("n", 5)
    assert mapped.get_long("n") == 5 and mapped.item_exists("n")
    data = BytesMessage()
    data.write_utf("hé")
    data.reset()
    assert data.read_utf() == "hé"
    text = TextMessage()
    text.set_jms_correlation_id_as_bytes(b"\x01")
    assert text.get_jms_correlation_id_as_bytes() == b"\x01"
    text.set_string_property("k", "v")
    assert text.get_property_names() == ["k"]
    assert Queue("q").get_queue_name() == "q" and Topic("t").get_topic_name() == "t"


# ---- exceptions --------------------------------------------------------------------------


def test_exception_twins_and_their_overrides() -> None:
    cause = OSError("socket")
    error = IllegalStateRuntimeException("closed", "E42", cause)
    assert error.get_error_code() == "E42"
    assert error.get_linked_exception() is cause
    assert error.get_message() == "closed"
    error.set_linked_exception(None)
    assert error.get_linked_exception() is None

    class Coded(JMSException):
        def getErrorCode(self) -> str | None:
            return "CODED"

    assert Coded("x", "ignored").get_error_code() == "CODED"


def test_jms_error_is_the_root_of_both_families() -> None:
    assert issubclass(JMSException, JMSError) and issubclass(JMSRuntimeException, JMSError)
    assert not issubclass(JMSException, JMSRuntimeException)
    assert not issubclass(JMSRuntimeException, JMSException)
    mro = IllegalStateRuntimeException.__mro__
    assert mro.index(JMSRuntimeException) < mro.index(JMSError) < mro.index(Exception)
    assert IllegalStateException.__mro__.index(JMSException) < IllegalStateException.__mro__.index(
        JMSError
    )
    for name in jmspy.errors.__all__:
        klass = getattr(jmspy.errors, name)
        if isinstance(klass, type) and issubclass(klass, Exception):
            assert klass.__mro__[-1] is object and BaseException in klass.__mro__
    with pytest.raises(JMSError):
        raise IllegalStateRuntimeException("either family is caught")


def test_star_import_brings_the_whole_exception_tree_and_no_helper() -> None:
    namespace: dict[str, Any] = {}
    exec("from jmspy import *", namespace)
    exceptions = {
        name
        for name, value in vars(jmspy.errors).items()
        if isinstance(value, type) and issubclass(value, Exception) and not name.startswith("_")
    }
    assert exceptions <= set(namespace)
    assert set(jmspy.errors.__all__) <= set(namespace)
    assert {"JMSError", "JMSException", "JMSRuntimeException", "ReasonCode"} <= set(namespace)
    for helper in ("to_runtime", "RUNTIME_TWINS", "enum", "annotations"):
        assert helper not in jmspy.errors.__all__
        assert helper not in namespace


# ---- __all__ everywhere ------------------------------------------------------------------


def _public_modules() -> list[str]:
    names = ["jmspy"]
    for info in pkgutil.walk_packages(jmspy.__path__, "jmspy."):
        parts = info.name.split(".")
        if any(part.startswith("_") for part in parts[1:]):
            continue
        if parts[1] in {"adapters", "conformance", "spark"} and len(parts) > 2:
            continue  # their own packages, with their own settings
        names.append(info.name)
    return names


def test_every_public_module_declares_all_and_each_name_exists() -> None:
    modules = _public_modules()
    assert "jmspy.message.base" in modules and "jmspy.selector.lexer" in modules
    for name in modules:
        module = importlib.import_module(name)
        assert isinstance(getattr(module, "__all__", None), list), name
        for public in module.__all__:
            assert hasattr(module, public), f"{name}.__all__ names {public}, which is missing"
