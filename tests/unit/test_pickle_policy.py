"""ObjectMessage deserialization policy against known pickle gadget payloads.

Every payload is assembled here from raw opcodes (never by pickling a live object), so the
corpus contains exactly the byte sequences an attacker would send. A gadget that gets through
runs ``exec`` of a statement that sets an environment variable; each test checks both that
getObject raised the documented MessageFormatException naming the class and that the
statement never ran.
"""

from __future__ import annotations

import fractions
import os
import pickle
from collections.abc import Iterator

import pytest

from jmspy.errors import MessageFormatException
from jmspy.message import DeserializationPolicy, ObjectMessage

SENTINEL = "JMSPY_PICKLE_GADGET_RAN"
STATEMENT = f"__import__('os').environ.__setitem__({SENTINEL!r}, '1')"

PROTO4 = b"\x80\x04"
STOP = b"."


def _unicode(text: str) -> bytes:
    """SHORT_BINUNICODE (protocol 4) for short strings."""
    raw = text.encode()
    assert len(raw) < 256
    return b"\x8c" + bytes([len(raw)]) + raw


def _stack_global(module: str, name: str) -> bytes:
    return _unicode(module) + _unicode(name) + b"\x93"


def _call1(callable_ops: bytes, arg_ops: bytes) -> bytes:
    """callable(arg) with TUPLE1 + REDUCE."""
    return callable_ops + arg_ops + b"\x85R"


def _text_global(module: str, name: str) -> bytes:
    """GLOBAL opcode (protocol 0 text form)."""
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def _text_str(text: str) -> bytes:
    """STRING opcode (protocol 0)."""
    return b"S" + repr(text).encode() + b"\n"


def _traversal_to_exec() -> bytes:
    # fractions.Fraction.__new__ is a Python function; its __builtins__ dict's .get("exec")
    # is the builtin exec, reached by an attribute walk that starts at an allowed class.
    get = _stack_global("fractions", "Fraction.__new__.__builtins__.get")
    return PROTO4 + _call1(_call1(get, _unicode("exec")), _unicode(STATEMENT)) + STOP


# name -> (payload, allow list, class the refusal must name)
GADGETS: dict[str, tuple[bytes, list[str], str]] = {
    "reduce-os-system": (
        PROTO4 + _call1(_stack_global("os", "system"), _unicode("true")) + STOP,
        ["fractions.Fraction"],
        "os.system",
    ),
    "reduce-builtins-exec": (
        PROTO4 + _call1(_stack_global("builtins", "exec"), _unicode(STATEMENT)) + STOP,
        ["fractions.Fraction"],
        "builtins.exec",
    ),
    "stack-global-traversal-from-allowed-class": (
        _traversal_to_exec(),
        ["fractions.Fraction"],
        "fractions.Fraction.__new__.__builtins__.get",
    ),
    "stack-global-traversal-from-allowed-module": (
        _traversal_to_exec(),
        ["fractions"],
        "fractions.Fraction.__new__.__builtins__.get",
    ),
    "global-opcode-traversal-protocol-4": (
        PROTO4
        + _call1(
            _call1(
                _text_global("fractions", "Fraction.__new__.__builtins__.get"), _text_str("exec")
            ),
            _text_str(STATEMENT),
        )
        + STOP,
        ["fractions.Fraction"],
        "fractions.Fraction.__new__.__builtins__.get",
    ),
    "global-opcode-protocol-0-exec": (
        _text_global("builtins", "exec") + b"(" + _text_str(STATEMENT) + b"tR" + STOP,
        ["fractions"],
        "builtins.exec",
    ),
    "global-opcode-python2-builtin-name": (
        # With fix_imports, __builtin__ is mapped to builtins after the name was checked.
        _text_global("__builtin__", "exec") + b"(" + _text_str(STATEMENT) + b"tR" + STOP,
        ["__builtin__"],
        "__builtin__.exec",
    ),
    "copyreg-reconstructor": (
        PROTO4
        + _stack_global("copyreg", "_reconstructor")
        + _stack_global("fractions", "Fraction")
        + _stack_global("builtins", "object")
        + b"N\x87R"  # (cls, object, None) TUPLE3 REDUCE
        + STOP,
        ["copyreg", "fractions.Fraction", "builtins.object"],
        "copyreg._reconstructor",
    ),
    "builtins-getattr": (
        PROTO4
        + _stack_global("builtins", "getattr")
        + _unicode("x")
        + _unicode("__class__")
        + b"\x86R"  # getattr("x", "__class__") TUPLE2 REDUCE
        + STOP,
        ["builtins"],
        "builtins.getattr",
    ),
    "operator-attrgetter": (
        PROTO4
        + _call1(
            _call1(_stack_global("operator", "attrgetter"), _unicode("__class__.__base__")),
            _unicode("x"),
        )
        + STOP,
        ["operator.itemgetter", "fractions.Fraction"],
        "operator.attrgetter",
    ),
    "module-entry-admits-only-classes-defined-there": (
        PROTO4 + _stack_global("fractions", "sys") + STOP,
        ["fractions"],
        "fractions.sys",
    ),
    "module-entry-refuses-reexported-class": (
        PROTO4 + _stack_global("fractions", "Decimal") + STOP,
        ["fractions"],
        "fractions.Decimal",
    ),
    "nested-allowed-container-holding-a-gadget": (
        PROTO4
        + _stack_global("collections", "OrderedDict")
        + b")R"  # OrderedDict()
        + b"("  # MARK
        + _unicode("k")
        + _call1(_stack_global("builtins", "exec"), _unicode(STATEMENT))
        + b"u"  # SETITEMS
        + STOP,
        ["collections.OrderedDict"],
        "builtins.exec",
    ),
    "inst-opcode": (
        b"(" + _text_str(STATEMENT) + b"ibuiltins\nexec\n" + STOP,
        ["fractions.Fraction"],
        "builtins.exec",
    ),
    "inst-opcode-traversal": (
        PROTO4
        + b"("
        + _text_str("exec")
        + b"ifractions\nFraction.__new__.__builtins__.get\n"
        + STOP,
        ["fractions.Fraction"],
        "fractions.Fraction.__new__.__builtins__.get",
    ),
    "obj-opcode": (
        PROTO4 + b"(" + _stack_global("builtins", "exec") + _unicode(STATEMENT) + b"o" + STOP,
        ["fractions.Fraction"],
        "builtins.exec",
    ),
}


@pytest.fixture(autouse=True)
def _no_sentinel() -> Iterator[None]:
    os.environ.pop(SENTINEL, None)
    yield
    ran = os.environ.pop(SENTINEL, None)
    assert ran is None, "a gadget payload executed code"


def _received(payload: bytes, allow: list[str], deny: list[str] | None = None) -> ObjectMessage:
    m = ObjectMessage()
    m.set_serialized_body(payload, "application/x-python-serialized-object")
    m.set_deserialization_policy(DeserializationPolicy(allow_list=allow, deny_list=deny or []))
    return m


@pytest.mark.parametrize("name", sorted(GADGETS))
def test_gadget_refused(name: str) -> None:
    payload, allow, refused = GADGETS[name]
    with pytest.raises(MessageFormatException) as info:
        _received(payload, allow).getObject()
    text = str(info.value)
    assert refused in text
    assert os.environ.get(SENTINEL) is None


@pytest.mark.parametrize("name", sorted(GADGETS))
def test_gadget_refused_by_default_policy(name: str) -> None:
    payload, _allow, _refused = GADGETS[name]
    with pytest.raises(MessageFormatException):
        _received(payload, []).getObject()


def test_traversal_payload_really_is_a_gadget() -> None:
    """The corpus is only meaningful if the traversal reaches exec without a policy."""
    pickle.loads(_traversal_to_exec())
    assert os.environ.pop(SENTINEL) == "1"


def test_allowed_class_still_loads() -> None:
    payload = pickle.dumps(fractions.Fraction(3, 4), protocol=5)
    assert _received(payload, ["fractions.Fraction"]).getObject() == fractions.Fraction(3, 4)
    assert _received(payload, ["fractions"]).getObject() == fractions.Fraction(3, 4)


@pytest.mark.parametrize(
    ("allow", "deny"),
    [
        (["fractions.Fraction"], ["fractions.Fraction"]),
        (["fractions.Fraction"], ["fractions"]),
        (["fractions"], ["fractions.Fraction"]),
        (["*"], ["fractions"]),
        (["*"], ["*"]),
    ],
)
def test_deny_list_wins(allow: list[str], deny: list[str]) -> None:
    payload = pickle.dumps(fractions.Fraction(3, 4), protocol=5)
    with pytest.raises(MessageFormatException, match="fractions.Fraction"):
        _received(payload, allow, deny).getObject()


def test_deny_list_wins_over_wildcard_for_gadgets() -> None:
    payload, _allow, _refused = GADGETS["reduce-builtins-exec"]
    with pytest.raises(MessageFormatException, match="builtins.exec"):
        _received(payload, ["*"], ["builtins"]).getObject()
