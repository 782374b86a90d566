"""Every package of the source tree is listed in pyproject.toml, so the wheel ships it.

The package list is explicit (``adapters/`` and ``conformance/`` install as ``jmspy.adapters``
and ``jmspy.conformance``), so a new sub-package that is not added would be missing from the
wheel while every test run from the source tree still passes.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _source_packages() -> set[str]:
    found: set[str] = set()
    roots = {"jmspy": ROOT / "jmspy", "jmspy.adapters": ROOT / "adapters"}
    roots["jmspy.conformance"] = ROOT / "conformance"
    for name, directory in roots.items():
        for init in directory.rglob("__init__.py"):
            relative = init.parent.relative_to(directory).parts
            found.add(".".join((name, *relative)))
    return found


def test_every_package_is_listed_for_the_wheel() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    missing = _source_packages() - listed
    assert not missing, f"packages missing from pyproject.toml's list: {sorted(missing)}"


def test_the_walker_sees_sub_packages() -> None:
    found = _source_packages()
    assert {"jmspy.message", "jmspy._amqp.codec", "jmspy.conformance.brokers"} <= found
