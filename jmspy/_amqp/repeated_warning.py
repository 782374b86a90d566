"""A warning that may repeat once per message, logged at WARNING at most once per interval.

A broker that refuses every asynchronous send, or a queue full of messages the codec cannot
read, would otherwise write a WARNING line per message for as long as the connection lives:
at thousands of messages a second that fills disks and drowns every other line. The first
occurrence is a WARNING, later ones within :data:`INTERVAL_S` are DEBUG (still there for
whoever looks closely), and the next WARNING says how many were only at DEBUG since the last.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

__all__ = ["RepeatedWarning"]

INTERVAL_S = 60.0


class RepeatedWarning:
    """One kind of per-message warning (of one link); any thread."""

    __slots__ = ("_log", "_interval_s", "_next_warning", "_quieted", "_lock")

    def __init__(self, log: logging.Logger, interval_s: float = INTERVAL_S) -> None:
        self._log = log
        self._interval_s = interval_s
        self._next_warning = 0.0
        self._quieted = 0
        self._lock = threading.Lock()

    def warn(self, message: str, *args: Any) -> None:
        now = time.monotonic()
        with self._lock:
            quieted = self._quieted
            loud = now >= self._next_warning
            if loud:
                self._next_warning = now + self._interval_s
                self._quieted = 0
            else:
                self._quieted += 1
        if not loud:
            self._log.debug(message, *args)
        elif quieted:
            self._log.warning(
                message + " (and %d more like it since the last such warning, logged at DEBUG)",
                *args,
                quieted,
            )
        else:
            self._log.warning(message, *args)
