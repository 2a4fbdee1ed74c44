"""The conformance harness's four client scenarios for skills (SEP-2640), run against our client
(``tests/conformance/client.py``): the harness serves a skill and watches what the client reads.

- ``sep-2640-client-no-prefetch``: listing skills reads none of their files;
- ``sep-2640-client-verify-digest`` / ``-size`` / ``-frontmatter``: a ``SKILL.md`` that fails its
  check (a changed body, extra bytes, another description under a matching digest) is refused, so
  the skill is not loaded and its other files are never read.

Each must SUCCEED: a check the client never gave a chance (it never listed) is SKIPPED, which the
harness would count as passed.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path

import pytest

from peers.paths import have_npm_peers

# tests/conformance/run.py, loaded by its path: "run" may already name benchmarks/run.py in this process.
_RUNNER = Path(__file__).resolve().parents[1] / "conformance" / "run.py"
sys.path.insert(0, str(_RUNNER.parent))  # (what run.py imports beside it: fixture_servers)
_spec = importlib.util.spec_from_file_location("conformance_run", _RUNNER)
assert _spec is not None and _spec.loader is not None
_run = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _run  # (its dataclasses look their module up)
_spec.loader.exec_module(_run)
CLIENT_FIXTURE, run_harness, scenario_checks = _run.CLIENT_FIXTURE, _run.run_harness, _run.scenario_checks


pytestmark = pytest.mark.interop
SCENARIOS = [
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
]


@pytest.mark.skipif(not have_npm_peers(), reason="run tests/peers/install.sh")
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_harness_finds_our_client_reads_no_skill_file_it_should_not(scenario: str) -> None:
    with tempfile.TemporaryDirectory(prefix="skills-client-") as work:
        out = Path(work) / "out"
        out.mkdir()
        command = f"{sys.executable} {CLIENT_FIXTURE}"
        argv = ["client", "--command", command, "--scenario", scenario, "-o", str(out), "--timeout", "60000"]
        code, stdout = run_harness(argv, 120, Path(work) / "harness.log")
        checks = [check for found in scenario_checks(out).values() for check in found]
    assert code == 0, stdout[-2000:]
    assert checks and {check["status"] for check in checks} == {"SUCCESS"}, checks
