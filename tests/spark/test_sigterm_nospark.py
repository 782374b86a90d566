"""SIGTERM on the stream runner (no Spark): the source closes its connection, then hands the
signal back to the disposition the process had, so the process ends as it would have without
the source's handler (no ``os._exit`` in the library)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from test_reader_nospark import drain, send_texts

# The child prints "ready" once it holds an unacknowledged batch and its handler is in place,
# "closed" when the consumer's close() has returned, and then waits for the signal.
_CHILD = """
import os, signal, sys, time
from jmspy.spark import JmsOptions
from jmspy.spark._stream import StreamConsumer
from jmspy.spark.datasource import _close_on_sigterm
if {install_previous!r}:
    def previous(signum, frame):
        print("previous", flush=True)
        os._exit(3)
    signal.signal(signal.SIGTERM, previous)
opts = JmsOptions.parse({options!r})
consumer = StreamConsumer(opts)
close = consumer.close
def close_and_say():
    close()
    print("closed", flush=True)
consumer.close = close_and_say
end1 = consumer.latest(consumer.offset(0), 2)
end2 = consumer.latest(end1, 2)
_close_on_sigterm(consumer)
print("ready", flush=True)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    time.sleep(0.5)
sys.exit(7)  # no signal came
"""


@pytest.mark.parametrize("install_previous", [False, True], ids=["default", "python-handler"])
def test_sigterm_closes_then_hands_the_signal_back(
    factory: Any, jms_options: dict[str, str], unique_name: str, install_previous: bool
) -> None:
    ids = send_texts(factory, unique_name, 5)
    script = textwrap.dedent(
        _CHILD.format(
            install_previous=install_previous,
            options=dict(jms_options, destination=unique_name),
        )
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        first = child.stdout.readline().strip()
        assert first == "ready", child.stderr.read() if child.stderr else first
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    lines = out.split()
    if install_previous:
        # The application's own handler runs after the close and decides the exit.
        assert lines == ["closed", "previous"], err
        assert child.returncode == 3, err
    else:
        # Default disposition: the process ends by SIGTERM, as it would without jmspy.
        assert lines == ["closed"], err
        assert child.returncode == -signal.SIGTERM, err
    # The batch acknowledged before the signal stays acknowledged; the rest is back.
    rest = drain(factory, unique_name)
    assert sorted(str(m.getJMSMessageID()) for m in rest) == sorted(ids[2:])
