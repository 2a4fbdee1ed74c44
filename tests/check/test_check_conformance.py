"""``backchannel check --with-conformance`` (issue #33): the official harness's server scenarios,
each a check on the card, when Node >= 22 and the pinned harness are present; one line saying how
to install them when they are not; nothing installed either way.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))

from fixture_servers import FixtureServer
from test_check_cards import check, verdicts

from backchannel.check import CheckOptions, Target
from backchannel.check import conformance as harness_module
from backchannel.check.conformance import PINNED, install_hint, locate, run_conformance
from backchannel.check.runner import Run

SCENARIOS = ("server-initialize", "tools-call-simple-text")


@pytest.mark.skipif(locate() is None, reason="Node >= 22 or the pinned harness is missing (tests/peers/install.sh)")
def test_each_harness_scenario_is_a_check_on_the_card(tmp_path: Path) -> None:
    picked = [word for name in SCENARIOS for word in ("--conformance-scenario", name)]
    with FixtureServer(tmp_path / "server.log") as server:
        status, card, stderr = check("--group", "conformance", "--with-conformance", *picked, server.url)
    assert status == 0, stderr[-2000:]
    seen = verdicts(card)
    assert seen == {f"conformance.{name}": "pass" for name in SCENARIOS}
    for entry in card["checks"]:
        assert entry["group"] == "conformance"
        assert f"@modelcontextprotocol/conformance@{PINNED}" in entry["spec"]


def test_a_missing_harness_is_said_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness_module, "_node_modules", lambda start: [])
    assert locate() is None
    run = Run(Target(url="http://127.0.0.1:9/mcp"), CheckOptions(with_conformance=True))
    asyncio.run(run_conformance(run))
    assert run.outcomes == []
    assert run.notes == [install_hint()]
    (line,) = install_hint().splitlines()
    assert "bash tests/peers/install.sh" in line
    assert f"npm i @modelcontextprotocol/conformance@{PINNED}" in line


def test_over_stdio_the_harness_is_not_run() -> None:
    run = Run(Target(command=("true",)), CheckOptions(with_conformance=True))
    asyncio.run(run_conformance(run))
    assert run.outcomes == []
    assert "need an HTTP URL" in run.notes[0]
