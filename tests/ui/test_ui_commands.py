"""Command lines parsed, arguments read as JSON or key=value, Tab completion offered."""

from __future__ import annotations

from pathlib import Path

import pytest
from _ui_harness import captured_console

from backchannel.types.prompts import Prompt, PromptArgument
from backchannel.types.tools import Tool
from backchannel.ui import Command, CommandError, TerminalSession, parse_arguments, parse_command, scripted

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "metric": {"type": "boolean"},
        "unit": {"type": "string", "enum": ["C", "F"]},
        "tags": {"type": "array", "items": {"type": "number"}},
    },
    "required": ["city"],
}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("tools", Command("tools")),
        ("  TOOLS  ", Command("tools")),
        ("call add", Command("call", "add")),
        ("call add a=1 b=2", Command("call", "add", "a=1 b=2")),
        ('call add {"a": 1}', Command("call", "add", '{"a": 1}')),
        ("read demo://cities/Porto", Command("read", "demo://cities/Porto")),
        ('prompt "my prompt" code=x', Command("prompt", "my prompt", "code=x")),
        ("exit", Command("quit")),
        ("q", Command("quit")),
        ("?", Command("help")),
        ("loglevel debug", Command("log", "debug")),
        ("log warning", Command("log", "warning")),
        ("roots add /tmp", Command("roots", "add", "/tmp")),
    ],
)
def test_command_lines(line: str, expected: Command) -> None:
    assert parse_command(line) == expected


@pytest.mark.parametrize("line", ["", "   ", "# a comment"])
def test_blank_lines_and_comments_are_no_command(line: str) -> None:
    assert parse_command(line) is None


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("frobnicate", "unknown command 'frobnicate'"),
        ("call", "usage: call <tool>"),
        ("read   ", "usage: read <uri"),
        ("prompt", "usage: prompt <name>"),
        ('call "add', "no closing quotation mark"),
    ],
)
def test_bad_command_lines_say_what_is_wrong(line: str, message: str) -> None:
    with pytest.raises(CommandError, match=message):
        parse_command(line)


def test_arguments_as_json() -> None:
    assert parse_arguments('{"city": "Oslo", "days": 3}', WEATHER) == {"city": "Oslo", "days": 3}


def test_arguments_as_key_value_follow_the_schema() -> None:
    parsed = parse_arguments('city="New York" days=3 metric=yes unit=f tags=[1.5,2]', WEATHER)
    assert parsed == {"city": "New York", "days": 3, "metric": True, "unit": "F", "tags": [1.5, 2]}


def test_a_text_field_keeps_digits_as_text() -> None:
    assert parse_arguments("city=1984", WEATHER) == {"city": "1984"}


def test_without_a_schema_values_are_json_or_text() -> None:
    assert parse_arguments("n=3 flag=true name=Ada list=[1]") == {"n": 3, "flag": True, "name": "Ada", "list": [1]}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "key=value"),
        ('{"a": 1', "not valid JSON"),
        ("city", "write arguments as key=value"),
        ("days=three", "days: 'three' is not a whole number"),
        ("days=", "days: no value"),
        ("metric=maybe", "metric: answer yes or no"),
        ("unit=K", "unit: 'K' is not one of C, F"),
        ('city="unclosed', "cannot read the arguments"),
    ],
)
def test_bad_arguments_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(CommandError, match=message):
        parse_arguments(text, WEATHER)


def _session() -> TerminalSession:
    session = TerminalSession(captured_console(), scripted([]))
    session._remember_tools(
        [
            Tool(name="add", input_schema={"type": "object", "properties": {"a": {}, "b": {}}}),
            Tool(name="add_many", input_schema={"type": "object"}),
            Tool(name="weather", input_schema=WEATHER),
        ]
    )
    session._remember_prompts(
        [Prompt(name="code_review", arguments=[PromptArgument(name="code"), PromptArgument(name="language")])]
    )
    session.names["resources"] = ["demo://readme"]
    session.names["templates"] = ["demo://cities/{name}"]
    session.roots = [Path("/work/a")]
    return session


@pytest.mark.parametrize(
    ("typed", "offered"),
    [
        (
            "",
            [
                "tools",
                "call",
                "forget",
                "tasks",
                "prompts",
                "prompt",
                "resources",
                "templates",
                "read",
                "skills",
                "skill",
                "watch",
                "unwatch",
                "log",
                "logs",
                "roots",
                "info",
                "help",
                "quit",
            ],
        ),
        ("c", ["call"]),
        ("pro", ["prompts", "prompt"]),
        ("call ", ["add", "add_many", "weather"]),
        ("call ad", ["add", "add_many"]),
        ("call add ", ["a=", "b="]),
        ("call add a=1 ", ["b="]),
        ("call weather u", ["unit="]),
        ("prompt ", ["code_review"]),
        ("prompt code_review code=x l", ["language="]),
        ("read demo://", ["demo://readme", "demo://cities/"]),
        ("loglevel w", ["warning"]),
        ("log e", ["error", "emergency"]),
        ("roots ", ["add", "remove"]),
        ("roots remove ", ["/work/a"]),
        ("call nosuch ", []),
        ("tools x", []),
    ],
)
def test_tab_completion(typed: str, offered: list[str]) -> None:
    assert _session().completions(typed) == offered


def test_quit_ends_the_session_without_a_server() -> None:
    import asyncio

    session = _session()
    assert asyncio.run(session.execute("quit")) is False
    assert asyncio.run(session.execute("nonsense")) is True
    assert "unknown command 'nonsense'" in session.console.file.getvalue()  # type: ignore[attr-defined]
