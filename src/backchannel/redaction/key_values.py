"""The second pass of redaction: the value after a sensitive key, in any text.

``key=value``, ``key: value``, ``"key": "value"``, ``key is value``: when ``Redactor`` says the key
is sensitive, the value becomes ``[REDACTED]``, whatever its shape (a token, a quoted string, a
bracketed JSON value, a Cookie header's rest of line). ``Redactor.text`` runs it after the shapes.
"""

from __future__ import annotations

__all__ = ["REDACTED", "redact_key_values"]

import re
from collections.abc import Callable

from .secret_patterns import NOT_SECRET_VALUES, REDACTED

# ``key`` then a separator then a value, in prose, headers, query strings, JSON and reprs: the second
# pass. The key may be quoted (also as \" inside a JSON string); the value is a scheme and its token,
# a quoted string, a flat JSON array or object, an opening bracket (its balanced end is found in
# Python), or a run up to a delimiter. Only a sensitive key redacts: the verdict is taken per match.
_KEY_VALUE = re.compile(
    r"(?<![\w.\-])(?P<kq>\\?[\"']?)(?P<key>[A-Za-z_][\w.\-]{0,80}+)(?P=kq)"
    r"(?P<sep>\s*(?:=>|[:=])\s*|\s+(?:is|was)\s+(?:set\s+to\s+)?)"
    r"(?P<value>(?i:bearer|basic|digest|token|negotiate)\s+[^\s,;\"'<>]+"
    r"|\\\"[^\"]{0,4096}?\\\""
    r"|\"(?:[^\"\\\n]|\\.){0,4096}\""
    r"|'[^'\n]{0,4096}'"
    r"|\[[^\[\]]{0,4096}\]|\{[^{}]{0,4096}\}"
    r"|(?=[\[{])"
    r"|[^\s&,;\"'<>{}\[\]]+)"
).match
# The pass is driven by its separators (a C scan), and finds each key by matching backwards
# from one: the key regex is not tried at every position of every string.
_SEPARATORS = {
    (True, False): re.compile(r"[:=]").search,
    (False, True): re.compile(r" (?:is|was) ").search,
    (True, True): re.compile(r"[:=]| (?:is|was) ").search,
}
_KEY_BEFORE = re.compile(r"\s*(?P<q>[\"']?\\?)[\w.\-]{1,81}+(?P=q)").match
_LINE_END = re.compile(r"[\r\n\"\\]")


def redact_key_values(text: str, sensitive_key: Callable[[str], bool]) -> str:
    """``text`` with the value of every ``key=value`` (``key: value``, ``key is value``...) whose key
    ``sensitive_key`` calls secret replaced by ``[REDACTED]``: the second pass of ``Redactor.text``."""
    punctuation = ":" in text or "=" in text
    prose = " is " in text or " was " in text
    if not (punctuation or prose):
        return text
    find = _SEPARATORS[punctuation, prose]
    parts: list[str] = []
    done = 0
    hit = find(text)
    while hit is not None:
        at = hit.start()
        before = _KEY_BEFORE(text[max(done, at - 96) : at][::-1])
        match = _KEY_VALUE(text, at - before.end()) if before is not None else None
        replaced = _key_value(text, match, sensitive_key) if match is not None else None
        if match is None or replaced is None:
            hit = find(text, hit.end())
            continue
        value, end = replaced
        parts.append(text[done : match.start()])
        parts.append(value)
        done = end
        hit = find(text, end) if end < len(text) else None
    if not parts:
        return text
    parts.append(text[done:])
    return "".join(parts)


def _key_value(text: str, match: re.Match[str], sensitive_key: Callable[[str], bool]) -> tuple[str, int] | None:
    """The replacement for a ``key=value`` match and where it ends, or None to leave it."""
    key = match.group("key")
    if not sensitive_key(key):
        return None
    value = match.group("value")
    end = match.end()
    if not value:  # an opening bracket: the value is everything up to its balanced end
        end = _balanced_end(text, end)
        value = text[match.end() : end]
    elif value.lower() in NOT_SECRET_VALUES or _single_label(value):
        return None
    elif not match.group("kq") and "cookie" in key.lower() and ":" in match.group("sep"):
        # A Cookie header's value is the rest of its line: every cookie in it.
        line_end = _LINE_END.search(text, match.start("value"))
        end = line_end.start() if line_end is not None else len(text)
        value = text[match.start("value") : end]
    elif value[-1] == ")" and "(" not in value:  # "User(password=x)": the parenthesis is the repr's
        trimmed = value.rstrip(")")
        end -= len(value) - len(trimmed)
        value = trimmed
    head = text[match.start() : match.start("value")]
    quote = ""
    for mark in ('\\"', '"', "'"):
        if len(value) >= 2 * len(mark) and value.startswith(mark) and value.endswith(mark):
            quote = mark
            break
    inner = value[len(quote) : len(value) - len(quote)]
    if quote and (inner.lower() in NOT_SECRET_VALUES - {""} or _single_label(inner)):
        return None
    return f"{head}{quote}{REDACTED}{quote}", end


def _single_label(text: str) -> bool:
    """Whether ``text`` is exactly one placeholder, ``[REDACTED]`` or ``[REDACTED:label]``."""
    return text.startswith("[REDACTED") and text.endswith("]") and text.count("[") == 1


def _balanced_end(text: str, start: int) -> int:
    """Where the bracketed value opening at ``start`` ends (the end of the text if it never does)."""
    depth = 0
    quoted = False
    index = start
    length = len(text)
    while index < length:
        char = text[index]
        if quoted:
            if char == "\\":
                index += 1
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return length
