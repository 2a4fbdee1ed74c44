"""URL elicitation with the page opened in headless Chromium, each step on a different worker
(issue #14, "Proven by"): a real ``redis-server``, four worker processes (``url_fleet_server.py``,
each on its own port running ``server.run_http(port=..., redis=URL)``) and nginx passing every
request to the next worker in turn; the pages' public address is nginx's.

The tool's flow has a handler (``flow=``), so there are three browser steps: the landing page,
the confirmation code's POST, and the return from the (stand-in) provider to the callback. The
test reads where nginx's round robin stands (``GET /whoami``) and lets each step land on the
next worker after the flow's owner: three steps, three workers, none of them the owner, as the
workers' request logs show. The handler's verifier never leaves the owner, and both of its steps
run there. Killing the owner (``kill -9``) leaves a page that says so, not a hang.

Chromium is Debian's ``/usr/bin/chromium`` driven by Playwright (``tests/peers/install-browser.sh``);
Redis and nginx are Debian's (``tests/peers/install-services.sh``). Without them these tests skip.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from _url_fleet import HeldPerson, code_in, token_of

from backchannel import Client
from backchannel.testing import run

CHROMIUM = "/usr/bin/chromium"
HERE = Path(__file__).resolve().parent
SERVER = HERE / "url_fleet_server.py"

if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
    pytest.skip(f"{CHROMIUM} is missing: run tests/peers/install-browser.sh (apt chromium)", allow_module_level=True)
pytest.importorskip("playwright.async_api", reason="playwright (the dev extra) is not installed")
_services = pytest.importorskip("_services")
try:
    _services._program("redis-server"), _services._program("nginx")
except RuntimeError as missing:
    pytest.skip(str(missing), allow_module_level=True)

from _url_official_fleet import (  # noqa: E402 - after the skips: they need what is skipped for
    RoundRobin,
    UrlProcessFleet,
    chromium,
    through_the_browser,
    url_process_fleet,
)


@pytest.fixture(scope="module")
def fleet() -> Iterator[UrlProcessFleet]:
    with url_process_fleet(SERVER) as running:
        yield running


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_each_browser_step_on_another_worker_than_the_flows_owner(
    era: str, fleet: UrlProcessFleet, tmp_path: Path
) -> None:
    person = HeldPerson()  # consents once the browser is done: no MCP request while it runs

    async def body() -> None:
        robin = RoundRobin(fleet.base)
        async with (
            Client.http(fleet.base + "/mcp", era=era, url_elicitation=person) as client,
            chromium(tmp_path) as new_page,
        ):
            page = await new_page()
            call = asyncio.create_task(client.call_tool("connect"))
            request = await person.seen.get()
            owner = token_of(request.url).split(".", 1)[0]
            await robin.learn()
            steps = [robin.after(owner, k) for k in (1, 2, 3)]

            await through_the_browser(page, robin, steps, request.url, code_in(request.message))
            assert page.url.startswith(fleet.base + "/elicit/callback?state=" + owner + ".")

            await robin.before(steps[0])  # a stateless-era retry lands on another worker than the owner
            person.release.set()
            result = "".join(getattr(b, "text", "") for b in (await call).content)
            await robin.http.aclose()

        entries = fleet.entries()
        pages = [(e["worker"], e["method"]) for e in entries if e.get("path", "").startswith("/elicit/")]
        pages = pages[-3:]
        assert pages == [(steps[0], "GET"), (steps[1], "POST"), (steps[2], "GET")], entries[-20:]
        flow_steps = [(e["worker"], e["grant"]) for e in entries if "grant" in e][-2:]
        assert flow_steps == [(owner, "begin"), (owner, "finish")]  # where the verifier is kept
        if era == "handshake":
            assert result == f"accept@{fleet.name_of(owner)}"
        else:
            assert result == f"accept@{fleet.name_of(steps[0])}"

    run(body, timeout=90)


def test_the_owner_killed_leaves_a_page_that_says_so_and_the_stateless_call_ends(tmp_path: Path) -> None:
    person = HeldPerson()

    async def body(fleet: UrlProcessFleet) -> None:
        async with (
            Client.http(fleet.base + "/mcp", era="stateless", url_elicitation=person) as client,
            chromium(tmp_path) as new_page,
        ):
            page = await new_page()
            call = asyncio.create_task(client.call_tool("connect"))
            request = await person.seen.get()
            owner = token_of(request.url).split(".", 1)[0]
            fleet.processes[fleet.name_of(owner)].send_signal(signal.SIGKILL)
            await asyncio.to_thread(fleet.processes[fleet.name_of(owner)].wait)

            await page.goto(request.url)  # nginx can only reach the other workers now
            assert await page.inner_text("#title") == "Sign-in stopped"
            assert "ask again" in await page.inner_text("body")
            person.release.set()
            result = "".join(getattr(b, "text", "") for b in (await call).content)
            assert result.startswith("cancel@") and result != f"cancel@{fleet.name_of(owner)}"

    with url_process_fleet(SERVER) as fleet:
        run(lambda: body(fleet), timeout=90)
