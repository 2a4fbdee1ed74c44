"""Server Cards (``experimental-ext-server-card``, docs/discovery.md): the HTTP host serves the card
at ``<endpoint>/server-card`` and an AI Catalog naming it at ``/.well-known/ai-catalog.json``, with
the headers the spec asks for (media types, CORS, caching, ETag and 304); ``Client.discover_card``
finds it from a domain, an endpoint or its own URL, and what it says agrees with the live
connection. The official SDK clients (Python ``mcp`` 2.3.0, TypeScript ``@modelcontextprotocol/
client`` 2.4.0 and ``sdk`` 1.32.2) have no Server Card support: each is shown reading our card by
plain HTTP and connecting to the endpoint it names.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from backchannel import Client, Server
from backchannel.auth import ResourceAuth
from backchannel.auth.verifiers import StaticTokens
from backchannel.testing import free_port, run, running_process
from backchannel.types.server_card import CARD_SCHEMA, CardError, ServerCard, check_card
from backchannel.types.versions import HANDSHAKE_VERSIONS, VERSIONS
from peers.paths import NODE22, NODE_MODULES, have_pysdk

HERE = Path(__file__).parent
CARD = ServerCard(name="com.example/weather", description="Forecasts for any city")
CARD_TYPE = "application/mcp-server-card+json"


def _server() -> Server:
    server = Server("weather", "2.1.0", title="Weather", website_url="https://weather.example")
    server.add_tool(lambda city: city, name="forecast")
    return server


async def _get(app: Any, path: str, method: str = "GET", **headers: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        return await http.request(method, path, headers=headers)


def test_the_card_and_the_catalog_are_served_as_the_spec_asks() -> None:
    app = _server().http_app(card=CARD)

    async def main() -> None:
        card = await _get(app, "/mcp/server-card", accept=CARD_TYPE)
        assert card.status_code == 200 and card.headers["content-type"] == CARD_TYPE
        assert card.headers["access-control-allow-origin"] == "*"
        assert card.headers["access-control-expose-headers"] == "ETag"
        assert card.headers["cache-control"] == "public, max-age=3600"
        assert card.json() == {
            "$schema": CARD_SCHEMA,
            "name": "com.example/weather",
            "version": "2.1.0",
            "description": "Forecasts for any city",
            "title": "Weather",
            "websiteUrl": "https://weather.example",
            "remotes": [
                {
                    "type": "streamable-http",
                    "url": "http://127.0.0.1:8000/mcp",
                    "supportedProtocolVersions": list(VERSIONS),
                }
            ],
        }
        assert check_card(card.json())
        etag = card.headers["etag"]
        unchanged = await _get(app, "/mcp/server-card", **{"if-none-match": etag})
        assert unchanged.status_code == 304 and unchanged.content == b"" and unchanged.headers["etag"] == etag
        assert (await _get(app, "/mcp/server-card", "HEAD")).content == b""
        preflight = await _get(app, "/mcp/server-card", "OPTIONS", origin="https://elsewhere.example")
        assert preflight.status_code == 204 and preflight.headers["access-control-allow-methods"] == "GET"
        refused = await _get(app, "/mcp/server-card", "POST")
        assert refused.status_code == 405 and refused.json()["error"]["code"] == -32600
        rebound = await _get(app, "/mcp/server-card", host="evil.example")  # DNS rebinding: never named
        assert rebound.status_code == 403

        catalog = await _get(app, "/.well-known/ai-catalog.json")
        assert catalog.headers["content-type"] == "application/ai-catalog+json"
        assert catalog.json() == {
            "specVersion": "1.0",
            "entries": [
                {
                    "identifier": "urn:air:127.0.0.1:mcp:weather",
                    "type": CARD_TYPE,
                    "url": "http://127.0.0.1:8000/mcp/server-card",
                }
            ],
        }
        assert (await _get(_server().http_app(), "/mcp/server-card")).status_code == 404  # no card= : none

    run(main)


def test_the_card_says_how_to_authenticate_and_which_transports_are_served() -> None:
    auth = ResourceAuth("https://weather.example/mcp", "https://login.example", StaticTokens({}))
    card = ServerCard(name="com.example/weather", description="Forecasts", url="https://weather.example/mcp")
    app = _server().http_app(card=card, auth=auth, legacy_sse=True, allowed_hosts=["weather.example"])

    async def main() -> dict[str, Any]:
        response = await _get(app, "/mcp/server-card", host="weather.example")
        assert response.status_code == 200  # a card is public: no token asked for
        return dict(response.json())

    document = run(main)
    streamable, sse = document["remotes"]
    assert streamable["url"] == "https://weather.example/mcp"
    [header] = streamable["headers"]
    assert header["name"] == "Authorization" and header["isRequired"] and header["isSecret"]
    assert header["value"] == "Bearer {token}" and header["variables"]["token"]["isSecret"]
    assert sse == {
        "type": "sse",
        "url": "https://weather.example/sse",
        "headers": [header],
        "supportedProtocolVersions": list(HANDSHAKE_VERSIONS),
    }
    assert check_card(document)


def test_a_card_is_checked_when_made_and_when_read() -> None:
    for options, said in [
        ({"name": "weather", "description": "x"}, "reverse-DNS with one slash"),
        ({"name": "com.example/weather", "description": ""}, "description is a string of 1 to 100"),
        ({"name": "com.example/weather", "description": "x" * 101}, "description is a string of 1 to 100"),
        ({"name": "com.example/weather", "description": "x", "version": "^1.2"}, "not a range"),
        ({"name": "com.example/weather", "description": "x", "url": "ftp://x"}, "http\\(s\\) URL"),
    ]:
        with pytest.raises(CardError, match=said) as caught:
            ServerCard(**options)
        assert "\n" not in str(caught.value)
    good = {"$schema": CARD_SCHEMA, "name": "a.b/c", "version": "1.0.0", "description": "d"}
    assert check_card(dict(good)) == good
    for bad, said in [
        ({**good, "$schema": "https://example.com/x.json"}, r"\$schema"),
        ({**good, "version": "1.x"}, "not a range"),
        ({**good, "remotes": [{"type": "websocket", "url": "wss://x"}]}, "type is one of"),
        ({**good, "remotes": [{"type": "sse", "url": "file:///etc"}]}, "url is an http"),
        ({**good, "remotes": {"type": "sse"}}, "remotes is a list"),
    ]:
        with pytest.raises(CardError, match=said):
            check_card(bad)


@pytest.fixture(scope="module")
def endpoint() -> Any:
    port = free_port()
    with running_process([sys.executable, str(HERE / "card_server.py"), str(port)], port=port, start_timeout=30):
        yield f"http://127.0.0.1:{port}/mcp"


def test_discover_card_from_a_domain_an_endpoint_or_the_card_and_it_agrees_with_the_connection(endpoint: str) -> None:
    origin = endpoint.removesuffix("/mcp")

    async def main() -> None:
        found = [await Client.discover_card(where) for where in (origin, f"{endpoint}/", f"{endpoint}/server-card")]
        assert all(card is not None for card in found)
        cards = [card for card in found if card is not None]
        assert {card.url for card in cards} == {f"{endpoint}/server-card"}
        assert {json.dumps(card.card, sort_keys=True) for card in cards} == {json.dumps(cards[0].card, sort_keys=True)}
        card = cards[0]
        assert (card.name, card.version, card.title) == ("com.example/weather", "2.1.0", "Weather")
        assert card.endpoint == endpoint
        assert card.card["repository"] == {"url": "https://github.com/example/weather", "source": "github"}
        assert await Client.discover_card(endpoint, etag=card.etag) is None  # unchanged: 304
        assert card.endpoint is not None
        for era in ("handshake", "stateless"):  # what the card says, the connection says too
            async with Client.http(card.endpoint, era=era) as client:
                info = client.server_info or {}
                assert (info.get("name"), info.get("version")) == ("weather", card.version)
                assert client.protocol_version in card.supported_versions
        with pytest.raises(CardError, match="HTTP 404"):
            await Client.discover_card(f"{origin}/elsewhere")
        with pytest.raises(CardError, match="http\\(s\\) URL"):
            await Client.discover_card("file:///etc/passwd")

    run(main, 60)


@pytest.mark.interop
def test_the_official_sdk_clients_have_no_card_support_and_connect_where_our_card_says(endpoint: str) -> None:
    """Checked, not assumed: neither SDK ships any Server Card code (grep of the installed packages);
    so each reads our card over plain HTTP and connects to its endpoint with its own client."""
    if not have_pysdk():
        pytest.skip("the official Python SDK (mcp==2.3.0) is not installed")
    import mcp

    typescript_packages = (NODE_MODULES / "@modelcontextprotocol" / name for name in ("client", "core", "sdk"))
    packages = [Path(mcp.__file__).parent, *typescript_packages]
    for package in packages:
        grep = subprocess.run(
            ["grep", "-rIl", "-e", "server-card", "-e", "ai-catalog", str(package)], capture_output=True, text=True
        )
        assert grep.stdout == "", f"{package} now speaks of Server Cards: test its own support here"

    card_url = f"{endpoint}/server-card"
    script = """
import asyncio, json, sys, urllib.request
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
request = urllib.request.Request(sys.argv[1], headers={"Accept": "application/mcp-server-card+json"})
card = json.load(urllib.request.urlopen(request, timeout=10))
async def main():
    async with streamable_http_client(card["remotes"][0]["url"]) as (read, write, *_):
        async with ClientSession(read, write) as session:
            result = await session.initialize()
            tools = await session.list_tools()
            server = result.server_info.model_dump()
            print(json.dumps({"card": card, "server": server, "tools": [t.name for t in tools.tools]}))
asyncio.run(main())
"""
    python = subprocess.run([sys.executable, "-c", script, card_url], capture_output=True, text=True, timeout=60)
    assert python.returncode == 0, python.stderr[-2000:]
    seen = json.loads(python.stdout.strip().splitlines()[-1])
    assert seen["card"]["name"] == "com.example/weather"
    assert (seen["server"]["name"], seen["server"]["version"]) == ("weather", seen["card"]["version"])
    assert seen["tools"] == ["forecast"]

    typescript = subprocess.run(
        [str(NODE22), str(HERE / "ts_card_client.mjs"), card_url], capture_output=True, text=True, timeout=60
    )
    assert typescript.returncode == 0, typescript.stderr[-2000:]
    seen = json.loads(typescript.stdout.strip().splitlines()[-1])
    assert seen["contentType"] == CARD_TYPE and seen["card"]["name"] == "com.example/weather"
    assert seen["serverVersion"]["version"] == seen["card"]["version"] and seen["tools"] == ["forecast"]
