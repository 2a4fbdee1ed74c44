"""Protocol revisions as data.

Every decision that depends on the revision looks it up here; nothing in the
project compares version strings by hand.

2024-11-05, the first revision, is spoken for old clients and servers (over stdio, or the
deprecated HTTP+SSE transport that ``HttpApp(legacy_sse=True)`` serves and the HTTP client
falls back to). It has the methods of 2025-03-26 (``types/methods.py``; the official Python
SDK's tables say the same) and lacks, like 2025-03-26, what 2025-06-18 added: elicitation,
structured tool output, ``resource_link`` content, ``title``.
"""

from __future__ import annotations

__all__ = [
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE",
    "LATEST_LEGACY",
    "LATEST_MODERN",
    "LATEST_STATELESS",
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "STATELESS_VERSIONS",
    "VERSIONS",
    "Era",
    "EraChoice",
    "EraSpelling",
    "at_least",
    "era_from_user",
    "era_of",
    "is_known",
    "negotiate_handshake",
    "negotiate_legacy",
    "newer_first",
]

from typing import Literal

#: The two protocol eras, named as the docs name them: the handshake era (``initialize``, a
#: session) and the stateless era (version and capabilities in every request's ``_meta``).
Era = Literal["handshake", "stateless"]

#: What a client may ask for: one era, or ``"auto"`` (probe with ``server/discover``, then fall back).
EraChoice = Literal["auto", "handshake", "stateless"]

#: What users may write: an ``EraChoice`` or an old spelling (``"legacy"``, ``"modern"``).
EraSpelling = Literal["auto", "handshake", "stateless", "legacy", "modern"]

#: Every revision we speak, oldest first. The position in this tuple is the order.
VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")

#: Revisions that open with the ``initialize`` handshake (the "handshake era").
HANDSHAKE_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

#: Revisions where version, identity and capabilities ride in every request (the "stateless era").
STATELESS_VERSIONS: tuple[str, ...] = ("2026-07-28",)

LATEST_HANDSHAKE: str = HANDSHAKE_VERSIONS[-1]
LATEST_STATELESS: str = STATELESS_VERSIONS[-1]

# The names of the first releases, before code and docs shared one vocabulary: kept importable.
LEGACY_VERSIONS = HANDSHAKE_VERSIONS
MODERN_VERSIONS = STATELESS_VERSIONS
LATEST_LEGACY = LATEST_HANDSHAKE
LATEST_MODERN = LATEST_STATELESS

# Every accepted spelling of an era choice; "legacy" and "modern" are the old ones.
_SPELLINGS: dict[str, EraChoice] = {
    "auto": "auto",
    "handshake": "handshake",
    "stateless": "stateless",
    "legacy": "handshake",
    "modern": "stateless",
}

_ERA: dict[str, Era] = {
    **{v: "handshake" for v in HANDSHAKE_VERSIONS},
    **dict.fromkeys(STATELESS_VERSIONS, "stateless"),
}
_RANK: dict[str, int] = {v: i for i, v in enumerate(VERSIONS)}


def is_known(version: object) -> bool:
    return isinstance(version, str) and version in _RANK


def era_from_user(value: str) -> EraChoice:
    """The era choice a user wrote, in today's vocabulary.

    ``"legacy"`` and ``"modern"`` are the old spellings of ``"handshake"`` and ``"stateless"``
    and still work; anything else raises ``ValueError`` (pass one of ``EraChoice``)."""
    try:
        return _SPELLINGS[value]
    except KeyError:
        raise ValueError(f"era must be 'auto', 'handshake' or 'stateless', not {value!r}") from None


def era_of(version: str) -> Era:
    """The era of a known revision; raises ``KeyError`` for an unknown one."""
    return _ERA[version]


def at_least(version: str, minimum: str) -> bool:
    """True when ``version`` is ``minimum`` or newer (both must be known)."""
    return _RANK[version] >= _RANK[minimum]


def negotiate_handshake(requested: object, supported: tuple[str, ...] = HANDSHAKE_VERSIONS) -> str:
    """The version a server answers ``initialize`` with.

    The requested one when we support it in the handshake era, otherwise our newest
    handshake-era version (the counter-offer). A stateless-era version cannot be negotiated
    through ``initialize``.
    """
    if isinstance(requested, str) and requested in supported:
        return requested
    return supported[-1]


#: The old name of ``negotiate_handshake``, kept importable.
negotiate_legacy = negotiate_handshake


def newer_first(versions: tuple[str, ...]) -> list[str]:
    return sorted(versions, key=_RANK.__getitem__, reverse=True)
