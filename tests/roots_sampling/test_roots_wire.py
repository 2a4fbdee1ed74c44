"""Roots over the wire (issue #5; chapter 18.3), both eras: ``ctx.list_roots()`` as a
handshake-era request or an MRTR input request, the session cache and its invalidation by
``notifications/roots/list_changed``, the server's default roots, ``Roots.contains``,
session isolation, the client's consent hook, normalisation and ``set_roots``.
Each test names its CHAPTER-FEATURES lines (RT-*).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from _rs_harness import ERAS, connect, raw_server, run, serving, settle, text_of

from backchannel import Context, Server
from backchannel.client.inputs import InputHandlers, normalise_root
from backchannel.server.roots import RootItem, Roots
from backchannel.transports.memory import memory_pair
from backchannel.types.errors import METHOD_NOT_FOUND, MCPError
from backchannel.types.roots import Root


def roots_server(**options: Any) -> Server:
    """``where`` reports what ``ctx.list_roots()`` found; ``twice`` asks two times in one call;
    ``inside`` answers ``ctx.roots.contains(path)``."""
    server = Server("roots", **options)

    @server.tool()
    async def where(ctx: Context) -> str:
        roots = await ctx.list_roots()
        items = [{"uri": r.uri, "name": r.name, "path": str(r.path)} for r in roots]
        return json.dumps({"roots": items, "from_client": roots.from_client})

    @server.tool()
    async def twice(ctx: Context) -> str:
        first = await ctx.list_roots()
        second = await ctx.list_roots()
        return json.dumps([len(first), first == second, ctx.roots is second])

    @server.tool()
    async def inside(ctx: Context, path: str) -> bool:
        await ctx.list_roots()
        return ctx.roots.contains(path)

    return server


def where(result: Any) -> dict[str, Any]:
    return json.loads(text_of(result))  # type: ignore[no-any-return]


def input_required_results(wire: Any) -> list[dict[str, Any]]:
    return [m for m in wire.written if (m.get("result") or {}).get("resultType") == "input_required"]


# ------------------------------------------------------------------ round trips


def test_rt01_rt17_legacy_list_roots_is_a_request_on_the_wire(tmp_path: Path) -> None:
    """RT-01 (roots declared with listChanged at initialize), RT-17: the handshake era asks
    with a ``roots/list`` request on the connection and the tool gets typed roots."""

    async def body() -> None:
        async with serving(roots_server(), "handshake", roots=[tmp_path]) as (client, wire):
            init = next(m for m in wire.received if m.get("method") == "initialize")
            assert init["params"]["capabilities"]["roots"] == {"listChanged": True}
            found = where(await client.call_tool("where"))
            asked = wire.requests_written("roots/list")
            assert len(asked) == 1
            answer = wire.responses_received(asked[0]["id"])
            assert answer[0]["result"] == {"roots": [{"uri": tmp_path.as_uri(), "name": tmp_path.name}]}
            assert found == {
                "roots": [{"uri": tmp_path.as_uri(), "name": tmp_path.name, "path": str(tmp_path)}],
                "from_client": True,
            }

    run(body)


def test_rt01_modern_list_roots_is_an_input_request_then_a_retry(tmp_path: Path) -> None:
    """RT-01 (Δ: ``roots`` per request), MRTR: the first ``tools/call`` ends with an
    ``InputRequiredResult`` holding ``roots/list``; the client retries with a new id, the
    answer in ``inputResponses`` and ``requestState`` echoed byte for byte."""

    async def body() -> None:
        async with serving(roots_server(), "stateless", roots=[tmp_path]) as (client, wire):
            found = where(await client.call_tool("where"))
            first, retry = wire.tool_calls_received("where")
            assert "roots" in first["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
            irr = wire.answer_to(first["id"])["result"]
            assert irr["resultType"] == "input_required"
            [(key, request)] = irr["inputRequests"].items()
            assert request["method"] == "roots/list"
            assert retry["id"] != first["id"]
            assert retry["params"]["requestState"] == irr["requestState"]
            assert retry["params"]["inputResponses"] == {
                key: {"roots": [{"uri": tmp_path.as_uri(), "name": tmp_path.name}]}
            }
            assert wire.requests_written("roots/list") == []  # never a request of the server's own
            assert found["from_client"] is True
            assert [r["uri"] for r in found["roots"]] == [tmp_path.as_uri()]

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_one_request_asks_once_even_when_the_handler_asks_twice(era: str, tmp_path: Path) -> None:
    """RT-20: within one request the roots are asked for once (one MRTR round, one request)."""

    async def body() -> None:
        async with serving(roots_server(), era, roots=[tmp_path]) as (client, wire):
            assert json.loads(text_of(await client.call_tool("twice"))) == [1, True, True]
            if era == "handshake":
                assert len(wire.requests_written("roots/list")) == 1
            else:
                assert len(input_required_results(wire)) == 1

    run(body)


# ------------------------------------------------------------------ caching


def test_rt20_rt18_rt02_legacy_cache_until_list_changed(tmp_path: Path) -> None:
    """RT-20 (cache per session), RT-02/RT-03 (client announces a change), RT-18 (server
    re-fetches): two calls cost one ``roots/list``; after ``set_roots`` the client sends
    ``notifications/roots/list_changed`` and the next call asks again and sees the new set."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()

    async def body() -> None:
        async with serving(roots_server(), "handshake", roots=[a]) as (client, wire):
            for _ in range(3):
                assert [r["path"] for r in where(await client.call_tool("where"))["roots"]] == [str(a.resolve())]
            assert len(wire.requests_written("roots/list")) == 1
            assert await client.set_roots([a, b]) is True
            await settle(client)
            assert len(wire.notifications_received("notifications/roots/list_changed")) == 1
            found = where(await client.call_tool("where"))
            assert [r["path"] for r in found["roots"]] == [str(a.resolve()), str(b.resolve())]
            assert len(wire.requests_written("roots/list")) == 2
            await client.call_tool("where")
            assert len(wire.requests_written("roots/list")) == 2  # cached again

    run(body)


def test_rt20_an_answer_overtaken_by_list_changed_is_not_cached(tmp_path: Path) -> None:
    """RT-18: a ``list_changed`` that arrives while ``roots/list`` is in flight wins: the
    (possibly stale) answer serves that call but is not cached."""

    async def body() -> None:
        client_ref: list[Any] = []

        def provider() -> list[Path]:
            # The notification leaves before the answer does.
            client_ref[0].connection.notify("notifications/roots/list_changed")
            return [tmp_path]

        client, wire, _conn, close = await connect(roots_server(), "handshake", roots=provider)
        client_ref.append(client)
        try:
            await client.call_tool("where")
            await client.call_tool("where")
            assert len(wire.requests_written("roots/list")) == 2
        finally:
            await close()

    run(body)


def test_rt20_no_cache_without_list_changed_declared(tmp_path: Path) -> None:
    """RT-20: a client that declared ``roots`` without ``listChanged`` never says when they
    change, so nothing is cached: each call asks (a hand-driven client declaring ``roots: {}``)."""

    async def body() -> None:
        server = roots_server()
        client_side, server_side = memory_pair()
        runner = asyncio.create_task(server.connect(server_side).run())

        def send(message: dict[str, Any]) -> None:
            client_side.write([{"jsonrpc": "2.0", **message}])

        async def until(predicate: Any) -> dict[str, Any]:
            while True:
                batch = await client_side.receive()
                assert batch is not None
                for message in batch:
                    if predicate(message):
                        return message  # type: ignore[no-any-return]

        info = {"name": "raw", "version": "0"}
        send(
            {
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {"roots": {}}, "clientInfo": info},
            }
        )
        await until(lambda m: m.get("id") == 1)
        send({"method": "notifications/initialized"})
        asked = 0
        for call_id in (2, 3):
            send({"id": call_id, "method": "tools/call", "params": {"name": "where"}})
            request = await until(lambda m: m.get("method") == "roots/list")
            asked += 1
            send({"id": request["id"], "result": {"roots": [{"uri": tmp_path.as_uri()}]}})
            answer = await until(lambda m, call_id=call_id: m.get("id") == call_id and "method" not in m)
            assert json.loads(answer["result"]["content"][0]["text"])["from_client"] is True
        assert asked == 2
        await client_side.close()
        await runner

    run(body)


def test_rt20_modern_has_no_session_so_every_request_asks(tmp_path: Path) -> None:
    """RT-20 (Δ): the stateless era has no session to cache in; each request asks again."""

    async def body() -> None:
        async with serving(roots_server(), "stateless", roots=[tmp_path]) as (client, wire):
            for _ in range(3):
                await client.call_tool("where")
            assert len(input_required_results(wire)) == 3

    run(body)


# ------------------------------------------------------------------ defaults


@pytest.mark.parametrize("era", ERAS)
def test_rt17_default_roots_when_the_client_has_no_roots_capability(era: str, tmp_path: Path) -> None:
    """RT-17 / chapter 18.3.5 (graceful default): without the ``roots`` capability nothing is
    asked; the server's ``default_roots`` apply and ``from_client`` says so."""

    async def body() -> None:
        async with serving(roots_server(default_roots=[tmp_path]), era) as (client, wire):
            found = where(await client.call_tool("where"))
            assert found["from_client"] is False
            assert [r["path"] for r in found["roots"]] == [str(tmp_path)]
            assert wire.requests_written("roots/list") == [] and input_required_results(wire) == []
            assert await client.call_tool("inside", {"path": str(tmp_path / "x")})

    run(body)


def test_default_roots_default_to_the_working_directory() -> None:
    """Chapter 18.3.5: the default default is the working directory."""

    async def body() -> None:
        async with serving(roots_server(), "handshake") as (client, _wire):
            found = where(await client.call_tool("where"))
            assert found["from_client"] is False
            assert [r["path"] for r in found["roots"]] == [str(Path.cwd().resolve())]

    run(body)


def test_ctx_roots_before_list_roots() -> None:
    """``ctx.roots`` is the default without the capability, and a ``LookupError`` before the
    first ``list_roots()`` when the client has roots that were not asked for yet."""
    server = Server("roots", default_roots=["/"])

    @server.tool()
    def peek(ctx: Context) -> str:
        try:
            return repr(ctx.roots.from_client)
        except LookupError as exc:
            return f"LookupError: {exc}"

    async def body() -> None:
        async with serving(server, "handshake") as (client, _wire):
            assert text_of(await client.call_tool("peek")) == "False"
        async with serving(server, "handshake", roots=["/tmp"]) as (client, _wire):
            assert text_of(await client.call_tool("peek")).startswith("LookupError")

    run(body)


# ------------------------------------------------------------------ contains


def test_rt11_rt12_contains_resolves_dotdot_and_symlinks(tmp_path: Path) -> None:
    """RT-11/RT-12/RT-19, RT-07 (traversal): ``contains`` compares normalised paths with
    symlinks resolved, so neither ``..`` nor a link leads out of (or hides a path in) a root."""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "escape").symlink_to(outside)  # inside by name, outside in fact
    (tmp_path / "alias").symlink_to(root)  # outside by name, inside in fact
    roots = Roots([RootItem.from_uri(root.as_uri(), "root")], from_client=True)

    assert roots.contains(root)
    assert roots.contains(root / "sub" / "file.txt")
    assert roots.contains(str(root / "sub" / ".." / "new.txt"))
    assert not roots.contains(str(root / ".." / "outside" / "x"))
    assert not roots.contains(root / "escape" / "secret")
    assert roots.contains(tmp_path / "alias" / "sub")
    assert not roots.contains(tmp_path / "rootling")  # a sibling sharing the prefix
    assert roots.contains((root / "sub").as_uri())
    assert not roots.contains("https://example.com/root")
    assert roots.root_of(root / "sub") is roots[0]

    cwd = os.getcwd()
    os.chdir(root)
    try:
        assert roots.contains("sub/x")  # relative: from the working directory
        assert not roots.contains("../outside")
    finally:
        os.chdir(cwd)


def test_rt12_contains_over_the_wire_with_a_symlinked_root(tmp_path: Path) -> None:
    """RT-12: roots the client gives through a symlink still contain the real paths."""
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)

    async def body() -> None:
        for era in ERAS:
            async with serving(roots_server(), era, roots=[link], resolve_symlinks=False) as (client, _wire):
                assert (await client.call_tool("inside", {"path": str(real / "a")})).structured_content == {
                    "result": True
                }
                assert (await client.call_tool("inside", {"path": str(tmp_path / "b")})).structured_content == {
                    "result": False
                }

    run(body)


def test_innermost_root_wins() -> None:
    roots = Roots([RootItem.from_path("/srv"), RootItem.from_path("/srv/app")], from_client=True)
    assert roots.root_of("/srv/app/x") is roots[1]
    assert roots.root_of("/srv/other") is roots[0]
    assert roots.paths == [Path("/srv"), Path("/srv/app")]
    assert roots.root_of("/etc") is None


# ------------------------------------------------------------------ isolation


@pytest.mark.parametrize("era", ERAS)
def test_two_sessions_never_see_each_others_roots(era: str, tmp_path: Path) -> None:
    """Chapter 18.3.5 (isolation): one server, two clients with different roots, calls
    interleaved; each sees only its own, and invalidating one leaves the other cached."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()

    async def body() -> None:
        server = roots_server()
        first, first_wire, _c1, close_first = await connect(server, era, roots=[a])
        second, second_wire, _c2, close_second = await connect(server, era, roots=[b])
        try:
            for _ in range(2):
                one, two = await asyncio.gather(first.call_tool("where"), second.call_tool("where"))
                assert [r["path"] for r in where(one)["roots"]] == [str(a.resolve())]
                assert [r["path"] for r in where(two)["roots"]] == [str(b.resolve())]
            if era == "handshake":
                await first.set_roots([b])
                await settle(first)
                assert [r["path"] for r in where(await second.call_tool("where"))["roots"]] == [str(b.resolve())]
                assert len(second_wire.requests_written("roots/list")) == 1
                assert [r["path"] for r in where(await first.call_tool("where"))["roots"]] == [str(b.resolve())]
                assert len(first_wire.requests_written("roots/list")) == 2
        finally:
            await close_first()
            await close_second()

    run(body)


# ------------------------------------------------------------------ client side


@pytest.mark.parametrize("era", ERAS)
def test_rt13_consent_refused_means_an_empty_list(era: str, tmp_path: Path) -> None:
    """RT-13: the consent hook runs once, before the first exposure, with the normalised
    roots; refused, the server sees an empty list every time."""
    seen: list[list[Root]] = []

    def refuse(roots: list[Root]) -> bool:
        seen.append(roots)
        return False

    async def body() -> None:
        async with serving(roots_server(), era, roots=[tmp_path / "x" / ".."], roots_consent=refuse) as (client, _w):
            for _ in range(2):
                found = where(await client.call_tool("where"))
                assert found == {"roots": [], "from_client": True}
        assert seen == [[Root(uri=tmp_path.as_uri(), name=tmp_path.name)]]

    run(body)


def test_rt13_consent_granted_asynchronously(tmp_path: Path) -> None:
    calls = 0

    async def grant(roots: list[Root]) -> bool:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0)
        return True

    async def body() -> None:
        async with serving(roots_server(), "stateless", roots=[tmp_path], roots_consent=grant) as (client, _wire):
            await asyncio.gather(*(client.call_tool("where") for _ in range(3)))
            assert [r["path"] for r in where(await client.call_tool("where"))["roots"]] == [str(tmp_path)]
        assert calls == 1

    run(body)


def test_rt02_set_roots_sends_list_changed_only_when_the_set_changed(tmp_path: Path) -> None:
    """RT-02/RT-03: a change is announced once; the same set again (even reordered, or
    spelled with ``..``) sends nothing."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()

    async def body() -> None:
        async with serving(roots_server(), "handshake", roots=[a, b]) as (client, wire):
            assert await client.set_roots([b, a]) is False
            assert await client.set_roots([str(a / ".." / "a"), b]) is False
            await settle(client)
            assert wire.notifications_received("notifications/roots/list_changed") == []
            assert await client.set_roots([a]) is True
            assert await client.set_roots(lambda: [a]) is False
            await settle(client)
            assert len(wire.notifications_received("notifications/roots/list_changed")) == 1

    run(body)


def test_rt02_modern_set_roots_sends_nothing(tmp_path: Path) -> None:
    """RT-02 (Δ ✗): the stateless era has no ``list_changed``; the next request asks anew."""

    async def body() -> None:
        async with serving(roots_server(), "stateless", roots=[]) as (client, wire):
            assert where(await client.call_tool("where"))["roots"] == []
            assert await client.set_roots([tmp_path]) is True
            await settle(client)
            assert wire.notifications_received("notifications/roots/list_changed") == []
            assert [r["path"] for r in where(await client.call_tool("where"))["roots"]] == [str(tmp_path)]

    run(body)


def test_set_roots_after_consent_refused_sends_nothing(tmp_path: Path) -> None:
    async def body() -> None:
        async with serving(roots_server(), "handshake", roots=[tmp_path], roots_consent=lambda r: False) as (
            client,
            wire,
        ):
            await client.call_tool("where")
            assert await client.set_roots([tmp_path / "other"]) is True
            await settle(client)
            assert wire.notifications_received("notifications/roots/list_changed") == []

    run(body)


def test_rt04_rt07_client_normalisation(tmp_path: Path) -> None:
    """RT-04 (``file://`` only), RT-07 (no traversal): relative paths count from the working
    directory, ``..`` goes, symlinks are resolved unless told not to, names are kept."""
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)

    assert normalise_root(link).uri == real.as_uri()
    assert normalise_root(link, resolve_symlinks=False).uri == link.as_uri()
    assert normalise_root(str(real / "x" / ".." / "y")).uri == (real / "y").as_uri()
    assert normalise_root("file:///srv/a/../b").uri == "file:///srv/b"
    assert normalise_root("file://localhost/srv/a%20b").uri == "file:///srv/a%20b"
    assert normalise_root({"uri": real.as_uri(), "name": "Mine"}) == Root(uri=real.as_uri(), name="Mine")
    assert normalise_root(Root(uri=real.as_uri())).name == "real"
    for bad in ("https://example.com/x", "file://remote-host/x", {"name": "no uri"}, 42):
        with pytest.raises(ValueError):
            normalise_root(bad)
    with pytest.raises(ValueError):
        InputHandlers(roots=["s3://bucket/key"])  # a bad list fails where it is given

    cwd = os.getcwd()
    os.chdir(real)
    try:
        assert normalise_root("sub").uri == (real / "sub").as_uri()
        assert normalise_root("file:..").uri == tmp_path.as_uri()
    finally:
        os.chdir(cwd)


def test_rt04_a_callable_provider_is_normalised_on_each_answer(tmp_path: Path) -> None:
    current: list[Any] = [str(tmp_path / "a" / "..")]

    async def body() -> None:
        async with serving(roots_server(), "stateless", roots=lambda: current) as (client, _wire):
            assert [r["uri"] for r in where(await client.call_tool("where"))["roots"]] == [tmp_path.as_uri()]
            current[0] = "https://example.com"
            with pytest.raises(ValueError):
                await client.call_tool("where")

    run(body)


def test_rt05_a_client_without_roots_answers_method_not_found() -> None:
    """RT-05: a handshake-era ``roots/list`` to a client without roots gets -32601."""

    async def body() -> None:
        async with raw_server("handshake") as (client, peer):
            assert "roots" not in client.capabilities
            peer.send({"id": "s1", "method": "roots/list"})
            answer = await peer.next(lambda m: m.get("id") == "s1")
            assert answer["error"]["code"] == METHOD_NOT_FOUND

    run(body)


def test_rt01_capability_follows_the_provider() -> None:
    assert InputHandlers().capabilities() == {}
    assert InputHandlers(roots=[]).capabilities() == {"roots": {"listChanged": True}}


def test_malformed_roots_answer_is_invalid_params() -> None:
    from backchannel.server.roots import parse_answer

    with pytest.raises(MCPError) as caught:
        parse_answer({"roots": [{"name": "no uri"}]})
    assert caught.value.code == -32602
    parsed = parse_answer({"roots": [{"uri": "https://example.com"}, {"uri": "file:///srv"}]})
    assert [item.path for item in parsed] == [None, Path("/srv").resolve()]


def test_rt03_set_roots_with_the_same_callable_tells_a_change(tmp_path: Path) -> None:
    """RT-03/RT-16: a callable provider whose answer changed counts as a change when handed
    over again (compared with the set last computed, not re-read twice)."""
    current = [tmp_path / "a"]

    async def body() -> None:
        async with serving(roots_server(), "handshake", roots=lambda: current) as (client, wire):
            await client.call_tool("where")
            current[0] = tmp_path / "b"
            assert await client.set_roots(lambda: current) is True
            assert await client.set_roots(lambda: current) is False
            await settle(client)
            assert len(wire.notifications_received("notifications/roots/list_changed")) == 1
            assert [r["path"] for r in where(await client.call_tool("where"))["roots"]] == [str(tmp_path / "b")]

    run(body)


def test_named_questions_in_the_stateless_era(tmp_path: Path) -> None:
    """``key=`` names the ``inputRequests`` entry (as the conformance harness expects)."""
    server = Server("keys")

    @server.tool()
    async def named(ctx: Context) -> int:
        return len(await ctx.list_roots(key="client_roots"))

    async def body() -> None:
        async with serving(server, "stateless", roots=[tmp_path]) as (client, wire):
            assert (await client.call_tool("named")).structured_content == {"result": 1}
            [irr] = input_required_results(wire)
            assert list(irr["result"]["inputRequests"]) == ["client_roots"]

    run(body)
