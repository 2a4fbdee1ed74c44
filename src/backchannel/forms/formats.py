"""The four string formats a form may ask for, as checks and parsers.

Pure stdlib. Each check answers "would a careful form accept this text?":

* ``email``: one ``@``, no spaces, a dotted domain with no empty labels. Not the
  full RFC 5322 grammar (quoted local parts, comments, IP literals are refused);
  what people type in a form field.
* ``uri``: an RFC 3986 scheme (``https:``, ``mailto:``, ``urn:``) followed by
  something, with no whitespace. Relative references are refused.
* ``date``: exactly ``YYYY-MM-DD`` and a real day (``date.fromisoformat`` alone
  would also take ``20250131`` and week dates).
* ``date-time``: RFC 3339: date, ``T``, time with seconds, optional fraction,
  and a timezone (``Z`` or ``+HH:MM``); a naive time is refused because the
  server cannot know what zone the user meant. A leap second (``:60``) is
  accepted and parsed as ``:59``.
"""

from __future__ import annotations

__all__ = ["FORMATS", "format_problem", "parse_date", "parse_datetime"]

import datetime
import re

FORMATS = ("email", "uri", "date", "date-time")

_EMAIL = re.compile(r"[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATETIME = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[Tt](?P<hms>\d{2}:\d{2}):(?P<second>\d{2})(?P<fraction>\.\d+)?"
    r"(?P<zone>[Zz]|[+-]\d{2}:\d{2})"
)

_PROBLEMS = {
    "email": "not a valid e-mail address",
    "uri": "not a valid URI (it needs a scheme, such as https:)",
    "date": "not a valid date (expected YYYY-MM-DD)",
    "date-time": "not a valid date-time (expected RFC 3339 with a timezone, such as 2025-01-31T09:30:00Z)",
}


def parse_date(text: str) -> datetime.date:
    """``YYYY-MM-DD`` → ``date``; ``ValueError`` for anything else."""
    if not _DATE.fullmatch(text):
        raise ValueError(_PROBLEMS["date"])
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise ValueError(_PROBLEMS["date"]) from None


def parse_datetime(text: str) -> datetime.datetime:
    """An RFC 3339 date-time → an aware ``datetime``; ``ValueError`` for anything else."""
    match = _DATETIME.fullmatch(text)
    if match is None:
        raise ValueError(_PROBLEMS["date-time"])
    if int(match["second"]) > 60:
        raise ValueError(_PROBLEMS["date-time"])
    second = min(int(match["second"]), 59)  # a leap second has no Python value
    fraction = (match["fraction"] or "")[1:7].ljust(6, "0")
    zone = match["zone"].upper()
    normal = f"{match['date']}T{match['hms']}:{second:02d}.{fraction}{'+00:00' if zone == 'Z' else zone}"
    try:
        return datetime.datetime.fromisoformat(normal)
    except ValueError:
        raise ValueError(_PROBLEMS["date-time"]) from None


def format_problem(name: str, text: str) -> str | None:
    """None if ``text`` is a valid ``name`` (one of ``FORMATS``), else what is wrong with it."""
    if name == "email":
        ok = _EMAIL.fullmatch(text) is not None
    elif name == "uri":
        ok = _URI.fullmatch(text) is not None
    else:
        try:
            (parse_date if name == "date" else parse_datetime)(text)
        except ValueError:
            ok = False
        else:
            ok = True
    return None if ok else _PROBLEMS[name]
