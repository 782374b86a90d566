"""The architecture figures of issue 14, held as tests: no import cycle among jmspy modules,
and few cross-object private reach-ins in the API modules (scripts/arch_metrics.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _metrics() -> ModuleType:
    spec = importlib.util.spec_from_file_location("arch_metrics", ROOT / "scripts/arch_metrics.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["arch_metrics"] = module
    spec.loader.exec_module(module)
    return module


def test_no_import_cycle_among_jmspy_modules() -> None:
    metrics = _metrics()
    assert metrics.cycles(metrics.import_graph()) == []


def test_api_modules_reach_into_few_other_objects_privates() -> None:
    metrics = _metrics()
    api = sorted((ROOT / "jmspy").glob("*.py"))
    hits = metrics.reach_ins(api)
    # message._x / msg._x belong to the message facade (the codec's surface), counted there.
    others = [h for h in hits if h[2].split(".")[-2] not in {"message", "msg"}]
    assert len(others) <= 15, "\n".join(f"{p.name}:{line}: {text}" for p, line, text in others)


def test_script_counts_a_variable_named_like_a_module_as_an_object(tmp_path: Path) -> None:
    source = tmp_path / "example.py"
    source.write_text(
        "from . import rules\n"
        "def f(session, consumer):\n"
        "    rules._check()\n"
        "    session._mode\n"
        "    super()._x\n"
        "    consumer._receiver\n"
    )
    hits = [text for _, _, text in _metrics().reach_ins([source])]
    assert hits == ["session._mode", "consumer._receiver"]
