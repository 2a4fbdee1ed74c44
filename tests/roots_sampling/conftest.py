"""``tmp_path`` resolved: roots are compared after symlink resolution, so the tests'
expectations use the real path of the temporary directory."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def tmp_path(tmp_path: Path) -> Path:
    return tmp_path.resolve()
