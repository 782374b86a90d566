"""SIGTERM on the stream runner when the consumer's close fails: the failure is logged (not
left to the closing thread's excepthook) and the signal still goes back to the disposition
the process had. No broker and no Spark: the handler is called as the signal would call it."""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from jmspy.spark.datasource import _close_on_sigterm


class _FailingConsumer:
    def close(self) -> None:
        raise RuntimeError("close failed on purpose")


@pytest.fixture
def sigterm_restored() -> Iterator[None]:
    previous = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_failing_close_on_sigterm_is_logged_and_the_signal_handed_back(
    sigterm_restored: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="jmspy.spark")
    handed_back = threading.Event()

    def previous(signum: int, frame: Any) -> None:
        handed_back.set()

    signal.signal(signal.SIGTERM, previous)
    _close_on_sigterm(_FailingConsumer())  # type: ignore[arg-type]
    handler = signal.getsignal(signal.SIGTERM)
    assert callable(handler) and handler is not previous
    handler(signal.SIGTERM, None)
    assert handed_back.is_set(), "the previous handler was not called"
    failures = [
        r
        for r in caplog.records
        if r.exc_info is not None and "close failed on purpose" in str(r.exc_info[1])
    ]
    assert failures, "the failed close was not logged"
