"""Interop tests: make ``tests/`` importable so ``from peers.paths import ...`` works, and
share the ``transport`` fixture the peer batteries run over."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_TESTS_DIR = str(Path(__file__).resolve().parents[1])
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)


@pytest.fixture(scope="module", params=["stdio", "http"], ids=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    """The transport a module's peer runs over: one battery of checks covers both.

    Modules that use it list it in ``pytest.mark.usefixtures("transport")`` so it is the outer
    parameter (test ids ``stdio-...`` / ``http-...``, one HTTP peer per module)."""
    name: str = request.param
    return name
