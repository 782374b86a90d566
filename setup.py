"""Builds the codec modules listed in jmspy/_native.py with mypyc (everything else is in
pyproject.toml).

mypyc compiles typed Python into C extension modules with the same behaviour, bounds checks
included; jmspy/_native.py explains when the built modules are used. The build is optional: with
JMSPY_PURE_PYTHON set, without mypyc, or when a module fails to compile, jmspy installs and runs
as pure Python, only slower on the receive and send paths.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def _load_native() -> Any:
    # By path: jmspy/__init__.py imports jmspy's dependencies, which a build environment lacks.
    spec = importlib.util.spec_from_file_location("_jmspy_native", ROOT / "jmspy" / "_native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


native = _load_native()
SOURCES = [native.source_path(name, ROOT / "jmspy") for name in native.COMPILED_MODULES]


def _mypyc_extensions() -> list[Any]:
    if native.pure_python_requested():
        print(f"jmspy: {native.PURE_PYTHON_ENV} is set, building pure Python", file=sys.stderr)
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("jmspy: mypyc is not available, building pure Python", file=sys.stderr)
        return []
    # The build's own mypy options, not pyproject's (an empty --config-file reads none): the
    # modules are compiled against each other and the standard library only, every other
    # import typed Any, so the result does not depend on which of jmspy's dependencies the
    # build environment happens to have, and keeps Python's dynamic behaviour at those calls.
    options = [
        "--config-file=",
        "--python-version=3.11",
        "--follow-imports=skip",
        "--ignore-missing-imports",
        *(str(path.relative_to(ROOT)) for path in SOURCES),
    ]
    try:
        extensions: list[Any] = mypycify(options, separate=True, opt_level="3")
    except (Exception, SystemExit) as exc:  # mypy reports type errors by exiting
        print(f"jmspy: mypyc failed ({exc!r}), building pure Python", file=sys.stderr)
        return []
    return extensions


class BuildWithManifest(build_ext):
    """Records the hash of each compiled source once every module has been built."""

    def run(self) -> None:
        super().run()
        if not self.extensions:
            return
        package_dir = Path(self.build_lib if not self.inplace else ROOT) / "jmspy"
        if not all(Path(self.get_ext_fullpath(ext.name)).exists() for ext in self.extensions):
            print("jmspy: some modules did not compile; jmspy runs their Python source")
            return
        manifest = {
            "modules": {
                name: native.source_digest(path)
                for name, path in zip(native.COMPILED_MODULES, SOURCES, strict=True)
            }
        }
        package_dir.mkdir(parents=True, exist_ok=True)
        (package_dir / native.MANIFEST_NAME).write_text(json.dumps(manifest, indent=1) + "\n")


extensions = _mypyc_extensions()
for extension in extensions:
    # A module that fails to compile leaves its Python source in charge (see the manifest).
    extension.optional = True

setup(ext_modules=extensions, cmdclass={"build_ext": BuildWithManifest})
