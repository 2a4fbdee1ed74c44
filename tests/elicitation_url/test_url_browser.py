"""The real thing: headless Chromium (Debian's ``/usr/bin/chromium``, driven by Playwright)
runs ``examples/github_connect.py``'s OAuth 2.0 flow (authorization code + PKCE) through
URL-mode elicitation, over Streamable HTTP.

- The person who asked types the confirmation code their client shows, signs in at
  the provider, and the tool reports the connection; the GitHub token never appears
  in any MCP message (the whole MCP wire is recorded, both directions).
- Someone else who gets the forwarded link is refused: without the code, with the
  code once the link is used, and when a forwarded authorization URL comes back to
  their browser.

Each person is a separate Chromium with a fresh user-data-dir. ``tests/peers/install-browser.sh``
installs Chromium (``.ci/run`` calls it); without it these tests skip, saying so.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx2 as httpx
import pytest
from _url_harness import Person, code_in, run, text_of

from backchannel import Client

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "github_connect.py"

if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
    pytest.skip(f"{CHROMIUM} is missing: run tests/peers/install-browser.sh (apt chromium)", allow_module_level=True)
playwright_api = pytest.importorskip("playwright.async_api", reason="playwright (the dev extra) is not installed")
pytest.importorskip("authlib", reason="authlib (the dev/examples extra) is not installed")


def _example() -> ModuleType:
    if "github_connect" not in sys.modules:
        spec = importlib.util.spec_from_file_location("github_connect", EXAMPLE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["github_connect"] = module
        spec.loader.exec_module(module)
    return sys.modules["github_connect"]


class _TapStream(httpx.AsyncByteStream):
    def __init__(self, inner: Any, wire: bytearray) -> None:
        self.inner, self.wire = inner, wire

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.wire.extend(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class Tap(httpx.AsyncBaseTransport):
    """Every byte of the MCP channel, both ways: headers and bodies."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.wire = bytearray()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.wire.extend(repr(request.headers.raw).encode())
        self.wire.extend(await request.aread())
        response = await self.inner.handle_async_request(request)
        self.wire.extend(repr(response.headers.raw).encode())
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_TapStream(response.stream, self.wire),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


@contextlib.asynccontextmanager
async def mcp_client(
    deployment: Any, era: str, person: Person, user: str = "alice"
) -> AsyncIterator[tuple[Client, Tap]]:
    tap = Tap()
    http = httpx.AsyncClient(transport=tap, timeout=httpx.Timeout(30, read=None))
    headers = {"authorization": f"Bearer {user}-token"}
    try:
        async with Client.http(
            deployment.endpoint, headers=headers, httpx_client=http, era=era, url_elicitation=person
        ) as client:
            yield client, tap
    finally:
        await http.aclose()


@contextlib.asynccontextmanager
async def browsers(tmp_path: Path) -> AsyncIterator[Callable[[str], Awaitable[Any]]]:
    """``await person("alice")``: a new page in that person's own Chromium (fresh profile)."""
    async with playwright_api.async_playwright() as pw:
        contexts: list[Any] = []

        async def person(name: str) -> Any:
            context = await pw.chromium.launch_persistent_context(
                str(tmp_path / f"profile-{name}"), executable_path=CHROMIUM, headless=True, args=ARGS
            )
            contexts.append(context)
            return context.pages[0] if context.pages else await context.new_page()

        try:
            yield person
        finally:
            for context in contexts:
                await context.close()


async def sign_in(page: Any, login: str) -> None:
    await page.wait_for_selector("#login")
    await page.fill("#login", login)
    await page.fill("#password", f"{login}-pass")
    await page.click("#allow")


async def confirm(page: Any, url: str, code: str) -> None:
    await page.goto(url)
    assert await page.inner_text("#title") == "Confirm it is you"
    await page.fill("#code", code)
    await page.click("#continue")


def _secrets(deployment: Any) -> list[str]:
    issued = list(deployment.provider.issued)
    return [*issued, *deployment.github.vault.values(), deployment.provider.client.secret]


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_the_person_who_asked_connects_and_no_token_crosses_mcp(era: str, tmp_path: Path) -> None:
    example = _example()
    person = Person()

    async def body() -> None:
        async with (
            example.running() as deployment,
            mcp_client(deployment, era, person) as (client, tap),
            browsers(tmp_path) as open_browser,
        ):
            assert client.era == era
            call = asyncio.create_task(client.call_tool("github_profile"))
            request = await person.seen.get()
            assert request.server_name == "github-connect" and request.host == deployment.mcp_url[7:]
            assert (request.elicitation_id is not None) == (era == "handshake")
            page = await open_browser("alice")
            await page.goto(request.url)
            assert "Connect your GitHub account" in await page.inner_text("#message")
            await page.fill("#code", "0000-0000")  # a typo first: refused, with tries left
            await page.click("#continue")
            assert "does not match" in await page.inner_text("#problem")
            await page.fill("#code", code_in(request.message))
            await page.click("#continue")
            await page.wait_for_url(f"{deployment.provider_url}/login/oauth/authorize*")
            assert "code_challenge_method=S256" in page.url
            await sign_in(page, "octocat")
            await page.wait_for_selector("#done")
            assert page.url.startswith(f"{deployment.mcp_url}/elicit/callback")
            assert text_of(await call) == "Connected to GitHub as octocat."
            assert text_of(await client.call_tool("github_profile")) == "Connected to GitHub as octocat."
            assert len(person.all) == 1  # connected once, remembered for alice
            assert set(deployment.github.vault) == {"alice"}
            wire = bytes(tap.wire)
            assert b"Connected to GitHub as octocat." in wire and request.url.encode() in wire
            secrets = _secrets(deployment)
            assert len(secrets) == 3
            for secret in secrets:
                assert secret.encode() not in wire, "a credential crossed the MCP channel"
            if era == "handshake":
                assert b"notifications/elicitation/complete" in wire
            else:
                assert b"elicitationId" not in wire and b"notifications/elicitation/complete" not in wire

    run(body, timeout=90)


def test_the_32042_path_in_a_browser(tmp_path: Path) -> None:
    example = _example()
    person = Person()

    async def body() -> None:
        async with (
            example.running() as deployment,
            mcp_client(deployment, "handshake", person) as (client, tap),
            browsers(tmp_path) as open_browser,
        ):
            call = asyncio.create_task(client.call_tool("github_repos"))
            request = await person.seen.get()
            assert b'"code":-32042' in bytes(tap.wire).replace(b" ", b"")
            page = await open_browser("alice")
            await confirm(page, request.url, code_in(request.message))
            await sign_in(page, "octocat")
            await page.wait_for_selector("#done")
            result = await call
            assert result.structured_content == {"result": ["hello-world", "Spoon-Knife"]}
            wire = bytes(tap.wire)
            assert b"notifications/elicitation/complete" in wire
            assert wire.count(b'"method":"tools/call"') == 2  # the call and its one retry
            for secret in _secrets(deployment):
                assert secret.encode() not in wire

    run(body, timeout=90)


def test_a_forwarded_link_is_refused_in_someone_elses_browser(tmp_path: Path) -> None:
    example = _example()
    person = Person()

    async def body() -> None:
        async with (
            example.running() as deployment,
            mcp_client(deployment, "handshake", person) as (client, _),
            browsers(tmp_path) as open_browser,
        ):
            call = asyncio.create_task(client.call_tool("github_profile"))
            request = await person.seen.get()
            code = code_in(request.message)
            alice, bob = await open_browser("alice"), await open_browser("bob")

            # Alice forwards the link: Bob has no code, so he cannot go on.
            await bob.goto(request.url)
            await bob.fill("#code", "1234-5678")
            await bob.click("#continue")
            assert "does not match" in await bob.inner_text("#problem")

            # Alice confirms in her browser and reaches the provider's sign-in page; she
            # forwards that authorization URL to Bob as well.
            await confirm(alice, request.url, code)
            await alice.wait_for_url(f"{deployment.provider_url}/login/oauth/authorize*")
            authorize_url = alice.url

            # Even with the code, the link is used up for every other browser.
            await bob.goto(request.url)
            assert await bob.inner_text("#title") == "Link already used"

            # Bob finishes the forwarded authorization in his browser: refused at the callback.
            await bob.goto(authorize_url)
            await sign_in(bob, "hubot")
            await bob.wait_for_url(f"{deployment.mcp_url}/elicit/callback*")
            assert await bob.inner_text("#title") == "Refused"
            assert "another browser" in await bob.inner_text("body")
            assert deployment.github.vault == {} and deployment.provider.issued == {}
            assert not call.done()

            # Alice finishes it herself: her account, bound to her.
            await sign_in(alice, "octocat")
            await alice.wait_for_selector("#done")
            assert text_of(await call) == "Connected to GitHub as octocat."
            assert list(deployment.provider.issued.values()) == ["octocat"]
            assert set(deployment.github.vault) == {"alice"}

    run(body, timeout=90)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_wrong_codes_from_a_link_holder_leave_the_owner_a_fresh_link(era: str, tmp_path: Path) -> None:
    example = _example()
    person = Person()

    async def body() -> None:
        async with (
            example.running() as deployment,
            mcp_client(deployment, era, person) as (client, _),
            browsers(tmp_path) as open_browser,
        ):
            call = asyncio.create_task(client.call_tool("github_profile"))
            first = await person.seen.get()
            bob, alice = await open_browser("bob"), await open_browser("alice")

            # Bob got the link but not the code: five wrong codes use the link up, not Alice's flow.
            await bob.goto(first.url)
            for _ in range(4):
                await bob.fill("#code", "1234-5678")
                await bob.click("#continue")
                assert "does not match" in await bob.inner_text("#problem")
            await bob.fill("#code", "1234-5678")
            await bob.click("#continue")
            assert await bob.inner_text("#title") == "Link used up"
            assert "fresh link" in await bob.inner_text("body")

            # A fresh link reaches Alice's client within the same call, which goes on waiting.
            waiting = asyncio.ensure_future(person.seen.get())
            await asyncio.wait({waiting, call}, return_when=asyncio.FIRST_COMPLETED)
            assert waiting.done(), f"the call ended instead: {call.result()!r}"
            fresh = waiting.result()
            assert not call.done() and fresh.url != first.url
            await alice.goto(first.url)
            assert await alice.inner_text("#title") == "Link used up"
            await confirm(alice, fresh.url, code_in(fresh.message))
            await sign_in(alice, "octocat")
            await alice.wait_for_selector("#done")
            assert text_of(await call) == "Connected to GitHub as octocat."
            assert set(deployment.github.vault) == {"alice"}

    run(body, timeout=90)
