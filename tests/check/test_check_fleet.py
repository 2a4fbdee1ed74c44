"""``backchannel check --fleet N`` tells a fleet that works without sticky sessions from one that
needs them (issue #33). Both are two of our everything servers behind nginx passing each request
to the next (``tests/_services.py``); every request of the check goes on a connection of its own:

- sharing their sessions, streams and questions through Redis (``FixtureFleet``): the fleet's
  checks pass in both eras, a form's answer reaching the call on the other worker and a stream
  resumed there; the card's note says it works without sticky sessions;
- sharing nothing: a request of a session, or the answer to a question, reaches the worker that
  never saw the session or the question, and the card says the fleet needs sticky sessions,
  naming the check that showed it.
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
sys.path.insert(0, str(HERE.parent / "conformance"))

from fixture_servers import FixtureFleet, FixtureServer  # noqa: E402

from _services import nginx_round_robin  # noqa: E402


def check_fleet(url: str) -> tuple[int, dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "backchannel", "check", "--json", "--quiet", "--group", "fleet", "--fleet", "4", url],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=env,
    )
    assert done.stdout, done.stderr
    card: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, card


@contextlib.contextmanager
def unshared_fleet(work: Path) -> Iterator[str]:
    """Two everything servers, no Redis, behind nginx round robin; yields the URL."""
    with contextlib.ExitStack() as stack:
        workers = [stack.enter_context(FixtureServer(work / f"worker-{n}.log")) for n in range(2)]
        nginx = stack.enter_context(nginx_round_robin([worker.port for worker in workers]))
        yield f"{nginx.url}/mcp"


def test_a_fleet_sharing_its_state_works_without_sticky_sessions(tmp_path: Path) -> None:
    with FixtureFleet(tmp_path, workers=2) as fleet:
        status, card = check_fleet(fleet.url)
    verdicts = {entry["id"]: entry["verdict"] for entry in card["checks"]}
    assert status == 0, card
    for revision in ("2025-11-25", "2026-07-28"):
        assert verdicts[f"fleet.sessions@{revision}"] == "pass"
        assert verdicts[f"fleet.answer-elsewhere@{revision}"] == "pass"
    assert verdicts["fleet.resume-elsewhere@2025-11-25"] == "pass"
    assert any(note.startswith("fleet: works without sticky sessions") for note in card["notes"]), card["notes"]


def test_a_fleet_sharing_nothing_needs_sticky_sessions(tmp_path: Path) -> None:
    with unshared_fleet(tmp_path) as url:
        status, card = check_fleet(url)
    failed = {entry["id"]: entry["evidence"]["summary"] for entry in card["checks"] if entry["verdict"] == "fail"}
    assert status == 1
    assert any(check_id.endswith("@2025-11-25") for check_id in failed), card  # a session, or a question's answer
    assert any("session not found" in summary or "did not end" in summary for summary in failed.values()), failed
    assert any(note.startswith("fleet: needs sticky sessions (fleet.") for note in card["notes"]), card["notes"]
