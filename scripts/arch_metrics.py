"""Architecture figures for the jmspy package, measured from the source (no import needed).

    python scripts/arch_metrics.py            # print the figures
    python scripts/arch_metrics.py --list     # and list every cross-object private reach-in

Figures:
- import cycles among ``jmspy`` modules: strongly connected components of the graph of imports
  written in the code (module level and inside functions; ``if TYPE_CHECKING:`` blocks excluded,
  as they never run). The implicit import of a parent package is not an edge.
- cross-object private reach-ins: ``other._name`` where ``other`` is not ``self``/``cls``/
  ``super()`` and ``_name`` is not a dunder; references to private *modules* (``_amqp.x``) and
  to a private helper of a module the file imports (``rules._check``) are not counted.
- code files over 700 lines, under jmspy/, adapters/ and conformance/.
- codec reach-ins into message privates: the same count, restricted to jmspy/_amqp/codec*.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "jmspy"
LINE_LIMIT = 700


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node except those under ``if TYPE_CHECKING:``."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _resolve(current: str, is_package: bool, level: int, target: str | None) -> str:
    base = current.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def import_graph() -> dict[str, set[str]]:
    known = modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        is_package = path.name == "__init__.py"
        for node in _runtime_nodes(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = (
                    _resolve(name, is_package, node.level, node.module)
                    if node.level
                    else (node.module or "")
                )
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in known else base)
            for target in targets:
                if target in known and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one member."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for succ in graph[node]:
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for node in graph:
        if node not in index:
            visit(node)
    return found


def _imported_names(tree: ast.AST) -> set[str]:
    """Names a file binds by an import statement (``from . import rules``, ``import time``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
    return names


def _is_super_call(value: ast.expr) -> bool:
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "super"
    )


def reach_ins(paths: list[Path]) -> list[tuple[Path, int, str]]:
    module_names = {p.stem for p in PACKAGE.rglob("*.py")} | {
        p.name for p in PACKAGE.rglob("*") if p.is_dir()
    }
    hits: list[tuple[Path, int, str]] = []
    for path in paths:
        tree = ast.parse(path.read_text(), str(path))
        # A module reference is a name the file imports. A local variable that merely shares a
        # module's name (``session``, ``consumer``, ``connection``) is an object.
        imported = _imported_names(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute):
                continue
            attr = node.attr
            if not attr.startswith("_") or (attr.startswith("__") and attr.endswith("__")):
                continue
            value = node.value
            if isinstance(value, ast.Name) and value.id in {"self", "cls"}:
                continue
            if _is_super_call(value):  # super()._x is the object's own attribute
                continue
            if attr in module_names:  # a private module, not an object's attribute
                continue
            if isinstance(value, ast.Name) and value.id in imported:
                continue  # module-level private helper of an imported module
            hits.append((path, node.lineno, ast.unparse(node)))
    return hits


def main() -> int:
    graph = import_graph()
    found = cycles(graph)
    api_files = sorted(PACKAGE.rglob("*.py"))
    hits = reach_ins(api_files)
    codec_hits = [h for h in hits if h[0].name.startswith("codec") or h[0].parent.name == "codec"]
    codec_message_hits = [h for h in codec_hits if h[2].split(".")[0] in {"msg", "message"}]
    long_files = []
    for top in ("jmspy", "adapters", "conformance"):
        for path in sorted((ROOT / top).rglob("*.py")):
            lines = sum(1 for _ in path.open())
            if lines > LINE_LIMIT:
                long_files.append((lines, path.relative_to(ROOT)))
    print(f"import cycles among jmspy modules: {len(found)}")
    for component in found:
        print(f"  cycle of {len(component)}: {', '.join(component)}")
    top_level = [h for h in hits if h[0].parent == PACKAGE]
    print(f"cross-object private reach-ins in jmspy/*.py (the API modules): {len(top_level)}")
    print(f"cross-object private reach-ins in the whole package: {len(hits)}")
    print(f"codec reach-ins into message privates: {len(codec_message_hits)}")
    print(f"code files over {LINE_LIMIT} lines: {len(long_files)}")
    for lines, path in long_files:
        print(f"  {lines} {path}")
    if "--list" in sys.argv:
        for path, line, text in hits:
            print(f"{path.relative_to(ROOT)}:{line}: {text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
