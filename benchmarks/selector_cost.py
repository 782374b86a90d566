"""Cost of message selectors: parsing and evaluating the unit-test case table.

Times ``jmspy.selector`` over the 461 cases of ``tests/unit/selector_cases.py``:

* parse: every distinct selector text parsed and compiled (cache bypassed; invalid ones raise),
* evaluate: every valid case's compiled selector evaluated against its sample message,
* parse+evaluate: both, case by case.

Each figure is the best of ``--repeat`` rounds (the least disturbed by other work on the
machine), in microseconds per case. With ``--baseline FILE`` a second selector implementation
(for instance an older ``jmspy/selector.py`` taken from git) is loaded from that file and timed
in the same process, rounds alternating between the two, so that a comparison is not skewed by
the machine getting busier or quieter during the run::

    git show <commit>:jmspy/selector.py > /tmp/selector_before.py
    python benchmarks/selector_cost.py --baseline /tmp/selector_before.py
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import pathlib
import sys
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests" / "unit"))

from selector_cases import CASES, INVALID, build_messages  # noqa: E402

import jmspy.selector  # noqa: E402


def load_baseline(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location("selector_baseline", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load a selector module from {path!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


def workloads(module: Any) -> dict[str, Callable[[], int]]:
    """One callable per figure; each runs the whole table once and returns the case count."""
    parse = module._parse_cached.__wrapped__  # the uncached parse + compile
    error = module.SelectorParseError
    messages = build_messages()
    texts = list(dict.fromkeys(text for text, _, _ in CASES))
    valid = [(text, messages[name]) for text, name, expected in CASES if expected != INVALID]
    compiled = [(parse(text), message) for text, message in valid]
    everything = [(text, None if name == "-" else messages[name]) for text, name, _ in CASES]

    def run_parse() -> int:
        for text in texts:
            try:
                parse(text)
            except error:
                pass
        return len(texts)

    def run_evaluate() -> int:
        for selector, message in compiled:
            selector.evaluate(message)
        return len(compiled)

    def run_both() -> int:
        for text, message in everything:
            try:
                selector = parse(text)
            except error:
                continue
            selector.evaluate(message)
        return len(everything)

    return {"parse": run_parse, "evaluate": run_evaluate, "parse+evaluate": run_both}


def best_us_per_case(run: Callable[[], int], inner: int) -> float:
    gc.collect()  # so that one candidate's garbage is not collected in the other's round
    start = time.perf_counter_ns()
    count = 0
    for _ in range(inner):
        count += run()
    return (time.perf_counter_ns() - start) / 1000 / count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", help="a selector module file to compare with")
    parser.add_argument("--repeat", type=int, default=150, help="rounds per figure (best kept)")
    parser.add_argument("--inner", type=int, default=1, help="table passes per round")
    args = parser.parse_args()

    candidates: dict[str, Any] = {"current": jmspy.selector}
    if args.baseline:
        candidates = {"baseline": load_baseline(args.baseline), **candidates}
    loads = {name: workloads(module) for name, module in candidates.items()}
    best: dict[tuple[str, str], float] = {}
    for round_ in range(args.repeat):
        for figure in ("parse", "evaluate", "parse+evaluate"):
            # Who goes first alternates, so neither always runs right after the other.
            order = list(loads.items())[:: -1 if round_ % 2 else 1]
            for name, runs in order:
                value = best_us_per_case(runs[figure], args.inner)
                key = (name, figure)
                best[key] = min(best.get(key, value), value)

    names = list(candidates)
    header = f"{'us per case (best of ' + str(args.repeat) + ')':<32}" + "".join(
        f"{n:>12}" for n in names
    )
    if len(names) == 2:
        header += f"{'current/baseline':>18}"
    print(header)
    for figure in ("parse", "evaluate", "parse+evaluate"):
        row = f"{figure:<32}" + "".join(f"{best[(n, figure)]:>12.2f}" for n in names)
        if len(names) == 2:
            row += f"{best[('current', figure)] / best[('baseline', figure)]:>18.3f}"
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
