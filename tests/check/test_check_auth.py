"""``backchannel check``'s authorization group (issue #33), against a protected server of ours
(``protected_server.py``: ``ResourceAuth`` over a fixed table of tokens), as a process:

- strict: a request without a token gets 401 and a Bearer challenge naming the metadata, the
  metadata names the server and its authorization server, a token it never issued gets 401,
  one for another resource 401, one without the scope 403 ``insufficient_scope``;
- lax (it accepts the other resource's tokens and needs no scope): the audience and scope checks
  fail, each with the exchange that shows it.

The tokens reach ``check`` by the names of environment variables, never on its command line.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@contextlib.contextmanager
def protected(*options: str) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, str(HERE / "protected_server.py"), *options], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), "the protected server did not start (its error is above)"
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def check_auth(url: str) -> tuple[int, dict[str, Any], str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "GOOD": "Bearer good-token",
        "FOREIGN": "foreign-token",
        "WEAK": "weak-token",
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "backchannel",
            "check",
            "--json",
            "--quiet",
            "--group",
            "auth",
            "--header",
            "Authorization: Bearer good-token",
            "--foreign-token-env",
            "FOREIGN",
            "--weak-token-env",
            "WEAK",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=env,
    )
    card: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, card, done.stderr


def test_a_protected_server_passes_the_authorization_checks() -> None:
    with protected() as url:
        status, card, stderr = check_auth(url)
    verdicts = {entry["check"]: entry["verdict"] for entry in card["checks"]}
    assert verdicts == dict.fromkeys(
        ("auth.challenge", "auth.metadata", "auth.invalid-token", "auth.audience", "auth.scope"), "pass"
    ), card
    assert status == 0, stderr


def test_a_lax_server_fails_audience_and_scope_with_the_evidence() -> None:
    with protected("--lax") as url:
        status, card, _ = check_auth(url)
    failed = {entry["check"]: entry for entry in card["checks"] if entry["verdict"] == "fail"}
    assert set(failed) == {"auth.audience", "auth.scope"}
    assert status == 1
    assert "a token for another resource got HTTP 200" in failed["auth.audience"]["evidence"]["summary"]
    exchange = "\n".join(line["message"] for line in failed["auth.scope"]["evidence"]["exchange"])
    assert "a token without the scopes" in exchange and "HTTP 200" in exchange
