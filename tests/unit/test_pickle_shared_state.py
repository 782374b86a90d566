"""ObjectMessage bodies cannot change process-wide state through what the policy admits.

The policy decides which globals a pickle may name; these payloads name only admitted ones
(or jmspy's always-admitted Java wrapper types) and then try to write into them: BUILD on a
class or a function sets attributes on it for every user in the process, SETITEMS on an
admitted dict writes into it, and naming a private sub-module of an admitted package imports
(runs) it before any check. Each payload is built from raw opcodes, as a broker would deliver
it, in a throw-away package on ``sys.path``.
"""

from __future__ import annotations

import pickle
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from jmspy.errors import MessageFormatException
from jmspy.message import DeserializationPolicy, JInt, ObjectMessage

PKG = "jmspy_probe_state_pkg"
PROTO4 = b"\x80\x04"
MARK, TUPLE, EMPTY_DICT, NONE = b"(", b"t", b"}", b"N"
SETITEMS, BUILD, STOP = b"u", b"b", b"."


def _global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def _str(text: str) -> bytes:
    return b"V" + text.encode() + b"\n"


def _set_attribute(module: str, name: str, attribute: str, value: bytes) -> bytes:
    """BUILD with slot state ``(None, {attribute: value})`` on the global ``module.name``: the
    unpickler's ``setattr(global, attribute, value)``."""
    state = MARK + NONE + EMPTY_DICT + MARK + _str(attribute) + value + SETITEMS + TUPLE
    return PROTO4 + _global(module, name) + state + BUILD + STOP


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    root = tmp_path / PKG
    root.mkdir()
    (root / "__init__.py").write_text(
        textwrap.dedent(
            """
            from . import config

            LIMITS = {"max": 10}

            class Account:
                is_admin = False

            def make(kind="plain"):
                return kind
            """
        )
    )
    (root / "config.py").write_text("DEBUG = False\n")
    # A package's __main__ runs its command line when imported.
    (root / "__main__.py").write_text("import os\nos.environ['JMSPY_PROBE_MAIN_RAN'] = '1'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("JMSPY_PROBE_MAIN_RAN", raising=False)
    import importlib

    module = importlib.import_module(PKG)
    yield module
    for name in [n for n in sys.modules if n == PKG or n.startswith(PKG + ".")]:
        del sys.modules[name]


def _received(payload: bytes, allow: list[str]) -> ObjectMessage:
    m = ObjectMessage()
    m.set_serialized_body(payload, "application/x-python-serialized-object")
    m.set_deserialization_policy(DeserializationPolicy(allow_list=allow))
    return m


def test_always_allowed_wrapper_type_is_not_rewritten() -> None:
    """With the default policy (nothing allowed) a body must not make JInt unhashable."""
    payload = _set_attribute("jmspy.message", "JInt", "__hash__", NONE)
    with pytest.raises(MessageFormatException, match="JInt"):
        _received(payload, []).getObject()
    assert "__hash__" not in vars(JInt)
    assert hash(JInt(3)) == hash(3)


@pytest.mark.parametrize("allow", [[f"{PKG}.Account"], [PKG]])
def test_allowed_class_is_not_rewritten(package: ModuleType, allow: list[str]) -> None:
    payload = _set_attribute(PKG, "Account", "is_admin", b"\x88")  # NEWTRUE
    with pytest.raises(MessageFormatException, match="Account"):
        _received(payload, allow).getObject()
    assert package.Account.is_admin is False


def test_allowed_function_defaults_are_not_rewritten(package: ModuleType) -> None:
    payload = _set_attribute(PKG, "make", "__defaults__", MARK + _str("admin") + TUPLE)
    with pytest.raises(MessageFormatException, match="make"):
        _received(payload, [f"{PKG}.make"]).getObject()
    assert package.make() == "plain"


def test_exact_entry_naming_a_dict_is_not_written_into(package: ModuleType) -> None:
    payload = PROTO4 + _global(PKG, "LIMITS") + MARK + _str("max") + b"J\x00\x00\x00\x7f"
    payload += SETITEMS + STOP
    with pytest.raises(MessageFormatException, match="LIMITS"):
        _received(payload, [f"{PKG}.LIMITS"]).getObject()
    assert package.LIMITS == {"max": 10}


def test_exact_entry_naming_a_module_is_not_written_into(package: ModuleType) -> None:
    payload = PROTO4 + _global(PKG, "config") + EMPTY_DICT + MARK + _str("DEBUG") + b"\x88"
    payload += SETITEMS + BUILD + STOP
    with pytest.raises(MessageFormatException, match="config"):
        _received(payload, [f"{PKG}.config"]).getObject()
    assert package.config.DEBUG is False


def test_private_submodule_of_allowed_package_is_not_imported(package: ModuleType) -> None:
    import os

    payload = PROTO4 + _global(f"{PKG}.__main__", "Anything") + STOP
    with pytest.raises(MessageFormatException, match="__main__"):
        _received(payload, [PKG]).getObject()
    assert f"{PKG}.__main__" not in sys.modules
    assert os.environ.get("JMSPY_PROBE_MAIN_RAN") is None


def test_instances_of_allowed_classes_still_load(package: ModuleType) -> None:
    account = package.Account()
    account.is_admin = True  # instance state travels with BUILD on the instance
    loaded = _received(pickle.dumps(account, protocol=5), [PKG]).getObject()
    assert loaded.is_admin is True
    assert package.Account.is_admin is False
    assert _received(pickle.dumps(JInt(7), protocol=5), []).getObject() == 7
