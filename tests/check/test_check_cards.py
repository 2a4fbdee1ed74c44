"""``backchannel check``'s report cards (issue #33), each made by the command as a person runs it.

- A deliberately broken server (``broken_server.py``): every fault it was written with is
  named by the check that catches it, with the exchange that shows it; exit status 1. The
  HTML card opens in headless Chromium: the verdicts table is visible and a failure opens on
  its evidence.
- Our own "everything" server (``tests/conformance/everything_server.py``), over Streamable
  HTTP and over stdio, in both eras: it passes everything it declares; exit status 0.
- server-everything (the TypeScript SDK's reference server) over stdio, its ``get-env`` and
  ``gzip-file-as-resource`` excluded: every line sent to it is kept (``tee_stdin.py``), and
  neither is ever called; its card fails exactly the checks docs/check.md explains.

Every check talks to 127.0.0.1 or a child process only, and the fuzzing is bounded (--budget).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent / "conformance"))

from fixture_servers import FixtureServer  # noqa: E402

from peers.paths import EVERYTHING_STDIO_CMD, have_npm_peers  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
BUDGET = "120"

#: Each fault of broken_server.py, by the check that must name it.
BROKEN = {
    "eras.counter-offer@2025-11-25": "countered with '1999-01-01'",
    "eras.ping@2025-11-25": "not empty",
    "elicitation.gate@2025-11-25": "declared no elicitation",
    "elicitation.decline@2025-11-25": "asked the same form again",
    "elicitation.no-secrets@2025-11-25": "password",
    "elicitation.validation@2025-11-25": "as if it were valid",
    "url.gate@2025-11-25": "declared only forms",
    "url.shape@2025-11-25": "no elicitationId",
    "roots.gate@2025-11-25": "declared no roots",
    "sampling.gate@2025-11-25": "declared none",
    "sampling.shape@2025-11-25": "maxTokens",
    "completion.cap@2025-11-25": "150 values",
    "completion.total@2025-11-25": "total 120 with 150 values",
    "completion.errors@2025-11-25": "not -32602",
    "progress.monotonic@2025-11-25": "[1, 3, 2, 4]",
    "progress.after-answer@2025-11-25": "came after the answer",
    "cancel.no-answer@2025-11-25": "answered after its cancellation",
    "cancel.stops@2025-11-25": "the work did not stop",
    "logging.levels@2025-11-25": "with error asked for",
    "logging.secrets@2025-11-25": "a bearer token",
    "robustness.capabilities@2025-11-25": "prompts/list",
    "robustness.parse-error@2025-11-25": "-32603",
    "robustness.invalid-request@2025-11-25": "-32603",
    "robustness.unknown-method@2025-11-25": "-32603",
    "robustness.invalid-params@2025-11-25": "-32603",
    "robustness.oversized@2025-11-25": "stopped answering",
    "robustness.deep@2025-11-25": "-32603",
    "robustness.fuzz@2025-11-25": "breach",
    "robustness.fuzz-errors@2025-11-25": "internal error",
    "robustness.dead-client@2025-11-25": "still running",
    "robustness.stdout": "broken server ready",
}

#: What server-everything fails, each explained in docs/check.md ("server-everything").
EVERYTHING_FAILS = {
    "elicitation.validation@2025-11-25",
    "cancel.stops@2025-11-25",
    "cancel.initialize@2025-11-25",
    "logging.bad-level@2025-11-25",
    "robustness.parse-error@2025-11-25",
    "robustness.invalid-request@2025-11-25",
    "robustness.invalid-params@2025-11-25",
    "robustness.fuzz-errors@2025-11-25",
    "robustness.dead-client@2025-11-25",
}


def check(*words: str, timeout: float = 900) -> tuple[int, dict[str, Any], str]:
    """``backchannel check --json --quiet WORDS``: its exit status, its card, its stderr."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "backchannel", "check", "--json", "--quiet", "--budget", BUDGET, *words],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
    )
    try:
        card = json.loads(done.stdout)
    except ValueError:
        said = f"no JSON card (status {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        raise AssertionError(said) from None
    return done.returncode, card, done.stderr


def verdicts(card: dict[str, Any]) -> dict[str, str]:
    return {entry["id"]: entry["verdict"] for entry in card["checks"]}


def failures(card: dict[str, Any]) -> dict[str, str]:
    return {entry["id"]: entry["evidence"]["summary"] for entry in card["checks"] if entry["verdict"] == "fail"}


# -- the broken server ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], Path]:
    page = tmp_path_factory.mktemp("card") / "broken.html"
    status, card, _ = check("--html", str(page), "--", sys.executable, str(HERE / "broken_server.py"))
    return status, card, page


def test_the_broken_server_has_each_fault_named_with_its_evidence(broken: tuple[int, dict[str, Any], Path]) -> None:
    status, card, _ = broken
    assert status == 1
    found = failures(card)
    missing = {check_id: words for check_id, words in BROKEN.items() if words not in found.get(check_id, "")}
    assert missing == {}, "not named as expected:\n" + "\n".join(f"{k}: {found.get(k)!r}" for k in missing)
    for entry in card["checks"]:
        assert {"id", "group", "verdict", "spec", "evidence"} <= entry.keys()
        assert entry["verdict"] in ("pass", "fail", "n/a")
        assert entry["group"] in ("eras", "second-layer", "robustness")
        if entry["verdict"] == "fail":
            assert entry["evidence"].get("exchange"), f"{entry['id']} failed without its exchange"
    assert card["target"].endswith("broken_server.py")


def test_what_the_broken_server_does_right_passes(broken: tuple[int, dict[str, Any], Path]) -> None:
    _, card, _ = broken
    seen = verdicts(card)
    for right in (
        "eras.initialize@2025-11-25",
        "eras.version-echo@2025-11-25",
        "progress.token@2025-11-25",
        "progress.unasked@2025-11-25",
        "cancel.goes-on@2025-11-25",
        "cancel.initialize@2025-11-25",
        "logging.set-level@2025-11-25",
        "elicitation.accept@2025-11-25",
    ):
        assert seen.get(right) == "pass", (right, seen.get(right))
    assert seen["eras.discover"] == "n/a"  # a handshake-era server: not its fault


def test_the_html_card_shows_the_verdicts_and_opens_a_failure_in_chromium(
    broken: tuple[int, dict[str, Any], Path],
) -> None:
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(f"{CHROMIUM} is missing: run tests/peers/install-browser.sh (apt chromium)")
    playwright = pytest.importorskip("playwright.async_api", reason="playwright (the dev extra) is not installed")
    _, _, page_path = broken

    async def look() -> None:
        async with playwright.async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            try:
                page = await browser.new_page()
                await page.goto(page_path.as_uri())
                tables = page.locator("table.verdicts")
                assert await tables.count() == 3
                assert await tables.first.is_visible()
                row = page.locator('tr[id="progress.after-answer@2025-11-25"]')
                assert await row.is_visible()
                assert "fail" in (await row.locator(".verdict").inner_text())
                assert "came after the answer" in await row.inner_text()
                evidence = page.locator('tr[id="progress.after-answer@2025-11-25-evidence"]')
                exchange = evidence.locator("ol.exchange")
                assert not await exchange.is_visible()  # closed until asked
                await evidence.locator("details summary").click()
                assert await exchange.is_visible()
                text = await exchange.inner_text()
                assert "notifications/progress" in text and "tools/call" in text  # what was sent, what came back
                assert await page.locator("tr.evidence").count() == len(failures(broken[1]))
                assert await page.locator("tr.pass").count() > 0
            finally:
                await browser.close()

    asyncio.run(look())


# -- our everything server ------------------------------------------------------------------------


def _passes_everything(card: dict[str, Any], status: int, stderr: str) -> None:
    assert failures(card) == {}, stderr[-3000:]
    assert status == 0
    assert card["eras"] == {"handshake": "2025-11-25", "stateless": "2026-07-28"}
    seen = verdicts(card)
    for revision in ("2025-11-25", "2026-07-28"):
        for check_id in (
            "elicitation.gate",
            "elicitation.accept",
            "elicitation.decline",
            "elicitation.cancel",
            "elicitation.validation",
            "roots.gate",
            "sampling.gate",
            "completion.cap",
            "progress.monotonic",
            "progress.after-answer",
            "logging.levels",
            "logging.secrets",
        ):
            assert seen.get(f"{check_id}@{revision}") == "pass", (check_id, revision)
    for check_id in ("tasks.create", "tasks.status", "tasks.fields", "tasks.result", "tasks.cancel"):
        assert seen.get(f"{check_id}@2025-11-25") == "pass", check_id
    not_applicable = {
        entry["id"]: entry["evidence"]["summary"] for entry in card["checks"] if entry["verdict"] == "n/a"
    }
    for check_id, why in not_applicable.items():  # only what the fixture has no tool for, or cannot be seen
        assert any(
            words in why
            for words in (
                "no tool",
                "sent no progress",
                "nothing is left to observe",
                "closing a stream",
                "answers initialize",
                "asks for no authorization",
                "the 2026-07-28 tasks extension",
            )
        ), (check_id, why)


def test_our_everything_server_over_http_passes_everything_it_declares(tmp_path: Path) -> None:
    with FixtureServer(tmp_path / "server.log") as server:
        status, card, stderr = check(server.url)
    _passes_everything(card, status, stderr)
    seen = verdicts(card)
    for http_only in (
        "http.origin",
        "http.host",
        "http.unknown-session",
        "http.slow-body",
        "http.sessions",
        "eras.version-header",
    ):
        assert seen.get(f"{http_only}@2025-11-25") == "pass", http_only
    assert seen.get("eras.unsupported-version-http@2026-07-28") == "pass"
    for check_id in ("auth.challenge", "auth.metadata", "auth.invalid-token", "auth.audience", "auth.scope"):
        assert seen.get(f"{check_id}@2025-11-25") == "n/a", check_id  # it asks for no authorization


def test_our_everything_server_over_stdio_passes_everything_it_declares() -> None:
    status, card, stderr = check("--", sys.executable, str(HERE / "everything_stdio.py"))
    _passes_everything(card, status, stderr)
    seen = verdicts(card)
    for revision in ("2025-11-25", "2026-07-28"):
        assert seen.get(f"cancel.no-answer@{revision}") == "pass"
    for check_id in (
        "robustness.fuzz@2025-11-25",
        "robustness.dead-client@2025-11-25",
        "robustness.stdout",
        "cancel.initialize@2025-11-25",
    ):
        assert seen.get(check_id) == "pass", check_id


# -- server-everything ----------------------------------------------------------------------------


@pytest.mark.skipif(not have_npm_peers(), reason="the npm peers are not installed (tests/peers/install.sh)")
def test_server_everything_card_never_calls_the_excluded_tools(tmp_path: Path) -> None:
    sent = tmp_path / "sent.ndjson"
    status, card, stderr = check(
        "--exclude",
        "get-env",
        "--exclude",
        "gzip-file-as-resource",
        "--",
        sys.executable,
        str(HERE / "tee_stdin.py"),
        str(sent),
        "--",
        *EVERYTHING_STDIO_CMD,
    )
    calls = []
    for line in sent.read_bytes().splitlines():
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):  # the check's malformed and deep lines
            continue
        if isinstance(message, dict) and message.get("method") == "tools/call":
            calls.append((message.get("params") or {}).get("name"))
    assert calls, "no tools/call reached the server at all"
    assert "get-env" not in calls and "gzip-file-as-resource" not in calls
    assert status == 1
    assert set(failures(card)) == EVERYTHING_FAILS, stderr[-3000:]
    assert card["server"]["name"] == "mcp-servers/everything"
