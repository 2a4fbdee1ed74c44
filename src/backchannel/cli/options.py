"""What several subcommands share of their options: the server a line names (``server_named``),
``--header`` (declared, each value checked, the pairs read as one mapping, and the login they
leave), and the checks of a whole number and of a number of seconds.

A check returns the value to use, or raises ``ArgumentTypeError`` saying what is wrong.
"""

from __future__ import annotations

__all__ = ["Refused", "header_map", "header_option", "seconds", "server_named", "terminal_login", "whole_number"]

import argparse
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


class Refused(Exception):
    """A line that cannot be run: its one line (exit status 2)."""


def server_named(words: Sequence[str], what: str) -> tuple[str | None, list[str]]:
    """The ``what`` a line names after its options (``--`` before it or not): ``(URL, [])`` for an
    http(s):// URL, which no word may follow, or ``(None, COMMAND ARGS...)``; ``Refused`` if none."""
    words = list(words)
    if words[:1] == ["--"]:
        words = words[1:]
    if not words:
        raise Refused(f"give the {what}: -- COMMAND [ARGS...] (spawned, stdio) or an http(s):// URL")
    if re.match(r"https?://", words[0], re.IGNORECASE) is None:
        return None, words
    if len(words) > 1:
        raise Refused(f"unexpected words after the URL: {' '.join(words[1:])} (options go before it)")
    return words[0], []


def header_option(sub: argparse.ArgumentParser) -> None:
    """``--header NAME:VALUE`` for an http(s):// server (``connect``, ``call``, ``proxy``, ``check``)."""
    sub.add_argument(
        "--header",
        action="append",
        default=None,
        type=_header,
        metavar="NAME:VALUE",
        help="an HTTP header sent with every request to an http(s):// server (repeatable); "
        "an Authorization header is sent as given, instead of the kept login",
    )


def header_map(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``--header`` pairs as one mapping; a name given twice has its values joined (RFC 9110 §5.3)."""
    headers: dict[str, str] = {}
    for name, value in pairs:
        same = next((known for known in headers if known.lower() == name.lower()), name)
        headers[same] = f"{headers[same]}, {value}" if same in headers else value
    return headers


def terminal_login(headers: Mapping[str, str], *, browser: bool) -> Any:
    """The login ``connect`` keeps for an http(s):// server (its browser login, or the link
    printed with ``--no-browser``), saying what it does on stderr: stdout is the command's own.
    None when ``headers`` hold an ``Authorization`` header, which is then the credential."""
    if any(name.lower() == "authorization" for name in headers):
        return None
    from rich.console import Console

    from ..ui.login import terminal_oauth

    return terminal_oauth(Console(stderr=True), browser=browser)


def whole_number(text: str, low: int, high: int, what: str) -> int:
    """``text`` as a whole number from ``low`` to ``high``; the error names it as ``what``."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what} ({low} to {high})") from None
    if not low <= number <= high:
        raise argparse.ArgumentTypeError(f"{number} is not {what} ({low} to {high})")
    return number


def seconds(text: str) -> float:
    """``text`` as a number of seconds, 0 or more (0: no limit)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds (0 or more; 0: no limit)")
    return value


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # RFC 9110 §5.6.2: what a field name is made of
#: Headers the HTTP transport writes itself: given here, they would contradict it.
_TRANSPORT_HEADERS = ("accept", "connection", "content-length", "content-type", "host", "last-event-id")


def _header(text: str) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not sep or not _TOKEN.fullmatch(name):
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME:VALUE (like 'X-Api-Key: abc123')")
    if any(char in value for char in "\r\n\0"):
        raise argparse.ArgumentTypeError(f"the value of {name} holds a line break")
    lowered = name.lower()
    if lowered in _TRANSPORT_HEADERS or lowered.startswith("mcp-"):
        raise argparse.ArgumentTypeError(f"{name} is written by the MCP transport itself; it cannot be given")
    return name, value
