"""``backchannel proxy URL`` logs in for a host that can't (issue #29), as ``connect`` and ``call``
do: against our protected server as a process of its own and a real authorization server
(oidc-provider), with the proxy spawned on pipes by a host that writes JSON lines.

- ``--no-browser``: the first request the upstream refuses starts the login; the link is printed on
  the proxy's stderr (its stdout is the host's channel), headless Chromium follows it, and the
  host's ``initialize`` is then answered and its calls run as that person. The tokens are kept
  where ``connect`` keeps them: the next proxy logs in with no link.
- ``--client-id`` with ``--client-secret-env``: the client credentials grant, no browser; the
  ``--header`` given reaches the upstream on every request.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _auth_harness import SECRET
from _browser_login import LINK, log_in_with_chromium, need_chromium, protected_server, received_headers

from bridge._stdio_host import INITIALIZE, StdioHost

pytestmark = pytest.mark.interop


@pytest.fixture
def server(oidc: Any, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The protected server's URL, and the file its received headers go to."""
    log = tmp_path / "headers.jsonl"
    with protected_server(oidc, log) as url:
        yield url, log


def whoami(host: StdioHost) -> str:
    answer = host.request("tools/call", {"name": "whoami", "arguments": {}}, timeout=60)
    assert "result" in answer, answer
    text: str = answer["result"]["content"][0]["text"]
    return text


def link_on_stderr(host: StdioHost, timeout: float = 60.0) -> str:
    """The login link the proxy prints on its stderr, once it is there."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found := re.search(LINK, host.stderr()):
            return found.group(1)
        assert host.process.poll() is None, f"the proxy exited: {host.stderr()}"
        time.sleep(0.05)
    raise AssertionError(f"no login link within {timeout} s: {host.stderr()}")


def test_the_proxy_logs_in_by_a_printed_link_and_keeps_the_login(
    oidc: Any, server: tuple[str, Path], tmp_path: Path
) -> None:
    need_chromium()
    url, _ = server
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "BROWSER": "/bin/false"}
    first = StdioHost("--no-browser", url, stderr_path=tmp_path / "first.stderr", env=env)
    try:
        first.send({"id": 1, "method": "initialize", "params": INITIALIZE})
        link = link_on_stderr(first)
        assert "code_challenge_method=S256" in link and "resource=" in link
        assert log_in_with_chromium(link, tmp_path / "chromium") == "Back to the program"
        answer = first.read(timeout=60)
        assert answer["id"] == 1 and "result" in answer, answer
        first.send({"method": "notifications/initialized"})
        assert whoami(first).startswith(f"{oidc.issuer}#alice#")
        assert first.close() == 0
    finally:
        first.kill()

    again = StdioHost("--no-browser", url, stderr_path=tmp_path / "again.stderr", env=env)
    try:
        assert "result" in again.initialize(timeout=60)
        assert whoami(again).startswith(f"{oidc.issuer}#alice#")
        assert "To log in" not in again.stderr()  # the kept login: no link
        assert again.close() == 0
    finally:
        again.kill()


def test_the_proxy_logs_in_with_client_credentials_and_sends_the_headers_given(
    server: tuple[str, Path], tmp_path: Path
) -> None:
    url, log = server
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "BROWSER": "/bin/false", "PROXY_SECRET": SECRET}
    host = StdioHost(
        "--client-id",
        "svc-alice",
        "--client-secret-env",
        "PROXY_SECRET",
        "--header",
        "X-Trace: proxy-test",
        url,
        stderr_path=tmp_path / "stderr",
        env=env,
    )
    try:
        assert "result" in host.initialize(timeout=60)
        assert "svc-alice" in whoami(host)
        assert host.close() == 0
        assert "To log in" not in host.stderr()
    finally:
        host.kill()
    seen = received_headers(log)
    assert seen and all(headers.get("x-trace") == "proxy-test" for headers in seen)
    assert any(headers.get("authorization", "").startswith("Bearer ") for headers in seen)
