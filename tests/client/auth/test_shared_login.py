"""Several processes that share one token store start at once against the same protected server
(issue #29, "Logging in for hosts that can't": a desktop host starts a bridge per window). The
authorization server is a real oidc-provider that rotates refresh tokens (a refresh token spent
twice revokes the whole grant) and counts what its token and registration endpoints did.

- Four processes with no tokens: one login, one dynamic registration, and every process answers
  as the same person with the same client.
- Four processes whose kept access token ran out: one refresh, every refresh token presented once,
  no ``invalid_grant``, no second login.

``one_client`` is the one function that knows what a client process is (today a small script,
``oauth_client_process.py``); point it at ``backchannel proxy URL`` and the rest stands."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urljoin, urlsplit

import httpx2
import pytest
from _auth_harness import AuthorizationServer, authorization_server, jwt_auth, scoped_server, serving
from _browser_login import LINK
from _client_harness import provider_config

from backchannel.testing import run
from peers.paths import NODE_MODULES, have_npm_peers

pytestmark = pytest.mark.interop

CLIENT = Path(__file__).resolve().parent / "oauth_client_process.py"
PROCESSES = 4
#: How long the person takes to log in (a person's pace, not a wait for anything).
LOGIN_TIME = 2.0
#: How long the authorization server takes to answer a token request (a busy server's pace).
TOKEN_DELAY = 2.0


@pytest.fixture
def rotating() -> Iterator[AuthorizationServer]:
    """An oidc-provider of this test's own that rotates every refresh token, answers ``/control/grants``, and is
    busy: its token endpoint answers ``TOKEN_DELAY`` later, so grants the processes make at once overlap."""
    if not have_npm_peers() or not (NODE_MODULES / "oidc-provider").is_dir():
        pytest.skip("the npm peers (oidc-provider) are not installed: run tests/peers/install.sh")
    config = provider_config() | {"rotateRefreshToken": True, "control": True, "tokenDelayMs": int(TOKEN_DELAY * 1000)}
    with authorization_server(config) as server:
        yield server


class PersonsBrowser:
    """The person's one browser (one cookie jar): it opens each login link a process prints and follows the
    authorization server's redirects to that process's loopback listener. The person takes ``LOGIN_TIME``
    seconds to log in, as people do: time enough for the other processes to need a login too."""

    def __init__(self) -> None:
        self.cookies = httpx2.Cookies()
        self.opened: list[str] = []

    async def open(self, link: str) -> None:
        self.opened.append(link)
        await asyncio.sleep(LOGIN_TIME)
        redirect_uri = dict(parse_qsl(urlsplit(link).query))["redirect_uri"]
        url = link
        async with httpx2.AsyncClient(timeout=10, cookies=self.cookies) as http:
            for _ in range(10):
                answer = await http.get(url)
                if url.startswith(redirect_uri):
                    assert answer.status_code == 200 and "Back to the program" in answer.text, answer.text
                    return
                assert answer.status_code in (302, 303), answer.text
                url = urljoin(url, answer.headers["location"])
        raise AssertionError("the login never came back to the redirect URI")


async def one_client(url: str, env: dict[str, str], browser: PersonsBrowser, everyone_up: asyncio.Barrier) -> str:
    """One client process for ``url``: started, held until every process is up, then it calls ``whoami`` (logging
    in if it must: ``browser`` opens the link it prints on stderr); its answer. The one place that knows what a
    client process is."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(CLIENT),
        url,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    said: list[str] = []

    async def read_stderr(stream: asyncio.StreamReader) -> None:
        while line := (await stream.readline()).decode():
            said.append(line.rstrip())
            if found := re.search(LINK, line):
                await browser.open(found.group(1))

    errors = asyncio.create_task(read_stderr(process.stderr))
    try:
        assert (await process.stdout.readline()).strip() == b"ready", said
        await everyone_up.wait()
        process.stdin.write(b"go\n")
        await process.stdin.drain()
        answer = (await process.stdout.readline()).decode().strip()
        await process.wait()
        await errors
        assert process.returncode == 0 and answer, said
        return answer
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        errors.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await errors


async def run_clients(url: str, config_home: Path, count: int) -> tuple[list[str], PersonsBrowser]:
    """``count`` client processes sharing the token store under ``config_home``, let go at once; their answers,
    and the browser that opened their login links."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(config_home)}
    browser, everyone_up = PersonsBrowser(), asyncio.Barrier(count)
    answers = await asyncio.gather(*(one_client(url, env, browser, everyone_up) for _ in range(count)))
    return list(answers), browser


async def endpoint_counts(server: AuthorizationServer) -> dict[str, Any]:
    async with httpx2.AsyncClient(timeout=10) as http:
        counts: dict[str, Any] = (await http.get(f"{server.issuer}/control/grants")).json()
    return counts


def test_four_processes_started_at_once_log_in_once(rotating: AuthorizationServer, tmp_path: Path) -> None:
    async def body() -> None:
        async with serving(scoped_server(), jwt_auth(rotating.issuer, rotating.jwks_uri)) as (url, _):
            answers, browser = await run_clients(url, tmp_path / "config", PROCESSES)
            counts = await endpoint_counts(rotating)
        assert counts["registrations"] == 1, counts  # one client, registered once
        assert counts["grants"] == {"authorization_code": 1} and counts["errors"] == {}, counts  # one login
        assert len(browser.opened) == 1, browser.opened  # the person was asked once
        assert len(set(answers)) == 1 and answers[0].startswith(f"{rotating.issuer}#alice#"), answers

    run(body, timeout=120)


def test_four_processes_refresh_a_rotating_token_once(rotating: AuthorizationServer, tmp_path: Path) -> None:
    async def body() -> None:
        async with serving(scoped_server(), jwt_auth(rotating.issuer, rotating.jwks_uri)) as (url, _):
            (first,), _ = await run_clients(url, tmp_path / "config", 1)  # the login, kept in the store
            store = tmp_path / "config" / "backchannel" / "oauth.json"
            entries = json.loads(store.read_text())
            kept = entries[f"tokens {rotating.issuer} {url}"]
            assert kept["refresh_token"]
            kept["expires_at"] = time.time() - 1  # as if the access token had run out
            store.write_text(json.dumps(entries))
            answers, browser = await run_clients(url, tmp_path / "config", PROCESSES)
            counts = await endpoint_counts(rotating)
        assert counts["errors"] == {}, counts  # no invalid_grant: no refresh token was presented twice
        assert counts["presented"] == [kept["refresh_token"]], counts  # one refresh, with the kept token
        assert counts["grants"] == {"authorization_code": 1, "refresh_token": 1}, counts
        assert not browser.opened, browser.opened  # nobody logged in again
        assert set(answers) == {first}, answers
        assert json.loads(store.read_text())[f"tokens {rotating.issuer} {url}"]["refresh_token"] == counts["issued"][-1]

    run(body, timeout=120)
