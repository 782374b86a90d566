#!/usr/bin/env bash
# Build the distribution (wheel and sdist) with `python -m build` and install each one in a
# fresh virtual environment of its own, outside the source tree, then check that it imports and
# runs from there: jmspy, the installed jmspy.adapters and jmspy.conformance packages, the typing
# marker, the distribution's metadata, both command-line entry points and the codec modules
# built with mypyc. Catches what an editable install hides: a package missing from
# pyproject.toml's list, a module that imports something from the source tree, a file left out
# of the sdist.
#
#     bash scripts/check_dist.sh            # exit status 0 when both install cleanly
#
# KEEP_DIST=DIR keeps the built files in DIR. Uses the python on PATH (3.11+).
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
export PIP_DISABLE_PIP_VERSION_CHECK=1

distribution=$(python - <<'EOF'
import tomllib
with open("pyproject.toml", "rb") as f:
    print(tomllib.load(f)["project"]["name"])
EOF
)

work=$(mktemp -d "${TMPDIR:-/tmp}/jmspy-dist.XXXXXX")
trap 'rm -rf "$work"' EXIT
dist="${KEEP_DIST:-$work/dist}"
mkdir -p "$dist"

echo "== python -m build ($distribution)"
python -m build --outdir "$dist" "$root"
wheel=$(ls "$dist"/*.whl)
sdist=$(ls "$dist"/*.tar.gz)
echo "built: $(basename "$wheel") $(basename "$sdist")"

check_install() {
  local kind=$1 artifact=$2
  local venv="$work/venv-$kind"
  echo "== install the $kind in a fresh virtual environment"
  python -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet "$artifact"
  # Run from an empty directory so nothing is imported from the source tree.
  mkdir -p "$work/run-$kind"
  (
    cd "$work/run-$kind"
    "$venv/bin/python" - "$root" "$distribution" <<'EOF'
import importlib
import importlib.metadata
import pathlib
import sys

root = pathlib.Path(sys.argv[1]).resolve()
distribution = sys.argv[2]
modules = [
    "jmspy",
    "jmspy._amqp.engine",
    "jmspy.selector",
    "jmspy.tracing",
    "jmspy.aio",
    "jmspy.adapters",
    "jmspy.conformance",
    "jmspy.conformance.brokers",
    "jmspy.conformance.checks",
]
for name in modules:
    module = importlib.import_module(name)
    where = pathlib.Path(module.__file__).resolve()
    if where.is_relative_to(root):
        sys.exit(f"{name} was imported from the source tree ({where}), not the install")
import jmspy
from jmspy.adapters import choose_profile  # noqa: F401

marker = pathlib.Path(jmspy.__file__).with_name("py.typed")
if not marker.is_file():
    sys.exit("py.typed is missing from the installed jmspy package")
version = importlib.metadata.version(distribution)
entry_points = {ep.name for ep in importlib.metadata.entry_points(group="console_scripts")}
missing = {"jmspy-broker", "jmspy-conformance"} - entry_points
if missing:
    sys.exit(f"console scripts missing: {sorted(missing)}")
# The codec modules are built with mypyc (setup.py, jmspy/_native.py) and must run built.
from jmspy import _native

for name in _native.COMPILED_MODULES:
    importlib.import_module(name)
not_built = sorted(set(_native.COMPILED_MODULES) - set(_native.compiled_in_use()))
if not_built:
    sys.exit(f"modules not running in their mypyc-built form: {not_built}")
print(f"{distribution} {version}: {len(modules)} modules import from {pathlib.Path(jmspy.__file__).parent}")
print(f"built with mypyc: {len(_native.COMPILED_MODULES)} codec modules")
EOF
    "$venv/bin/jmspy-broker" --help >/dev/null
    "$venv/bin/jmspy-conformance" --help >/dev/null
    echo "jmspy-broker --help and jmspy-conformance --help: ok"
  )
}

check_install wheel "$wheel"
check_install sdist "$sdist"
echo "== check_dist: OK"
