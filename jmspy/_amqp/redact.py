"""Keeps credentials out of the frame trace (``amqp.traceFrames`` on the ``jmspy.frames`` log).

Proton's frame trace prints every frame's fields, SASL included: the PLAIN ``initial-response``
is ``\\0user\\0password`` in clear. SASL payloads are replaced by their length before the line
reaches any log handler; the mechanism and hostname stay, as they help diagnose a refused login.
"""

from __future__ import annotations

import re

# Binary fields of sasl-init (initial-response), sasl-challenge (challenge) and sasl-response
# (response) as proton prints them: b"..." with backslash escapes.
_SASL_PAYLOAD = re.compile(
    r'\b(initial-response|challenge|response)=b"((?:[^"\\]|\\.)*)(?:"|$)', re.DOTALL
)
_SASL_FRAMES = ("@sasl-init", "@sasl-challenge", "@sasl-response")


def _replacement(match: re.Match[str]) -> str:
    return f"{match.group(1)}=<redacted>"


def redact_frame(message: str) -> str:
    """The trace line without SASL payloads; other frames are returned unchanged."""
    if not any(frame in message for frame in _SASL_FRAMES):
        return message
    redacted = _SASL_PAYLOAD.sub(_replacement, message)
    if "=b" in redacted:
        # A payload printed in a form the pattern does not know: drop the fields altogether
        # rather than risk printing a secret.
        head = redacted.split("[", 1)[0]
        return f"{head}[<fields redacted>]"
    return redacted
