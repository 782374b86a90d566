"""A logging handler that keeps every record as text, for the tests that look for a secret in
what the client logs (rule SEC-4)."""

from __future__ import annotations

import logging

__all__ = ["LogCapture"]


class LogCapture(logging.Handler):
    """Every record it gets, as ``"<logger> <message>"`` with the formatted exception, if any,
    appended: what a handler with a format string would write."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = f"{record.name} {record.getMessage()}"
        if record.exc_info:
            text += "\n" + logging.Formatter().formatException(record.exc_info)
        self.lines.append(text)
