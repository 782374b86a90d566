"""Which classes ObjectMessage.getObject may unpickle (``jms.deserializationPolicy.*``).

Unpickling runs code chosen by the sender: a pickle names callables by module and (dotted)
name, and the unpickler calls them. The policy admits exactly the listed names, or public
classes defined in a listed module or package, and nothing reached by walking attributes from
them; everything else is a MessageFormatException naming the class.
"""

from __future__ import annotations

import io
import pickle
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from jmspy.errors import MessageFormatException

__all__ = ["DeserializationPolicy"]


def _matches(entries: Iterable[str], full_name: str) -> bool:
    for entry in entries:
        if entry == "*" or full_name == entry or full_name.startswith(entry + "."):
            return True
    return False


def _is_public_name(name: str) -> bool:
    # A pickle's GLOBAL/STACK_GLOBAL name may be a dotted path that find_class walks with
    # getattr; a part starting with "_" (``Fraction.__new__.__builtins__``) is the way out of
    # an allowed class into arbitrary functions, so no such part is ever accepted.
    return all(part and not part.startswith("_") for part in name.split("."))


@dataclass
class DeserializationPolicy:
    """Which classes ObjectMessage.getObject may load from a pickled body.

    Entries are fully qualified names (``"myapp.models.Order"``: exactly that object, and no
    attribute reached through it) or module/package names (``"myapp.models"`` allows every
    public class *defined* in that module or a sub-module, such as ``"myapp.models.sub.Item"``,
    but no function and nothing the module merely imported); ``"*"`` allows everything. The
    deny list is checked first and wins; it matches a name, its module and everything below
    them. A name with a part starting with ``_`` is always refused (except under ``"*"``).
    Plain containers and primitives (dict, list, tuple, set, str, int, float, bytes, bool,
    None) are encoded without class references and always load.

    Unlike Qpid JMS, whose default trusts every class, the default here allows no class at all:
    unpickling runs code chosen by the sender.
    """

    allow_list: list[str] = field(default_factory=list)
    deny_list: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, allow_list: str | None = None, deny_list: str | None = None) -> Self:
        """From the comma separated URI option form (``jms.deserializationPolicy.allowList``)."""

        def split(value: str | None) -> list[str]:
            return [p.strip() for p in (value or "").split(",") if p.strip()]

        return cls(allow_list=split(allow_list), deny_list=split(deny_list))

    def is_denied(self, module: str, name: str) -> bool:
        """Whether the deny list matches ``module`` or ``module.name``.

        The deny list wins over the allow list.
        """
        return _matches(self.deny_list, module) or _matches(self.deny_list, f"{module}.{name}")

    def is_allowed(self, full_name: str) -> bool:
        """Whether the dotted name may be loaded, judged by the name alone.

        Used for the exact-entry check; a module/package entry also needs the loaded object
        to be a class defined there, which :meth:`admits` checks.
        """
        if _matches(self.deny_list, full_name):
            return False
        if full_name in self.allow_list:
            return True
        module, _, name = full_name.rpartition(".")
        return bool(module) and self._verdict(module, name) is not None

    def _verdict(self, module: str, name: str) -> str | None:
        """None (refused), "all" (``*``: load whatever it names), "any" (an exact entry: the
        class or function it names) or "class" (only a class defined in module)."""
        if self.is_denied(module, name):
            return None
        if "*" in self.allow_list:
            return "all"
        if not _is_public_name(name):
            return None
        full_name = f"{module}.{name}"
        if full_name in self.allow_list:
            return "any"
        if "." not in name and any(
            module == entry
            or (module.startswith(entry + ".") and _is_public_name(module[len(entry) + 1 :]))
            for entry in self.allow_list
        ):
            # The sub-module is imported before the class in it can be checked: a private
            # one (``pkg.__main__``, ``pkg._cli``) may run code on import, so none is named.
            return "class"
        return None

    def admits(self, module: str, name: str, load: Callable[[], Any]) -> Any:
        """The object ``module.name`` loaded by ``load``, or MessageFormatException."""
        verdict = self._verdict(module, name)
        if verdict is not None:
            try:
                obj = load()
            except (ImportError, AttributeError) as exc:
                raise MessageFormatException(
                    f"ObjectMessage body refers to class {module}.{name}, which cannot be "
                    f"loaded: {exc}",
                    linked=exc,
                ) from exc
            if (
                verdict == "all"
                or (verdict == "any" and (isinstance(obj, type) or _is_function(obj)))
                or (
                    isinstance(obj, type)
                    and getattr(obj, "__module__", None) == module
                    and getattr(obj, "__qualname__", None) == name
                )
            ):
                return obj
        raise MessageFormatException(
            f"ObjectMessage body refers to class {module}.{name}, which the deserialization "
            f"policy does not allow; add it (or its package) to "
            f"jms.deserializationPolicy.allowList to allow it"
        )


def _is_function(obj: Any) -> bool:
    # An exact entry admits a class or a function. A module, or a module-level dict or list,
    # is shared process state that the unpickler's BUILD/SETITEMS/APPENDS would write into.
    return callable(obj) and not isinstance(obj, types.ModuleType)


_DEFAULT_POLICY = DeserializationPolicy()


# The Java type wrappers are plain int/float/str subclasses with no behaviour on load; bodies
# that use them to pin AMQP types (typed encoding) must not need an allow-list entry.
_ALWAYS_ALLOWED = frozenset(
    f"jmspy.message.{n}" for n in ("JByte", "JShort", "JInt", "JLong", "JFloat", "JChar")
)


class _PolicyUnpickler(pickle._Unpickler):
    """The pure-Python unpickler, so that BUILD can be checked (the C one has no hook).

    BUILD applied to an object that ``find_class`` returned (a class, a function) sets
    attributes on it: ``(None, {"is_admin": True})`` on an allowed class would change that
    class for the whole process, and ``__defaults__`` on an allowed function its defaults. A
    pickle of an instance never does that (BUILD follows the REDUCE/NEWOBJ that made it), so
    BUILD on a global is refused.
    """

    dispatch: ClassVar[dict[int, Callable[[pickle.Unpickler], None]]] = dict(
        pickle._Unpickler.dispatch
    )

    def __init__(self, data: bytes, policy: DeserializationPolicy) -> None:
        # fix_imports=False: the names the policy checks are the names that get imported
        # (with it, Python 2 names are silently mapped to other modules after the check).
        super().__init__(io.BytesIO(data), fix_imports=False)
        self._policy = policy
        # ids of what find_class returned; the objects are module globals and outlive load().
        self._globals: set[int] = set()

    def find_class(self, module: str, name: str) -> Any:
        if f"{module}.{name}" in _ALWAYS_ALLOWED:
            obj = super().find_class(module, name)
        else:
            load = super().find_class
            obj = self._policy.admits(module, name, lambda: load(module, name))
        self._globals.add(id(obj))
        return obj

    def _load_build(self) -> None:
        stack: list[Any] = self.stack  # type: ignore[attr-defined]
        target = stack[-2] if len(stack) >= 2 else None
        if id(target) in self._globals or isinstance(target, type | types.ModuleType):
            raise MessageFormatException(
                f"ObjectMessage body sets attributes of {_qualified(target)} itself (BUILD on "
                "a class or function, not on an instance of it); refused, as it would change "
                "that object for the whole process"
            )
        pickle._Unpickler.load_build(self)  # type: ignore[attr-defined]

    dispatch[pickle.BUILD[0]] = _load_build  # type: ignore[assignment]


def _qualified(obj: Any) -> str:
    module = getattr(obj, "__module__", None) or getattr(obj, "__name__", "?")
    name = getattr(obj, "__qualname__", None) or type(obj).__name__
    return f"{module}.{name}"
