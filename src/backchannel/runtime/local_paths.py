"""Roots as local paths: the filesystem reads the roots rules need (the working directory,
symlinks), kept out of the sans-IO core (``protocol/roots.py`` has the pure half).

Both sides use these rules. The client normalises what it exposes (``file://``
only, absolute, no ``..``, symlinks resolved unless told otherwise); the server
turns the URIs it is given back into paths it can compare a tool's path against.
"""

from __future__ import annotations

__all__ = ["local_path", "normalise_path"]

import os
from typing import TYPE_CHECKING

from ..protocol.roots import path_from_file_uri

if TYPE_CHECKING:
    from pathlib import Path


def normalise_path(path: str | os.PathLike[str], *, resolve_symlinks: bool = True, base: Path | None = None) -> Path:
    """``path`` made absolute (against ``base``, default the working directory) with
    ``..`` and ``.`` removed; symlinks are followed when ``resolve_symlinks``."""
    from pathlib import Path  # (0.6 MiB with urllib.parse: loaded by a first root, not at start)

    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = (base if base is not None else Path.cwd()) / candidate
    if resolve_symlinks:
        return Path(os.path.realpath(candidate))
    text = os.path.normpath(candidate)
    if os.name != "nt" and text.startswith("//"):
        text = text[1:]  # normpath keeps a leading "//" (POSIX leaves its meaning open); here it is "/"
    return Path(text)


def local_path(value: str | os.PathLike[str], *, resolve_symlinks: bool = True) -> Path | None:
    """A path or ``file://`` URI as a normalised local path; None for a URI that names
    no local file."""
    if isinstance(value, str) and ("://" in value or value[:5].lower() == "file:"):
        found = path_from_file_uri(value)
        return normalise_path(found, resolve_symlinks=resolve_symlinks) if found is not None else None
    return normalise_path(value, resolve_symlinks=resolve_symlinks)
