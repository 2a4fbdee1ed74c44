"""Four ``backchannel proxy URL`` processes start at once in front of one protected server (issue #29, proof 5:
a desktop host starts a bridge per window, each logging in for a host that can't). They share the token
store ``connect`` keeps; the authorization server is a real oidc-provider that rotates refresh tokens (a
refresh token spent twice revokes the grant) and counts what its token and registration endpoints did.

This is ``test_shared_login.py`` with its client process swapped for the proxy: ``one_proxy`` is driven as a
desktop host drives it, in JSON-RPC lines on its stdin and stdout (``initialize``, ``tools/list``, a
``tools/call``), and the person's browser (``PersonsBrowser``) opens the link a proxy prints on its stderr
with ``--no-browser``.

- No tokens: one login, one dynamic registration, and every proxy serves the call as the same person.
- The kept access token ran out: the kept refresh token is presented once, no ``invalid_grant``, no login.
- The login's loopback listener: one proxy listens for the redirect, once, on the port its registration
  names; no two proxies hold a login server at the same time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from _auth_harness import AuthorizationServer, jwt_auth, scoped_server, serving
from _browser_login import LINK
from test_shared_login import PersonsBrowser, endpoint_counts, rotating  # noqa: F401 - rotating is a fixture

from _subprocesses import checkout_env
from backchannel.testing import run

pytestmark = pytest.mark.interop

PROCESSES = 4
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "desktop-host", "version": "1"},
}
#: A bound on any one answer: a proxy waiting for another's login waits for the person and the busy server.
ANSWER_WITHIN = 90.0


class HostSide:
    """A desktop host's end of one proxy's pipes: JSON-RPC lines out, answers in (notifications skipped)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.stdin, self.stdout = process.stdin, process.stdout

    async def send(self, message: dict[str, Any]) -> None:
        self.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        await self.stdin.drain()

    async def request(self, id_: int | str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        await self.send({"id": id_, "method": method, **({"params": params} if params is not None else {})})
        async with asyncio.timeout(ANSWER_WITHIN):
            while line := await self.stdout.readline():
                message: dict[str, Any] = json.loads(line)
                if message.get("id") == id_ and "method" not in message:
                    return message
        raise AssertionError(f"the proxy closed its output before answering {method}")


async def one_proxy(
    url: str, env: dict[str, str], browser: PersonsBrowser, everyone_up: asyncio.Barrier, pids: list[int]
) -> str:
    """One ``backchannel proxy --no-browser URL`` on pipes: held until every proxy is up, then initialized as a
    host does, its tools listed and ``whoami`` called (the proxy logging in if it must: ``browser`` opens the
    link it prints on stderr); the answer. Its PID goes to ``pids`` while it runs."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "backchannel",
        "proxy",
        "--no-browser",
        url,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    pids.append(process.pid)
    host = HostSide(process)
    said: list[str] = []

    async def read_stderr(stream: asyncio.StreamReader) -> None:
        while line := (await stream.readline()).decode():
            said.append(line.rstrip())
            if found := re.search(LINK, line):
                await browser.open(found.group(1))

    errors = asyncio.create_task(read_stderr(process.stderr))
    try:
        # Up and reading: a request before initialize is refused by the proxy itself, nothing sent upstream.
        early = await host.request("up", "tools/list")
        assert early.get("error", {}).get("code") == -32600, (early, said)
        await everyone_up.wait()
        introduced = await host.request(1, "initialize", INITIALIZE)
        assert "result" in introduced, (introduced, said)
        await host.send({"method": "notifications/initialized"})
        listed = await host.request(2, "tools/list")
        assert "whoami" in [tool["name"] for tool in listed["result"]["tools"]], (listed, said)
        called = await host.request(3, "tools/call", {"name": "whoami", "arguments": {}})
        assert "result" in called and not called["result"].get("isError"), (called, said)
        answer: str = called["result"]["content"][0]["text"]
        host.stdin.close()  # the host quits
        async with asyncio.timeout(30):
            await process.wait()
            await errors
        assert process.returncode == 0, said
        return answer
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        errors.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await errors


async def run_proxies(
    url: str, config_home: Path, count: int, pids: list[int] | None = None
) -> tuple[list[str], PersonsBrowser]:
    """``count`` proxies sharing the token store under ``config_home``, let go at once; their answers, and the
    browser that opened their login links."""
    env = {**checkout_env(), "XDG_CONFIG_HOME": str(config_home), "BROWSER": "/bin/false"}
    browser, everyone_up = PersonsBrowser(), asyncio.Barrier(count)
    started = pids if pids is not None else []
    answers = await asyncio.gather(*(one_proxy(url, env, browser, everyone_up, started) for _ in range(count)))
    return list(answers), browser


def test_four_proxies_started_at_once_log_in_once(rotating: AuthorizationServer, tmp_path: Path) -> None:  # noqa: F811 - the fixture
    async def body() -> None:
        async with serving(scoped_server(), jwt_auth(rotating.issuer, rotating.jwks_uri)) as (url, _):
            answers, browser = await run_proxies(url, tmp_path / "config", PROCESSES)
            counts = await endpoint_counts(rotating)
        assert counts["registrations"] == 1, counts  # one client, registered once
        assert counts["grants"] == {"authorization_code": 1} and counts["errors"] == {}, counts  # one login
        assert len(browser.opened) == 1, browser.opened  # the person was asked once
        assert len(set(answers)) == 1 and answers[0].startswith(f"{rotating.issuer}#alice#"), answers

    run(body, timeout=180)


def test_four_proxies_refresh_a_rotating_token_once(rotating: AuthorizationServer, tmp_path: Path) -> None:  # noqa: F811 - the fixture
    async def body() -> None:
        async with serving(scoped_server(), jwt_auth(rotating.issuer, rotating.jwks_uri)) as (url, _):
            (first,), _ = await run_proxies(url, tmp_path / "config", 1)  # the login, kept in the store
            store = tmp_path / "config" / "backchannel" / "oauth.json"
            entries = json.loads(store.read_text())
            kept = entries[f"tokens {rotating.issuer} {url}"]
            assert kept["refresh_token"]
            kept["expires_at"] = time.time() - 1  # as if the access token had run out
            store.write_text(json.dumps(entries))
            answers, browser = await run_proxies(url, tmp_path / "config", PROCESSES)
            counts = await endpoint_counts(rotating)
        assert counts["errors"] == {}, counts  # no invalid_grant: no refresh token was presented twice
        assert counts["presented"] == [kept["refresh_token"]], counts  # one refresh, with the kept token
        assert counts["grants"] == {"authorization_code": 1, "refresh_token": 1}, counts
        assert not browser.opened, browser.opened  # nobody logged in again
        assert set(answers) == {first}, answers
        assert json.loads(store.read_text())[f"tokens {rotating.issuer} {url}"]["refresh_token"] == counts["issued"][-1]

    run(body, timeout=180)


# ------------------------------------------------------------------------------------ the loopback ports


def listening_ports(pids: list[int]) -> set[tuple[int, int]]:
    """(PID, port) for each TCP socket in LISTEN that a process of ``pids`` holds (Linux: ``/proc``)."""
    listening: dict[str, int] = {}  # socket inode -> port
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(FileNotFoundError):
            for row in Path(table).read_text().splitlines()[1:]:
                fields = row.split()
                if fields[3] == "0A":  # TCP_LISTEN
                    listening[fields[9]] = int(fields[1].rsplit(":", 1)[1], 16)
    held: set[tuple[int, int]] = set()
    for pid in list(pids):
        with contextlib.suppress(FileNotFoundError, ProcessLookupError, PermissionError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(FileNotFoundError, OSError):
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if target.startswith("socket:[") and (port := listening.get(target[8:-1])) is not None:
                        held.add((pid, port))
    return held


def test_one_proxy_listens_for_the_login_redirect(rotating: AuthorizationServer, tmp_path: Path) -> None:  # noqa: F811 - the fixture
    if not Path("/proc/net/tcp").exists():
        pytest.skip("reads the listening sockets from Linux's /proc")

    async def body() -> None:
        pids: list[int] = []
        seen: set[tuple[int, int]] = set()
        at_once = 0  # the most proxies seen listening at the same moment
        done = asyncio.Event()

        async def watch() -> None:
            nonlocal at_once
            while not done.is_set():
                now = listening_ports(pids)
                seen.update(now)
                at_once = max(at_once, len({pid for pid, _ in now}))
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.05):
                        await done.wait()

        async with serving(scoped_server(), jwt_auth(rotating.issuer, rotating.jwks_uri)) as (url, _):
            watcher = asyncio.create_task(watch())
            try:
                _, browser = await run_proxies(url, tmp_path / "config", PROCESSES, pids)
            finally:
                done.set()
                await watcher
        assert len(pids) == PROCESSES
        assert at_once == 1, seen  # never two login servers at once
        assert len(seen) == 1, seen  # one proxy listened, on one port: the login server started once
        ((_, port),) = seen
        assert len(browser.opened) == 1, browser.opened
        redirect_uri = dict(parse_qsl(urlsplit(browser.opened[0]).query))["redirect_uri"]
        assert urlsplit(redirect_uri).port == port, (redirect_uri, seen)  # the link names the port listened on
        entries = json.loads((tmp_path / "config" / "backchannel" / "oauth.json").read_text())
        assert entries[f"client {rotating.issuer}"]["redirect_uris"] == [redirect_uri]  # and so does the registration

    run(body, timeout=180)
