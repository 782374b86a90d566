"""The snake_case names as a type checker sees them: mypy --strict over a user program written
only with snake_case names (no error expected) and over one with deliberate mistakes (each must
be reported, so a twin that degrades to ``Any`` or disappears fails here)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "typing_programs"
GOOD = PROGRAMS / "snake_case_program.py"
MISTAKES = PROGRAMS / "snake_case_mistakes.py"

_ERROR = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): error: (?P<text>.*)$")


@pytest.fixture(scope="module")
def mypy_report(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, int, str]]:
    api = pytest.importorskip("mypy.api")
    # From the project root, as a user's checker would run in their project (mypy finds the
    # jmspy sources there); with a fresh cache, so no earlier run's view of jmspy is reused.
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        stdout, stderr, _status = api.run(
            [
                "--strict",
                "--config-file",
                str(ROOT / "pyproject.toml"),
                "--cache-dir",
                str(tmp_path_factory.mktemp("mypy_cache")),
                "--no-error-summary",
                "--show-absolute-path",
                str(GOOD),
                str(MISTAKES),
            ]
        )
    finally:
        os.chdir(cwd)
    assert not stderr, stderr
    errors = []
    for line in stdout.splitlines():
        match = _ERROR.match(line)
        if match:
            errors.append((match["path"], int(match["line"]), match["text"]))
    return errors


@pytest.mark.timeout(900)  # a cold mypy run over jmspy on a busy machine
def test_snake_case_program_type_checks_strictly(mypy_report: list[tuple[str, int, str]]) -> None:
    errors = [e for e in mypy_report if Path(e[0]) == GOOD]
    assert errors == []


@pytest.mark.timeout(900)
def test_each_deliberate_type_error_is_reported(mypy_report: list[tuple[str, int, str]]) -> None:
    marked = {
        number
        for number, text in enumerate(MISTAKES.read_text().splitlines(), start=1)
        if "# error:" in text
    }
    reported = {line for path, line, _ in mypy_report if Path(path) == MISTAKES}
    assert len(marked) >= 8
    assert reported == marked, [e for e in mypy_report if Path(e[0]) == MISTAKES]
