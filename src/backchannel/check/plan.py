"""Which of the server's tools exercises what: the plan of the second layer's checks.

A check of elicitation needs a tool that elicits; of cancellation, one that takes long
enough to cancel. ``Plan.of`` finds them among the tools a server lists, by name and
description (``trigger-elicitation-request``, "Reports progress ..."), unless the person
named them (``--tool ROLE=NAME`` or the ``[tools]`` table of ``--config check.toml``).
The roles:

``elicits``      asks the client a form (``elicitation/create``, or an input round)
``elicits_url``  asks the client to open a URL
``roots``        asks for the client's roots
``samples``      asks the client's model (``sampling/createMessage``)
``progress``     reports progress while it runs
``slow``         takes a few seconds: cancelled mid-way
``logs``         sends log messages

A tool named in ``exclude`` is never called, by any check nor by the fuzzer; the fuzzer
calls only tools marked ``readOnlyHint`` and not ``openWorldHint`` (or listed in ``safe``).

The config file (TOML)::

    exclude = ["get-env", "gzip-file-as-resource"]
    safe = ["echo"]          # tools the fuzzer may call with fuzzed arguments
    budget = 500             # fuzzed frames (--budget wins)

    [tools]
    elicits = "trigger-elicitation-request"
    slow = { name = "trigger-long-running-operation", arguments = { duration = 4, steps = 8 } }
"""

from __future__ import annotations

__all__ = ["ROLES", "ConfigError", "Plan", "PlanConfig", "ToolUse", "arguments_for", "read_config"]

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .shapes import obj

ROLES: dict[str, str] = {
    "elicits": "asks the client a form",
    "elicits_url": "asks the client to open a URL",
    "roots": "asks for the client's roots",
    "samples": "asks the client's model",
    "progress": "reports progress",
    "slow": "takes a few seconds (to be cancelled)",
    "logs": "sends log messages",
}

#: What a tool's name (first) or description says, per role; "avoid" rules a tool out.
_FIND: dict[str, tuple[str, str, str | None]] = {
    "elicits": (r"elicit", r"\belicit|asks? the user|user for", r"url|async|multi|capabilit|tamper|state"),
    "elicits_url": (r"url.?elicit|elicit.?url", r"url mode|url elicitation", r"error"),
    "roots": (r"\broots?\b|roots", r"roots/list|\broots\b", r"change"),
    "samples": (r"sampl", r"sampling|createmessage|llm", r"async|multi"),
    "progress": (r"progress|long.?running", r"progress", r"task|multi"),
    "slow": (r"long.?running|slow|sleep", r"\bsleeps?\b|long.?running|duration", r"task|fail|error"),
    "logs": (r"(?<!g)log(?!in|out|o)", r"\blog messages?\b|logging|logs? (at|while)", r"toggle-subscriber|login"),
}

_SENTINEL = "backchannel-check"
_URL = "https://example.com/backchannel-check"


class ConfigError(ValueError):
    """A config file or ``--tool`` that cannot be read: what is wrong, in one line."""


@dataclass(frozen=True, slots=True)
class ToolUse:
    """A tool to call for a role, and the arguments to call it with."""

    name: str
    arguments: dict[str, Any]
    named: bool = False  # the person named it (else it was found)


@dataclass
class PlanConfig:
    """What the person said: tools per role, tools never to call, tools safe to fuzz."""

    tools: dict[str, ToolUse] = field(default_factory=dict)
    exclude: frozenset[str] = frozenset()
    safe: frozenset[str] = frozenset()
    budget: int | None = None

    def merged(self, other: PlanConfig) -> PlanConfig:
        """This config with ``other``'s choices on top (the command line over the file)."""
        return PlanConfig(
            tools={**self.tools, **other.tools},
            exclude=self.exclude | other.exclude,
            safe=self.safe | other.safe,
            budget=other.budget if other.budget is not None else self.budget,
        )


def read_config(path: str | Path) -> PlanConfig:
    """The plan a TOML file names; ``ConfigError`` naming the file and the key when it cannot be read."""
    import tomllib

    where = str(path)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read it: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not TOML: {exc}") from None
    known = {"exclude", "safe", "budget", "tools"}
    for key in data:
        if key not in known:
            raise ConfigError(f"{where}: {key}: unknown key (known: {', '.join(sorted(known))})")
    config = PlanConfig(
        exclude=frozenset(_names(data.get("exclude", []), f"{where}: exclude")),
        safe=frozenset(_names(data.get("safe", []), f"{where}: safe")),
    )
    budget = data.get("budget")
    if budget is not None:
        if not isinstance(budget, int) or isinstance(budget, bool) or budget < 0:
            raise ConfigError(f"{where}: budget: must be a whole number of frames, 0 or more")
        config.budget = budget
    tools = data.get("tools", {})
    if not isinstance(tools, dict):
        raise ConfigError(f"{where}: tools: must be a table of role = tool")
    for role, value in tools.items():
        config.tools[role] = tool_use(role, value, f"{where}: tools.{role}")
    return config


def tool_use(role: str, value: Any, where: str) -> ToolUse:
    """``"NAME"`` or ``{name = "NAME", arguments = {...}}`` for ``role``, checked."""
    if role not in ROLES:
        raise ConfigError(f"{where}: unknown role (the roles: {', '.join(ROLES)})")
    if isinstance(value, str) and value:
        return ToolUse(value, {}, named=True)
    if isinstance(value, dict):
        name, arguments = value.get("name"), value.get("arguments", {})
        extra = set(value) - {"name", "arguments"}
        if extra:
            raise ConfigError(f"{where}: unknown key {sorted(extra)[0]} (a tool is name and arguments)")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{where}.name: must be the tool's name")
        if not isinstance(arguments, dict):
            raise ConfigError(f"{where}.arguments: must be a table of the tool's arguments")
        return ToolUse(name, dict(arguments), named=True)
    raise ConfigError(f"{where}: must be a tool's name or {{name = ..., arguments = {{...}}}}")


def _names(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: must be a list of tool names")
    return list(value)


@dataclass
class Plan:
    """The tools one era's checks call, per role (a role without a tool is left out)."""

    uses: dict[str, ToolUse]
    tools: dict[str, dict[str, Any]]
    exclude: frozenset[str]
    safe: frozenset[str]
    missing: dict[str, str] = field(default_factory=dict)  # role -> why no tool

    @classmethod
    def of(cls, tools: Iterable[dict[str, Any]], config: PlanConfig) -> Plan:
        """Find a tool for each role among ``tools`` (each a ``tools/list`` entry), the
        person's choices first."""
        listed = {tool["name"]: tool for tool in tools if isinstance(tool, dict) and isinstance(tool.get("name"), str)}
        uses: dict[str, ToolUse] = {}
        missing: dict[str, str] = {}
        for role in ROLES:
            chosen = config.tools.get(role)
            if chosen is not None:
                if chosen.name not in listed:
                    missing[role] = f"the tool named for {role}, {chosen.name}, is not in the server's list"
                    continue
                defaults = arguments_for(listed[chosen.name], role)
                uses[role] = ToolUse(chosen.name, {**defaults, **chosen.arguments}, named=True)
                continue
            found = _find(role, listed, config.exclude)
            if found is None:
                missing[role] = f"no tool of the server {ROLES[role]} (name one: --tool {role}=NAME)"
            else:
                uses[role] = ToolUse(found, arguments_for(listed[found], role))
        safe = frozenset(
            name
            for name, tool in listed.items()
            if name not in config.exclude and (name in config.safe or _read_only(tool))
        )
        return cls(uses, listed, config.exclude, safe, missing)

    def use(self, role: str) -> ToolUse | None:
        return self.uses.get(role)


def _read_only(tool: Mapping[str, Any]) -> bool:
    annotations = tool.get("annotations")
    if not isinstance(annotations, dict):
        return False
    return annotations.get("readOnlyHint") is True and annotations.get("openWorldHint") is False


def _find(role: str, tools: Mapping[str, dict[str, Any]], exclude: frozenset[str]) -> str | None:
    name_pattern, description_pattern, avoid = _FIND[role]
    scored: list[tuple[float, str]] = []
    for name, tool in tools.items():
        if name in exclude:
            continue
        annotations = obj(tool.get("annotations"))
        if annotations and annotations.get("destructiveHint") is True:
            continue  # never found for a check: only named
        description = str(tool.get("description") or "")
        lowered = name.lower()
        if avoid is not None and re.search(avoid, lowered):
            continue
        score = 0.0
        if re.search(name_pattern, lowered):
            score += 10
        if re.search(description_pattern, description.lower()):
            score += 4
        if score == 0:
            continue
        required = (tool.get("inputSchema") or {}).get("required") or []
        score -= 2 * len(required) + len(name) / 100
        scored.append((score, name))
    if not scored:
        return None
    return max(scored)[1]


#: Arguments named like a duration or a count, given to the tools of these roles: short
#: progress, and work long enough to cancel mid-way.
_DURATION = re.compile(r"^(duration|seconds|secs|delay|sleep|wait|time)(_?s)?$", re.IGNORECASE)
_STEPS = re.compile(r"^(steps|count|iterations|ticks)$", re.IGNORECASE)
_ROLE_TIMES = {"progress": (1.0, 4), "slow": (4.0, 8)}


def arguments_for(tool: Mapping[str, Any], role: str | None = None) -> dict[str, Any]:
    """Arguments that fit ``tool``'s input schema: its required properties, each a value of
    its type (an enum's first, the default, a URL for a url); for ``progress`` and ``slow``,
    a duration and a number of steps where the tool takes them."""
    schema = obj(tool.get("inputSchema"))
    properties = obj(schema.get("properties"))
    required = [name for name in schema.get("required") or [] if isinstance(name, str)]
    arguments = {name: value_for(name, properties.get(name) or {}) for name in required}
    times = _ROLE_TIMES.get(role or "")
    if times is not None:
        seconds, steps = times
        for name, definition in properties.items():
            kind = definition.get("type") if isinstance(definition, dict) else None
            if kind not in ("number", "integer", None):
                continue
            if _DURATION.match(name):
                value = seconds * 1000 if "ms" in name.lower() else seconds
                arguments[name] = int(value) if kind == "integer" else value
            elif _STEPS.match(name):
                arguments[name] = steps
    return arguments


def value_for(name: str, schema: Any) -> Any:
    """A value of the JSON type ``schema`` asks for."""
    if not isinstance(schema, dict):
        return _SENTINEL
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    if "default" in schema:
        return schema["default"]
    for option in schema.get("oneOf") or schema.get("anyOf") or []:
        if isinstance(option, dict) and "const" in option:
            return option["const"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((item for item in kind if item != "null"), None)
    if kind in ("number", "integer"):
        low = schema.get("minimum")
        value = low if isinstance(low, int | float) else 1
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    if kind == "object":
        return {}
    if schema.get("format") in ("uri", "url") or "url" in name.lower() or "uri" in name.lower():
        return _URL
    if schema.get("format") == "email":
        return "check@example.com"
    if schema.get("format") == "date":
        return "2026-01-01"
    if schema.get("format") == "date-time":
        return "2026-01-01T00:00:00Z"
    minimum = schema.get("minLength")
    text = _SENTINEL
    if isinstance(minimum, int) and minimum > len(text):
        text = text + "x" * (minimum - len(text))
    return text
