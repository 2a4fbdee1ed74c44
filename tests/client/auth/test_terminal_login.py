"""The terminal client logs in (2026-07-28 authorization, as a person meets it): ``backchannel
connect URL --no-browser`` in a pseudo-terminal prints the login link; headless Chromium opens
it, the authorization server (oidc-provider) logs the person in and sends the browser back to
the client's listener on 127.0.0.1, whose page says the browser's part is done; the session
starts, and a tool answers as that person. The tokens are kept in a file readable by its owner
only, so the next ``connect`` needs no login; ``backchannel logout URL`` forgets them, and the
connect after that asks for a login again."""

from __future__ import annotations

import json
import re
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from _browser_login import LINK as _LINK
from _browser_login import log_in_with_chromium, need_chromium, protected_server

from _pty import Screen, terminal_env

need_chromium()
pytestmark = pytest.mark.interop


def finish(screen: Screen) -> None:
    screen.line("quit")
    screen.child.expect(pexpect.EOF)


@pytest.fixture
def protected(oidc: Any) -> Iterator[str]:
    with protected_server(oidc) as url:
        yield url


def test_connect_logs_in_in_the_browser_keeps_the_tokens_and_logout_forgets_them(
    oidc: Any, protected: str, tmp_path: Path
) -> None:
    env = terminal_env(XDG_CONFIG_HOME=str(tmp_path / "config"))
    first = Screen("connect", "--no-browser", protected, env=env, columns=400)
    try:
        link = first.expect(_LINK).group(1)
        assert "code_challenge_method=S256" in link and "resource=" in link
        assert log_in_with_chromium(link, tmp_path / "chromium") == "Back to the program"
        first.expect("protected>")
        first.line("call whoami")
        first.expect(re.escape(f"{oidc.issuer}#alice#"))
        finish(first)
    finally:
        first.child.close(force=True)

    kept = tmp_path / "config" / "backchannel" / "oauth.json"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    entries = json.loads(kept.read_text())
    assert entries[f"tokens {oidc.issuer} {protected}"]["refresh_token"]
    assert entries[f"endpoint {protected}"]["issuer"] == oidc.issuer

    again = Screen("connect", "--no-browser", protected, env=env, columns=400)  # the kept tokens: no login
    try:
        again.expect("protected>")
        assert "To log in" not in again.text
        again.line("call whoami")
        again.expect(re.escape(f"{oidc.issuer}#alice#"))
        finish(again)
    finally:
        again.child.close(force=True)

    out = subprocess.run(
        [sys.executable, "-m", "backchannel", "logout", protected], env=env, capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 0 and f"logged out of {protected}" in out.stdout, out
    entries = json.loads(kept.read_text())
    assert f"tokens {oidc.issuer} {protected}" not in entries and f"endpoint {protected}" not in entries

    after = Screen("connect", "--no-browser", protected, env=env, columns=400)  # forgotten: a login again
    try:
        after.expect(_LINK)
    finally:
        after.child.close(force=True)
