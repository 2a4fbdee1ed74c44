"""Run the MCP conformance harness against backchannel: its legs, one verdict.

    python tests/conformance/run.py [--only server|client] [--spec-version V] [--keep]
    python tests/conformance/run.py --only server --fleet [--spec-version V] [--keep]
    python tests/conformance/run.py --through-proxy [--spec-version V] [--keep]
    python tests/conformance/run.py --through-gateway [--spec-version V] [--keep]

Legs (``@modelcontextprotocol/conformance``, pinned in ``tests/package.json``):

* server suite ``--suite all`` at ``--spec-version 2025-11-25`` and ``2026-07-28``, and bare
  (no ``--spec-version``: each scenario at the harness's default wire; the extension scenarios,
  ``tasks-*`` and ``sep-2640-skills-*``, run only there), each against a fresh
  ``tests/conformance/everything_server.py`` on a free port. A SKIPPED check fails a server leg
  (the harness counts it as passed): only those in ``HARNESS_SKIPS``, which the pinned harness
  reports whatever the server does, are allowed;
* client suite ``--suite all`` at both spec versions, the harness spawning
  ``python tests/conformance/client.py <url>`` once per scenario; then the client's
  ``--suite extensions`` (client credentials, enterprise-managed, DPoP, DPoP nonce, WIF) and
  ``--suite backcompat`` (the 2025-03-26 authorization flows), which no dated revision
  selects, each at the harness's default wire.

With ``--fleet`` the server legs run against a fleet instead (``fixture_servers.FixtureFleet``):
one ``redis-server``, four ``everything_server.py --redis URL`` processes each on its own port,
and nginx passing every request to the next of them in turn, so consecutive requests of one
session land on different workers. The fleet serves the ``2025-11-25`` and ``2026-07-28`` legs
and the bare ``--suite all`` leg (no ``--spec-version``: each scenario at the harness's default
wire, extension scenarios included), and is stopped after them.

With ``--through-proxy`` the server suite runs through the bridge (issue #29): for each spec
version and each upstream, (a) our ``everything_server.py`` and (b) ``@modelcontextprotocol/
server-everything`` (Streamable HTTP, kept on 127.0.0.1 by ``loopback-only.cjs``), the suite runs
once directly against a fresh upstream and once against ``proxy_server.py`` (a
``backchannel.bridge.Proxy`` on a free loopback port) in front of another fresh one; one upstream
process per run, never one per scenario. The leg compares the two runs' per-scenario verdicts,
read from the harness's ``checks.json``: a scenario fails on any FAILURE check, warns on a WARNING,
is skipped when its checks are all SKIPPED (which counts as a pass) and passes otherwise. The leg
passes when no scenario stands lower through the proxy than directly (fail < warn < pass);
a scenario failing only through the proxy fails the leg and its checks are printed. Scenarios
that do better through the proxy are listed (server-everything speaks only the handshake era:
through the bridge it also answers the 2026-07-28 suite), as are checks that succeeded directly
and did not run through the proxy in a scenario whose verdict held (the proxy answers a fast
call as JSON where its upstream chose an SSE stream: SSE is each hop's own choice). These legs
pass no expected-failures file: the direct run is their baseline. All four run within
``PROXY_BUDGET_S`` (about 50 s on 2 busy cores); ``.ci/run`` runs them.

With ``--through-gateway`` the same legs run through ``backchannel gateway FILE --http`` (issue
#30; ``fixture_servers.GatewayServer``) in place of the proxy: the file mounts the upstream by its
URL under the prefix ``""``, which serves its names unchanged (the harness calls fixed names:
``test_*``), so each scenario crosses the gateway's mount, and the bridge behind it, as a client
of a gateway's mounted server does. The file speaks to our fixture in the era of the leg (its
``era`` key; the fixture serves both): met in the handshake era, a server's questions reach a
2026-07-28 client under keys the bridge makes, where the harness looks for the fixture's own
(``user_name``); server-everything serves the handshake era only (``auto``). They are judged as
the proxy's are, against the same suite run directly on a fresh upstream, within the same budget.

Every other leg passes ``--expected-failures tests/conformance/expected-failures.yml``,
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

from fixture_servers import PROXY_FIXTURE, EverythingServer, FixtureFleet, FixtureServer, GatewayServer  # noqa: E402

from peers.paths import CONFORMANCE_CLI, NODE22, conformance_cmd, have_npm_peers  # noqa: E402

EXPECTED_FAILURES = HERE / "expected-failures.yml"
SYNC_LISTEN = HERE / "sync-loopback-listen.cjs"
CLIENT_FIXTURE = HERE / "client.py"
SPEC_VERSIONS = ("2025-11-25", "2026-07-28")
FLEET_WORKERS = 4

SERVER_SCENARIO_TIMEOUT_MS = 30_000
CLIENT_SCENARIO_TIMEOUT_MS = 120_000
SERVER_LEG_TIMEOUT_S = 180.0
CLIENT_LEG_TIMEOUT_S = 300.0
TOTAL_BUDGET_S = 460.0
PROXY_BUDGET_S = 240.0
PROXY_UPSTREAMS = ("ours", "server-everything")

#: Checks the pinned harness reports SKIPPED whatever the server does, with why: every other
#: SKIPPED check of a server leg fails it (``unexpected_skips``).
HARNESS_SKIPS = {
    "tasks-status-notifications": "0.2.0-alpha.12 returns it SKIPPED without sending a request (its "
    "subscriptions/listen rewrite is pending); tests/tasks/test_tasks_stateless.py checks notifications/tasks "
    "on the listen stream",
}

ANSI = re.compile(r"\x1b\[[0-9;]*m")
PASSING_SCENARIO = re.compile(r"^✓ \S+: \d+ passed, \d+ failed")
TIMESTAMP_SUFFIX = re.compile(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$")


@dataclass
class Leg:
    side: str  # "server" or "client"
    spec_version: str | None  # None: the bare leg, each scenario at the harness's default wire
    fleet: bool = False
    suite: str = "all"

    @property
    def name(self) -> str:
        where = "fleet " if self.fleet else ""
        if self.suite != "all":
            return f"{where}{self.side} {self.suite}"
        return f"{where}{self.side} {self.spec_version or 'all (bare)'}"

    @property
    def slug(self) -> str:
        return self.name.replace(" (bare)", "-bare").replace(" ", "-")


@dataclass
class ProxyLeg:
    """The server suite at ``spec_version`` through the proxy (or the gateway: ``via``) in front of
    ``upstream``, against the same suite run directly against that upstream."""

    upstream: str  # one of PROXY_UPSTREAMS
    spec_version: str
    via: str = "proxy"  # or "gateway"

    @property
    def name(self) -> str:
        return f"server {self.spec_version} through the {self.via}, upstream {self.upstream}"

    @property
    def slug(self) -> str:
        return f"{self.via}-{self.upstream}-{self.spec_version}"


@dataclass
class Outcome:
    leg: Leg | ProxyLeg
    ok: bool
    seconds: float
    exit_code: int | None
    note: str = ""


# ----------------------------------------------------------------------------- legs


def harness_args(leg: Leg, out_dir: Path, url: str | None) -> list[str]:
    common = ["--suite", leg.suite, "--expected-failures", str(EXPECTED_FAILURES), "-o", str(out_dir)]
    if leg.spec_version is not None:
        common += ["--spec-version", leg.spec_version]
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


def unexpected_skips(out_dir: Path) -> list[str]:
    """The SKIPPED checks of a leg that ``HARNESS_SKIPS`` does not list, one line each."""
    return [
        f"  {scenario} [{check.get('id')}] SKIPPED: {(check.get('errorMessage') or '').replace(chr(10), ' ')[:200]}"
        for scenario, checks in scenario_checks(out_dir).items()
        for check in checks
        if check.get("status") == "SKIPPED" and check.get("id") not in HARNESS_SKIPS
    ]


def run_leg(leg: Leg, work: Path, budget: float, fleet: FixtureFleet | None = None) -> Outcome:
    """Run one leg; a server leg runs against ``fleet`` when given, else a fresh fixture process."""
    out_dir = work / leg.slug
    out_dir.mkdir(parents=True)
    cap = SERVER_LEG_TIMEOUT_S if leg.side == "server" else CLIENT_LEG_TIMEOUT_S
    timeout = max(10.0, min(cap, budget))
    started = time.monotonic()
    server: FixtureServer | FixtureFleet | None = fleet
    try:
        with contextlib.ExitStack() as stack:
            url = None if server is None else server.url
            if leg.side == "server" and server is None:
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
    skipped = unexpected_skips(out_dir) if leg.side == "server" else []
    ok = code == 0 and not skipped
    verdict = "PASS" if ok else ("TIMEOUT" if code is None else f"FAIL (harness exit {code})")
    if code == 0 and skipped:
        verdict = f"FAIL ({len(skipped)} checks SKIPPED)"
    print(f"\n##### {leg.name}: {verdict} in {seconds:.1f}s")
    print(compact(summary_section(stdout)))
    if skipped:
        print("\nchecks SKIPPED (the harness passes them; this leg does not):")
        print("\n".join(skipped))
    if not ok:
        details = unexpected_details(stdout, out_dir)
        if details:
            print("\nfailing checks behind the unexpected failures:")
            print("\n".join(details))
        if server is not None:
            tail = server.log_tail()
            if tail:
                print(f"\nfixture server log (tail):\n{tail}")
    note = "" if ok else ("timed out" if code is None else f"exit {code}" if code else f"{len(skipped)} skipped")
    return Outcome(leg, ok, seconds, code, note)


# ----------------------------------------------------------------------------- through the proxy

#: A verdict's standing: a scenario through the proxy may not stand lower than directly.
STANDING = {"fail": 0, "warn": 1, "pass": 2, "skipped": 2}


def verdict_of(checks: list[dict[str, Any]]) -> str:
    """``fail`` (a FAILURE), ``warn`` (a WARNING), ``skipped`` (every check SKIPPED, INFO aside) or ``pass``."""
    statuses = {check.get("status") for check in checks}
    if "FAILURE" in statuses:
        return "fail"
    if "WARNING" in statuses:
        return "warn"
    if "SKIPPED" in statuses and statuses <= {"SKIPPED", "INFO"}:
        return "skipped"
    return "pass"


def tally(verdicts: dict[str, str]) -> str:
    counts = {kind: sum(1 for v in verdicts.values() if v == kind) for kind in ("pass", "fail", "warn", "skipped")}
    warned = f" (of which {counts['warn']} only warned)" if counts["warn"] else ""
    return (
        f"{len(verdicts)} scenarios: {counts['pass']} pass, {counts['fail'] + counts['warn']} fail{warned}, "
        f"{counts['skipped']} skipped"
    )


def proxy_harness_args(leg: ProxyLeg, out_dir: Path, url: str) -> list[str]:
    return [
        "server",
        "--url",
        url,
        "--suite",
        "all",
        "--spec-version",
        leg.spec_version,
        "-o",
        str(out_dir),
        "--timeout",
        str(SERVER_SCENARIO_TIMEOUT_MS),
    ]


def upstream_fixture(leg: ProxyLeg, log_path: Path) -> FixtureServer:
    return FixtureServer(log_path) if leg.upstream == "ours" else EverythingServer(log_path)


def run_proxy_side(leg: ProxyLeg, work: Path, proxied: bool, budget: float) -> tuple[dict[str, Any], float, str]:
    """One run of ``leg``'s suite, direct or through the proxy, each on fresh processes: its checks
    per scenario, its wall time, and the tails of its processes' logs (for a failure)."""
    side = "proxied" if proxied else "direct"
    out_dir = work / leg.slug / side
    out_dir.mkdir(parents=True)
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        upstream = stack.enter_context(upstream_fixture(leg, work / f"{leg.slug}-{side}-upstream.log"))
        url = upstream.url
        proxy: FixtureServer | None = None
        if proxied:
            log = work / f"{leg.slug}-{leg.via}.log"
            if leg.via == "gateway":
                era = "stateless" if leg.upstream == "ours" and leg.spec_version == "2026-07-28" else "auto"
                proxy = stack.enter_context(GatewayServer(log, upstream.url, era))
            else:
                proxy = stack.enter_context(FixtureServer(log, (upstream.url,), script=PROXY_FIXTURE))
            url = proxy.url
        timeout = max(10.0, min(SERVER_LEG_TIMEOUT_S, budget))
        code, stdout = run_harness(proxy_harness_args(leg, out_dir, url), timeout, work / f"{leg.slug}-{side}.log")
        tails = f"upstream log (tail):\n{upstream.log_tail()}"
        if proxy is not None:
            tails += f"\n{leg.via} log (tail):\n{proxy.log_tail()}"
    (work / f"{leg.slug}-{side}-harness.out").write_text(stdout)
    if code is None:
        raise RuntimeError(f"the {side} run timed out after {timeout:.0f}s\n{tails}")
    checks = scenario_checks(out_dir)
    if not checks:
        raise RuntimeError(f"the {side} run left no checks.json (harness exit {code})\n{tails}")
    return checks, time.monotonic() - started, tails


def run_proxy_leg(leg: ProxyLeg, work: Path, budget: float) -> Outcome:
    """Run ``leg`` directly, then through the proxy, and compare the verdicts scenario by scenario."""
    started = time.monotonic()
    try:
        direct, direct_s, _ = run_proxy_side(leg, work, False, budget)
        proxied, proxied_s, tails = run_proxy_side(leg, work, True, budget - (time.monotonic() - started))
    except RuntimeError as exc:
        seconds = time.monotonic() - started
        print(f"\n##### {leg.name}: ERROR after {seconds:.1f}s: {exc}")
        return Outcome(leg, False, seconds, None, str(exc).splitlines()[0])
    seconds = time.monotonic() - started
    before = {name: verdict_of(checks) for name, checks in direct.items()}
    after = {name: verdict_of(checks) for name, checks in proxied.items()}
    worse = sorted(n for n, v in before.items() if STANDING[v] > STANDING.get(after.get(n, "missing"), -1))
    better = sorted(n for n, v in after.items() if STANDING[v] > STANDING.get(before.get(n, "missing"), -1))
    unexercised = []
    for name in sorted(set(before) - set(worse)):
        ran = {c.get("id") for c in proxied.get(name, []) if c.get("status") in ("SUCCESS", "WARNING", "FAILURE")}
        lost = sorted({c.get("id") for c in direct[name] if c.get("status") == "SUCCESS"} - ran)
        if lost:
            unexercised.append(f"{name} ({', '.join(str(i) for i in lost)})")
    ok = not worse
    verdict = "PASS" if ok else "FAIL"
    via = f"through the {leg.via}"
    times = f"direct {direct_s:.1f}s, {via} {proxied_s:.1f}s"
    print(f"\n##### {leg.name}: {verdict} in {seconds:.1f}s ({times})")
    print(f"  direct:            {tally(before)}")
    print(f"  {via + ':':<19}{tally(after)}")
    if better:
        print(f"  better {via} ({len(better)}): {', '.join(f'{n} ({after[n]})' for n in better)}")
    if unexercised:
        print(f"  checks that succeeded directly and did not run {via}: {'; '.join(unexercised)}")
    if worse:
        print(f"\n  failing only {via} ({len(worse)}):")
        for name in worse:
            print(f"  {name}: {before[name]} directly, {after.get(name, 'missing')} {via}")
            for check in proxied.get(name, []):
                if check.get("status") in ("FAILURE", "WARNING"):
                    message = (check.get("errorMessage") or check.get("description") or "").replace("\n", " ")
                    print(f"    [{check.get('id')}] {check.get('status')}: {message[:300]}")
        print(f"\n{tails}")
    note = "" if ok else f"{len(worse)} scenarios fail only {via}"
    return Outcome(leg, ok, seconds, 0 if ok else 1, note)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the MCP conformance harness against backchannel.")
    parser.add_argument("--only", choices=("server", "client"), help="run only the server or the client legs")
    parser.add_argument("--spec-version", choices=SPEC_VERSIONS, help="run only the legs for this revision")
    parser.add_argument(
        "--fleet",
        action="store_true",
        help=f"server legs only, plus the bare --suite all leg, against {FLEET_WORKERS} workers "
        "sharing one Redis behind nginx round-robin",
    )
    parser.add_argument(
        "--through-proxy",
        action="store_true",
        help="only the server suite, through backchannel's proxy in front of our fixture server and of "
        "server-everything, each compared with the same suite run directly",
    )
    parser.add_argument(
        "--through-gateway",
        action="store_true",
        help='only the server suite, through backchannel gateway (the upstream mounted under the prefix "") '
        "in front of our fixture server and of server-everything, each compared with the same suite run directly",
    )
    parser.add_argument("--keep", action="store_true", help="keep the harness output directory even on success")
    args = parser.parse_args(argv)
    if args.fleet and args.only == "client":
        parser.error("--fleet runs the server legs (the client legs test our client, not a server)")
    if args.through_proxy and (args.fleet or args.only == "client"):
        parser.error("--through-proxy runs server legs of its own (not with --fleet or --only client)")
    if args.through_gateway and (args.fleet or args.through_proxy or args.only == "client"):
        parser.error("--through-gateway runs server legs of its own (not with --fleet, --through-proxy, --only client)")

    if not have_npm_peers():
        print(f"conformance: npm peers missing ({NODE22}, {CONFORMANCE_CLI}); run: bash tests/peers/install.sh")
        return 1
    if args.through_proxy or args.through_gateway:
        versions = [v for v in SPEC_VERSIONS if args.spec_version in (None, v)]
        return run_through_proxy(versions, args.keep, "gateway" if args.through_gateway else "proxy")
    if args.fleet:
        versions: list[str | None] = [v for v in SPEC_VERSIONS if args.spec_version in (None, v)]
        legs = [Leg("server", version, fleet=True) for version in versions]
        if args.spec_version is None:
            legs.append(Leg("server", None, fleet=True))
    else:
        legs = [
            Leg(side, version)
            for side in ("server", "client")
            for version in SPEC_VERSIONS
            if args.only in (None, side) and args.spec_version in (None, version)
        ]
        if args.only in (None, "server") and args.spec_version is None:
            legs.insert(len(SPEC_VERSIONS), Leg("server", None))  # after the dated server legs
        if args.only in (None, "client") and args.spec_version is None:
            legs += [Leg("client", None, suite="extensions"), Leg("client", None, suite="backcompat")]
    work = Path(tempfile.mkdtemp(prefix="backchannel-conformance-"))
    started = time.monotonic()
    outcomes: list[Outcome] = []
    with contextlib.ExitStack() as stack:
        fleet = None
        if args.fleet:
            try:
                fleet = stack.enter_context(FixtureFleet(work, FLEET_WORKERS))
            except RuntimeError as exc:
                print(f"conformance: the fleet did not start: {exc}")
                print(f"  logs kept in {work}")
                return 1
            print(f"fleet: {FLEET_WORKERS} workers behind {fleet.url}, up in {time.monotonic() - started:.1f}s")
        for leg in legs:
            remaining = TOTAL_BUDGET_S - (time.monotonic() - started)
            outcomes.append(run_leg(leg, work, remaining, fleet))
    return report(outcomes, time.monotonic() - started, work, args.keep)


def run_through_proxy(versions: list[str], keep: bool, via: str = "proxy") -> int:
    work = Path(tempfile.mkdtemp(prefix=f"backchannel-conformance-{via}-"))
    started = time.monotonic()
    outcomes = []
    for leg in (ProxyLeg(upstream, version, via) for upstream in PROXY_UPSTREAMS for version in versions):
        outcomes.append(run_proxy_leg(leg, work, PROXY_BUDGET_S - (time.monotonic() - started)))
    return report(outcomes, time.monotonic() - started, work, keep)


def report(outcomes: list[Outcome], total: float, work: Path, keep: bool) -> int:
    """The closing table of legs; the output directory removed when every leg passed (unless ``keep``)."""
    print("\n##### conformance legs")
    width = max([20, *(len(outcome.leg.name) for outcome in outcomes)])
    for outcome in outcomes:
        status = "ok  " if outcome.ok else "FAIL"
        extra = f"  ({outcome.note})" if outcome.note else ""
        print(f"  {status} {outcome.leg.name:<{width}} {outcome.seconds:6.1f}s{extra}")
    passed = all(outcome.ok for outcome in outcomes)
    print(f"  total {total:.1f}s: {'all legs passed' if passed else 'some legs FAILED'}")
    if passed and not keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"  harness output kept in {work}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
