"""Reading ``WWW-Authenticate``: the challenges of a 401 or 403 (RFC 9110 §11.6.1, RFC 6750 §3).

A header holds one or more challenges, ``scheme token68`` or ``scheme k=v, k="v"``, separated by
commas (which also separate parameters), and a response may carry several headers. The
parameters MCP reads: ``resource_metadata`` (RFC 9728 §5.1), ``scope``, ``error`` and
``error_description``; with DPoP (RFC 9449 §7.1) the scheme is ``DPoP`` and ``algs`` lists the
proof algorithms. Pure: no I/O.
"""

from __future__ import annotations

__all__ = ["Challenge", "challenges_of", "parse_challenges"]

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import httpx2

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9._~+/-]+=*")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True, slots=True)
class Challenge:
    """One challenge: its scheme (as sent) and its parameters (names in lower case)."""

    scheme: str
    params: dict[str, str] = field(default_factory=dict)
    token68: str | None = None

    @property
    def scopes(self) -> list[str] | None:
        """The ``scope`` parameter split on spaces; None when it is absent or empty."""
        words = self.params.get("scope", "").split()
        return words or None

    @property
    def error(self) -> str | None:
        return self.params.get("error")

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata")

    def is_scheme(self, *names: str) -> bool:
        return self.scheme.lower() in {name.lower() for name in names}


def challenges_of(response: httpx2.Response) -> list[Challenge]:
    """Every challenge of every ``WWW-Authenticate`` header of ``response``."""
    return parse_challenges(response.headers.get_list("www-authenticate"))


def parse_challenges(values: Iterable[str]) -> list[Challenge]:
    """The challenges in these header values; a malformed tail is dropped, not fatal."""
    found: list[Challenge] = []
    for value in values:
        found.extend(_parse_one(value))
    return found


def _parse_one(text: str) -> list[Challenge]:
    challenges: list[Challenge] = []
    at = 0
    while True:
        at = _skip(text, at, commas=True)
        scheme = _TOKEN.match(text, at)
        if scheme is None:
            return challenges
        at = _skip(text, scheme.end())
        params: dict[str, str] = {}
        token68 = None
        if not _starts_param(text, at):
            blob = _TOKEN68.match(text, at)
            end = _skip(text, blob.end()) if blob is not None else at
            if blob is not None and (end == len(text) or text[end] == ","):
                token68, at = blob.group(), end
        while _starts_param(text, at):
            name = _TOKEN.match(text, at)
            assert name is not None
            at = _skip(text, name.end())
            at = _skip(text, at + 1)  # past "="
            quoted = _QUOTED.match(text, at)
            if quoted is not None:
                value, at = re.sub(r"\\(.)", r"\1", quoted.group(1)), quoted.end()
            else:
                bare = _TOKEN.match(text, at)
                value, at = (bare.group(), bare.end()) if bare is not None else ("", at)
            params.setdefault(name.group().lower(), value)
            at = _skip(text, at)
            if at < len(text) and text[at] == ",":
                following = _skip(text, at + 1, commas=True)
                if _starts_param(text, following):
                    at = following
        challenges.append(Challenge(scheme.group(), params, token68))


def _skip(text: str, at: int, *, commas: bool = False) -> int:
    while at < len(text) and (text[at] in " \t" or (commas and text[at] == ",")):
        at += 1
    return at


def _starts_param(text: str, at: int) -> bool:
    name = _TOKEN.match(text, at)
    if name is None:
        return False
    after = _skip(text, name.end())
    if after >= len(text) or text[after] != "=":
        return False
    # ``name=`` then nothing, a comma or more ``=``: the padded end of a token68, not a parameter.
    value = _skip(text, after + 1)
    return value < len(text) and text[value] not in ",="
