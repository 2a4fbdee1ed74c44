"""Interop tests: the ``transport`` fixture the peer batteries run over."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module", params=["stdio", "http"], ids=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    """The transport a module's peer runs over: one battery of checks covers both.

    Modules that use it list it in ``pytest.mark.usefixtures("transport")`` so it is the outer
    parameter (test ids ``stdio-...`` / ``http-...``, one HTTP peer per module)."""
    name: str = request.param
    return name
