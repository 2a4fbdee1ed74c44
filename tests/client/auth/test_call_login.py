"""Scripts and protected servers (issue 27, item 8), against our protected server as a process of
its own and a real authorization server (oidc-provider):

- ``backchannel call URL`` uses the login ``backchannel connect`` keeps (the same token file),
  refreshing its token at the token endpoint when it has run out or is refused, with no browser;
- with no login kept it says, in one line, to run ``connect`` once, and exits with 2 (``call
  --help``: no answer);
- ``--header NAME:VALUE`` (repeatable) reaches the server on every request, from ``call`` and
  from ``connect``; an ``Authorization`` header is a token given as is;
- in ``connect``, a tool hidden for want of a scope is asked for by name (``call purge``), and
  its 403 ``insufficient_scope`` starts the step-up: a login for the larger scope, in the
  browser (headless Chromium here), then the call again.

The kept login of the ``call`` tests is made in process by ``OAuth`` with the same file store
``connect`` uses (``test_terminal_login.py`` shows ``connect`` writing it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from _browser_login import LINK, log_in_with_chromium, protected_server, received_headers
from _client_harness import FollowingBrowser

from _pty import Screen, terminal_env
from _subprocesses import run_cli
from backchannel import Client
from backchannel.client.oauth import FileTokenStore, OAuth
from backchannel.testing import run
from backchannel.ui.login import CLIENT_NAME

pytestmark = pytest.mark.interop


@pytest.fixture
def server(oidc: Any, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The protected server's URL, and the file its received headers go to."""
    log = tmp_path / "headers.jsonl"
    with protected_server(oidc, log) as url:
        yield url, log


def token_file(config: Path) -> Path:
    return config / "backchannel" / "oauth.json"


def log_in(url: str, config: Path) -> None:
    """A person's login, kept where ``connect`` keeps it (``$XDG_CONFIG_HOME/backchannel``)."""

    async def body() -> None:
        auth = OAuth(FollowingBrowser(), store=FileTokenStore(token_file(config)), client_name=CLIENT_NAME)
        async with Client.http(url, auth=auth) as client:
            await client.call_tool("whoami", {})

    run(body, timeout=60)


def backchannel(*args: str, config: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    # BROWSER=/bin/false: a browser that would be opened fails (and none must be).
    env = {**os.environ, "XDG_CONFIG_HOME": str(config), "BROWSER": "/bin/false"}
    return run_cli(*args, timeout=90, stdin=stdin, env=env)


def bearers(log: Path) -> list[str]:
    """The access tokens the server received, in order (the metadata fetches carry none)."""
    return [h["authorization"].removeprefix("Bearer ") for h in received_headers(log) if "authorization" in h]


def test_call_uses_the_login_connect_keeps(oidc: Any, server: tuple[str, Path], tmp_path: Path) -> None:
    url, log = server
    log_in(url, tmp_path)
    kept = json.loads(token_file(tmp_path).read_text())[f"tokens {oidc.issuer} {url}"]
    log.unlink()
    done = backchannel("call", "whoami", "--json", "--", url, config=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["content"][0]["text"].startswith(f"{oidc.issuer}#alice#")
    assert set(bearers(log)) == {kept["access_token"]}  # the kept token, on every request
    assert done.stderr == ""


@pytest.mark.parametrize("how", ["expired", "refused"])
def test_call_refreshes_the_kept_token_without_a_browser(
    oidc: Any, server: tuple[str, Path], tmp_path: Path, how: str
) -> None:
    """``expired``: the kept token has run out (the client knows: refreshed before it is sent);
    ``refused``: the server answers it 401 (refreshed then). Either way no login, no browser."""
    url, log = server
    log_in(url, tmp_path)
    path = token_file(tmp_path)
    entries = json.loads(path.read_text())
    tokens = entries[f"tokens {oidc.issuer} {url}"]
    if how == "expired":
        tokens["expires_at"] = time.time() - 60
    else:
        tokens["access_token"] = "a-token-the-server-never-issued"
    path.write_text(json.dumps(entries))
    log.unlink()
    done = backchannel("call", "whoami", "--", url, config=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"{oidc.issuer}#alice#" in done.stdout
    assert "log in" not in done.stderr
    fresh = json.loads(path.read_text())[f"tokens {oidc.issuer} {url}"]
    assert fresh["access_token"] != tokens["access_token"] and fresh["expires_at"] > time.time()
    sent = bearers(log)
    assert sent[-1] == fresh["access_token"]
    assert (tokens["access_token"] in sent) is (how == "refused")  # an expired one is not even sent


def test_call_without_a_login_says_to_connect_once(server: tuple[str, Path], tmp_path: Path) -> None:
    url, _ = server
    advice = f"{url} needs a login: run `backchannel connect {url}` once; call then uses the login it keeps"
    done = backchannel("call", "whoami", "--", url, config=tmp_path)
    assert done.returncode == 2  # call --help: 2, no answer
    assert done.stderr.splitlines() == [f"backchannel call: {advice}"]
    assert done.stdout == ""
    as_json = backchannel("call", "whoami", "--json", "--", url, config=tmp_path)
    assert as_json.returncode == 2
    assert json.loads(as_json.stdout) == {"error": {"code": -32000, "message": advice}}
    assert not token_file(tmp_path).exists()  # nothing registered or kept on the way


def test_headers_reach_the_server_from_call_and_connect(oidc: Any, server: tuple[str, Path], tmp_path: Path) -> None:
    url, log = server
    log_in(url, tmp_path)
    log.unlink()
    done = backchannel(
        "call", "whoami", "--header", "X-Job: nightly", "--header", "X-Trace:a1", "--", url, config=tmp_path
    )
    assert done.returncode == 0, done.stderr
    mcp = received_headers(log)
    assert mcp and all(h.get("x-job") == "nightly" and h.get("x-trace") == "a1" for h in mcp)
    log.unlink()
    session = backchannel("connect", "--header", "X-Job: by hand", url, config=tmp_path, stdin="call whoami\nquit\n")
    assert session.returncode == 0, session.stdout + session.stderr
    assert f"{oidc.issuer}#alice#" in session.stdout
    mcp = received_headers(log)
    assert mcp and all(h.get("x-job") == "by hand" for h in mcp)


def test_call_takes_a_token_as_an_authorization_header(oidc: Any, server: tuple[str, Path], tmp_path: Path) -> None:
    url, log = server
    token = run(lambda: oidc.token("svc-alice", url))["access_token"]
    done = backchannel("call", "whoami", "--header", f"Authorization: Bearer {token}", "--", url, config=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"{oidc.issuer}#svc-alice#" in done.stdout
    assert set(bearers(log)) == {token}
    assert not token_file(tmp_path).exists()  # no login was kept or needed


def test_header_is_refused_for_a_command_and_when_malformed(tmp_path: Path) -> None:
    done = backchannel("call", "whoami", "--header", "X-Job: 1", "--", sys.executable, "-c", "pass", config=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "backchannel call: --header is for an http(s):// server; this server is a command, spoken to over stdio"
    ]
    bad = backchannel("call", "whoami", "--header", "no colon", "--", "http://127.0.0.1:1/mcp", config=tmp_path)
    assert bad.returncode == 2 and "is not NAME:VALUE" in bad.stderr
    ours = backchannel(
        "call", "whoami", "--header", "Mcp-Session-Id: x", "--", "http://127.0.0.1:1/mcp", config=tmp_path
    )
    assert ours.returncode == 2 and "written by the MCP transport itself" in ours.stderr


def test_connect_steps_up_for_a_hidden_tool_asked_for_by_name(
    oidc: Any, server: tuple[str, Path], tmp_path: Path
) -> None:
    url, _ = server
    env = terminal_env(XDG_CONFIG_HOME=str(tmp_path / "config"))
    screen = Screen("connect", "--no-browser", url, env=env, columns=400)
    try:
        first = screen.expect(LINK).group(1)
        assert log_in_with_chromium(first, tmp_path / "chromium") == "Back to the program"
        screen.expect("protected>")
        screen.line("tools")
        screen.expect("whoami")
        screen.expect("protected>")
        assert "purge" not in screen.text  # hidden: the token lacks mcp:admin
        screen.line("call purge")
        screen.expect(r"The server lists no tool 'purge'; asking for it by name")
        second = screen.expect(LINK).group(1)  # 403 insufficient_scope: a login for the larger scope
        assert "mcp%3Aadmin" in second or "mcp:admin" in second
        assert log_in_with_chromium(second, tmp_path / "chromium") == "Back to the program"
        screen.expect("purged")
        screen.expect("protected>")
        screen.line("quit")
        screen.child.expect(pexpect.EOF)
    finally:
        screen.close()
    entries = json.loads(token_file(tmp_path / "config").read_text())
    assert "mcp:admin" in entries[f"endpoint {url}"]["requested"]
