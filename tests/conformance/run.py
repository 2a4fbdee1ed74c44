"""Run the MCP conformance harness against backchannel: four legs, one verdict.

    python tests/conformance/run.py [--only server|client] [--spec-version V] [--keep]

Legs (``@modelcontextprotocol/conformance``, pinned in ``tests/package.json``):

* server suite ``--suite all`` at ``--spec-version 2025-11-25`` and ``2026-07-28``,
  each against a fresh ``tests/conformance/everything_server.py`` on a free port;
* client suite ``--suite all`` at both spec versions, the harness spawning
  ``python tests/conformance/client.py <url>`` once per scenario.

Every leg passes ``--expected-failures tests/conformance/expected-failures.yml``,
so a leg passes when every failure is listed there and nothing listed passes
(a listed entry that passes is "stale" and fails the leg: the list may only
shrink). The harness's own summary is printed per leg, with its wall time.
Exit status: 0 when every leg passed.

The client suite runs all its scenarios at once (the harness has no
concurrency option), so per-scenario timeouts are generous.

The harness runs under Node 22 with ``tests/peers/loopback-only.cjs`` (via
``conformance_cmd``) plus ``sync-loopback-listen.cjs``, which keeps the mock
servers' ``listen()`` synchronous (see that file).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
ROOT = TESTS.parent
sys.path.insert(0, str(TESTS))

from backchannel.testing import free_port, port_accepts  # noqa: E402
from peers.paths import CONFORMANCE_CLI, NODE22, conformance_cmd, have_npm_peers  # noqa: E402

EXPECTED_FAILURES = HERE / "expected-failures.yml"
SERVER_FIXTURE = HERE / "everything_server.py"
SYNC_LISTEN = HERE / "sync-loopback-listen.cjs"
CLIENT_FIXTURE = HERE / "client.py"
SPEC_VERSIONS = ("2025-11-25", "2026-07-28")

SERVER_SCENARIO_TIMEOUT_MS = 30_000
CLIENT_SCENARIO_TIMEOUT_MS = 120_000
SERVER_LEG_TIMEOUT_S = 180.0
CLIENT_LEG_TIMEOUT_S = 300.0
SERVER_START_TIMEOUT_S = 30.0
TOTAL_BUDGET_S = 460.0

ANSI = re.compile(r"\x1b\[[0-9;]*m")
PASSING_SCENARIO = re.compile(r"^✓ \S+: \d+ passed, \d+ failed")
TIMESTAMP_SUFFIX = re.compile(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$")


@dataclass
class Leg:
    side: str  # "server" or "client"
    spec_version: str

    @property
    def name(self) -> str:
        return f"{self.side} {self.spec_version}"

    @property
    def slug(self) -> str:
        return f"{self.side}-{self.spec_version}"


@dataclass
class Outcome:
    leg: Leg
    ok: bool
    seconds: float
    exit_code: int | None
    note: str = ""


# --------------------------------------------------------------------- server process


class FixtureServer:
    """``everything_server.py`` on a free port, stopped on exit."""

    def __init__(self, log_path: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> FixtureServer:
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER_FIXTURE), "--port", str(self.port)],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"the fixture server exited with {self.process.returncode} before listening")
            if port_accepts(self.port):
                return self
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"the fixture server did not accept connections within {SERVER_START_TIMEOUT_S:.0f}s"
                )
            time.sleep(0.1)

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGINT)  # uvicorn shuts down gracefully on SIGINT
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


# ----------------------------------------------------------------------------- legs


def harness_args(leg: Leg, out_dir: Path, url: str | None) -> list[str]:
    common = ["--suite", "all", "--spec-version", leg.spec_version, "--expected-failures", str(EXPECTED_FAILURES)]
    common += ["-o", str(out_dir)]
    if leg.side == "server":
        assert url is not None
        return ["server", "--url", url, *common, "--timeout", str(SERVER_SCENARIO_TIMEOUT_MS)]
    # The harness splits --command on single spaces and runs it through a shell.
    command = f"{sys.executable} {CLIENT_FIXTURE}"
    if len(command.split(" ")) != 2:
        raise RuntimeError(f"the client command must not contain spaces in its paths: {command!r}")
    return ["client", "--command", command, *common, "--timeout", str(CLIENT_SCENARIO_TIMEOUT_MS)]


def harness_cmd(*args: str) -> list[str]:
    """``conformance_cmd`` (Node 22, loopback-only listeners) with ``sync-loopback-listen.cjs``
    preloaded first, so the harness's mock servers know their port right after listen()."""
    argv = conformance_cmd(*args)
    return [argv[0], "--require", str(SYNC_LISTEN), *argv[1:]]


def run_harness(argv: list[str], timeout: float, log_path: Path) -> tuple[int | None, str]:
    """Run the harness; its exit code (None on timeout) and its stdout without colours."""
    env = dict(os.environ, NO_COLOR="1", FORCE_COLOR="0")
    with log_path.open("wb") as stderr:
        process = subprocess.Popen(
            harness_cmd(*argv),
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=env,
            start_new_session=True,
        )
        try:
            out, _ = process.communicate(timeout=timeout)
            code: int | None = process.returncode
        except subprocess.TimeoutExpired:
            # The harness and the clients it spawned share the session started above.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            out, _ = process.communicate()
            code = None
    return code, ANSI.sub("", out.decode(errors="replace"))


def summary_section(stdout: str) -> str:
    """The harness's closing summary: from ``=== SUMMARY ===`` (or ``=== SUITE SUMMARY ===``) to the end."""
    marks = [stdout.rfind(mark) for mark in ("=== SUMMARY ===", "=== SUITE SUMMARY ===")]
    start = max(marks)
    return stdout[start:].strip() if start >= 0 else "(no summary section in the harness output)"


def compact(section: str) -> str:
    """The summary with passing scenarios and the expected-failure list folded into counts."""
    kept: list[str] = []
    passing = expected = 0
    for line in section.splitlines():
        stripped = line.strip()
        if PASSING_SCENARIO.match(stripped):
            passing += 1
        elif stripped.startswith("~ "):
            expected += 1
        elif stripped.startswith("Expected failures (in baseline)"):
            continue
        elif stripped or (kept and kept[-1]):
            kept.append(line)
    while len(kept) > 1 and not kept[1].strip():
        del kept[1]
    kept.insert(1, f"{passing} scenarios passed outright; failing or warning scenarios:")
    if expected:
        kept.append(f"{expected} failures matched the baseline (expected-failures.yml)")
    return "\n".join(kept)


def scenario_checks(out_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """Checks per scenario from the ``checks.json`` files the harness wrote."""
    found: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(out_dir.rglob("checks.json")):
        name = TIMESTAMP_SUFFIX.sub("", str(path.parent.relative_to(out_dir)))
        name = name.removeprefix("server-")
        with contextlib.suppress(OSError, ValueError):
            found[name] = json.loads(path.read_text())
    return found


def unexpected_details(stdout: str, out_dir: Path) -> list[str]:
    """For each failure the harness calls unexpected, the failing checks and their messages."""
    section = stdout[stdout.find("Unexpected failures") :] if "Unexpected failures" in stdout else ""
    entries = [line.strip()[2:].strip() for line in section.splitlines() if line.strip().startswith("✗ ")]
    checks = scenario_checks(out_dir)
    lines: list[str] = []
    for entry in entries:
        scenario, _, check_id = entry.partition(":")
        for check in checks.get(scenario, []):
            if check.get("status") not in ("FAILURE", "WARNING") or (check_id and check.get("id") != check_id):
                continue
            message = (check.get("errorMessage") or check.get("description") or "").replace("\n", " ")
            lines.append(f"  {scenario} [{check.get('id')}] {check.get('status')}: {message[:300]}")
    return lines


def run_leg(leg: Leg, work: Path, budget: float) -> Outcome:
    out_dir = work / leg.slug
    out_dir.mkdir(parents=True)
    cap = SERVER_LEG_TIMEOUT_S if leg.side == "server" else CLIENT_LEG_TIMEOUT_S
    timeout = max(10.0, min(cap, budget))
    started = time.monotonic()
    server: FixtureServer | None = None
    try:
        with contextlib.ExitStack() as stack:
            url = None
            if leg.side == "server":
                server = stack.enter_context(FixtureServer(work / f"{leg.slug}-fixture.log"))
                url = server.url
            code, stdout = run_harness(harness_args(leg, out_dir, url), timeout, work / f"{leg.slug}-harness.log")
    except RuntimeError as exc:
        seconds = time.monotonic() - started
        print(f"\n##### {leg.name}: ERROR after {seconds:.1f}s: {exc}")
        if server is not None:
            print(server.log_tail())
        return Outcome(leg, False, seconds, None, str(exc))
    seconds = time.monotonic() - started
    (work / f"{leg.slug}-harness.out").write_text(stdout)
    ok = code == 0
    verdict = "PASS" if ok else ("TIMEOUT" if code is None else f"FAIL (harness exit {code})")
    print(f"\n##### {leg.name}: {verdict} in {seconds:.1f}s")
    print(compact(summary_section(stdout)))
    if not ok:
        details = unexpected_details(stdout, out_dir)
        if details:
            print("\nfailing checks behind the unexpected failures:")
            print("\n".join(details))
        if server is not None:
            tail = server.log_tail()
            if tail:
                print(f"\nfixture server log (tail):\n{tail}")
    note = "" if ok else ("timed out" if code is None else f"exit {code}")
    return Outcome(leg, ok, seconds, code, note)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the MCP conformance harness against backchannel.")
    parser.add_argument("--only", choices=("server", "client"), help="run only the server or the client legs")
    parser.add_argument("--spec-version", choices=SPEC_VERSIONS, help="run only the legs for this revision")
    parser.add_argument("--keep", action="store_true", help="keep the harness output directory even on success")
    args = parser.parse_args(argv)

    if not have_npm_peers():
        print(f"conformance: npm peers missing ({NODE22}, {CONFORMANCE_CLI}); run: bash tests/peers/install.sh")
        return 1
    legs = [
        Leg(side, version)
        for side in ("server", "client")
        for version in SPEC_VERSIONS
        if args.only in (None, side) and args.spec_version in (None, version)
    ]
    work = Path(tempfile.mkdtemp(prefix="backchannel-conformance-"))
    started = time.monotonic()
    outcomes: list[Outcome] = []
    for leg in legs:
        remaining = TOTAL_BUDGET_S - (time.monotonic() - started)
        outcomes.append(run_leg(leg, work, remaining))
    total = time.monotonic() - started

    print("\n##### conformance legs")
    for outcome in outcomes:
        status = "ok  " if outcome.ok else "FAIL"
        extra = f"  ({outcome.note})" if outcome.note else ""
        print(f"  {status} {outcome.leg.name:<20} {outcome.seconds:6.1f}s{extra}")
    passed = all(outcome.ok for outcome in outcomes)
    print(f"  total {total:.1f}s: {'all legs passed' if passed else 'some legs FAILED'}")
    if passed and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"  harness output kept in {work}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
