"""``backchannel check URL`` logs in as ``connect`` does (issue #33): against our protected server
and a real authorization server (oidc-provider). With ``--no-browser`` the link is printed on
stderr before any check starts its clock (the person takes longer than --timeout to open it);
headless Chromium follows it, the checks then run as
that person (every request to the server carries the bearer token), and the login is kept: the
next ``check`` needs no link.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _browser_login import LINK, log_in_with_chromium, need_chromium, protected_server, received_headers

pytestmark = pytest.mark.interop
ROOT = Path(__file__).resolve().parents[3]
#: How long the person takes to open the link: more than the checks' --timeout (2 s), whose clocks
#: must not run meanwhile.
PERSON_SECONDS = 4.0


def check(url: str, stderr: Path, config: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(config), "BROWSER": "/bin/false", "PYTHONPATH": str(ROOT / "src")}
    words = [
        "check",
        "--no-browser",
        "--json",
        "--quiet",
        "--timeout",
        "2",
        "--group",
        "eras",
        "--era",
        "handshake",
        url,
    ]
    return subprocess.Popen(
        [sys.executable, "-m", "backchannel", *words],
        stdout=subprocess.PIPE,
        stderr=stderr.open("w"),
        text=True,
        cwd=ROOT,
        env=env,
    )


def card_of(process: subprocess.Popen[str], timeout: float = 300) -> dict[str, Any]:
    out, _ = process.communicate(timeout=timeout)
    card: dict[str, Any] = json.loads(out)
    return card


def test_check_logs_in_by_a_printed_link_and_keeps_the_login(oidc: Any, tmp_path: Path) -> None:
    need_chromium()
    log = tmp_path / "headers.jsonl"
    with protected_server(oidc, log) as url:
        first = check(url, tmp_path / "first.stderr", tmp_path / "config")
        try:
            deadline = time.monotonic() + 60
            link = None
            while link is None and time.monotonic() < deadline:
                found = re.search(LINK, (tmp_path / "first.stderr").read_text())
                if found:
                    link = found.group(1)
                else:
                    assert first.poll() is None, (tmp_path / "first.stderr").read_text()
                    time.sleep(0.05)
            assert link is not None, f"no login link: {(tmp_path / 'first.stderr').read_text()}"
            time.sleep(PERSON_SECONDS)  # a person reads the link: longer than any check may wait for an answer
            assert log_in_with_chromium(link, tmp_path / "chromium") == "Back to the program"
            card = card_of(first)
        finally:
            first.kill()
        verdicts = {entry["id"]: entry["verdict"] for entry in card["checks"]}
        assert verdicts["eras.initialize@2025-11-25"] == "pass", card
        assert verdicts["eras.ping@2025-11-25"] == "pass"
        seen = received_headers(log)
        assert seen and all(headers.get("authorization", "").startswith("Bearer ") for headers in seen[1:])

        again = check(url, tmp_path / "again.stderr", tmp_path / "config")
        try:
            card = card_of(again)
        finally:
            again.kill()
        assert "To log in" not in (tmp_path / "again.stderr").read_text()  # the kept login: no link
        assert {entry["id"]: entry["verdict"] for entry in card["checks"]}["eras.initialize@2025-11-25"] == "pass"
