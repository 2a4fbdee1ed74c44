"""Fixtures shared by the stdio wire tests: the fixture server as a child process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from test_bad_input import MAX_LINE, WireServer


@pytest.fixture
def fresh() -> Iterator[WireServer]:
    """A server that has not been initialized; it must exit cleanly and log no stray task errors."""
    server = WireServer({"BC_MAX_LINE_BYTES": str(MAX_LINE)})
    try:
        yield server
        stderr = server.close()
        assert "never retrieved" not in stderr, stderr
    finally:
        server.kill()


@pytest.fixture
def wire(fresh: WireServer) -> WireServer:
    """A server after the handshake-era handshake."""
    fresh.initialize()
    return fresh


@pytest.fixture
def unlimited() -> Iterator[WireServer]:
    """An initialized server with the transport's own line limit (4 MiB), not the tests' 1 KiB."""
    server = WireServer()
    try:
        server.initialize()
        yield server
        stderr = server.close()
        assert "never retrieved" not in stderr, stderr
    finally:
        server.kill()
