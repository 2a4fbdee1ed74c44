"""Roots as ``file://`` URIs: the pure half of the rules, with no filesystem access.

``path_from_file_uri`` reads the path a URI names and ``file_uri`` writes one. The half
that reads the filesystem (the working directory, symlinks), ``normalise_path`` and
``local_path``, lives above the core, in ``runtime/local_paths.py``.
"""

from __future__ import annotations

__all__ = ["file_uri", "path_from_file_uri"]

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def path_from_file_uri(uri: str) -> Path | None:
    """The local path a ``file://`` URI names, or None when it names none (another
    scheme, or a remote host). A relative ``file:`` path stays relative."""
    # (pathlib and urllib.parse, 0.6 MiB with ipaddress, are loaded by a first root, not at start)
    from pathlib import Path
    from urllib.parse import unquote_to_bytes, urlsplit

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


def file_uri(path: Path) -> str:
    """The ``file://`` URI of an absolute path."""
    return path.as_uri()
