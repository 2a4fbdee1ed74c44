"""The protocol core and the framing import no event loop, HTTP stack or model library (DESIGN: layout)."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = ("asyncio", "anyio", "httpx", "starlette", "uvicorn", "trio", "pydantic")
CORE = (
    "backchannel.protocol",
    "backchannel.protocol.session",
    "backchannel.framing.ndjson",
    "backchannel.types",
)

_PROBE = """
import importlib, json, sys
before = set(sys.modules)
for name in {core!r}:
    importlib.import_module(name)
after = set(sys.modules)
print(json.dumps({{"before": sorted(before), "after": sorted(after)}}))
"""


def _import_in_fresh_interpreter(modules: tuple[str, ...]) -> tuple[set[str], set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(core=modules)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    report = json.loads(done.stdout)
    return set(report["before"]), set(report["after"])


def _top_level(names: set[str]) -> set[str]:
    return {name.partition(".")[0] for name in names}


def test_core_pulls_in_no_io_library() -> None:
    before, after = _import_in_fresh_interpreter(CORE)
    # The interpreter's own start-up (site, .pth files) must not hide the check.
    assert not _top_level(before) & set(FORBIDDEN), "the interpreter starts with a forbidden module loaded"
    assert set(CORE) <= after
    assert sorted(_top_level(after - before) & set(FORBIDDEN)) == []


def test_probe_would_notice_a_forbidden_import() -> None:
    """The probe itself works: importing asyncio through it shows up."""
    before, after = _import_in_fresh_interpreter(("asyncio",))
    assert "asyncio" in _top_level(after - before)
