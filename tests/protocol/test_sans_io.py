"""The protocol core and the framing import no event loop, HTTP stack or model library (DESIGN: layout)."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = ("asyncio", "anyio", "httpx", "httpx2", "starlette", "uvicorn", "trio", "pydantic")
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


#: Calls that reach the filesystem or the process environment (a path's pure methods are fine).
_IO_CALLS = frozenset(
    (
        "open",
        "getcwd",
        "cwd",
        "home",
        "realpath",
        "resolve",
        "exists",
        "is_dir",
        "is_file",
        "stat",
        "lstat",
        "iterdir",
        "listdir",
        "scandir",
        "read_text",
        "read_bytes",
        "write_text",
        "write_bytes",
        "getenv",
        "environ",
    )
)


def test_core_makes_no_filesystem_or_os_calls() -> None:
    """The core reads no file, directory, working directory or environment variable: the
    roots rules that need them live in ``runtime/local_paths.py``."""
    import ast
    from pathlib import Path

    import backchannel.protocol

    package = Path(backchannel.protocol.__file__).parent
    found = []
    for module in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(), str(module))):
            name = None
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            elif isinstance(node, ast.Attribute) and node.attr == "environ":
                name = node.attr
            if name in _IO_CALLS:
                found.append(f"{module.name}:{node.lineno}: {name}")
    assert found == []
