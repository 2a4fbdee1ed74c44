"""``backchannel gateway FILE``: the file's keys, and what a file that cannot be served gets.

A bad file is refused before anything starts (exit status 2), one line per problem on stderr,
each naming the file and the key; ``--check`` says the same, or that the file can be served.
A good file's keys take effect on the wire: a tool renamed, described, with an argument fixed;
``enabled``/``disabled`` lists; the middleware switches; the credentials sent to a URL upstream.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from _subprocesses import checkout_env, run_cli
from backchannel import Server
from backchannel.cli.gateway import build_gateway
from backchannel.cli.gateway_config import ConfigProblems, parse_config, read_config
from backchannel.client.oauth import ClientCredentials, KeptLogin
from backchannel.middleware import ListCache, RateLimit, RequestLog, ToolFilter
from backchannel.testing import connected, run, serve_on_loopback
from backchannel.types.errors import MCPError

HERE = Path(__file__).resolve().parent
UPSTREAM = [sys.executable, str(HERE.parent / "bridge" / "upstream_server.py")]
CLI_TIMEOUT = 60.0

BAD = """
[gateway]
name = "gw"
colour = "blue"

[[upstream]]
name = "a_b"
command = "node server.js"

[[upstream]]
name = "api"
url = "ftp://example.com"
auth = { bearer_env = "GATEWAY_TEST_UNSET" }
era = "modern"
scopes = [1]
disabled = ["x"]
enabled = ["y"]

[upstream.tools.echo]
hide = "text"

[[upstream]]
command = ["node", "server.js"]
headers = { "X-Team" = "blue" }

[[upstream]]
name = "api"
url = "https://example.com/mcp"
headers = { "Bad Header" = "x", Authorization = "Bearer t" }
auth = "oauth"

[middleware]
rate_limit = { rate = 0 }
cache_lists = "yes"
audit = true
"""

BAD_LINES = [
    "gateway.colour: unknown key (known: name, version, instructions)",
    "upstream[1].name: 'a_b' cannot name an upstream: use a letter, then up to 31 letters, digits or '-' "
    "(no '_': it ends the prefix in a tool's name), or \"\" to serve its names unchanged",
    "upstream[1].command: must be a list of strings",
    "upstream[2].url: 'ftp://example.com' is not an http(s):// URL",
    "upstream[2].auth.bearer_env: the environment variable GATEWAY_TEST_UNSET is not set",
    "upstream[2].era: must be one of auto, handshake, stateless",
    "upstream[2].scopes: must be a list of strings",
    "upstream[2].tools.echo.hide: must be a list of strings",
    "upstream[2]: give enabled (only these) or disabled (all but these), not both",
    "upstream[3]: name is required: the prefix of its tools (NAME_tool) and URIs (NAME+scheme://)",
    "upstream[3].headers: is for a url upstream; this one is a command, spoken to over stdio",
    'upstream[4].headers."Bad Header": is not an HTTP header name',
    "upstream[4].auth: an Authorization header is given too: give one credential",
    "middleware.audit: unknown key (known: log_requests, rate_limit, allow_tools, deny_tools, cache_lists)",
    "middleware.rate_limit.rate: must be a number greater than 0",
    "middleware.cache_lists: must be true (30 s), false, or the seconds a list is kept (more than 0)",
]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "gateway.toml"
    path.write_text(text)
    return path


def test_a_bad_file_is_one_line_per_problem_naming_the_file_and_the_key(tmp_path: Path) -> None:
    started = tmp_path / "started"
    starts = [sys.executable, "-c", f"open({str(started)!r}, 'w')"]  # what a started upstream would leave
    text = BAD + f'\n[[upstream]]\nname = "ok"\ncommand = {json.dumps(starts)}\n'
    path = _write(tmp_path, text)
    for extra in ((), ("--check",), ("--http", "--port", "1")):
        done = run_cli("gateway", str(path), *extra, timeout=CLI_TIMEOUT, env=checkout_env(), cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert done.stderr.splitlines() == [f"backchannel gateway: {path}: {line}" for line in BAD_LINES]
        assert done.stdout == ""
    assert not started.exists()  # nothing started


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("[gateway\n", "is not valid TOML: Expected ']' at the end of a table declaration (at line 1, column 9)"),
        ("", "upstream: no upstream: give at least one [[upstream]] with a name and a command or url"),
        ("upstream = 3\n", "upstream: must be an array of tables ([[upstream]]) or a table of them ([upstream.NAME])"),
        (
            '[upstream.ev]\nname = "ev"\ncommand = ["x"]\n',
            "upstream.ev.name: the table's key names this upstream: leave name out",
        ),
        (
            '[[upstream]]\nname = "a"\ncommand = ["x"]\n[[upstream]]\nname = "a"\nurl = "http://h/mcp"\n',
            "upstream[2].name: 'a' is taken by upstream[1]",
        ),
        (
            '[[upstream]]\nname = ""\ncommand = ["x"]\nenabled = ["a"]\n',
            'upstream[1].enabled: an upstream named "" shares its names with the gateway\'s: use disabled',
        ),
        (
            '[[upstream]]\nname = "a"\ncommand = ["x"]\n[upstream.tools.t]\nsize = 1\n',
            "upstream[1].tools.t.size: unknown key (known: name, title, description, hide, fix)",
        ),
    ],
)
def test_each_problem_names_its_key(tmp_path: Path, text: str, line: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigProblems) as problems:
        read_config(path, environ={})
    assert problems.value.lines == [f"{path}: {line}"]


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    done = run_cli("gateway", str(tmp_path / "none.toml"), timeout=CLI_TIMEOUT, env=checkout_env())
    assert done.returncode == 2
    assert done.stderr == f"backchannel gateway: {tmp_path / 'none.toml'}: cannot be read: No such file or directory\n"


def test_serving_options_are_checked_as_runs_are(tmp_path: Path) -> None:
    path = _write(tmp_path, f'[[upstream]]\nname = "a"\ncommand = {json.dumps(UPSTREAM)}\n')
    done = run_cli("gateway", str(path), "--workers", "2", timeout=CLI_TIMEOUT, env=checkout_env())
    assert done.returncode == 2
    assert done.stderr == "backchannel gateway: --workers needs --redis: the workers share their sessions through it\n"
    done = run_cli("gateway", str(path), "--check", timeout=CLI_TIMEOUT, env=checkout_env())
    assert done.returncode == 0
    assert done.stderr == f"backchannel gateway: {path} can be served: a = {' '.join(UPSTREAM)}\n"


# ------------------------------------------------------------------ a good file, on the wire


def _gateway(text: str, environ: dict[str, str] | None = None) -> Server:
    return build_gateway(parse_config(__import__("tomllib").loads(text), "gateway.toml", environ or {}))


def test_tools_are_reshaped_and_switched_as_the_file_says() -> None:
    server = _gateway(f"""
[gateway]
name = "gw"
version = "2.0.0"
instructions = "all in one"

[[upstream]]
name = "up"
command = {json.dumps(UPSTREAM)}
enabled = ["echo", "greet*", "progress"]

[upstream.tools.echo]
name = "say"
description = "Say the fixed words."
fix = {{ text = "fixed words" }}

[[upstream]]
name = "two"
command = {json.dumps(UPSTREAM)}
disabled = {{ tools = ["slow", "refuse"], prompts = ["greet"], resources = ["memo://*"] }}
""")

    async def body() -> None:
        async with connected(server, era="handshake") as client:
            assert client.server_info["name"] == "gw" and client.server_info["version"] == "2.0.0"  # type: ignore[index]
            assert client.instructions == "all in one"
            tools = {tool.name: tool for tool in await client.list_tools()}
            mine = sorted(name for name in tools if not name.startswith("two_"))
            assert mine == ["say", "up_progress"]  # only the enabled ones; echo as renamed
            assert tools["say"].description == "Say the fixed words."
            assert "text" not in tools["say"].input_schema.get("properties", {})
            assert (await client.call_tool("say", {})).content[0].text == "fixed words"  # type: ignore[union-attr]
            assert "two_slow" not in tools and "two_refuse" not in tools and "two_ask" in tools
            prompts = [prompt.name for prompt in await client.list_prompts()]
            assert "two_greet" not in prompts
            resources = [resource.uri for resource in await client.list_resources()]
            assert resources == ["up+memo://note"]  # enabled = [...] names tools: up's resources stay
            with pytest.raises(MCPError, match="Unknown tool"):
                await client.call_tool("up_ask", {})

    run(body, 60)


def test_the_middleware_switches_add_their_middleware_in_order(caplog: pytest.LogCaptureFixture) -> None:
    server = _gateway(f"""
[[upstream]]
name = "up"
command = {json.dumps(UPSTREAM)}

[middleware]
log_requests = true
rate_limit = {{ rate = 0.001, burst = 2 }}
deny_tools = ["up_slow", "up_refuse"]
cache_lists = 5
""")
    kinds = [type(middleware) for middleware in server.middleware]
    assert kinds == [RequestLog, RateLimit, ToolFilter, ListCache]

    async def body() -> None:
        async with connected(server, era="stateless") as client:  # server/discover is the first request
            tools = [tool.name for tool in await client.list_tools()]
            assert "up_echo" in tools and "up_slow" not in tools
            assert (await client.call_tool("up_echo", {"text": "hi"})).content[0].text == "hi"  # type: ignore[union-attr]
            with pytest.raises(MCPError) as limited:
                await client.call_tool("up_echo", {"text": "again"})
            assert limited.value.code == -31429

    with caplog.at_level(logging.INFO, logger="backchannel.requests"):
        run(body, 60)
    assert any("tools/call up_echo era=stateless" in record.getMessage() for record in caplog.records)


def test_credentials_reach_a_url_upstream_as_the_file_says() -> None:
    seen: list[dict[str, str]] = []
    upstream = Server("guarded")
    upstream.add_tool(lambda: "ok", name="ping_me")

    def recording(app: Any) -> Any:
        async def asgi(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                seen.append({name.decode().lower(): value.decode() for name, value in scope["headers"]})
            await app(scope, receive, send)

        return asgi

    async def body() -> None:
        async with serve_on_loopback(recording(upstream.http_app())) as base:
            text = f"""
[[upstream]]
name = "g"
url = "{base}/mcp"
headers = {{ "X-Team" = "blue" }}
auth = {{ bearer_env = "GATEWAY_TOKEN" }}
"""
            server = _gateway(text, {"GATEWAY_TOKEN": "s3cret"})
            try:
                async with connected(server, era="handshake") as client:
                    assert (await client.call_tool("g_ping_me", {})).content[0].text == "ok"  # type: ignore[union-attr]
            finally:
                await server.aclose()
        assert seen and all(h.get("authorization") == "Bearer s3cret" and h.get("x-team") == "blue" for h in seen)

    run(body, 60)


def test_oauth_logins_are_the_kept_one_or_client_credentials() -> None:
    server = _gateway(
        """
[[upstream]]
name = "kept"
url = "https://kept.example/mcp"
auth = "oauth"

[[upstream]]
name = "robot"
url = "https://robot.example/mcp"
auth = { client_id = "gateway", client_secret_env = "ROBOT_SECRET" }
""",
        {"ROBOT_SECRET": "shh"},
    )
    kept = server.mounts.get("kept").server.upstream.spec.auth  # type: ignore[union-attr, attr-defined]
    robot = server.mounts.get("robot").server.upstream.spec.auth  # type: ignore[union-attr, attr-defined]
    assert isinstance(kept.grant, KeptLogin)  # connect's login, refreshed, never a browser (as call)
    assert isinstance(robot.grant, ClientCredentials)
    assert (robot.grant.client_id, robot.grant.client_secret) == ("gateway", "shh")
