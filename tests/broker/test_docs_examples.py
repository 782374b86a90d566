"""The runnable examples the documentation site includes (docs/*.md pull them in with
``--8<--``), run against the session's broker."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.broker

ROOT = Path(__file__).resolve().parents[2]


def _run(example: str, broker: Any) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.update(
        JMSPY_BROKER_URL=broker.url,
        JMSPY_BROKER_USER=broker.username,
        JMSPY_BROKER_PASSWORD=broker.password,
    )
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / example)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_tracing_page_example_puts_send_and_process_in_one_trace(broker: Any) -> None:
    assert '--8<-- "examples/tracing.py"' in (ROOT / "docs" / "tracing.md").read_text()
    result = _run("tracing.py", broker)
    assert result.returncode == 0, result.stderr
    spans = {
        kind: (trace_id, parent)
        for kind, trace_id, parent in re.findall(
            r"^(PRODUCER|CONSUMER) +\S+ \S+ +trace=([0-9a-f]{32}) parent=(\S+)$",
            result.stdout,
            re.MULTILINE,
        )
    }
    assert set(spans) == {"PRODUCER", "CONSUMER"}, result.stdout
    send_trace, send_parent = spans["PRODUCER"]
    process_trace, process_parent = spans["CONSUMER"]
    assert send_parent == "-"
    assert process_trace == send_trace
    # The listener saw the send span's context in the traceparent property.
    (traceparent,) = re.findall(
        r"traceparent (00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2})", result.stdout
    )
    assert traceparent.split("-")[1] == send_trace
    assert traceparent.split("-")[2] == process_parent


def test_getting_started_includes_the_quickstart() -> None:
    assert '--8<-- "examples/quickstart.py"' in (ROOT / "docs" / "getting-started.md").read_text()
