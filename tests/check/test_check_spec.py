"""The rules ``backchannel check`` cites, read in the specification's own text; its plan and its
fuzzer, which never call a tool they must not; docs/check.md, which explains every check.

The specification is the copy in ``/work/shared/spec`` (``SPEC`` overrides); without it the
citation test skips, saying so.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from backchannel.check.fuzz import Frames, Ledger
from backchannel.check.plan import ConfigError, Plan, PlanConfig, arguments_for, read_config
from backchannel.check.spec import CHECKS

SPEC = Path(os.environ.get("SPEC", "/work/shared/spec"))
ROOT = Path(__file__).resolve().parents[2]


def _section_of(lines: list[str], line: int, schema: bool) -> str | None:
    for index in range(line - 1, -1, -1):
        found = re.match(r"export interface (\w+)", lines[index]) if schema else re.match(r"#+\s+(.*)", lines[index])
        if found:
            return found.group(1).strip()
    title = next((re.match(r"title:\s*(.*)", text) for text in lines[:6] if text.startswith("title:")), None)
    return title.group(1).strip() if title else None


@pytest.mark.skipif(not SPEC.is_dir(), reason=f"no copy of the specification at {SPEC}")
@pytest.mark.parametrize("check_id", sorted(CHECKS))
def test_each_cited_line_says_what_the_check_says_it_does(check_id: str) -> None:
    for rule in CHECKS[check_id].rules:
        schema = rule.file.startswith("schema/")
        path = SPEC / rule.revision / ("" if schema else "docs") / rule.file
        lines = path.read_text(encoding="utf-8").splitlines()
        assert 1 <= rule.line <= len(lines), f"{rule.cited()}: no such line"
        text = lines[rule.line - 1]
        if rule.keyword:
            assert f"**{rule.keyword}**" in text or rule.keyword in text, f"{rule.cited()}: {text!r}"
        assert _section_of(lines, rule.line, schema) == rule.section, f"{rule.cited()}: {text!r}"


def test_docs_check_md_explains_every_check() -> None:
    text = (ROOT / "docs" / "check.md").read_text(encoding="utf-8")
    missing = [check_id for check_id in CHECKS if f"`{check_id}`" not in text]
    assert missing == []


# -- the plan ---------------------------------------------------------------------------------------

EVERYTHING_TOOLS = [
    {
        "name": "echo",
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
        "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    },
    {"name": "get-env", "annotations": {"readOnlyHint": True, "openWorldHint": False}, "inputSchema": {}},
    {"name": "gzip-file-as-resource", "annotations": {"readOnlyHint": False, "openWorldHint": True}},
    {
        "name": "trigger-long-running-operation",
        "description": "Demonstrates a long running operation with progress",
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
        "inputSchema": {
            "type": "object",
            "properties": {"duration": {"type": "number", "default": 10}, "steps": {"type": "number", "default": 5}},
        },
    },
    {"name": "trigger-elicitation-request", "description": "Elicitation", "inputSchema": {"type": "object"}},
    {
        "name": "trigger-url-elicitation",
        "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
    },
    {"name": "get-roots-list", "inputSchema": {}},
    {
        "name": "trigger-sampling-request",
        "inputSchema": {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
    },
    {"name": "toggle-simulated-logging", "inputSchema": {}},
    {"name": "wipe-disk", "description": "Sleeps, then deletes everything", "annotations": {"destructiveHint": True}},
]


def test_the_plan_finds_a_tool_for_each_role_and_never_an_excluded_or_destructive_one() -> None:
    plan = Plan.of(EVERYTHING_TOOLS, PlanConfig(exclude=frozenset({"get-env", "gzip-file-as-resource"})))
    chosen = {role: use.name for role, use in plan.uses.items()}
    assert chosen == {
        "elicits": "trigger-elicitation-request",
        "elicits_url": "trigger-url-elicitation",
        "roots": "get-roots-list",
        "samples": "trigger-sampling-request",
        "progress": "trigger-long-running-operation",
        "slow": "trigger-long-running-operation",
        "logs": "toggle-simulated-logging",
    }
    assert plan.uses["slow"].arguments == {"duration": 4.0, "steps": 8}
    assert plan.uses["elicits_url"].arguments == {"url": "https://example.com/backchannel-check"}
    assert plan.safe == {"echo", "trigger-long-running-operation"}  # read-only and closed-world, not excluded


def test_a_named_tool_wins_and_a_missing_one_is_said() -> None:
    config = PlanConfig(tools={"slow": read_tool("slow", "echo")})
    plan = Plan.of(EVERYTHING_TOOLS, config)
    assert plan.uses["slow"].name == "echo" and plan.uses["slow"].named
    config = PlanConfig(tools={"slow": read_tool("slow", "no-such-tool")})
    assert "no-such-tool" in Plan.of(EVERYTHING_TOOLS, config).missing["slow"]


def read_tool(role: str, name: str) -> object:
    from backchannel.check.plan import tool_use

    return tool_use(role, name, "test")


def test_the_config_file_is_read_and_a_bad_one_is_one_line(tmp_path: Path) -> None:
    good = tmp_path / "check.toml"
    good.write_text(
        'exclude = ["get-env"]\nbudget = 50\n[tools]\nslow = { name = "op", arguments = { duration = 2 } }\n'
    )
    config = read_config(good)
    assert config.exclude == {"get-env"} and config.budget == 50
    assert config.tools["slow"].name == "op" and config.tools["slow"].arguments == {"duration": 2}
    for text, said in (
        ('[tools]\nflies = "x"\n', "tools.flies: unknown role"),
        ('exclude = "get-env"\n', "exclude: must be a list of tool names"),
        ("budget = -1\n", "budget: must be a whole number"),
        ("colour = 1\n", "colour: unknown key"),
        ("[tools\n", "not TOML"),
    ):
        bad = tmp_path / "bad.toml"
        bad.write_text(text)
        with pytest.raises(ConfigError, match=re.escape(said)):
            read_config(bad)


def test_arguments_fit_the_schema() -> None:
    tool = {
        "inputSchema": {
            "type": "object",
            "required": ["a", "b", "c", "d", "url"],
            "properties": {
                "a": {"type": "integer", "minimum": 3},
                "b": {"enum": ["x", "y"]},
                "c": {"type": "boolean"},
                "d": {"type": "string", "minLength": 30},
                "url": {"type": "string"},
            },
        }
    }
    given = arguments_for(tool)
    assert given["a"] == 3 and given["b"] == "x" and given["c"] is False
    assert len(given["d"]) == 30 and given["url"].startswith("https://")


@pytest.mark.parametrize("seed", range(20))
def test_the_fuzzer_names_only_the_tools_it_is_given(seed: int) -> None:
    safe = [tool for tool in EVERYTHING_TOOLS if tool["name"] == "echo"]
    frames = Frames(seed, Ledger(), "handshake", "2025-11-25", tools=safe, prompts=[], templates=[])
    text = b"\n".join(line for _ in range(400) for line in frames.next())
    for never in (b"get-env", b"gzip-file-as-resource", b"wipe-disk", b"trigger-"):
        assert never not in text
    assert b'"name":"echo"' in text
