"""Every public callable of the API has a docstring of its own.

The API reference is generated from docstrings (mkdocstrings), which shows each class's own
members, so an override must carry its own docstring rather than rely on the base class's.
The walk covers everything ``jmspy`` and ``jmspy.message`` export, the exception tree of
``jmspy.errors``, the types the API takes or hands out from other modules (redelivery policy,
connection options, endpoint, failover options), and the public methods and properties of every
one of those classes (including those inherited from other jmspy classes), with ``__enter__``,
``__exit__`` and ``__iter__``. A snake_case alias that is the very same function object as its
camelCase method shares that method's docstring and is not listed twice.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Iterable, Iterator
from typing import Any

import jmspy
import jmspy.errors
import jmspy.message
from jmspy.failover_options import FailoverOptions
from jmspy.options import ConnectionOptions, Endpoint
from jmspy.redelivery import DefaultRandom, RandomSource, RedeliveryPolicy

# Public types that live in modules ``jmspy`` does not re-export, yet the API takes or returns
# them (``setRedeliveryPolicy``, ``Connection.options``, ``ConnectionFactory.endpoint`` and
# ``failover``), so the API reference documents them too.
_REACHABLE_TYPES: tuple[type, ...] = (
    RedeliveryPolicy,
    RandomSource,
    DefaultRandom,
    ConnectionOptions,
    Endpoint,
    FailoverOptions,
)


def _own_doc(obj: object) -> bool:
    """True when the object carries a non-empty docstring of its own (not inherited)."""
    if inspect.isclass(obj):
        doc = obj.__dict__.get("__doc__")
    else:
        doc = getattr(obj, "__doc__", None)
    return isinstance(doc, str) and bool(doc.strip())


def _function_of(member: object) -> Any:
    """The function object behind a class attribute, or None when it is not a method."""
    if isinstance(member, property):
        return member.fget
    if isinstance(member, staticmethod | classmethod):
        return member.__func__
    if inspect.isfunction(member):
        return member
    return None


# The Python conveniences on the API classes (``with`` and ``for``) are documented like the JMS
# methods; other dunders are Python's own protocol and need no docstring.
_CONVENIENCES = frozenset({"__enter__", "__exit__", "__iter__"})


def _is_public(name: str) -> bool:
    return not name.startswith("_") or name in _CONVENIENCES


def _is_api_class(cls: type, package: str) -> bool:
    return cls.__module__ == package or cls.__module__.startswith(package + ".")


def undocumented(exported: Iterable[tuple[str, object]], package: str = "jmspy") -> list[str]:
    """Qualified names of the public callables reachable from ``exported`` without a docstring.

    Classes, functions and the public methods and properties of classes count; members a class
    inherits from outside ``package`` (``object``, ``Exception``, ``enum``, pydantic) do not.
    """
    missing: set[str] = set()
    seen: set[int] = set()
    for export_name, obj in exported:
        if inspect.isclass(obj):
            if not _own_doc(obj):
                missing.add(f"{obj.__module__}.{obj.__qualname__}")
            for cls in obj.__mro__:
                if not _is_api_class(cls, package):
                    continue
                for name, member in vars(cls).items():
                    function = _function_of(member)
                    if not _is_public(name) or function is None or id(function) in seen:
                        continue
                    seen.add(id(function))
                    if not _own_doc(function):
                        missing.add(f"{cls.__module__}.{cls.__qualname__}.{name}")
        elif isinstance(obj, types.FunctionType):
            if id(obj) not in seen and not _own_doc(obj):
                missing.add(f"{obj.__module__}.{obj.__qualname__}")
            seen.add(id(obj))
        elif not isinstance(obj, types.ModuleType) and callable(obj):
            if not _own_doc(type(obj)):
                missing.add(f"{export_name} ({type(obj).__qualname__})")
    return sorted(missing)


def _public_api() -> Iterator[tuple[str, object]]:
    for module in (jmspy, jmspy.message):
        for name in module.__all__:
            yield name, getattr(module, name)
    # The exception tree (and the helpers defined beside it) reach users through
    # ``from jmspy.errors import *`` in the package, whatever ``__all__`` lists.
    for name, obj in vars(jmspy.errors).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != jmspy.errors.__name__:
            continue
        if inspect.isclass(obj) or inspect.isfunction(obj):
            yield name, obj
    for cls in _REACHABLE_TYPES:
        yield cls.__name__, cls


def test_every_public_callable_has_a_docstring() -> None:
    missing = undocumented(_public_api())
    assert not missing, f"{len(missing)} public callables without a docstring:\n" + "\n".join(
        missing
    )


def test_the_walker_finds_undocumented_members() -> None:
    # A synthetic API whose gaps the walker must report, so the test above can fail.
    class Base:
        """Documented base."""

        def documented(self) -> None:
            """Does something."""

        def bare(self) -> None:
            pass

    class Child(Base):
        def documented(self) -> None:  # an override without a docstring of its own
            pass

        @property
        def value(self) -> int:
            return 1

        def _private(self) -> None:
            pass

        def __iter__(self) -> Iterator[int]:
            return iter(())

        def __repr__(self) -> str:
            return "Child"

    def bare_function() -> None:
        pass

    package = __name__
    found = undocumented([("Child", Child), ("bare_function", bare_function)], package)
    prefix = f"{__name__}.test_the_walker_finds_undocumented_members.<locals>"
    assert found == sorted(
        [
            f"{prefix}.Child",
            f"{prefix}.Child.__iter__",
            f"{prefix}.Child.documented",
            f"{prefix}.Child.value",
            f"{prefix}.Base.bare",
            f"{prefix}.bare_function",
        ]
    )
