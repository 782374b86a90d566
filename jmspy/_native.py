"""Which jmspy modules are built with mypyc, and when the built form is used.

The receive and send paths spend most of their client CPU in the codec: walking the AMQP
sections of every message and building the JMS message from them, and the reverse. Those
modules are plain typed Python; at install time ``setup.py`` compiles them with mypyc (part of
mypy) into C extension modules of the same names, which Python then imports in preference to
the ``.py`` files. The compiled modules keep Python's semantics, bounds-checked indexing and
slicing included, so reading broker input stays as strict as the Python reader it is compiled
from: this is not a hand-written C parser.

The source stays the reference. The build records the SHA-256 of every source it compiled in
``_native_manifest.json`` beside this module, and :func:`prefer_sources` (run by
``jmspy._amqp`` before any of its modules is imported) makes Python import the ``.py`` files
instead of the built modules whenever:

* ``JMSPY_PURE_PYTHON`` is set to anything but ``0`` or the empty string (to compare, or to
  debug the Python code);
* the manifest is missing or does not name the module (an incomplete build);
* the source no longer has the hash the build recorded (edited since; reinstall to rebuild).

Then every listed module runs from its source, not only the one concerned, because the built
modules call each other's compiled functions directly. The last two cases are logged once, as
a warning naming the module.

This module imports the standard library only: ``setup.py`` loads it by path, in a build
environment that has none of jmspy's dependencies.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

__all__ = [
    "COMPILED_MODULES",
    "MANIFEST_NAME",
    "PURE_PYTHON_ENV",
    "compiled_in_use",
    "prefer_sources",
    "pure_python_requested",
    "source_digest",
    "source_path",
    "sources_to_prefer",
]

#: The modules setup.py compiles, by import name: typed Python that passes ``mypy --strict``
#: and behaves the same built or not (the unit and wire tests run both ways in CI).
COMPILED_MODULES: tuple[str, ...] = (
    "jmspy._amqp.amqp_reader",
    "jmspy._amqp.codec.common",
    "jmspy._amqp.codec.properties",
    "jmspy._amqp.codec.typed_values",
    "jmspy._amqp.codec.bodies",
    "jmspy._amqp.codec.decode",
    "jmspy._amqp.codec.encode",
)

#: The file, beside this module, in which the build records the hash of each compiled source.
MANIFEST_NAME = "_native_manifest.json"

#: Set to anything but ``0`` or empty, jmspy imports the Python source of every module above.
PURE_PYTHON_ENV = "JMSPY_PURE_PYTHON"

_PACKAGE_DIR = Path(__file__).resolve().parent
_log = logging.getLogger("jmspy.native")


def source_path(module: str, package_dir: Path = _PACKAGE_DIR) -> Path:
    """The ``.py`` file of one of :data:`COMPILED_MODULES` under ``package_dir`` (jmspy/)."""
    parts = module.split(".")
    if parts[0] != "jmspy":
        raise ValueError(f"not a jmspy module: {module!r}")
    return package_dir.joinpath(*parts[1:]).with_suffix(".py")


def source_digest(path: Path) -> str:
    """The SHA-256 of a source file, as the manifest records it."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _is_built(source: Path) -> bool:
    return any(
        source.with_name(source.stem + suffix).exists()
        for suffix in importlib.machinery.EXTENSION_SUFFIXES
    )


def pure_python_requested() -> bool:
    """Whether :data:`PURE_PYTHON_ENV` asks for the Python sources (at build and at run time)."""
    return os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0")


def _read_manifest(package_dir: Path) -> dict[str, str]:
    try:
        recorded = json.loads((package_dir / MANIFEST_NAME).read_text(encoding="utf-8"))
        modules = recorded["modules"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    if not isinstance(modules, dict):
        return {}
    return {str(name): str(digest) for name, digest in modules.items()}


def sources_to_prefer(
    package_dir: Path = _PACKAGE_DIR, modules: Sequence[str] = COMPILED_MODULES
) -> dict[str, tuple[Path, str]]:
    """The modules with a built form that must not be used: name -> (source, why)."""
    built = {
        module: source
        for module in modules
        if (source := source_path(module, package_dir)).exists() and _is_built(source)
    }
    if not built:
        return {}
    why = ""
    if pure_python_requested():
        why = f"{PURE_PYTHON_ENV} is set"
    else:
        manifest = _read_manifest(package_dir)
        for module, source in built.items():
            if module not in manifest:
                why = f"the build did not record {module} in {MANIFEST_NAME}"
            elif manifest[module] != source_digest(source):
                why = f"the source of {module} changed after the build (reinstall jmspy)"
            if why:
                break
    # All or none: built modules call each other's compiled functions directly, so one module
    # run from its source must not be mixed with its built neighbours.
    return {module: (source, why) for module, source in built.items()} if why else {}


class _SourceFirst(importlib.abc.MetaPathFinder):
    """Finds the listed modules in their ``.py`` files, ahead of the extension modules."""

    def __init__(self, sources: dict[str, Path]) -> None:
        self.sources = sources

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        source = self.sources.get(fullname)
        if source is None:
            return None
        return importlib.util.spec_from_file_location(fullname, source)


_chosen: dict[str, str] | None = None


def prefer_sources() -> dict[str, str]:
    """Arrange for the Python source of every module that must not run built; name -> why.

    The decision is taken once per process (``jmspy._amqp`` asks before importing any listed
    module); later calls return it.
    """
    global _chosen
    if _chosen is not None:
        return dict(_chosen)
    chosen = sources_to_prefer()
    _chosen = {name: why for name, (_source, why) in chosen.items()}
    if chosen:
        sys.meta_path.insert(0, _SourceFirst({name: path for name, (path, _w) in chosen.items()}))
        if not pure_python_requested():
            first_reason = next(iter(_chosen.values()))
            _log.warning("jmspy runs its codec from the Python source: %s", first_reason)
    return dict(_chosen)


def compiled_in_use() -> list[str]:
    """The modules of :data:`COMPILED_MODULES` imported in their built (mypyc) form."""
    in_use = []
    for name in COMPILED_MODULES:
        module = sys.modules.get(name)
        origin = getattr(module, "__file__", None) or ""
        if origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            in_use.append(name)
    return in_use
