"""What the terminal tests of logging in share: our protected server as a process of its own
(``protected_server.py``, optionally recording the headers it receives), and headless Chromium
opening a login link as a person's browser would (the authorization server, oidc-provider, logs
the person in without a page and sends the browser back to the client's listener)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
CHROMIUM = "/usr/bin/chromium"
#: The line the terminal client prints with ``--no-browser``; group 1 is the link.
LINK = r"To log in, open this link in a browser: (http://127\.0\.0\.1:\d+/\S+)"

__all__ = ["CHROMIUM", "LINK", "log_in_with_chromium", "need_chromium", "protected_server", "received_headers"]


def need_chromium() -> Any:
    """Skip the calling module without Chromium and playwright; the ``playwright.sync_api`` module."""
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        missing = f"{CHROMIUM} is missing: run tests/peers/install-browser.sh (apt chromium)"
        pytest.skip(missing, allow_module_level=True)
    return pytest.importorskip("playwright.sync_api", reason="playwright (the dev extra) is not installed")


@contextlib.contextmanager
def protected_server(oidc: Any, headers_log: Path | None = None) -> Iterator[str]:
    """``protected_server.py`` for ``oidc``'s tokens, until the block ends; yields its URL."""
    command = [sys.executable, str(HERE / "protected_server.py"), oidc.issuer, oidc.jwks_uri]
    if headers_log is not None:
        command.append(str(headers_log))
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), "the protected server did not start (its error is above)"
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def received_headers(headers_log: Path) -> list[dict[str, str]]:
    """The headers of each request that reached ``protected_server.py`` (those to its MCP endpoint)."""
    lines = headers_log.read_text(encoding="utf-8").splitlines() if headers_log.exists() else []
    return [entry["headers"] for entry in map(json.loads, lines) if entry["path"] == "/mcp"]


def log_in_with_chromium(url: str, profile: Path) -> str:
    """Open the login link in headless Chromium; the heading of the page it ends on."""
    playwright_sync = need_chromium()
    with playwright_sync.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.goto(url)
            page.wait_for_url(re.compile(r"http://127\.0\.0\.1:\d+/callback\?"))
            heading: str = page.inner_text("h1")
            assert page.url.split("?")[0].endswith("/callback") and "code=" in page.url
            return heading
        finally:
            context.close()
