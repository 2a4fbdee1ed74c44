"""The client-side authorization tests: ``tests/auth_server`` importable (the real
authorization server, oidc-provider, and our protected server are started as the resource-server
tests start them), and one oidc-provider for the session."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_AUTH_SERVER_DIR = str(Path(__file__).resolve().parents[2] / "auth_server")  # tests/ is pytest's pythonpath
if _AUTH_SERVER_DIR not in sys.path:
    sys.path.insert(0, _AUTH_SERVER_DIR)

from _client_harness import provider_config  # noqa: E402

from peers.paths import NODE_MODULES, have_npm_peers  # noqa: E402


def _need_oidc_provider() -> None:
    if not have_npm_peers() or not (NODE_MODULES / "oidc-provider").is_dir():
        pytest.skip("the npm peers (oidc-provider) are not installed: run tests/peers/install.sh")


@pytest.fixture(scope="session")
def oidc() -> Iterator[object]:
    """oidc-provider, with the static clients of ``provider_config`` (one authenticates with a key)."""
    _need_oidc_provider()
    from _auth_harness import authorization_server

    with authorization_server(provider_config()) as server:
        yield server
