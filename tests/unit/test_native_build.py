"""The codec modules built with mypyc (jmspy._native): used only when built from the sources
beside them, all or none, and never when JMSPY_PURE_PYTHON is set."""

from __future__ import annotations

import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jmspy import _native
from jmspy._native import (
    COMPILED_MODULES,
    MANIFEST_NAME,
    PURE_PYTHON_ENV,
    source_digest,
    source_path,
    sources_to_prefer,
)

MODULES = ("jmspy.a", "jmspy.sub.b")
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]
# Read before the fixture below clears it for the tests that set it themselves.
PURE_PYTHON_RUN = os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0")


def _tree(tmp_path: Path, *, built: bool = True) -> Path:
    package = tmp_path / "jmspy"
    for name in MODULES:
        source = source_path(name, package)
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(f"NAME = {name!r}\n")
        if built:
            source.with_name(source.stem + SUFFIX).write_bytes(b"")
    return package


def _manifest(package: Path, digests: dict[str, str]) -> None:
    (package / MANIFEST_NAME).write_text(json.dumps({"modules": digests}))


def _digests(package: Path) -> dict[str, str]:
    return {name: source_digest(source_path(name, package)) for name in MODULES}


@pytest.fixture(autouse=True)
def _no_pure_python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PURE_PYTHON_ENV, raising=False)


def test_built_modules_with_matching_hashes_are_used(tmp_path: Path) -> None:
    package = _tree(tmp_path)
    _manifest(package, _digests(package))
    assert sources_to_prefer(package, MODULES) == {}


def test_an_edited_source_sends_every_module_to_its_source(tmp_path: Path) -> None:
    package = _tree(tmp_path)
    _manifest(package, _digests(package))
    source_path("jmspy.sub.b", package).write_text("NAME = 'edited'\n")
    chosen = sources_to_prefer(package, MODULES)
    assert set(chosen) == set(MODULES)
    assert all("jmspy.sub.b changed after the build" in why for _path, why in chosen.values())
    assert chosen["jmspy.a"][0] == source_path("jmspy.a", package)


def test_a_module_missing_from_the_manifest_sends_every_module_to_its_source(
    tmp_path: Path,
) -> None:
    package = _tree(tmp_path)
    digests = _digests(package)
    del digests["jmspy.a"]
    _manifest(package, digests)
    chosen = sources_to_prefer(package, MODULES)
    assert set(chosen) == set(MODULES)
    assert "did not record jmspy.a" in chosen["jmspy.sub.b"][1]


@pytest.mark.parametrize("content", ["", "not json", '{"modules": 3}', "[]"])
def test_a_missing_or_unreadable_manifest_means_sources(tmp_path: Path, content: str) -> None:
    package = _tree(tmp_path)
    if content:
        (package / MANIFEST_NAME).write_text(content)
    assert set(sources_to_prefer(package, MODULES)) == set(MODULES)


def test_pure_python_env_sends_every_module_to_its_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = _tree(tmp_path)
    _manifest(package, _digests(package))
    monkeypatch.setenv(PURE_PYTHON_ENV, "1")
    chosen = sources_to_prefer(package, MODULES)
    assert {why for _path, why in chosen.values()} == {f"{PURE_PYTHON_ENV} is set"}
    monkeypatch.setenv(PURE_PYTHON_ENV, "0")
    assert sources_to_prefer(package, MODULES) == {}


def test_nothing_built_means_nothing_to_redirect(tmp_path: Path) -> None:
    package = _tree(tmp_path, built=False)
    assert sources_to_prefer(package, MODULES) == {}


def test_source_path_refuses_other_packages() -> None:
    with pytest.raises(ValueError, match="not a jmspy module: 'proton.x'"):
        source_path("proton.x")


def _compiled_in_a_fresh_process(env: dict[str, str]) -> list[str]:
    code = (
        "import json, jmspy, jmspy._native as n, importlib\n"
        "[importlib.import_module(m) for m in n.COMPILED_MODULES]\n"
        "print(json.dumps(n.compiled_in_use()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    result: list[str] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_this_installation_runs_the_built_codec() -> None:
    """The README's set-up (pip install -e) builds every listed module; a build that silently
    fell back to pure Python, or sources edited without reinstalling, fail here."""
    env = {k: v for k, v in os.environ.items() if k != PURE_PYTHON_ENV}
    assert _compiled_in_a_fresh_process(env) == list(COMPILED_MODULES), (
        "the mypyc-built codec is not in use: run `pip install -e .` again"
    )


def test_pure_python_env_runs_the_sources_in_a_fresh_process() -> None:
    env = dict(os.environ, **{PURE_PYTHON_ENV: "1"})
    assert _compiled_in_a_fresh_process(env) == []


def test_this_process_uses_the_built_codec_unless_asked_not_to() -> None:
    expected = [] if PURE_PYTHON_RUN else list(COMPILED_MODULES)
    for name in COMPILED_MODULES:
        __import__(name)
    assert _native.compiled_in_use() == expected
