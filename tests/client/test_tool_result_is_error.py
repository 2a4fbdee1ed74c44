"""``CallToolResult.is_error`` reads False on a successful result, whatever the server wrote.

The schema (2025-11-25 ``schema.ts``, ``CallToolResult.isError``): "If not set, this is assumed
to be false (the call was successful)." Issue #27: our client read ``None`` when the server left
it out, as our server does. Our client talks over stdio (a process) to our own server and to the
official Python SDK's (mcp 2.3.0); a ``Tap`` keeps what crossed the wire, which stays as each
server wrote it: nothing of ours adds ``isError: false``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from backchannel import Client
from backchannel.testing import run
from backchannel.testing.tap import Tap
from backchannel.transports.stdio import StdioClientTransport
from backchannel.types.tools import CallToolResult
from peers.paths import PYSDK_SERVER, have_pysdk

OURS = Path(__file__).resolve().parents[1] / "peers" / "backchannel_server.py"
SERVERS = {
    "ours": [str(OURS)],
    "official-sdk": [str(PYSDK_SERVER)],
}


def calls(server: str) -> dict[str, Any]:
    """``echo`` and ``fail`` on ``server``: each result as our client read it and as the wire had it."""

    async def body() -> dict[str, Any]:
        tap = Tap(StdioClientTransport(sys.executable, SERVERS[server]))
        seen: dict[str, Any] = {}
        async with Client(tap, era="handshake", request_timeout=20) as client:
            for tool, arguments in (("echo", {"text": "hi"}), ("fail", {"message": "nope"})):
                before = len(tap.written)
                read = await client.call_tool(tool, arguments)
                (sent,) = [m for m in tap.written[before:] if m.get("method") == "tools/call"]
                (answer,) = tap.responses_received(sent["id"])
                seen[tool] = (read, answer["result"])
        return seen

    return run(body, 60)


@pytest.mark.parametrize("server", list(SERVERS))
def test_a_successful_result_is_not_an_error_and_a_failed_one_is(server: str) -> None:
    if server == "official-sdk" and not have_pysdk():
        pytest.skip("the official Python SDK (mcp==2.3.0) is not installed")
    seen = calls(server)
    read, wire = seen["echo"]
    assert read.is_error is False
    assert wire.get("isError", False) is False
    if server == "ours":
        assert "isError" not in wire  # left out, as the schema allows; the client reads False
    failed, wire = seen["fail"]
    assert failed.is_error is True and wire["isError"] is True


def test_the_type_reads_false_when_absent_and_leaves_false_out() -> None:
    """The model: absent and ``false`` both read False; False is not written back (an absent
    ``isError`` means the same), True is."""
    absent = msgspec.convert({"content": []}, CallToolResult)
    said_false = msgspec.convert({"content": [], "isError": False}, CallToolResult)
    said_true = msgspec.convert({"content": [], "isError": True}, CallToolResult)
    assert (absent.is_error, said_false.is_error, said_true.is_error) == (False, False, True)
    assert msgspec.to_builtins(CallToolResult(content=[])) == {"content": []}
    assert msgspec.to_builtins(said_true) == {"content": [], "isError": True}
