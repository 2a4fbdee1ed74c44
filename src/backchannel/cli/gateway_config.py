"""The gateway's file (``backchannel gateway gateway.toml``) read into what the gateway serves.

``read_config(path)`` reads the TOML file and checks every key in one pass; a file that cannot be
served raises ``ConfigProblems``, whose ``lines`` say each problem in one line naming the file and
the key (``gateway.toml: upstream[2].command: must be a list of strings``). Nothing is started
here: what the environment variables the file names hold is read now, so a missing one is a
problem of the file too. ``docs/gateway.md`` is the reference of every key.

An upstream is named by its place in an array (``[[upstream]]``: ``upstream[1]`` is the first) or
by its key in a table (``[upstream.ev]``: ``upstream.ev``).
"""

from __future__ import annotations

__all__ = [
    "BearerToken",
    "ClientCredentialsLogin",
    "ConfigProblems",
    "GatewayConfig",
    "KeptLogin",
    "MiddlewareConfig",
    "ToolChange",
    "UpstreamConfig",
    "parse_config",
    "read_config",
]

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._version import __version__

#: The kinds of item ``enabled`` and ``disabled`` name, as their table's keys.
KINDS = {"tools": "tool", "prompts": "prompt", "resources": "resource"}
_ERAS = ("auto", "handshake", "stateless")
_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,31}$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_GATEWAY_KEYS = ("name", "version", "instructions")
_UPSTREAM_KEYS = ("name", "command", "url", "headers", "auth", "era", "scopes", "tools", "enabled", "disabled")
_TOOL_KEYS = ("name", "title", "description", "hide", "fix")
_TOP_KEYS = ("gateway", "upstream", "middleware")
_MIDDLEWARE_KEYS = ("log_requests", "rate_limit", "allow_tools", "deny_tools", "cache_lists")


class ConfigProblems(Exception):
    """The file cannot be served: ``lines``, one per problem, each naming the file and the key."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


@dataclass(frozen=True)
class BearerToken:
    """``auth = { bearer_env = "NAME" }``: ``Authorization: Bearer`` the value of ``$NAME``."""

    variable: str
    token: str


@dataclass(frozen=True)
class KeptLogin:
    """``auth = "oauth"``: the login ``backchannel connect URL`` keeps, refreshed, never a new one
    (as ``backchannel call`` logs in: a gateway has nobody at its keyboard)."""


@dataclass(frozen=True)
class ClientCredentialsLogin:
    """``auth = { client_id = "ID", client_secret_env = "NAME" }``: the gateway logs in as this
    OAuth client on its own behalf (client credentials, RFC 6749 §4.4)."""

    client_id: str
    secret: str | None


Auth = BearerToken | KeptLogin | ClientCredentialsLogin


@dataclass(frozen=True)
class ToolChange:
    """``[upstream.tools.NAME]``: the upstream's tool ``tool`` shown as ``name``, with ``title``
    and ``description``, without the arguments it ``hide``s and with those it ``fix``es."""

    tool: str
    name: str | None = None
    title: str | None = None
    description: str | None = None
    hide: tuple[str, ...] = ()
    fix: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class UpstreamConfig:
    """One ``[[upstream]]``: mounted at ``prefix`` ("" serves its names unchanged)."""

    key: str  # how problems name it: "upstream[1]" or "upstream.ev"
    prefix: str
    command: tuple[str, ...] | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    auth: Auth | None = None
    era: str = "auto"
    scopes: tuple[str, ...] = ()
    tools: tuple[ToolChange, ...] = ()
    #: Per kind ("tool", "prompt", "resource"): names or patterns, as the upstream names them.
    enabled: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    disabled: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class MiddlewareConfig:
    """``[middleware]``: ``log_requests`` (a line per request and per question sent, on the
    gateway's log), ``rate_limit`` (``rate`` requests a second per caller, in bursts of
    ``burst``), ``allow_tools`` / ``deny_tools`` (patterns of the names clients see) and
    ``cache_lists`` (list answers kept for this many seconds; None: not kept)."""

    log_requests: bool = False
    rate: float | None = None
    burst: float | None = None
    allow_tools: tuple[str, ...] | None = None
    deny_tools: tuple[str, ...] = ()
    cache_lists: float | None = None


@dataclass(frozen=True)
class GatewayConfig:
    """The whole file: the gateway's own ``name``, ``version`` and ``instructions``, its upstreams
    in the file's order, and its middleware."""

    file: str
    name: str = "backchannel-gateway"
    version: str = __version__
    instructions: str | None = None
    upstreams: tuple[UpstreamConfig, ...] = ()
    middleware: MiddlewareConfig = MiddlewareConfig()


def read_config(path: str | os.PathLike[str], environ: Mapping[str, str] | None = None) -> GatewayConfig:
    """The gateway ``path`` describes; ``ConfigProblems`` for a file that cannot be served
    (missing, not TOML, or with keys that are wrong), every problem at once."""
    shown = str(path)
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as exc:
        raise ConfigProblems([f"{shown}: cannot be read: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError:
        raise ConfigProblems([f"{shown}: is not UTF-8 text (a TOML file is)"]) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigProblems([f"{shown}: is not valid TOML: {exc}"]) from None
    return parse_config(data, shown, os.environ if environ is None else environ)


def parse_config(data: Mapping[str, Any], file: str, environ: Mapping[str, str]) -> GatewayConfig:
    """``read_config`` of TOML already read (``data``); ``file`` names it in each problem."""
    reader = _Reader(file, environ)
    config = reader.config(data)
    if reader.problems:
        raise ConfigProblems(reader.problems)
    return config


def key_text(base: str, *names: str | int) -> str:
    """The key ``names`` below ``base`` (a key already written out) as a person finds it in the
    file: ``key_text("upstream", 2, "tools", "a.b")`` is ``upstream[2].tools."a.b"``."""
    text = base
    for name in names:
        if isinstance(name, int):
            text += f"[{name}]"
        else:
            shown = name if _BARE_KEY.match(name) else '"' + name.replace('"', '\\"') + '"'
            text += f".{shown}" if text else shown
    return text


class _Reader:
    """Reads the file's tables, noting each problem (``problems``) and going on past it."""

    def __init__(self, file: str, environ: Mapping[str, str]) -> None:
        self.file = file
        self.environ = environ
        self.problems: list[str] = []

    def problem(self, key: str, text: str) -> None:
        self.problems.append(f"{self.file}: {key}: {text}" if key else f"{self.file}: {text}")

    def unknown(self, table: Mapping[str, Any], known: tuple[str, ...], where: str) -> None:
        for name in table:
            if name not in known:
                self.problem(key_text(where, name), f"unknown key (known: {', '.join(known)})")

    # ------------------------------------------------------------ values

    def string(self, table: Mapping[str, Any], name: str, where: str, *, empty: bool = False) -> str | None:
        value = table.get(name)
        if value is None:
            return None
        if not isinstance(value, str) or (not empty and not value):
            self.problem(key_text(where, name), "must be a string" if empty else "must be a non-empty string")
            return None
        return value

    def strings(self, value: Any, key: str) -> tuple[str, ...] | None:
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            self.problem(key, "must be a list of strings")
            return None
        return tuple(value)

    def variable(self, value: Any, key: str) -> str | None:
        """The value of the environment variable named by ``value`` (a problem when unset)."""
        if not isinstance(value, str) or not _ENV_NAME.match(value):
            self.problem(key, "must name an environment variable (letters, digits and '_')")
            return None
        found = self.environ.get(value)
        if not found:
            self.problem(key, f"the environment variable {value} is not set")
            return None
        return found

    # ------------------------------------------------------------ tables

    def config(self, data: Mapping[str, Any]) -> GatewayConfig:
        self.unknown(data, _TOP_KEYS, "")
        gateway = data.get("gateway", {})
        options: dict[str, Any] = {}
        if not isinstance(gateway, dict):
            self.problem("gateway", "must be a table ([gateway])")
        else:
            self.unknown(gateway, _GATEWAY_KEYS, "gateway")
            for name in _GATEWAY_KEYS:
                value = self.string(gateway, name, "gateway")
                if value is not None:
                    options[name] = value
        upstreams = self.upstreams(data.get("upstream"))
        middleware = self.middleware(data.get("middleware", {}))
        return GatewayConfig(self.file, upstreams=upstreams, middleware=middleware, **options)

    def middleware(self, table: Any) -> MiddlewareConfig:
        if not isinstance(table, dict):
            self.problem("middleware", "must be a table ([middleware])")
            return MiddlewareConfig()
        self.unknown(table, _MIDDLEWARE_KEYS, "middleware")
        options: dict[str, Any] = {}
        log = table.get("log_requests", False)
        if not isinstance(log, bool):
            self.problem("middleware.log_requests", "must be true or false")
        options["log_requests"] = log is True
        if "rate_limit" in table:
            limit = table["rate_limit"]
            if not isinstance(limit, dict) or "rate" not in limit:
                self.problem(
                    "middleware.rate_limit",
                    "must be a table: { rate = requests a second per caller, burst = at most at once }",
                )
            else:
                self.unknown(limit, ("rate", "burst"), "middleware.rate_limit")
                for name in ("rate", "burst"):
                    if name in limit:
                        if _positive(limit[name]):
                            options[name] = float(limit[name])
                        else:
                            self.problem(key_text("middleware", "rate_limit", name), "must be a number greater than 0")
        for name in ("allow_tools", "deny_tools"):
            if name in table:
                value = table[name]
                if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
                    self.problem(
                        key_text("middleware", name),
                        "must be a list of tool names or patterns, as clients see them (ev_*)",
                    )
                else:
                    options[name] = tuple(value)
        cache = table.get("cache_lists", False)
        if cache is True:
            options["cache_lists"] = 30.0
        elif _positive(cache):
            options["cache_lists"] = float(cache)
        elif cache is not False:
            self.problem(
                "middleware.cache_lists", "must be true (30 s), false, or the seconds a list is kept (more than 0)"
            )
        return MiddlewareConfig(**options)

    def upstreams(self, value: Any) -> tuple[UpstreamConfig, ...]:
        entries: list[tuple[str, str | None, Any]] = []
        if isinstance(value, list):
            entries = [(key_text("upstream", number), None, entry) for number, entry in enumerate(value, 1)]
        elif isinstance(value, dict):
            entries = [(key_text("upstream", name), name, entry) for name, entry in value.items()]
        elif value is not None:
            self.problem("upstream", "must be an array of tables ([[upstream]]) or a table of them ([upstream.NAME])")
            return ()
        if not entries:
            self.problem("upstream", "no upstream: give at least one [[upstream]] with a name and a command or url")
            return ()
        found: list[UpstreamConfig] = []
        seen: dict[str, str] = {}
        for where, named, entry in entries:
            upstream = self.upstream(entry, where, named)
            if upstream is None:
                continue
            if upstream.prefix in seen:
                self.problem(key_text(where, "name"), f"{upstream.prefix!r} is taken by {seen[upstream.prefix]}")
                continue
            seen[upstream.prefix] = where
            found.append(upstream)
        return tuple(found)

    def upstream(self, entry: Any, where: str, named: str | None) -> UpstreamConfig | None:
        if not isinstance(entry, dict):
            self.problem(where, "must be a table")
            return None
        before = len(self.problems)
        self.unknown(entry, _UPSTREAM_KEYS, where)
        prefix = self.prefix(entry, where, named)
        command = url = None
        if "command" in entry:
            command = self.strings(entry["command"], key_text(where, "command"))
            if command == ():
                self.problem(key_text(where, "command"), "must be a list of strings")
        if "url" in entry:
            url = self.string(entry, "url", where)
            if url is not None and not re.match(r"https?://[^/?#\s]+", url, re.IGNORECASE):
                self.problem(key_text(where, "url"), f"{url!r} is not an http(s):// URL")
        if "command" in entry and "url" in entry:
            self.problem(where, "give command or url, not both")
        elif "command" not in entry and "url" not in entry:
            self.problem(where, "give command (a list of strings, spawned over stdio) or url (http(s)://...)")
        headers = self.headers(entry, where)
        auth = self.auth(entry.get("auth"), key_text(where, "auth")) if "auth" in entry else None
        if "command" in entry:
            for name in ("headers", "auth"):
                if name in entry:
                    self.problem(
                        key_text(where, name), "is for a url upstream; this one is a command, spoken to over stdio"
                    )
        if auth is not None and any(name.lower() == "authorization" for name in headers):
            self.problem(key_text(where, "auth"), "an Authorization header is given too: give one credential")
        era = entry.get("era", "auto")
        if era not in _ERAS:
            self.problem(key_text(where, "era"), f"must be one of {', '.join(_ERAS)}")
        scopes: tuple[str, ...] | None = ()
        if "scopes" in entry:
            scopes = self.strings(entry["scopes"], key_text(where, "scopes"))
        tools = self.tools(entry.get("tools", {}), key_text(where, "tools"))
        enabled = self.switches(entry, "enabled", where, prefix)
        disabled = self.switches(entry, "disabled", where, prefix)
        if "enabled" in entry and "disabled" in entry:
            self.problem(where, "give enabled (only these) or disabled (all but these), not both")
        if len(self.problems) > before or prefix is None:
            return None
        return UpstreamConfig(
            key=where,
            prefix=prefix,
            command=command,
            url=url,
            headers=headers,
            auth=auth,
            era=era,
            scopes=scopes or (),
            tools=tools,
            enabled=enabled,
            disabled=disabled,
        )

    def prefix(self, entry: Mapping[str, Any], where: str, named: str | None) -> str | None:
        if named is not None:  # [upstream.NAME]: the key is the name
            if "name" in entry:
                self.problem(key_text(where, "name"), "the table's key names this upstream: leave name out")
            prefix: Any = named
            key = where
        elif "name" not in entry:
            self.problem(where, "name is required: the prefix of its tools (NAME_tool) and URIs (NAME+scheme://)")
            return None
        else:
            prefix = entry["name"]
            key = key_text(where, "name")
        if not isinstance(prefix, str) or (prefix and not _PREFIX.match(prefix)):
            self.problem(
                key,
                f"{prefix!r} cannot name an upstream: use a letter, then up to 31 letters, digits or '-' "
                "(no '_': it ends the prefix in a tool's name), or \"\" to serve its names unchanged",
            )
            return None
        return prefix

    def headers(self, entry: Mapping[str, Any], where: str) -> dict[str, str]:
        value = entry.get("headers", {})
        key = key_text(where, "headers")
        if not isinstance(value, dict):
            self.problem(key, "must be a table of header names and string values")
            return {}
        headers: dict[str, str] = {}
        for name, text in value.items():
            if not _HEADER_NAME.match(name):
                self.problem(key_text(key, name), "is not an HTTP header name")
            elif not isinstance(text, str) or "\r" in text or "\n" in text:
                self.problem(key_text(key, name), "must be a string on one line")
            else:
                headers[name] = text
        return headers

    def auth(self, value: Any, key: str) -> Auth | None:
        if value == "oauth":
            return KeptLogin()
        if not isinstance(value, dict):
            self.problem(
                key, 'must be "oauth", { bearer_env = "NAME" } or { client_id = "ID", client_secret_env = "NAME" }'
            )
            return None
        if "bearer_env" in value:
            self.unknown(value, ("bearer_env",), key)
            token = self.variable(value["bearer_env"], key_text(key, "bearer_env"))
            return None if token is None else BearerToken(value["bearer_env"], token)
        if "client_id" in value:
            self.unknown(value, ("client_id", "client_secret_env"), key)
            client_id = self.string(value, "client_id", key)
            secret = None
            if "client_secret_env" in value:
                secret = self.variable(value["client_secret_env"], key_text(key, "client_secret_env"))
                if secret is None:
                    return None
            return None if client_id is None else ClientCredentialsLogin(client_id, secret)
        self.problem(
            key, 'must be "oauth", { bearer_env = "NAME" } or { client_id = "ID", client_secret_env = "NAME" }'
        )
        return None

    def tools(self, value: Any, key: str) -> tuple[ToolChange, ...]:
        if not isinstance(value, dict):
            self.problem(key, "must be a table of the upstream's tools ([upstream.tools.NAME])")
            return ()
        changes: list[ToolChange] = []
        for tool, table in value.items():
            where = key_text(key, tool)
            if not isinstance(table, dict):
                self.problem(where, "must be a table (name, title, description, hide, fix)")
                continue
            before = len(self.problems)
            self.unknown(table, _TOOL_KEYS, where)
            text = {name: self.string(table, name, where) for name in ("name", "title", "description")}
            hide = self.strings(table["hide"], key_text(where, "hide")) if "hide" in table else ()
            fix = table.get("fix", {})
            if not isinstance(fix, dict):
                self.problem(key_text(where, "fix"), "must be a table of argument names and values")
                fix = {}
            if len(self.problems) > before or hide is None:
                continue
            if not (text["name"] or text["title"] or text["description"] or hide or fix):
                self.problem(where, "changes nothing: give name, title, description, hide or fix")
            changes.append(ToolChange(tool, text["name"], text["title"], text["description"], hide, fix))
        return tuple(changes)

    def switches(
        self, entry: Mapping[str, Any], name: str, where: str, prefix: str | None
    ) -> dict[str, tuple[str, ...]]:
        """``enabled`` or ``disabled``: a list of tool names, or a table of them per kind."""
        if name not in entry:
            return {}
        value = entry[name]
        key = key_text(where, name)
        if isinstance(value, list):
            names = self.strings(value, key)
            found = {} if names is None else {"tool": names}
        elif isinstance(value, dict):
            self.unknown(value, tuple(KINDS), key)
            found = {}
            for plural, kind in KINDS.items():
                if plural in value:
                    names = self.strings(value[plural], key_text(key, plural))
                    if names is not None:
                        found[kind] = names
        else:
            self.problem(
                key,
                "must be a list of tool names, or a table of them per kind: { tools = [...], prompts = [...] }",
            )
            return {}
        if name == "enabled" and prefix == "":
            self.problem(key, 'an upstream named "" shares its names with the gateway\'s: use disabled')
        return found


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
