"""The runnable examples work against the session's broker (README's main job included)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_quickstart_sends_and_receives(broker: Any) -> None:
    env = dict(os.environ)
    env.update(
        JMSPY_BROKER_URL=broker.url,
        JMSPY_BROKER_USER=broker.username,
        JMSPY_BROKER_PASSWORD=broker.password,
    )
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "quickstart.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "sent     ID:" in result.stdout
    assert "received ID:" in result.stdout and "'Hello from jmspy'" in result.stdout
