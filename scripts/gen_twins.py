"""Generate the snake_case twins of the camelCase JMS methods (jmspy/_twins/*.py).

    python scripts/gen_twins.py            # rewrite jmspy/_twins/ from the API classes
    python scripts/gen_twins.py --check    # exit 1 (and name the files) if it is out of date

Every public camelCase method of the classes in ``API`` gets a typed snake_case twin
(``createSession`` -> ``create_session``) in a mixin class the API class derives from. A twin
has the same parameters, types, defaults and overloads as its camelCase method and calls it *by
name* (``return self.createSession(*args)``), so a subclass that overrides the camelCase method
changes the twin too. The mixin also declares the camelCase signatures under ``TYPE_CHECKING``,
so mypy checks that the API class still matches what the twin was generated from.

The script reads the source (``ast``), it imports nothing from jmspy; annotation names are traced
through the ``from ... import`` statements to the module that defines them. The output is
committed; tests/unit/test_twins.py fails when it differs from what this script writes.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "jmspy"
OUT = ROOT / "jmspy" / "_twins"

# (module, class): the API classes whose camelCase methods get twins. A class whose camelCase
# methods all come from a listed base needs no entry (TemporaryQueue, TemporaryTopic).
API: list[tuple[str, str]] = [
    ("jmspy.factory", "ConnectionFactory"),
    ("jmspy.connection", "ConnectionMetaData"),
    ("jmspy.connection", "Connection"),
    ("jmspy.session", "Session"),
    ("jmspy.producer", "MessageProducer"),
    ("jmspy.consumer", "MessageConsumer"),
    ("jmspy.consumer_redelivery", "RedeliveryHandling"),
    ("jmspy.browser", "QueueBrowser"),
    ("jmspy.context", "JMSContext"),
    ("jmspy.jms_producer", "JMSProducer"),
    ("jmspy.jms_consumer", "JMSConsumer"),
    ("jmspy.destination", "Destination"),
    ("jmspy.destination", "Queue"),
    ("jmspy.destination", "Topic"),
    ("jmspy.errors", "JMSError"),
    ("jmspy.message.headers", "MessageHeaders"),
    ("jmspy.message.base", "Message"),
    ("jmspy.message.text_message", "TextMessage"),
    ("jmspy.message.bytes_message", "BytesMessage"),
    ("jmspy.message.map_message", "MapMessage"),
    ("jmspy.message.stream_message", "StreamMessage"),
    ("jmspy.message.object_message", "ObjectMessage"),
]

# The one naming rule, shared with jmspy._pythonic.snake_case (a test keeps them equal).
_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(name: str) -> str:
    """``getJMSCorrelationIDAsBytes`` -> ``get_jms_correlation_id_as_bytes``."""
    return _BOUNDARY.sub("_", name).lower()


def is_camel(name: str) -> bool:
    return not name.startswith("_") and name != name.lower()


# ---- reading the source -----------------------------------------------------------------


def module_path(module: str) -> Path:
    parts = module.split(".")
    base = ROOT.joinpath(*parts)
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


_TREES: dict[str, ast.Module] = {}


def tree_of(module: str) -> ast.Module:
    if module not in _TREES:
        path = module_path(module)
        _TREES[module] = ast.parse(path.read_text(), str(path))
    return _TREES[module]


def _top_level(tree: ast.Module) -> list[ast.stmt]:
    """Module-level statements, including those inside ``if``/``try`` (TYPE_CHECKING imports)."""
    out: list[ast.stmt] = []
    stack = list(reversed(tree.body))
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ast.If):
            stack.extend(reversed(stmt.body + stmt.orelse))
        elif isinstance(stmt, ast.Try):
            stack.extend(reversed(stmt.body + stmt.orelse + stmt.finalbody))
        else:
            out.append(stmt)
    return out


def _absolute(module: str, level: int, target: str | None) -> str:
    if not level:
        return target or ""
    base = module.split(".")
    if module_path(module).name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def origin(module: str, name: str) -> tuple[str, str]:
    """The module that defines ``name`` as seen from ``module``, and its name there."""
    if hasattr(builtins, name):
        return "builtins", name
    for stmt in _top_level(tree_of(module)):
        if isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                if (alias.asname or alias.name) == name:
                    source = _absolute(module, stmt.level, stmt.module)
                    if source == PACKAGE or source.startswith(PACKAGE + "."):
                        if module_path(source).exists():
                            return origin(source, alias.name)
                        return source.rsplit(".", 1)[0], source.rsplit(".", 1)[1]
                    return source, alias.name
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if (alias.asname or alias.name.split(".")[0]) == name:
                    return alias.name, ""
        elif isinstance(stmt, (ast.ClassDef, ast.FunctionDef)) and stmt.name == name:
            return module, name
        elif isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in stmt.targets
        ):
            return module, name
        elif (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and stmt.target.id == name
        ):
            return module, name
    raise SystemExit(f"gen_twins: cannot find where {name!r} used in {module} comes from")


def class_node(module: str, name: str) -> ast.ClassDef:
    for stmt in tree_of(module).body:
        if isinstance(stmt, ast.ClassDef) and stmt.name == name:
            return stmt
    raise SystemExit(f"gen_twins: no class {name} in {module}")


def annotation_names(node: ast.expr | None) -> set[str]:
    """Root names an annotation uses (string annotations parsed too)."""
    if node is None:
        return set()
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            names.add(sub.id)
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            names |= annotation_names(ast.parse(sub.value, mode="eval").body)
    return names


# ---- the model --------------------------------------------------------------------------


@dataclass
class Method:
    camel: str
    snake: str
    defs: list[ast.FunctionDef]  # the overloads, then the implementation (or just one def)


@dataclass
class Mixin:
    module: str
    cls: str
    methods: list[Method] = field(default_factory=list)
    names: set[str] = field(default_factory=set)  # annotation names to import

    @property
    def mixin(self) -> str:
        return f"{self.cls}Twins"


def _is_overload(fn: ast.FunctionDef) -> bool:
    return any(ast.unparse(d) in {"overload", "typing.overload"} for d in fn.decorator_list)


def _camel_defined(module: str, cls: str) -> set[str]:
    """camelCase names a listed class or its listed ancestors define (whose twins exist)."""
    node = class_node(module, cls)
    names = {fn.name for fn in node.body if isinstance(fn, ast.FunctionDef) and is_camel(fn.name)}
    for base in node.bases:
        if isinstance(base, ast.Name):
            base_module, base_name = origin(module, base.id)
            if (base_module, base_name) in API:
                names |= _camel_defined(base_module, base_name)
    return names


def collect(module: str, cls: str) -> Mixin:
    node = class_node(module, cls)
    inherited: set[str] = set()
    for base in node.bases:
        if isinstance(base, ast.Name):
            base_module, base_name = origin(module, base.id)
            if (base_module, base_name) in API:
                inherited |= _camel_defined(base_module, base_name)
    mixin = Mixin(module, cls)
    own = {
        fn.name: fn for fn in node.body if isinstance(fn, ast.FunctionDef) and not is_camel(fn.name)
    }
    by_name: dict[str, list[ast.FunctionDef]] = {}
    for fn in node.body:
        if isinstance(fn, ast.FunctionDef) and is_camel(fn.name) and fn.name not in inherited:
            by_name.setdefault(fn.name, []).append(fn)
    seen: dict[str, str] = {}
    for camel, defs in by_name.items():
        snake = snake_case(camel)
        if snake in own:
            raise SystemExit(f"gen_twins: {cls}.{snake} exists already; twin of {camel}?")
        if snake in seen:
            raise SystemExit(f"gen_twins: {cls}.{camel} and {seen[snake]} both map to {snake}")
        seen[snake] = camel
        overloads = [d for d in defs if _is_overload(d)]
        implementation = [d for d in defs if not _is_overload(d)]
        if len(implementation) != 1:
            raise SystemExit(f"gen_twins: {cls}.{camel} has {len(implementation)} bodies")
        mixin.methods.append(Method(camel, snake, overloads + implementation))
        for fn in defs:
            args = fn.args
            for arg in args.posonlyargs + args.args + args.kwonlyargs:
                mixin.names |= annotation_names(arg.annotation)
            for star in (args.vararg, args.kwarg):
                if star is not None:
                    mixin.names |= annotation_names(star.annotation)
            for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
                if not isinstance(default, ast.Constant):
                    raise SystemExit(
                        f"gen_twins: {cls}.{camel} has a non-literal default "
                        f"{ast.unparse(default)}; use a literal so the twin can copy it"
                    )
            mixin.names |= annotation_names(fn.returns)
    return mixin


# ---- writing ----------------------------------------------------------------------------


def _signature(fn: ast.FunctionDef, name: str) -> str:
    returns = f" -> {ast.unparse(fn.returns)}" if fn.returns is not None else ""
    return f"def {name}({ast.unparse(fn.args)}){returns}:"


def _call(fn: ast.FunctionDef) -> str:
    args = fn.args
    parts = [a.arg for a in (args.posonlyargs + args.args)[1:]]
    if args.vararg is not None:
        parts.append(f"*{args.vararg.arg}")
    parts += [f"{a.arg}={a.arg}" for a in args.kwonlyargs]
    if args.kwarg is not None:
        parts.append(f"**{args.kwarg.arg}")
    return f"self.{fn.name}({', '.join(parts)})"


def _imports(mixin: Mixin) -> list[str]:
    by_module: dict[str, set[str]] = {}
    plain: set[str] = set()
    for name in sorted(mixin.names):
        if hasattr(builtins, name):
            continue
        source, real = origin(mixin.module, name)
        if not real:
            plain.add(source)
            continue
        entry = real if real == name else f"{real} as {name}"
        by_module.setdefault(source, set()).add(entry)
    lines = [f"import {m}" for m in sorted(plain)]
    std = sorted(m for m in by_module if not m.startswith(PACKAGE))
    own = sorted(m for m in by_module if m.startswith(PACKAGE))
    for source in std + own:
        names = ", ".join(sorted(by_module[source], key=lambda n: (not n.isupper(), n)))
        line = f"from {source} import {names}"
        if len(line) > 92:
            body = "".join(f"        {n},\n" for n in sorted(by_module[source]))
            line = f"from {source} import (\n{body}    )"
        lines.append(line)
    return lines


def render(mixins: list[Mixin]) -> str:
    module = mixins[0].module
    uses_overload = any(len(m.defs) > 1 for x in mixins for m in x.methods)
    typing_names = ["TYPE_CHECKING"] + (["overload"] if uses_overload else [])
    out = [
        f'"""snake_case twins of the camelCase methods of :mod:`{module}`.',
        "",
        "Generated by scripts/gen_twins.py from the source of the API classes; do not edit (run",
        "the script after changing a camelCase signature; tests/unit/test_twins.py checks it).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        f"from typing import {', '.join(typing_names)}",
        "",
        f"__all__ = [{', '.join(repr(m.mixin) for m in mixins)}]",
        "",
    ]
    imports = sorted({line for m in mixins for line in _imports(m)}, key=_import_key)
    if imports:
        out += ["if TYPE_CHECKING:"] + [_indent(line, 1) for line in imports] + [""]
    for mixin in mixins:
        out += ["", *_render_class(mixin)]
    return "\n".join(out).rstrip() + "\n"


def _import_key(line: str) -> tuple[int, str]:
    module = line.split()[1]
    return (1 if module.startswith(PACKAGE) else 0, line)


def _indent(text: str, level: int) -> str:
    pad = "    " * level
    return "\n".join(pad + line if line else line for line in text.split("\n"))


def _render_class(mixin: Mixin) -> list[str]:
    out = [
        f"class {mixin.mixin}:",
        f'    """The snake_case names of :class:`{mixin.module}.{mixin.cls}` (each calls the',
        '    camelCase method by name, so overriding the camelCase method overrides both)."""',
        "",
        "    __slots__ = ()",
        "",
        "    if TYPE_CHECKING:",
        "        # The camelCase methods the twins call, as the API class defines them (mypy",
        "        # checks the class against these).",
    ]
    for method in mixin.methods:
        for fn in method.defs:
            out.append("")
            if _is_overload(fn):
                out.append("        @overload")
            out.append(f"        {_signature(fn, fn.name)} ...")
    for method in mixin.methods:
        for fn in method.defs:
            out.append("")
            if _is_overload(fn):
                out.append("    @overload")
                out.append(f"    {_signature(fn, method.snake)} ...")
                continue
            out.append(f"    {_signature(fn, method.snake)}")
            out.append(
                f'        """Twin of :meth:`{mixin.cls}.{method.camel}` (calls it by name)."""'
            )
            call = _call(fn)
            returns_none = fn.returns is not None and ast.unparse(fn.returns) == "None"
            out.append(f"        {call}" if returns_none else f"        return {call}")
    return out


_FORMATTED: dict[tuple[Path, str], str] = {}


def formatted(path: Path, text: str) -> str:
    """The text as ``ruff`` sorts and formats it (the project's style, so the check is exact)."""
    if (path, text) not in _FORMATTED:
        _FORMATTED[path, text] = _ruff(path, text)
    return _FORMATTED[path, text]


def _ruff(path: Path, text: str) -> str:
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    for command in (["check", "--fix", "--select", "I", "--quiet"], ["format", "--quiet"]):
        result = subprocess.run(
            [ruff, *command, "--stdin-filename", str(path), "-"],
            input=text,
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        if result.returncode != 0:
            raise SystemExit(f"gen_twins: ruff {command[0]} failed on {path}: {result.stderr}")
        text = result.stdout
    return text


def generate() -> dict[Path, str]:
    grouped: dict[str, list[Mixin]] = {}
    for module, cls in API:
        grouped.setdefault(module, []).append(collect(module, cls))
    files: dict[Path, str] = {}
    for module, mixins in grouped.items():
        name = module.removeprefix(PACKAGE + ".").replace(".", "_")
        path = OUT / f"{name}.py"
        files[path] = formatted(path, render(mixins))
    files[OUT / "__init__.py"] = (
        '"""Generated snake_case twins of the camelCase JMS methods (scripts/gen_twins.py)."""\n'
    )
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only report stale files")
    args = parser.parse_args(argv)
    files = generate()
    stale = [p for p, text in files.items() if not p.exists() or p.read_text() != text]
    extra = [p for p in OUT.glob("*.py") if p not in files] if OUT.exists() else []
    if args.check:
        for path in stale + extra:
            print(f"out of date: {path.relative_to(ROOT)}")
        if stale or extra:
            print("run: python scripts/gen_twins.py")
        return 1 if stale or extra else 0
    OUT.mkdir(exist_ok=True)
    for path in extra:
        path.unlink()
    for path, text in files.items():
        if path in stale:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
