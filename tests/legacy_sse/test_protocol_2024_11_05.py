"""Protocol 2024-11-05 joins the handshake era's revisions, with the methods it has.

There is no 2024-11-05 schema under the shared spec, so the method table is checked against
what the official Python SDK knows of that revision (``mcp_types.methods``, mcp 2.3.0: its
per-``(method, version)`` maps of what each side may send). 2024-11-05 has the methods of
2025-03-26: no ``elicitation/create`` (2025-06-18), no tasks (2025-11-25). That the server never
sends a request its session's revision lacks is checked on the wire in ``test_server_wire.py``.
"""

from __future__ import annotations

import pytest

from backchannel.types import methods as M
from backchannel.types.versions import HANDSHAKE_VERSIONS, VERSIONS, at_least, era_of, negotiate_handshake
from peers.paths import have_pysdk

OLD = ("2024-11-05", "2025-03-26")


def test_2024_11_05_is_the_oldest_handshake_era_revision() -> None:
    assert VERSIONS[0] == HANDSHAKE_VERSIONS[0] == "2024-11-05"
    assert era_of("2024-11-05") == "handshake"
    assert at_least("2025-03-26", "2024-11-05") and not at_least("2024-11-05", "2025-03-26")
    assert negotiate_handshake("2024-11-05") == "2024-11-05"  # echoed, not counter-offered


@pytest.mark.skipif(not have_pysdk(), reason="the official Python SDK (mcp==2.3.0) is not installed")
@pytest.mark.parametrize("version", OLD)
@pytest.mark.parametrize(
    ("table", "sender", "kind"),
    [
        ("CLIENT_REQUESTS", "client", "request"),
        ("SERVER_REQUESTS", "server", "request"),
        ("CLIENT_NOTIFICATIONS", "client", "notification"),
        ("SERVER_NOTIFICATIONS", "server", "notification"),
    ],
)
def test_the_method_table_agrees_with_the_official_sdk(version: str, table: str, sender: str, kind: M.Kind) -> None:
    from mcp_types import methods as sdk

    theirs = {method for method, v in getattr(sdk, table) if v == version}
    ours = {spec.method for spec in M.methods_for(version, sender, kind)}
    assert ours == theirs


def test_what_2024_11_05_lacks() -> None:
    for method in ("elicitation/create", "notifications/elicitation/complete", "tasks/get", "server/discover"):
        assert not M.exists(method, "2024-11-05", "server") and not M.exists(method, "2024-11-05", "client")
    assert M.exists("sampling/createMessage", "2024-11-05", "server")
    assert M.exists("roots/list", "2024-11-05", "server")
    assert M.exists("completion/complete", "2024-11-05", "client")
