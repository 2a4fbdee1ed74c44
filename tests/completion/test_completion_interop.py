"""Our ``Client.complete`` against server-everything (the TypeScript SDK's reference server) over stdio.

Its ``completable-prompt`` completes ``department`` from a static list and ``name`` from the
department chosen (``context.arguments``); its dynamic text template completes ``resourceId``.
"""

from __future__ import annotations

import asyncio

import pytest
from _completion_harness import prompt_ref, run, template_ref

from backchannel import Client
from backchannel.types.errors import RequestError
from peers.paths import EVERYTHING_STDIO_CMD, TESTS_DIR, have_npm_peers

pytestmark = pytest.mark.interop

if not have_npm_peers():
    pytest.skip("npm peers not installed (run tests/peers/install.sh)", allow_module_level=True)


def test_client_complete_against_server_everything() -> None:
    """CP-01 (capability seen), CP-02 (context-aware completion), CP-03 (shape), CP-05 (unknown prompt)."""

    async def body() -> None:
        command, *args = EVERYTHING_STDIO_CMD
        async with Client.stdio(command, args, cwd=TESTS_DIR, era="auto", request_timeout=20) as client:
            assert client.era == "handshake"
            assert "completions" in client.server_capabilities
            prompts = {p.name: p for p in await client.list_prompts()}
            completable = prompts["completable-prompt"]
            assert [a.name for a in completable.arguments or []] == ["department", "name"]
            ref = prompt_ref("completable-prompt")

            got = await client.complete(ref, ("department", "E"))
            assert got.values == ["Engineering"]
            assert got.total in (None, 1) and not got.has_more
            got = await client.complete(ref, ("department", ""))
            assert got.values == ["Engineering", "Sales", "Marketing", "Support"]

            got = await client.complete(ref, ("name", ""), context={"department": "Engineering"})
            assert got.values == ["Alice", "Bob", "Charlie"]
            got = await client.complete(ref, ("name", "D"), context={"department": "Sales"})
            assert got.values == ["David"]
            assert (await client.complete(ref, ("name", ""))).values == []

            templates = [t.uri_template for t in await client.list_resource_templates()]
            text_template = next(t for t in templates if t.endswith("/text/{resourceId}"))
            assert (await client.complete(template_ref(text_template), ("resourceId", "3"))).values == ["3"]
            assert (await client.complete(template_ref(text_template), ("resourceId", "x"))).values == []

            with pytest.raises(RequestError) as caught:
                await client.complete(prompt_ref("no-such-prompt"), ("department", ""))
            assert caught.value.code == -32602
        await asyncio.sleep(0)

    run(body, timeout=60)
