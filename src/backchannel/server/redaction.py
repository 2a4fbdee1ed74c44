"""Keep secrets and personal data out of log messages sent to the client.

The logging page of the spec says log messages MUST NOT contain credentials,
secrets or personal data. Handlers should not put them there; this is the net
below them: values under sensitive keys, and strings that look like bearer
tokens, JWTs, e-mail addresses or phone numbers, are replaced before sending.
Rules are data: pass your own ``keys`` and ``patterns``.
"""

from __future__ import annotations

__all__ = ["DEFAULT_KEYS", "DEFAULT_PATTERNS", "Redactor"]

import re
from collections.abc import Iterable
from typing import Any

#: Key names (case-insensitive, matched anywhere in the key) whose values are never sent.
DEFAULT_KEYS: tuple[str, ...] = (
    "password",
    "passwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "api-key",
    "authorization",
    "cookie",
    "credential",
    "private_key",
    "session_id",
)

#: (label, pattern): text matching a pattern is replaced by ``[REDACTED:label]``.
DEFAULT_PATTERNS: tuple[tuple[str, str], ...] = (
    ("bearer", r"(?i)\bbearer\s+[A-Za-z0-9\-._~+/]+=*"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"),
    ("email", r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b"),
    # Not an ISO date (2025-11-25), which has the shape of a number with dashes.
    # International numbers (+ then 8-15 digits, separators allowed), or three or more digit
    # groups with separators; ISO dates and dotted IPv4 addresses are not phone numbers.
    (
        "phone",
        r"(?<![\w.])(?!\d{4}-\d\d-\d\d(?!\d))(?!\d{1,3}(?:\.\d{1,3}){3}(?![\d.]))"
        r"(?:\+\d(?:[ ().-]{0,2}\d){7,14}|\(?\d{2,4}\)?(?:[ .-]\d{2,4}){2,4})(?![\w.])",
    ),
)

_MAX_DEPTH = 32
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


class Redactor:
    """``redact(data)`` returns a copy of ``data`` that is safe to send."""

    def __init__(
        self, keys: Iterable[str] = DEFAULT_KEYS, patterns: Iterable[tuple[str, str]] = DEFAULT_PATTERNS
    ) -> None:
        self.keys = tuple(key.lower() for key in keys)
        self._key_patterns = tuple(
            re.compile(rf"(?<![a-z0-9]){re.escape(key).replace('_', '[_-]?')}(?![a-z0-9])") for key in self.keys
        )
        self.patterns = tuple((label, re.compile(pattern)) for label, pattern in patterns)

    def sensitive_key(self, key: str) -> bool:
        # Markers match whole words of the key ("access_token", "accessToken", "X-Api-Key"),
        # so "tokens_used" or "passwordless_enabled" is not mistaken for a secret.
        words = _CAMEL.sub("_", key).lower()
        return any(pattern.search(words) for pattern in self._key_patterns)

    def redact(self, data: Any, _depth: int = 0) -> Any:
        if _depth > _MAX_DEPTH:
            return "[REDACTED:too deep]"
        if isinstance(data, str):
            return self._text(data)
        if isinstance(data, dict):
            return {
                key: "[REDACTED]"
                if isinstance(key, str) and self.sensitive_key(key)
                else self.redact(value, _depth + 1)
                for key, value in data.items()
            }
        if isinstance(data, list | tuple):
            return [self.redact(item, _depth + 1) for item in data]
        return data

    def _text(self, text: str) -> str:
        for label, pattern in self.patterns:
            text = pattern.sub(f"[REDACTED:{label}]", text)
        return text
