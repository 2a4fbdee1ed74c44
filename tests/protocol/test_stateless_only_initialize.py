"""A server that speaks only the stateless era answers ``initialize`` with an error naming its
versions (2026-07-28 ``basic/versioning.mdx``, "Backward Compatibility": such a server SHOULD name
the protocol versions it supports in any error it returns to an ``initialize`` request, on any
transport). It was -32603 "Internal error" (an IndexError while picking a counter-offer)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from backchannel.types.errors import UNSUPPORTED_PROTOCOL_VERSION

SERVER = textwrap.dedent(
    """
    from backchannel import Server
    from backchannel.types.versions import STATELESS_VERSIONS

    server = Server("modern-only", versions=STATELESS_VERSIONS)

    @server.tool()
    def echo(text: str) -> str:
        return text

    server.run()
    """
)


def test_initialize_to_a_stateless_only_server_is_refused_naming_its_versions() -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    done = subprocess.run(
        [sys.executable, "-c", SERVER],
        input=json.dumps(initialize) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["id"] == 1
    error = answer["error"]
    assert error["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert error["data"] == {"supported": ["2026-07-28"], "requested": "2025-11-25"}
    assert "2026-07-28" in error["message"]
    assert "Traceback" not in done.stderr
