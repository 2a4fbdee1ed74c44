"""What the curve servers serve and the curve driver checks, defined once (``peers/ts_curve_server.mjs``
builds the same in JavaScript).

- ``blob(size)``: ``size`` characters of ``LINE`` repeated: prose with quotes and a newline, so every
  encoder escapes as it would for a real document.
- ``words(count)``: the contract's word list grown to ``count`` words: word *i* is the digits of *i*,
  zero-padded to the width of ``count - 1``, each digit *d* mapped to ``"abcdefghij"[d]``. Sorted,
  so the matches of a prefix are one slice (every server answers with the same binary search).
"""

from __future__ import annotations

__all__ = ["LINE", "blob", "expected_completion", "words"]

import bisect

LINE = 'She said "yes" and left; the rest is text: 0123456789 abcdefgh.\n'
_DIGITS = str.maketrans("0123456789", "abcdefghij")


def blob(size: int) -> str:
    return (LINE * (size // len(LINE) + 1))[:size]


def words(count: int) -> list[str]:
    width = len(str(max(count - 1, 0)))
    return [f"{i:0{width}d}".translate(_DIGITS) for i in range(count)]


def expected_completion(vocabulary: list[str], prefix: str) -> tuple[list[str], int]:
    """The first ≤100 words starting with ``prefix`` and how many do."""
    start = bisect.bisect_left(vocabulary, prefix)
    end = bisect.bisect_left(vocabulary, prefix + "\uffff", lo=start)
    return vocabulary[start : start + min(100, end - start)], end - start
