"""The resource-server tests: ``tests/`` importable, and one real authorization server
(oidc-provider under Node 22) for the whole session; ``new_state`` (``_states``) for DPoP across workers."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_TESTS_DIR = str(Path(__file__).resolve().parents[1])
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)

from _auth_harness import AuthorizationServer, authorization_server  # noqa: E402

from _states import fleet_redis, new_state  # noqa: E402, F401  (test_dpop's workers' shared states)
from peers.paths import NODE_MODULES, have_npm_peers  # noqa: E402


@pytest.fixture(scope="session")
def oauth() -> Iterator[AuthorizationServer]:
    if not have_npm_peers() or not (NODE_MODULES / "oidc-provider").is_dir():
        pytest.skip("the npm peers (oidc-provider) are not installed: run tests/peers/install.sh")
    with authorization_server() as server:
        yield server
