"""What ``test_fleet_url_official.py`` runs on: four workers (``_url_official_server.py``) on one
``redis-server`` behind nginx's round robin, a stand-in provider, headless Chromium, the
official client in a subprocess, and ``RoundRobin`` to steer the browser's next request.

- ``url_official_fleet()``: the fleet; ``entries(since)`` is every worker's log merged by arrival.
  ``url_process_fleet(server)`` is the same fleet of another worker script (same arguments).
- ``Peer``: a client process and its record file (``{"kind": "elicitation" | "notification" |
  "result", ...}`` lines, written as things happen by ``tests/peers/pysdk_client.py --record``
  and ``tests/peers/ts_client.mjs``'s ``"record"``).
- ``RoundRobin``: where nginx's rotation stands (``GET /whoami``); ``before(worker)`` makes the
  next request land on ``worker``.
- ``through_the_browser(...)``: the person's three steps in the page, each steered to a worker.
- ``until(found, what)``: ``found()``'s first truthy value, polled (it reads another process's file).
"""

from __future__ import annotations

__all__ = [
    "WORKERS",
    "Peer",
    "RoundRobin",
    "UrlProcessFleet",
    "chromium",
    "through_the_browser",
    "until",
    "url_official_fleet",
    "url_process_fleet",
]

import asyncio
import contextlib
import functools
import html
import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx2

from _services import nginx_round_robin, redis_server
from backchannel.testing import free_port, stop_process, wait_for_port

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]  # fmt: skip
SERVER = Path(__file__).resolve().parent / "_url_official_server.py"
WORKERS = 4
#: Bounds the waits on another process (its record, a worker's log): generous, as they only end a failing test.
WAIT = 30.0


class _Provider(BaseHTTPRequestHandler):
    """The stand-in provider: its authorization page has an "Allow" link back to the callback."""

    def do_GET(self) -> None:
        query = dict(parse_qsl(urlsplit(self.path).query))
        grant = {"state": query["state"], "code": "granted-" + query["challenge"]}
        back = query["redirect_uri"] + "?" + urlencode(grant)
        page = f'<!doctype html><title>Provider</title><a id="allow" href="{html.escape(back)}">Allow</a>'.encode()
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, *args: Any) -> None:
        pass


async def until(found: Callable[[], Any], what: str, alive: Callable[[], bool] = lambda: True) -> Any:
    """``found()``'s first truthy value: it reads another process's file, so there is nothing to
    wait on but the file; bounded by ``WAIT``, and cut short when ``alive()`` turns false."""
    deadline = time.monotonic() + WAIT
    while not (value := found()):
        if not alive() or time.monotonic() > deadline:
            raise AssertionError(f"never saw {what}")
        await asyncio.sleep(0.02)
    return value


@dataclass
class UrlProcessFleet:
    base: str
    directory: Path
    processes: dict[str, subprocess.Popen[bytes]]  # by name (w0...)

    @property
    def url(self) -> str:
        return self.base + "/mcp"

    def entries(self, since: int = 0) -> list[dict[str, Any]]:
        """Every worker's log lines written at ``since`` (ns) or after, each with ``name`` added, by time."""
        found = []
        for name in self.processes:
            for line in (self.directory / f"{name}.log").read_text(encoding="utf-8").splitlines(keepends=True):
                if line.endswith("\n"):  # a line being written is read next time
                    entry = json.loads(line)
                    if entry["t"] >= since:
                        found.append({**entry, "name": name})
        return sorted(found, key=lambda entry: entry["t"])

    def name_of(self, worker_id: str) -> str:
        return str(next(e["name"] for e in self.entries() if e["worker"] == worker_id))

    def tail(self) -> str:
        return "\n".join(
            f"--- {n}:\n{(self.directory / f'{n}.out').read_text(errors='replace')[-2000:]}" for n in self.processes
        )


def url_official_fleet() -> contextlib.AbstractContextManager[UrlProcessFleet]:
    return url_process_fleet(SERVER)


@contextlib.contextmanager
def url_process_fleet(server: Path) -> Iterator[UrlProcessFleet]:
    """``WORKERS`` processes of ``server`` (``--port --redis --name --base --provider --log``)."""
    with contextlib.ExitStack() as stack:
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bc-url-fleet-")))
        provider = ThreadingHTTPServer(("127.0.0.1", 0), _Provider)
        threading.Thread(target=provider.serve_forever, daemon=True).start()
        stack.callback(provider.shutdown)
        redis = stack.enter_context(redis_server())
        ports = [free_port() for _ in range(WORKERS)]
        nginx = stack.enter_context(nginx_round_robin(ports))  # before the workers: they need its address
        processes: dict[str, subprocess.Popen[bytes]] = {}
        for number, port in enumerate(ports):
            name = f"w{number}"
            argv = [
                sys.executable, str(server), "--port", str(port), "--redis", redis.url, "--name", name,
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


class Peer:
    """An official client in a subprocess; ``record`` is the file it writes its events to."""

    def __init__(self, argv: list[str], record: Path, cwd: Path) -> None:
        self.record = record
        self.proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def entries(self, kind: str) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        lines = self.record.read_text(encoding="utf-8").splitlines(keepends=True)
        return [entry for line in lines if line.endswith("\n") and (entry := json.loads(line))["kind"] == kind]

    async def next(self, kind: str, number: int) -> dict[str, Any]:
        """The ``number``-th (from 1) event of ``kind``, once the client has written it."""
        found = await until(
            lambda: self.entries(kind)[number - 1 : number], f"{kind} #{number}", lambda: self.proc.poll() is None
        )
        return dict(found[0])

    async def result(self, step: int) -> dict[str, Any]:
        found = await until(
            lambda: [e for e in self.entries("result") if e["step"] == step],
            f"result {step}",
            lambda: self.proc.poll() is None,
        )
        return dict(found[0]["result"])

    def finish(self, timeout: float = WAIT) -> dict[str, Any]:
        out, err = self.proc.communicate(timeout=timeout)
        assert self.proc.returncode == 0, f"exit {self.proc.returncode}\n{out}\n{err[-4000:]}"
        parsed: dict[str, Any] = json.loads(out)
        return parsed

    def stop(self) -> str:
        """Kill it if it still runs; its stderr, for a failure's message."""
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            return self.proc.communicate(timeout=10)[1][-4000:]
        except ValueError:  # finish() has read it already
            return ""


class RoundRobin:
    """Where nginx's round robin stands, read with ``GET /whoami``; ``before(worker)`` makes the
    next request (the browser's) land on ``worker``."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.http = httpx2.AsyncClient(timeout=10)
        self.order: list[str] = []

    async def aclose(self) -> None:
        await self.http.aclose()

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
    """``new_page()``: a page of a fresh headless Chromium (its own profile, so its own cookies)."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        contexts: list[Any] = []

        async def new_page() -> Any:
            context = await pw.chromium.launch_persistent_context(
                str(directory / f"profile-{len(contexts)}"), executable_path=CHROMIUM, headless=True, args=ARGS
            )
            contexts.append(context)
            opened = context.pages[0] if context.pages else await context.new_page()
            await opened.route("**/favicon.ico", lambda route: route.abort())  # no stray request through nginx
            return opened

        try:
            yield new_page
        finally:
            for context in contexts:
                await context.close()


async def through_the_browser(page: Any, robin: RoundRobin, steps: list[str], url: str, code: str) -> None:
    """The person's part of the flow at ``url``, each request steered to the next of ``steps``: the
    landing page, the confirmation ``code``'s POST, and the provider's "Allow" back to the callback."""
    await robin.before(steps[0])
    await page.goto(url)
    assert await page.inner_text("#title") == "Confirm it is you"
    await page.fill("#code", code)
    await robin.before(steps[1])
    await page.click("#continue")
    await page.wait_for_selector("#allow")  # at the provider, with the owner's cookie set
    await robin.before(steps[2])
    await page.click("#allow")
    await page.wait_for_selector("#done")
