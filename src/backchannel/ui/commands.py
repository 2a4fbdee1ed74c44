"""The command language of the interactive client: lines in, ``Command`` out; arguments as JSON or ``key=value``."""

from __future__ import annotations

__all__ = [
    "ALIASES",
    "COMMANDS",
    "TASK_WORDS",
    "Command",
    "CommandError",
    "changed_roots",
    "parse_arguments",
    "parse_command",
    "split_target",
]

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .fields import OMIT, field_from_schema

#: Each command, its usage and what it does (the ``help`` text, in this order).
COMMANDS: dict[str, tuple[str, str]] = {
    "tools": ("tools", "list the server's tools"),
    "call": ("call <tool> [JSON | key=value ...]", "call a tool; arguments not given are asked field by field"),
    "forget": (
        "forget",
        "show again the form you declined: repeats the call a remembered decline answered "
        "(with none, the next call asks again)",
    ),
    "tasks": (
        "tasks [wait | cancel <task>]",
        "list the tasks started here; wait for one left running (and answer its questions), or stop one "
        "(also: wait <task>, cancel <task>; a task is its number or id)",
    ),
    "prompts": ("prompts", "list the server's prompts"),
    "prompt": ("prompt <name> [JSON | key=value ...]", "get a prompt; arguments not given are asked"),
    "resources": ("resources", "list the server's resources"),
    "templates": ("templates", "list the server's resource templates"),
    "read": ("read <uri | template>", "read a resource; a template's variables are asked (Tab completes them)"),
    "skills": ("skills", "list the server's skills (the io.modelcontextprotocol/skills extension)"),
    "skill": (
        "skill <name | uri> [file]",
        "show a skill: its SKILL.md and its files; or one of its files (each checked against the skill's digests)",
    ),
    "watch": ("watch [uri]", "show each change of a resource as it comes, and what it holds then; alone: list them"),
    "unwatch": ("unwatch <uri>", "stop watching a resource"),
    "log": ("log [level]", "show or set the server's log level, debug ... emergency (also: loglevel)"),
    "logs": ("logs [level]", "show the log messages received so far (at level and above)"),
    "roots": ("roots [add PATH | remove PATH]", "show the roots offered to the server, or change them"),
    "info": ("info", "show who the server is and what it can do"),
    "help": ("help", "show this help"),
    "quit": ("quit", "end the session (also: exit, Ctrl-D)"),
}
ALIASES = {"exit": "quit", "q": "quit", "?": "help", "loglevel": "log"}
#: Said alone, these are ``tasks`` words (``cancel 2`` is ``tasks cancel 2``); not commands of their
#: own, so that Tab still completes ``ca`` to ``call``.
TASK_WORDS = ("wait", "cancel")


class CommandError(ValueError):
    """A line that is not a valid command, with what is wrong in words for the person."""


@dataclass(frozen=True)
class Command:
    """One command line, split: ``name`` (``call``, ``read``...), its ``target`` and the ``rest``; ``parse_command``
    makes it."""

    name: str
    #: The first word after the command (a tool, prompt or URI), or "".
    target: str = ""
    #: The text after the target, unparsed (arguments as JSON or key=value).
    rest: str = ""


def parse_command(line: str) -> Command | None:
    """``"call add a=1"`` → ``Command("call", "add", "a=1")``; None for a blank line or a comment."""
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    word, _, remainder = text.partition(" ")
    name = ALIASES.get(word.lower(), word.lower())
    if name in TASK_WORDS:
        name, remainder = "tasks", text
    if name not in COMMANDS:
        raise CommandError(f"unknown command {word!r}; type help for the list")
    target, rest = split_target(remainder)
    if name in ("call", "prompt", "read", "unwatch", "skill") and not target:
        raise CommandError(f"usage: {COMMANDS[name][0]}")
    if name == "tasks" and (target.lower() not in ("", *TASK_WORDS) or (target and not rest)):
        raise CommandError(f"usage: {COMMANDS[name][0]}")
    return Command(name, target, rest)


def split_target(text: str) -> tuple[str, str]:
    """The first word (quotes allowed) and the rest."""
    text = text.strip()
    if not text:
        return "", ""
    if text[0] in "\"'":
        end = text.find(text[0], 1)
        if end < 0:
            raise CommandError(f"no closing quotation mark in {text!r}")
        return text[1:end], text[end + 1 :].strip()
    first, _, rest = text.partition(" ")
    return first, rest.strip()


def parse_arguments(text: str, schema: Any = None) -> dict[str, Any]:
    """Arguments typed after a command: a JSON object, or ``key=value`` words.

    Each ``value`` is read as the schema's property says (``n=3`` is a number,
    ``flag=yes`` a boolean, ``tags=["a","b"]`` JSON); without a schema, a value
    that parses as JSON is JSON and anything else is text. Quote values with
    spaces: ``city="New York"``.
    """
    text = text.strip()
    if not text:
        return {}
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise CommandError(f"the arguments are not valid JSON: {exc}") from None
        assert isinstance(value, dict)  # JSON text that starts with "{" is an object
        return value
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise CommandError(f"cannot read the arguments: {exc}") from None
    properties = schema.get("properties") if isinstance(schema, dict) else None
    arguments: dict[str, Any] = {}
    for word in words:
        key, sep, raw = word.partition("=")
        if not sep or not key:
            raise CommandError(f"{word!r}: write arguments as key=value, or as one JSON object")
        if isinstance(properties, dict) and key in properties:
            field = field_from_schema(key, properties[key], False)
            try:
                value = field.parse(raw)
            except ValueError as exc:
                raise CommandError(f"{key}: {exc}") from None
            if value is OMIT and field.kind != "text":
                raise CommandError(f"{key}: no value after '='")
            arguments[key] = "" if value is OMIT else value
        else:
            arguments[key] = _loose(raw)
    return arguments


def _loose(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def changed_roots(roots: Sequence[Path], action: str, text: str) -> list[Path]:
    """The roots after ``roots add PATH...`` (``action`` "add") or ``roots remove PATH...``;
    ``CommandError`` for a path that does not exist (add) or is not a root (remove)."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise CommandError(f"cannot read the path: {exc}") from None
    if not words:
        raise CommandError(f"usage: roots {'add' if action == 'add' else 'remove'} PATH")
    changed = list(roots)
    for word in words:
        path = Path(word).expanduser().resolve()
        if action == "add":
            if not path.exists():
                raise CommandError(f"no such file or directory: {word}")
            if path not in changed:
                changed.append(path)
        else:
            match = [root for root in changed if root == path or root.as_uri() == word]
            if not match:
                raise CommandError(f"{word} is not one of the roots (see: roots)")
            changed = [root for root in changed if root not in match]
    return changed
