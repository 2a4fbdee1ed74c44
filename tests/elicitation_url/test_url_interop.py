"""Our client against server-everything's ``trigger-url-elicitation`` (stdio, 2025-11-25):
the request path (``elicitation/create`` with ``mode: "url"``) and the error path
(``-32042``, then a retry that goes on through the request path).

server-everything never sends ``notifications/elicitation/complete``, so the error path
needs the client's manual control (``UrlConsent.ready``) or its bounded wait. No URL is
ever fetched: the handler only records what it was shown.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from _url_harness import run, text_of

from backchannel import Client
from backchannel.client.url_flow import UrlConsent, UrlElicitation
from peers.paths import EVERYTHING_STDIO_CMD, TESTS_DIR, have_npm_peers

pytestmark = pytest.mark.interop

if not have_npm_peers():
    pytest.skip("npm peers not installed (run tests/peers/install.sh)", allow_module_level=True)

TOOL = "trigger-url-elicitation"


class Shown:
    """A person who answers ``action`` and presses "done" at once (the manual control)."""

    def __init__(self, action: str = "accept") -> None:
        self.action = action
        self.requests: list[UrlElicitation] = []

    def __call__(self, request: UrlElicitation) -> UrlConsent:
        self.requests.append(request)
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        ready.set_result(None)
        return UrlConsent(self.action, ready)  # type: ignore[arg-type]


def _client(handler: Any, **options: Any) -> Client:
    command, *args = EVERYTHING_STDIO_CMD

    def no_forms(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "decline"}

    return Client.stdio(
        command, args, cwd=TESTS_DIR, era="handshake", elicitation=no_forms, url_elicitation=handler, **options
    )


def test_request_path_against_server_everything() -> None:
    shown = Shown()

    async def body() -> None:
        async with _client(shown) as client:
            assert client.capabilities["elicitation"] == {"form": {}, "url": {}}
            assert TOOL in {tool.name for tool in await client.list_tools()}
            result = await client.call_tool(TOOL, {"url": "https://example.com/connect", "elicitationId": "e-42"})
            text = text_of(result)
            assert "User completed the URL elicitation flow" in text and "e-42" in text
            (request,) = shown.requests
            assert request.url == "https://example.com/connect" and request.host == "example.com"
            assert request.elicitation_id == "e-42" and request.warnings == ()
            assert request.server_name == "Everything Reference Server"  # serverInfo.title
            assert request.message == "Please open the link to complete this action."

            shown.action = "decline"
            declined = await client.call_tool(TOOL, {"url": "https://example.com/other"})
            assert "declined" in text_of(declined)

    run(body, timeout=60)


def test_error_path_32042_runs_the_prerequisite_and_retries() -> None:
    shown = Shown()

    async def body() -> None:
        async with _client(shown, url_wait=30) as client:
            started = time.monotonic()
            result = await client.call_tool(TOOL, {"url": "https://example.com/pay", "errorPath": True})
            assert time.monotonic() - started < 20  # the "done" control, not the 30 s wait
            assert "User completed the URL elicitation flow" in text_of(result)
            prerequisite, original = shown.requests
            assert prerequisite.url == "https://modelcontextprotocol.io" and prerequisite.elicitation_id
            assert original.url == "https://example.com/pay" and original.elicitation_id != prerequisite.elicitation_id

    run(body, timeout=60)


def test_error_path_declined_is_not_retried() -> None:
    shown = Shown("decline")

    async def body() -> None:
        from backchannel.client.url_flow import UrlFlowIncomplete

        async with _client(shown) as client:
            with pytest.raises(UrlFlowIncomplete) as caught:
                await client.call_tool(TOOL, {"url": "https://example.com/pay2", "errorPath": True})
            assert caught.value.code == -32042 and caught.value.action == "decline"
            assert len(shown.requests) == 1

    run(body, timeout=60)
