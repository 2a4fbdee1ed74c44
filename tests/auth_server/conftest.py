"""The resource-server tests: one real authorization server
(oidc-provider under Node 22) for the whole session; ``new_state`` (``_states``) for DPoP across workers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _auth_harness import AuthorizationServer, authorization_server

from _states import fleet_redis, new_state  # noqa: F401  (test_dpop's workers' shared states)
from peers.paths import NODE_MODULES, have_npm_peers


@pytest.fixture(scope="session")
def oauth() -> Iterator[AuthorizationServer]:
    if not have_npm_peers() or not (NODE_MODULES / "oidc-provider").is_dir():
        pytest.skip("the npm peers (oidc-provider) are not installed: run tests/peers/install.sh")
    with authorization_server() as server:
        yield server
