"""Marked roots against a server that knows nothing of the convention: the official Python
SDK (``mcp`` 2.3.0) over stdio, both eras. Its tool lists the roots as it parsed them: every
root arrives, with its ``uri`` and ``name``, and the ``_meta`` key passes through unharmed
(the schema gives ``Root`` a free ``_meta``; a server that does not know a key ignores it).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from _rs_harness import text_of

from backchannel.client import Client
from backchannel.types.roots import ROOT_MARKS_KEY, Root
from peers.paths import have_pysdk

pytestmark = pytest.mark.interop

if not have_pysdk():
    pytest.skip("the official Python SDK (mcp==2.3.0) is not installed", allow_module_level=True)

PEER = Path(__file__).resolve().parent / "pysdk_roots_peer.py"
TIMEOUT = 60


@pytest.mark.parametrize(("era", "version"), [("handshake", "2025-11-25"), ("stateless", "2026-07-28")])
def test_the_official_sdk_lists_marked_roots_as_any_others(era: str, version: str, tmp_path: Path) -> None:
    locked, secret, plain = tmp_path / "locked", tmp_path / "secret", tmp_path / "plain"
    for path in (locked, secret, plain):
        path.mkdir()
    roots = [
        Root.marked(str(locked), "locked", read_only=True),
        Root.marked(str(secret), "secret", read_only=True, sensitive=True),
        plain,
    ]

    async def body() -> None:
        client = Client.stdio(sys.executable, [str(PEER)], era=era, request_timeout=20, roots=roots)
        async with asyncio.timeout(TIMEOUT), client:
            assert (client.era, client.protocol_version) == (era, version)
            result = await client.call_tool("roots")
            assert not result.is_error, text_of(result)
            assert json.loads(text_of(result)) == [
                {"uri": locked.as_uri(), "name": "locked", "_meta": {ROOT_MARKS_KEY: {"readOnly": True}}},
                {
                    "uri": secret.as_uri(),
                    "name": "secret",
                    "_meta": {ROOT_MARKS_KEY: {"readOnly": True, "sensitive": True}},
                },
                {"uri": plain.as_uri(), "name": "plain"},
            ]

    asyncio.run(body())
