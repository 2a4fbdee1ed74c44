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
import contextlib
import functools
import html
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx2
import pytest
from _url_fleet import HeldPerson, code_in, token_of

from backchannel import Client
from backchannel.testing import free_port, run, stop_process, wait_for_port

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]  # fmt: skip
HERE = Path(__file__).resolve().parent
SERVER = HERE / "url_fleet_server.py"
WORKERS = 4

if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
    pytest.skip(f"{CHROMIUM} is missing: run tests/peers/install-browser.sh (apt chromium)", allow_module_level=True)
playwright_api = pytest.importorskip("playwright.async_api", reason="playwright (the dev extra) is not installed")
_services = pytest.importorskip("_services")
try:
    _services._program("redis-server"), _services._program("nginx")
except RuntimeError as missing:
    pytest.skip(str(missing), allow_module_level=True)


class _Provider(BaseHTTPRequestHandler):
    """The stand-in provider: its authorization page has an "Allow" link back to the callback."""

    def do_GET(self) -> None:
        query = dict(parse_qsl(urlsplit(self.path).query))
        back = (
            query["redirect_uri"] + "?" + urlencode({"state": query["state"], "code": "granted-" + query["challenge"]})
        )
        page = f'<!doctype html><title>Provider</title><a id="allow" href="{html.escape(back)}">Allow</a>'.encode()
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, *args: Any) -> None:
        pass


@dataclass
class UrlProcessFleet:
    base: str
    directory: Path
    processes: dict[str, subprocess.Popen[bytes]]  # by name (w0...)

    def entries(self) -> list[dict[str, Any]]:
        """Every worker's log lines, each with ``name`` added, in the order they were written."""
        found = []
        for name in self.processes:
            for line in (self.directory / f"{name}.log").read_text(encoding="utf-8").splitlines():
                found.append({**json.loads(line), "name": name})
        return sorted(found, key=lambda entry: entry["t"])

    def name_of(self, worker_id: str) -> str:
        return str(next(e["name"] for e in self.entries() if e["worker"] == worker_id))

    def tail(self) -> str:
        return "\n".join(
            f"--- {n}:\n{(self.directory / f'{n}.out').read_text(errors='replace')[-2000:]}" for n in self.processes
        )


@contextlib.contextmanager
def url_process_fleet() -> Iterator[UrlProcessFleet]:
    with contextlib.ExitStack() as stack:
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bc-url-fleet-")))
        provider = ThreadingHTTPServer(("127.0.0.1", 0), _Provider)
        threading.Thread(target=provider.serve_forever, daemon=True).start()
        stack.callback(provider.shutdown)
        redis = stack.enter_context(_services.redis_server())
        ports = [free_port() for _ in range(WORKERS)]
        nginx = stack.enter_context(_services.nginx_round_robin(ports))  # before the workers: they need its address
        processes: dict[str, subprocess.Popen[bytes]] = {}
        for number, port in enumerate(ports):
            name = f"w{number}"
            argv = [
                sys.executable, str(SERVER), "--port", str(port), "--redis", redis.url, "--name", name,
                "--base", nginx.url, "--provider", f"http://127.0.0.1:{provider.server_port}/authorize",
                "--log", str(directory / f"{name}.log"),
            ]  # fmt: skip
            with (directory / f"{name}.out").open("wb") as sink:
                processes[name] = subprocess.Popen(
                    argv, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT
                )
            stack.callback(stop_process, processes[name])
        for (name, process), port in zip(processes.items(), ports, strict=True):
            out = directory / f"{name}.out"
            wait_for_port(port, process, timeout=30.0, output=functools.partial(out.read_text, errors="replace"))
        yield UrlProcessFleet(nginx.url, directory, processes)


@pytest.fixture(scope="module")
def fleet() -> Iterator[UrlProcessFleet]:
    with url_process_fleet() as running:
        yield running


class RoundRobin:
    """Where nginx's round robin stands, read with ``GET /whoami``; ``before(worker)`` makes the
    next request (the browser's) land on ``worker``."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.http = httpx2.AsyncClient(timeout=10)
        self.order: list[str] = []

    async def whoami(self) -> str:
        return (await self.http.get(self.base + "/whoami")).text

    async def learn(self) -> list[str]:
        seen = [await self.whoami() for _ in range(2 * WORKERS)]
        self.order = seen[:WORKERS]
        assert len(set(self.order)) == WORKERS and seen[WORKERS:] == self.order, seen
        return self.order

    def after(self, worker: str, steps: int) -> str:
        return self.order[(self.order.index(worker) + steps) % WORKERS]

    async def before(self, worker: str) -> None:
        previous = self.after(worker, -1)
        for _ in range(2 * WORKERS):
            if await self.whoami() == previous:
                return
        raise AssertionError(f"nginx never served {previous}: is it still round robin?")


@contextlib.asynccontextmanager
async def chromium(directory: Path) -> AsyncIterator[Callable[[], Awaitable[Any]]]:
    async with playwright_api.async_playwright() as pw:
        contexts: list[Any] = []

        async def page() -> Any:
            context = await pw.chromium.launch_persistent_context(
                str(directory / f"profile-{len(contexts)}"), executable_path=CHROMIUM, headless=True, args=ARGS
            )
            contexts.append(context)
            opened = context.pages[0] if context.pages else await context.new_page()
            await opened.route("**/favicon.ico", lambda route: route.abort())  # no stray request through nginx
            return opened

        try:
            yield page
        finally:
            for context in contexts:
                await context.close()


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

            await robin.before(steps[0])
            await page.goto(request.url)
            assert await page.inner_text("#title") == "Confirm it is you"
            await page.fill("#code", code_in(request.message))
            await robin.before(steps[1])
            await page.click("#continue")
            await page.wait_for_selector("#allow")  # at the provider, with the owner's cookie set
            await robin.before(steps[2])
            await page.click("#allow")
            await page.wait_for_selector("#done")
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

    with url_process_fleet() as fleet:
        run(lambda: body(fleet), timeout=90)
