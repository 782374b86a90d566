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


# Control characters (C0, DEL, C1) and the Unicode format characters that reorder or hide text
# (bidi overrides, zero-width marks). Text the peer chose - its product and version, the
# description of an error condition - reaches log lines and exception messages; unescaped, a
# line feed there forges a log record and an escape sequence rewrites the operator's terminal.
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def peer_text(value: object) -> str:
    """``value`` (text a peer sent) as ``str`` with its control characters escaped (``\\n``
    as the two characters ``\\`` and ``n``, others as ``\\xNN`` or ``\\uNNNN``)."""
    text = str(value)
    if _UNPRINTABLE.search(text) is None:
        return text
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
