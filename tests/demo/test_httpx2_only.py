"""backchannel's HTTP client library is httpx2, the maintained line of httpx (issue #18).

httpx may still be installed as another package's dependency; nothing of ours imports it,
and nothing we declare requires it (docs/architecture.md, "Why httpx2").
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RETIRED = {"httpx", "httpcore"}  # httpx2 and httpcore2 replace them


def imported_modules(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) for each import in ``path``, ``importlib.import_module("...")`` with a literal included."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.lineno, node.args[0].value


def retired_imports(paths: list[Path]) -> list[tuple[Path, int, str]]:
    """Each import of httpx or httpcore in ``paths``: (file, line, module)."""
    return [
        (path, line, module)
        for path in paths
        for line, module in imported_modules(path)
        if module.partition(".")[0] in RETIRED
    ]


def requirement_names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower() for requirement in requirements}


def test_no_module_of_backchannel_or_its_examples_imports_httpx() -> None:
    paths = sorted([*(ROOT / "src" / "backchannel").rglob("*.py"), *(ROOT / "examples").rglob("*.py")])
    assert len(paths) > 50
    found = [f"{path.relative_to(ROOT)}:{line}: {module}" for path, line, module in retired_imports(paths)]
    assert found == []


def test_the_check_sees_every_spelling_of_the_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import httpx\nimport httpx2\nfrom httpx import AsyncClient\nimport httpcore._async as core\n"
        "import importlib\nimportlib.import_module('httpx')\nfrom httpx2 import Client\n"
    )
    found = [(line, module) for _, line, module in retired_imports([sample])]
    assert found == [(1, "httpx"), (3, "httpx"), (4, "httpcore._async"), (6, "httpx")]


def test_our_dependencies_name_httpx2_and_not_httpx() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = [requirement for extra in project["optional-dependencies"].values() for requirement in extra]
    assert "httpx2" in requirement_names(project["dependencies"])
    assert requirement_names([*project["dependencies"], *extras]).isdisjoint(RETIRED)


class AsyncClient:
    """What an ``httpx.AsyncClient`` is to the transport: a client of another library."""


@pytest.mark.parametrize("make", ["transport", "Client.http"])
def test_an_http_client_of_another_library_is_refused_with_what_to_use(make: str) -> None:
    from backchannel import Client
    from backchannel.transports.http.client import HttpClientTransport

    url, other = "http://127.0.0.1/mcp", AsyncClient()
    with pytest.raises(TypeError, match=r"must be an httpx2\.AsyncClient, not .*AsyncClient: backchannel uses httpx2"):
        if make == "transport":
            HttpClientTransport(url, httpx_client=other)  # type: ignore[arg-type]
        else:
            Client.http(url, httpx_client=other)  # type: ignore[arg-type]
