"""Where the project's reference material (``shared/``) is: beside the checkout, as CI lays it,
or at the workplace's own path."""

from __future__ import annotations

from pathlib import Path

_BESIDE = Path(__file__).resolve().parents[2].parent / "shared"
SHARED = _BESIDE if _BESIDE.is_dir() else Path("/work/shared")
