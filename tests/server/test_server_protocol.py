"""What ``Server`` does at the protocol level: pagination, capabilities and list_changed,
era differences, resource subscriptions, and the ``Context`` a handler sees."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from _server_harness import ERAS, MODERN, RawPeer, connected, error_of, result_of, run

from backchannel import Context, RequestError, Server
from backchannel.types import meta as M

TASKS = "io.modelcontextprotocol/tasks"


def paged_server() -> Server:
    server = Server("paged", page_size=3)
    for index in range(8):
        server.add_tool(lambda: "x", name=f"tool_{index}")
    server.add_prompt(lambda: "hi", name="greeting")
    return server


# -- pagination ------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_tools_list_pages(era: str) -> None:
    async def body() -> tuple[list[dict[str, Any]], list[str]]:
        async with connected(paged_server(), era) as (client, _):
            pages = [await client.request("tools/list")]
            while "nextCursor" in pages[-1]:
                pages.append(await client.request("tools/list", {"cursor": pages[-1]["nextCursor"]}))
                assert len(pages) < 10
            return pages, [tool.name for tool in await client.list_tools()]

    pages, names = run(body)
    assert [len(page["tools"]) for page in pages] == [3, 3, 2]
    assert ["nextCursor" in page for page in pages] == [True, True, False]
    assert all(isinstance(page.get("nextCursor", ""), str) for page in pages)
    assert [tool["name"] for page in pages for tool in page["tools"]] == [f"tool_{i}" for i in range(8)]
    assert names == [f"tool_{i}" for i in range(8)]


@pytest.mark.parametrize("era", ERAS)
def test_bad_cursors_are_invalid_params(era: str) -> None:
    def b64(text: str) -> str:
        return base64.urlsafe_b64encode(text.encode()).decode()

    async def body() -> list[RequestError]:
        errors = []
        async with connected(paged_server(), era) as (client, _):
            tools_cursor = (await client.request("tools/list"))["nextCursor"]
            for method, cursor in [
                ("prompts/list", tools_cursor),  # a cursor from another list
                ("tools/list", "%%% not a cursor %%%"),
                ("tools/list", b64("tools:three")),
                ("tools/list", b64("tools:-3")),
                ("tools/list", 3),
                ("resources/list", tools_cursor),
                # Decoded strictly: the issued cursor with junk, whitespace or padding changes is refused.
                ("tools/list", tools_cursor + "!!"),
                ("tools/list", " " + tools_cursor),
                ("tools/list", b64("tools:+3")),
                ("tools/list", b64("tools:03")),
                ("tools/list", "x" * 100_000),
            ]:
                with pytest.raises(RequestError) as caught:
                    await client.request(method, {"cursor": cursor})
                errors.append(caught.value)
        return errors

    errors = run(body)
    assert [error.code for error in errors] == [-32602] * 11
    assert "prompts" in errors[0].message
    assert len(errors[-1].message) < 200  # a huge cursor is not echoed back whole


def test_list_results_carry_cache_hints_only_in_the_modern_era() -> None:
    server = paged_server()
    server.add_resource("res://a", lambda: "a")
    server.add_resource("res://t/{x}", lambda x: x)

    async def body(era: str) -> list[dict[str, Any]]:
        async with connected(server, era) as (client, wire):
            for method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list"):
                await client.request(method)
            await client.read_resource("res://a")
            return wire.results()[-5:]

    for result in run(lambda: body("stateless")):
        assert result["ttlMs"] == (0 if "contents" in result else 60_000)
        assert result["cacheScope"] == "private"
        assert result["resultType"] == "complete"
        assert result["_meta"][M.SERVER_INFO] == {"name": "paged", "version": "0.1.0"}
    for result in run(lambda: body("handshake")):
        assert not {"ttlMs", "cacheScope", "resultType"} & set(result), result


# -- capabilities and list_changed -----------------------------------------------------------------


def test_capabilities_declare_only_registered_features() -> None:
    tools_only = Server("tools only")
    tools_only.add_tool(lambda: "x", name="x")

    async def body() -> tuple[dict[str, Any], dict[str, Any]]:
        async with RawPeer(tools_only) as peer:
            discovered = result_of(await peer.modern("server/discover"))
            initialized = result_of(await peer.initialize())
        return discovered, initialized

    discovered, initialized = run(body)
    # Both eras get listChanged: list_changed notifications, or the subscriptions/listen filter.
    assert discovered["capabilities"] == {"logging": {}, "tools": {"listChanged": True}}
    assert initialized["capabilities"] == {"logging": {}, "tools": {"listChanged": True}}

    everything = Server("everything")
    everything.add_prompt(lambda: "p", name="p")
    everything.add_resource("res://t/{x}", lambda x: x)
    assert everything.capabilities() == {
        "logging": {},
        "prompts": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
    }


def test_list_changed_reaches_a_legacy_client() -> None:
    server = Server("changing")
    server.add_tool(lambda: "x", name="first")

    async def body() -> list[dict[str, Any]]:
        async with connected(server, "handshake") as (client, wire):
            assert client.server_capabilities["tools"] == {"listChanged": True}
            await client.ping()  # the server has now seen notifications/initialized
            server.add_tool(lambda: "y", name="second")
            await wire.wait_for("notifications/tools/list_changed", 1)
            assert [tool.name for tool in await client.list_tools()] == ["first", "second"]
            server.remove_tool("first")
            await wire.wait_for("notifications/tools/list_changed", 2)
            server.add_prompt(lambda: "hi", name="hello")
            await wire.wait_for("notifications/prompts/list_changed")
            server.add_resource("res://new", lambda: "new")
            await wire.wait_for("notifications/resources/list_changed")
            server.remove_prompt("hello")
            await wire.wait_for("notifications/prompts/list_changed", 2)
            server.remove_resource("res://new")
            await wire.wait_for("notifications/resources/list_changed", 2)
            return [m for m in wire.received if "method" in m]

    notifications = run(body)
    assert notifications == [
        {"jsonrpc": "2.0", "method": f"notifications/{kind}/list_changed"}
        for kind in ("tools", "tools", "prompts", "resources", "prompts", "resources")
    ]


def test_list_changed_is_not_pushed_to_a_modern_client() -> None:
    server = Server("changing")
    server.add_tool(lambda: "x", name="first")

    async def body() -> list[dict[str, Any]]:
        # No cache: the second list must reach the server (whose ttlMs would let the client skip it).
        async with connected(server, "stateless", cache=None) as (client, wire):
            await client.list_tools()
            server.add_tool(lambda: "y", name="second")
            assert [tool.name for tool in await client.list_tools()] == ["first", "second"]
            return [m for m in wire.received if "method" in m]

    assert run(body) == []


# -- era checks ------------------------------------------------------------------------------------


def test_ping_exists_only_in_the_legacy_era() -> None:
    async def body() -> tuple[dict[str, Any], dict[str, Any]]:
        async with RawPeer(paged_server()) as peer:
            modern = await peer.modern("ping")
            await peer.initialize()
            legacy = await peer.send("ping")
        return modern, legacy

    modern, legacy = run(body)
    assert error_of(modern)["code"] == -32601
    assert result_of(legacy) == {}


def test_server_discover() -> None:
    server = Server(
        "disco",
        "2.0",
        title="Disco server",
        website_url="https://example.com",
        instructions="Dance.",
        cache_ttl_ms=1234,
        cache_scope="public",
    )
    server.add_tool(lambda: "x", name="x")

    async def body() -> dict[str, Any]:
        async with RawPeer(server) as peer:
            return result_of(await peer.modern("server/discover"))

    result = run(body)
    assert result == {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
        "capabilities": {"logging": {}, "tools": {"listChanged": True}},
        "instructions": "Dance.",
        "ttlMs": 1234,
        "cacheScope": "public",
        "_meta": {
            M.SERVER_INFO: {
                "name": "disco",
                "version": "2.0",
                "title": "Disco server",
                "websiteUrl": "https://example.com",
            }
        },
    }


@pytest.mark.parametrize(
    ("requested", "answered"),
    [
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
        (MODERN, "2025-11-25"),
    ],
)
def test_initialize_echoes_or_counter_offers(requested: str, answered: str) -> None:
    server = Server("hello", "3.1", instructions="Be nice.")

    async def body() -> dict[str, Any]:
        async with RawPeer(server) as peer:
            return result_of(await peer.initialize(requested))

    assert run(body) == {
        "protocolVersion": answered,
        "capabilities": {"logging": {}},
        "serverInfo": {"name": "hello", "version": "3.1"},
        "instructions": "Be nice.",
    }


def test_methods_of_the_other_era_are_not_found() -> None:
    server = paged_server()
    server.add_resource("res://a", lambda: "a")

    async def body() -> list[dict[str, Any]]:
        async with RawPeer(server) as peer:
            answers = [
                await peer.modern("logging/setLevel", {"level": "debug"}),
                await peer.modern("resources/subscribe", {"uri": "res://a"}),
                await peer.modern("resources/unsubscribe", {"uri": "res://a"}),
            ]
            await peer.initialize()
            answers.append(await peer.send("server/discover"))
            answers.append(await peer.send("no/such/method"))
            return answers

    assert [error_of(answer)["code"] for answer in run(body)] == [-32601] * 5


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25"])
def test_a_client_limited_to_an_older_version_gets_it(version: str) -> None:
    async def body() -> tuple[Any, Any, dict[str, Any]]:
        async with connected(paged_server(), "auto", versions=(version,)) as (client, wire):
            await client.list_tools()
            return client.era, client.protocol_version, wire.received[0]

    era, protocol_version, first = run(body)
    assert (era, protocol_version) == ("handshake", version)
    assert first["result"]["protocolVersion"] == version


def test_logging_set_level() -> None:
    async def body() -> list[dict[str, Any]]:
        async with RawPeer(paged_server()) as peer:
            await peer.initialize()
            return [
                await peer.send("logging/setLevel", {"level": "loud"}),
                await peer.send("logging/setLevel", {}),
                await peer.send("logging/setLevel", {"level": "warning"}),
            ]

    bad, missing, good = run(body)
    assert error_of(bad)["code"] == -32602
    assert "loud" in error_of(bad)["message"]
    assert error_of(missing)["code"] == -32602
    assert result_of(good) == {}


# -- resource subscriptions ------------------------------------------------------------------------


def test_resource_updated_reaches_only_the_subscriber() -> None:
    server = Server("subs")
    server.add_resource("res://watched", lambda: "w")
    server.add_resource("res://other", lambda: "o")
    updated = "notifications/resources/updated"

    async def body() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with (
            connected(server, "handshake", name="subscriber") as (alice, alice_wire),
            connected(server, "handshake", name="bystander") as (bob, bob_wire),
        ):
            assert await alice.request("resources/subscribe", {"uri": "res://watched"}) == {}
            server.notify_resource_updated("res://other")
            server.notify_resource_updated("res://watched")
            await alice_wire.wait_for(updated)
            await bob.ping()  # anything for bob would have arrived before this answer
            await alice.request("resources/unsubscribe", {"uri": "res://watched"})
            server.notify_resource_updated("res://watched")
            await alice.ping()
            return alice_wire.notifications_received(updated), bob_wire.notifications_received(updated)

    alice_saw, bob_saw = run(body)
    assert alice_saw == [{"jsonrpc": "2.0", "method": updated, "params": {"uri": "res://watched"}}]
    assert bob_saw == []


# -- Context -----------------------------------------------------------------------------------------


def context_server() -> Server:
    server = Server("ctx", log_level="info")

    @server.tool()
    def whoami(ctx: Context) -> dict[str, Any]:
        return {
            "era": ctx.era,
            "version": ctx.protocol_version,
            "capabilities": ctx.client_capabilities,
            "info": ctx.client_info,
            "url": ctx.client_supports("elicitation.url"),
            "form": ctx.client_supports("elicitation.form"),
            "sampling": ctx.client_supports("sampling"),
        }

    @server.tool()
    async def chatty(ctx: Context) -> str:
        await ctx.debug("d")
        await ctx.info("i")
        await ctx.warning({"w": 1}, logger="db")
        await ctx.error("e")
        return "done"

    return server


@pytest.mark.parametrize(("era", "version"), [("handshake", "2025-11-25"), ("stateless", MODERN)])
@pytest.mark.parametrize("elicitation", [{"url": {}}, {}])
def test_context_sees_the_client(era: str, version: str, elicitation: dict[str, Any]) -> None:
    capabilities = {"elicitation": elicitation}

    async def body() -> Any:
        async with connected(context_server(), era, capabilities=capabilities) as (client, _):
            return (await client.call_tool("whoami")).structured_content

    # In the stateless era our client also declares the tasks extension (SEP-2663) on every request.
    declared = capabilities if era == "handshake" else {**capabilities, "extensions": {TASKS: {}}}
    assert run(body) == {
        "era": era,
        "version": version,
        "capabilities": declared,
        "info": {"name": "tester", "version": "9.9"},
        "url": elicitation == {"url": {}},
        "form": elicitation == {},  # {} is form mode for old clients; {"url": {}} is url only
        "sampling": False,
    }


def _levels(messages: list[dict[str, Any]]) -> list[str]:
    return [m["params"]["level"] for m in messages if m.get("method") == "notifications/message"]


def test_modern_log_messages_need_a_log_level_in_the_request() -> None:
    async def body() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        async with RawPeer(context_server()) as peer:
            silent = [*peer.seen, await peer.modern("tools/call", {"name": "chatty"})]
            peer.seen.clear()
            answer = await peer.modern("tools/call", {"name": "chatty"}, **{M.LOG_LEVEL: "warning"})
            warned = [*peer.seen]
            invalid = [await peer.modern("tools/call", {"name": "chatty"}, **{M.LOG_LEVEL: "loud"})]
            assert result_of(answer)["content"] == [{"type": "text", "text": "done"}]
            return silent, warned, invalid

    silent, warned, invalid = run(body)
    assert _levels(silent) == []
    assert _levels(warned) == ["warning", "error"]
    assert warned[0] == {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "warning", "data": {"w": 1}, "logger": "db"},
    }
    assert "result" in warned[-1]  # the messages came before the answer
    assert error_of(invalid[0])["code"] == -32602


def test_modern_log_level_through_the_client() -> None:
    async def body() -> list[dict[str, Any]]:
        async with connected(context_server(), "stateless") as (client, wire):
            await client.connection.request("tools/call", {"name": "chatty", "_meta": {M.LOG_LEVEL: "debug"}})
            return wire.received

    assert _levels(run(body)) == ["debug", "info", "warning", "error"]


def test_legacy_log_messages_follow_set_level() -> None:
    async def body(server: Server) -> list[list[str]]:
        levels = []
        async with connected(server, "handshake") as (client, wire):
            for level in (None, "error", "debug"):
                if level is not None:
                    await client.request("logging/setLevel", {"level": level})
                wire.received.clear()
                await client.call_tool("chatty")
                levels.append(_levels(wire.received))
        return levels

    assert run(lambda: body(context_server())) == [
        ["info", "warning", "error"],
        ["error"],
        ["debug", "info", "warning", "error"],
    ]
    quiet = context_server()
    quiet.default_log_level = None
    assert run(lambda: body(quiet)) == [[], ["error"], ["debug", "info", "warning", "error"]]
