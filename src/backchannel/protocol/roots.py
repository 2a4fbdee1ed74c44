"""Roots as local paths: ``file://`` URIs in, normalised paths out.

Both sides use these rules. The client normalises what it exposes (``file://``
only, absolute, no ``..``, symlinks resolved unless told otherwise); the server
turns the URIs it is given back into paths it can compare a tool's path against.
"""

from __future__ import annotations

__all__ = ["file_uri", "local_path", "normalise_path", "path_from_file_uri"]

import os
from pathlib import Path
from urllib.parse import unquote_to_bytes, urlsplit


def path_from_file_uri(uri: str) -> Path | None:
    """The local path a ``file://`` URI names, or None when it names none (another
    scheme, or a remote host). A relative ``file:`` path stays relative."""
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
        return None
    # The inverse of ``Path.as_uri`` (which percent-encodes ``os.fsencode``'s bytes), so a
    # name that is not UTF-8 comes back as the same path. A NUL names no file.
    text = os.fsdecode(unquote_to_bytes(parts.path))
    if "\x00" in text:
        return None
    if os.name == "nt" and len(text) > 2 and text[0] == "/" and text[2] == ":":  # pragma: no cover - windows
        text = text[1:]
    return Path(text) if text else None


def normalise_path(path: str | os.PathLike[str], *, resolve_symlinks: bool = True, base: Path | None = None) -> Path:
    """``path`` made absolute (against ``base``, default the working directory) with
    ``..`` and ``.`` removed; symlinks are followed when ``resolve_symlinks``."""
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


def file_uri(path: Path) -> str:
    """The ``file://`` URI of an absolute path."""
    return path.as_uri()
