"""Protocol revisions as data.

Every decision that depends on the revision looks it up here; nothing in the
project compares version strings by hand.
"""

from __future__ import annotations

__all__ = [
    "LATEST_LEGACY",
    "LATEST_MODERN",
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "VERSIONS",
    "Era",
    "at_least",
    "era_of",
    "is_known",
    "negotiate_legacy",
    "newer_first",
]

from typing import Literal

Era = Literal["legacy", "modern"]

#: Every revision we speak, oldest first. The position in this tuple is the order.
VERSIONS: tuple[str, ...] = ("2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")

#: Revisions that open with the ``initialize`` handshake (the "handshake era").
LEGACY_VERSIONS: tuple[str, ...] = ("2025-03-26", "2025-06-18", "2025-11-25")

#: Revisions where version, identity and capabilities ride in every request (the "stateless era").
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)

LATEST_LEGACY: str = LEGACY_VERSIONS[-1]
LATEST_MODERN: str = MODERN_VERSIONS[-1]

_ERA: dict[str, Era] = {
    **{v: "legacy" for v in LEGACY_VERSIONS},
    **dict.fromkeys(MODERN_VERSIONS, "modern"),
}
_RANK: dict[str, int] = {v: i for i, v in enumerate(VERSIONS)}


def is_known(version: object) -> bool:
    return isinstance(version, str) and version in _RANK


def era_of(version: str) -> Era:
    """The era of a known revision; raises ``KeyError`` for an unknown one."""
    return _ERA[version]


def at_least(version: str, minimum: str) -> bool:
    """True when ``version`` is ``minimum`` or newer (both must be known)."""
    return _RANK[version] >= _RANK[minimum]


def negotiate_legacy(requested: object, supported: tuple[str, ...] = LEGACY_VERSIONS) -> str:
    """The version a server answers ``initialize`` with.

    The requested one when we support it in the handshake era, otherwise our newest
    handshake-era version (the counter-offer). A modern version cannot be negotiated
    through ``initialize``.
    """
    if isinstance(requested, str) and requested in supported:
        return requested
    return supported[-1]


def newer_first(versions: tuple[str, ...]) -> list[str]:
    return sorted(versions, key=_RANK.__getitem__, reverse=True)
