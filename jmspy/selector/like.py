"""LIKE patterns: a pattern with '%', '_' and an optional escape character compiled into a
string test, using plain string operations where the pattern allows and regular expressions
only for the fixed-length pieces that contain '_'."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import cast

__all__: list[str] = []  # internal to the selector package


# A fixed-length piece of a pattern between '%' wildcards: a literal str, or a compiled regex
# when it contains '_'.
_Segment = str | re.Pattern[str]


def _like_matcher(pattern: str, escape: str | None) -> Callable[[str], bool] | None:
    """A function testing a string against a LIKE pattern; None if the pattern is malformed."""
    segments: list[list[str | None]] = [[]]  # None stands for '_'
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == escape:
            if i + 1 >= n:
                return None
            segments[-1].append(pattern[i + 1])
            i += 2
            continue
        if c == "%":
            segments.append([])
        elif c == "_":
            segments[-1].append(None)
        else:
            segments[-1].append(c)
        i += 1

    def build(items: list[str | None]) -> _Segment:
        if None not in items:
            return "".join(cast(list[str], items))
        return re.compile("".join("." if c is None else re.escape(c) for c in items), re.DOTALL)

    if len(segments) == 1:
        only = build(segments[0])
        if isinstance(only, str):
            return only.__eq__
        full = only.fullmatch
        return lambda s: full(s) is not None

    first = build(segments[0])
    last = build(segments[-1])
    middle = [build(seg) for seg in segments[1:-1] if seg]
    len_first = len(segments[0])
    len_last = len(segments[-1])
    if isinstance(first, str) and isinstance(last, str) and all(isinstance(s, str) for s in middle):
        mids = cast(list[str], middle)
        if not mids:
            if not first and not last:
                return lambda s: True
            if not last:
                return lambda s: s.startswith(first)
            if not first:
                return lambda s: s.endswith(last)
            need = len_first + len_last
            return lambda s: len(s) >= need and s.startswith(first) and s.endswith(last)
        if len(mids) == 1 and not first and not last:
            lit = mids[0]
            return lambda s: lit in s

    def at(seg: _Segment, s: str, pos: int) -> bool:
        if isinstance(seg, str):
            return s.startswith(seg, pos)
        return seg.match(s, pos) is not None

    def match(s: str) -> bool:
        end = len(s) - len_last
        if end < len_first:
            return False
        if len_first and not at(first, s, 0):
            return False
        if len_last and not at(last, s, end):
            return False
        pos = len_first
        for seg in middle:
            if isinstance(seg, str):
                idx = s.find(seg, pos, end)
                if idx < 0:
                    return False
                pos = idx + len(seg)
            else:
                m = seg.search(s, pos, end)
                if m is None:
                    return False
                pos = m.end()
        return True

    return match
