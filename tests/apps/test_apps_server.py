"""MCP Apps, the server's side (SEP-1865): ``server.app(...)`` and ``@server.tool(app=..., visibility=...)``
publish a ``ui://`` resource (``text/html;profile=mcp-app``, its CSP and permissions in
``_meta.ui``) and the tool's ``_meta.ui``, in both eras, over memory, stdio and Streamable HTTP,
from any worker of a fleet; the official Python SDK client reads them too.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _services import redis_server
from backchannel import Client, Context, Server
from backchannel.apps import APP_MIME_TYPE, UI_EXTENSION, App, AppCsp, app_uri_of, app_visibility, supports_apps
from backchannel.testing import connected, free_port, run, running_process
from peers.paths import have_pysdk

HERE = Path(__file__).parent
SERVER = HERE / "apps_server.py"
HTML = "<!DOCTYPE html><html><body><p>hi</p></body></html>"
CLOCK = "ui://clock/app.html"


def _server() -> Server:
    server = Server("apps")
    app = App(  # published by the first tool that shows it (server.app publishes at once: apps_server.py)
        uri="ui://weather/app.html",
        html=HTML,
        title="Weather",
        csp=AppCsp(connect_domains=["https://api.example.com"], resource_domains=["https://*.cdn.example"]),
        permissions=["clipboardWrite", "camera"],
        prefers_border=False,
    )

    @server.tool(app=app)
    def forecast(city: str) -> str:
        return f"sun in {city}"

    @server.tool(app="ui://weather/app.html", visibility=["app"])
    def refresh() -> str:
        return "fresh"

    return server


UI_META = {
    "csp": {"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://*.cdn.example"]},
    "permissions": {"camera": {}, "clipboardWrite": {}},
    "prefersBorder": False,
}


def _check_published(tools: dict[str, Any], read: dict[str, Any], listed: dict[str, Any]) -> None:
    forecast, refresh = tools["forecast"], tools["refresh"]
    assert forecast["_meta"] == {
        "ui": {"resourceUri": "ui://weather/app.html"},
        "ui/resourceUri": "ui://weather/app.html",
    }
    assert app_uri_of(forecast) == "ui://weather/app.html" and app_visibility(forecast) == {"model", "app"}
    assert refresh["_meta"]["ui"] == {"resourceUri": "ui://weather/app.html", "visibility": ["app"]}
    assert app_visibility(refresh) == {"app"}
    [contents] = read["contents"]
    expected = {"uri": "ui://weather/app.html", "mimeType": APP_MIME_TYPE, "text": HTML, "_meta": {"ui": UI_META}}
    assert contents == expected
    [resource] = [r for r in listed["resources"] if r["uri"] == "ui://weather/app.html"]
    assert resource["mimeType"] == APP_MIME_TYPE and resource["_meta"] == {"ui": UI_META}
    assert resource["title"] == "Weather"


@pytest.mark.parametrize("transport", ["memory", "stdio", "http", "asgi"])
@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_the_app_and_its_tools_on_the_wire(era: str, transport: Any) -> None:
    server = _server()

    async def main() -> None:
        async with connected(server, era=era, transport=transport) as client:
            tools = {t["name"]: t for t in (await client.request("tools/list"))["tools"]}
            read = await client.request("resources/read", {"uri": "ui://weather/app.html"})
            _check_published(tools, read, await client.request("resources/list"))
            extensions = (client.server_capabilities or {}).get("extensions")
            if era == "stateless":  # server/discover declares it; initialize's capabilities have no such field
                assert extensions == {UI_EXTENSION: {}}

    run(main)


def test_a_tool_sees_whether_its_client_renders_apps() -> None:
    server = Server("apps")

    @server.tool()
    def renders(ctx: Context) -> bool:
        return supports_apps(ctx.client_capabilities)

    declared = {UI_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}

    async def main() -> None:
        for era in ("handshake", "stateless"):
            async with connected(server, era=era, extensions=declared) as client:
                assert (await client.call_tool("renders", {})).structured_content == {"result": True}
            async with connected(server, era=era) as client:
                assert (await client.call_tool("renders", {})).structured_content == {"result": False}

    run(main)


def test_publishing_is_checked_in_one_line() -> None:
    server = Server("apps")
    for options, said in [
        ({"uri": "https://x/app.html", "html": HTML}, "must use the ui:// scheme"),
        ({"uri": "ui://a", "html": "<p>a fragment</p>"}, "must be a whole HTML5 document"),
        ({"uri": "ui://a", "html": HTML, "permissions": ["usb"]}, r"unknown permissions \['usb'\]"),
    ]:
        with pytest.raises(ValueError, match=said) as caught:
            App(**options)
        assert "\n" not in str(caught.value)
    for sources in (["https://ok.example; script-src *"], ["'unsafe-eval'"], ["ftp://files.example"], "https://x"):
        with pytest.raises(ValueError, match=r"origin|list of origins"):
            AppCsp(connect_domains=sources)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="visibility is a non-empty list"):
        server.add_tool(lambda: 1, name="t", visibility=["agent"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="app= names a ui:// resource"):
        server.add_tool(lambda: 1, name="t", app="https://x")
    with pytest.raises(ValueError, match="rather than a 'ui' key"):
        server.add_tool(lambda: 1, name="t", app="ui://a", meta={"ui": {}})
    app = server.app("ui://a", HTML)
    assert server.add_app(App(uri="ui://a", html=HTML)) is not app  # equal: published once, no error
    with pytest.raises(ValueError, match="already registered"):
        server.app("ui://a", HTML.replace("hi", "other"))
    assert "t" not in server.registry.tools


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


async def _read_clock(client: Client) -> tuple[dict[str, Any], str]:
    tools = {t["name"]: t for t in (await client.request("tools/list"))["tools"]}
    [contents] = (await client.request("resources/read", {"uri": CLOCK}))["contents"]
    assert contents["mimeType"] == APP_MIME_TYPE and contents["_meta"] == {"ui": {"prefersBorder": True}}
    return tools, _digest(contents["text"])


def test_over_stdio_and_streamable_http_in_both_eras() -> None:
    port = free_port()
    command = [sys.executable, "-m", "backchannel", "run", str(SERVER)]
    with running_process([*command, "--http", "--port", str(port)], port=port, start_timeout=30):

        async def main() -> None:
            seen = set()
            eras = ("handshake", "stateless")
            clients = [Client.stdio(sys.executable, ["-m", "backchannel", "run", str(SERVER)], era=era) for era in eras]
            clients += [Client.http(f"http://127.0.0.1:{port}/mcp", era=era) for era in eras]
            for client in clients:
                async with client:
                    tools, digest = await _read_clock(client)
                    assert tools["clock"]["_meta"]["ui"] == {"resourceUri": CLOCK}
                    assert tools["tick"]["_meta"]["ui"] == {"visibility": ["app"]}
                    assert tools["secret"]["_meta"]["ui"] == {"visibility": ["model"]}
                    seen.add(digest)
            assert len(seen) == 1

        run(main, 90)


@pytest.mark.interop
def test_the_official_python_sdk_client_reads_the_app() -> None:
    if not have_pysdk():
        pytest.skip("the official Python SDK (mcp==2.3.0) is not installed")
    script = """
import asyncio, json, sys
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
async def main():
    async with streamable_http_client(sys.argv[1]) as (read, write, *_):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            clock = [t for t in tools.tools if t.name == "clock"][0]
            contents = (await session.read_resource("ui://clock/app.html")).contents[0]
            print(json.dumps({"meta": clock.meta, "mime": contents.mime_type, "ui": (contents.meta or {}).get("ui"),
                              "html": contents.text[:15]}))
asyncio.run(main())
"""
    port = free_port()
    command = [sys.executable, "-m", "backchannel", "run", str(SERVER), "--http", "--port", str(port)]
    with running_process(command, port=port, start_timeout=30):
        done = subprocess.run(
            [sys.executable, "-c", script, f"http://127.0.0.1:{port}/mcp"], capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["meta"]["ui"] == {"resourceUri": CLOCK}
    assert seen["mime"] == APP_MIME_TYPE and seen["ui"] == {"prefersBorder": True}
    assert seen["html"] == "<!DOCTYPE html>"


def test_every_worker_of_a_fleet_serves_the_same_app(fleet_redis: Any) -> None:
    port = free_port()
    command = [sys.executable, "-m", "backchannel", "run", str(SERVER), "--http", "--port", str(port)]
    command += ["--redis", fleet_redis.url, "--workers", "2"]
    with running_process(command, port=port, start_timeout=30):

        async def main() -> tuple[set[str], set[int]]:
            digests, pids = set(), set()
            for index in range(8):  # each client its own connections: the kernel spreads them
                era = ("handshake", "stateless")[index % 2]
                async with Client.http(f"http://127.0.0.1:{port}/mcp", era=era) as client:
                    tools, digest = await _read_clock(client)
                    assert app_uri_of(tools["clock"]) == CLOCK
                    digests.add(digest)
                    pids.add((await client.call_tool("clock", {})).structured_content["pid"])  # type: ignore[index]
            return digests, pids

        digests, pids = run(main, 90)
    assert len(digests) == 1
    assert len(pids) >= 1  # (the kernel may give every connection to one worker: the digests still agree)


@pytest.fixture
def fleet_redis() -> Any:
    with redis_server() as server:
        yield server
