"""``tmp_path`` resolved: roots are compared after symlink resolution, so the tests'
expectations use the real path of the temporary directory. ``tests/`` is made importable
for ``from peers.paths import ...``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_TESTS_DIR = str(Path(__file__).resolve().parents[1])
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)


@pytest.fixture
def tmp_path(tmp_path: Path) -> Path:
    return tmp_path.resolve()
