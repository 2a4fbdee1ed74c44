"""A URL flow that never strands the person, in headless Chromium (issue 18, 18.9 Q2).

The MCP channel is real Streamable HTTP (the whole client side recorded); the pages run
on the server's loopback side listener; the person's browser is Chromium, driven by
Playwright. When the completion never comes, the person says so through
``UrlFlowControls`` and the same tool call goes on:

- the tab was closed: "fresh link", and the new link works in the browser;
- the link was used up by five wrong codes: the server sends a fresh link by itself,
  also while the client holds its answer for the person's word;
- "done" without finishing: the server says so clearly, the flow stays pending, and the
  person can still finish;
- "cancel": the tool sees ``cancel``, and the page's link no longer leads anywhere.

``tests/peers/install-browser.sh`` installs Chromium; without it these tests skip, saying so.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from _url_harness import ERAS, Recorder, code_in, run, text_of
from _words_harness import Speaker, words_said

from backchannel import Context, Server
from backchannel.server.url_elicitation.ask import NOT_FINISHED
from backchannel.testing import connected

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]

if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
    pytest.skip(f"{CHROMIUM} is missing: run tests/peers/install-browser.sh (apt chromium)", allow_module_level=True)
playwright_api = pytest.importorskip("playwright.async_api", reason="playwright (the dev extra) is not installed")


def make_server() -> Server:
    server = Server("stranded", "1.0")

    @server.tool()
    async def confirm(ctx: Context) -> str:
        return f"confirm: {(await ctx.elicit_url('Confirm the transfer in your browser.')).action}"

    return server


@contextlib.asynccontextmanager
async def session(era: str) -> AsyncIterator[tuple[Any, Speaker, Recorder, Callable[[], Awaitable[Any]]]]:
    """A client over HTTP in ``era`` with a person who has a say, and ``new_tab()`` in their Chromium."""
    server, speaker, recorder = make_server(), Speaker(), Recorder()
    async with (
        connected(server, era, "http", wrap_client=recorder.around, url_elicitation=speaker) as client,
        playwright_api.async_playwright() as pw,
    ):
        browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        context = await browser.new_context()
        try:
            yield client, speaker, recorder, context.new_page
        finally:
            await browser.close()


async def type_code(page: Any, code: str) -> str:
    await page.fill("#code", code)
    await page.click("#continue")
    return str(await page.inner_text("#title"))


@pytest.mark.parametrize("era", ERAS)
def test_the_tab_was_closed_so_a_fresh_link_finishes_the_same_call(era: str) -> None:
    async def body() -> None:
        async with session(era) as (client, speaker, recorder, new_tab):
            call = asyncio.create_task(client.call_tool("confirm"))
            first, controls = await speaker.next(call)
            tab = await new_tab()
            await tab.goto(first.url)
            assert await tab.inner_text("#title") == "Confirm it is you"
            await tab.close()  # closed before the code was typed: no completion will ever come

            assert controls.fresh_link()
            fresh, _ = await speaker.next(call)
            assert fresh.url != first.url and code_in(fresh.message) != code_in(first.message)
            tab = await new_tab()
            await tab.goto(first.url)
            assert await tab.inner_text("#title") == "Link used up"
            await tab.goto(fresh.url)
            assert await type_code(tab, code_in(fresh.message)) == "Done"
            assert text_of(await call) == "confirm: accept"
            (said,) = words_said(recorder, era)  # in the answer (handshake) or the retry (stateless)
            assert said["said"] == "fresh-link"

    run(body, timeout=60)


@pytest.mark.parametrize("era", ERAS)
def test_five_wrong_codes_use_the_link_up_and_a_fresh_link_finishes(era: str) -> None:
    async def body() -> None:
        async with session(era) as (client, speaker, recorder, new_tab):
            call = asyncio.create_task(client.call_tool("confirm"))
            first, controls = await speaker.next(call)
            tab = await new_tab()
            await tab.goto(first.url)
            for left in (4, 3, 2, 1):
                await type_code(tab, "1111-1111")
                assert f"{left} tr" in await tab.inner_text("#problem")
            assert await type_code(tab, "1111-1111") == "Link used up"
            # The server sent a fresh link by itself; the first link's say is over.
            fresh, _ = await speaker.next(call)
            assert not controls.open and fresh.url != first.url
            await tab.goto(fresh.url)
            assert await type_code(tab, code_in(fresh.message)) == "Done"
            assert text_of(await call) == "confirm: accept"
            assert words_said(recorder, era) == []  # nobody had to say anything
            if era == "handshake":
                # The held answer to the used-up link was never given: the server withdrew that
                # question and asked the fresh link.
                first_id, _ = [m["id"] for m in recorder.requests_received("elicitation/create")]
                withdrawn = [
                    n["params"]["requestId"] for n in recorder.notifications_received("notifications/cancelled")
                ]
                answered = [m["id"] for m in recorder.written if "method" not in m]
                assert first_id in withdrawn and first_id not in answered

    run(body, timeout=60)


@pytest.mark.parametrize("era", ERAS)
def test_done_without_finishing_is_told_clearly_and_the_flow_waits(era: str) -> None:
    async def body() -> None:
        async with session(era) as (client, speaker, _, new_tab):
            call = asyncio.create_task(client.call_tool("confirm"))
            first, controls = await speaker.next(call)
            tab = await new_tab()
            await tab.goto(first.url)
            assert controls.done()  # but the code was never typed
            again, _ = await speaker.next(call)
            assert again.message.startswith(NOT_FINISHED) and again.url == first.url
            assert not call.done()
            assert await type_code(tab, code_in(again.message)) == "Done"  # the same page still works
            assert text_of(await call) == "confirm: accept"

    run(body, timeout=60)


@pytest.mark.parametrize("era", ERAS)
def test_cancel_reaches_the_tool_and_the_link_leads_nowhere(era: str) -> None:
    async def body() -> None:
        async with session(era) as (client, speaker, _, new_tab):
            call = asyncio.create_task(client.call_tool("confirm"))
            first, controls = await speaker.next(call)
            tab = await new_tab()
            await tab.goto(first.url)
            assert controls.cancel()
            assert text_of(await call) == "confirm: cancel"
            await tab.reload()
            assert await tab.inner_text("#title") == "Link not valid"

    run(body, timeout=60)
