"""The ready-made middleware (``backchannel.middleware``), each on the wire in both eras, in front
of a gateway with a mount (``tests/mounts/mount_upstream.py`` in this process): ``RequestLog``
(one line per request with its outcome and time), ``RateLimit`` (-31429 with ``retryAfterMs``,
a bucket per caller), ``ToolFilter`` (hidden from every page, refused as an unknown tool),
``ListCache`` (per caller, dropped on any list change, never an ``input_required``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from auth_server._auth_harness import auth_headers, stateless
from backchannel import Server
from backchannel.middleware import ListCache, RateLimit, RequestLog, ToolFilter
from backchannel.server.middleware import Call, CallNext
from backchannel.testing import FakeClock, Tap, connected
from backchannel.types.errors import RequestError
from mounts._mounting import ERAS, answers_to, bounded, client_of, person, text
from mounts.mount_upstream import build


def _gateway(**options: Any) -> Server:
    gateway = Server("gateway", **options)

    @gateway.tool()
    def hello() -> str:
        return "hi"

    gateway.mount("ev", build())
    return gateway


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def _refused(call: Any) -> RequestError:
    with pytest.raises(RequestError) as refused:
        await call
    return refused.value


# --------------------------------------------------------------------------- RequestLog


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_request_log_writes_one_line_per_request_with_name_era_principal_outcome_and_time(era: str) -> None:
    logger = logging.getLogger(f"test.requests.{era}")
    logger.setLevel(logging.INFO)
    lines = _Lines()
    logger.addHandler(lines)
    gateway = _gateway()
    gateway.add_middleware(RequestLog(logger, sent=True))
    async with client_of(gateway, era) as (client, _):
        assert text(await client.call_tool("ev_echo", {"text": "x"})) == "x"
        assert text(await client.call_tool("ev_ask", {})) == "accept:Ada"
        await _refused(client.call_tool("ev_nothing", {}))
        await _refused(client.call_tool("ev_refuse", {}))
    messages = [record.getMessage() for record in lines.records]
    calls = [m for m in messages if "tools/call" in m and not m.startswith("sent")]
    assert calls[0].startswith(f"tools/call ev_echo era={era} principal=- outcome=ok ") and calls[0].endswith(" ms")
    if era == "handshake":
        assert calls[1].startswith("tools/call ev_ask era=handshake principal=- outcome=ok")
        assert [m for m in messages if m.startswith("sent elicitation/create era=handshake")]
        rest = calls[2:]
    else:  # the form is asked in the answer, then the retry carries the answer
        assert calls[1].startswith("tools/call ev_ask era=stateless principal=- outcome=input_required")
        assert calls[2].startswith("tools/call ev_ask era=stateless principal=- outcome=ok")
        rest = calls[3:]
    assert rest[0].startswith(f"tools/call ev_nothing era={era} principal=- outcome=error -32602")
    assert rest[1].startswith(f"tools/call ev_refuse era={era} principal=- outcome=error -32099")
    facts = lines.records[messages.index(calls[0])].mcp  # type: ignore[attr-defined]
    assert facts["method"] == "tools/call" and facts["name"] == "ev_echo" and facts["ms"] >= 0
    assert len(calls) == len(rest) + (2 if era == "handshake" else 3)  # one line each, nothing twice


# --------------------------------------------------------------------------- RateLimit


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_rate_limit_refuses_past_the_burst_with_31429_and_lets_through_after_the_wait(era: str) -> None:
    clock = FakeClock()
    gateway = _gateway()
    gateway.add_middleware(RateLimit(rate=1, burst=2, clock=clock))
    async with client_of(gateway, era) as (client, tap):
        # Plain requests (call_tool may list the tools first: a request that counts as well).
        assert await _call(client, "hello") == "hi"
        assert await _call(client, "ev_echo", {"text": "x"}) == "x"
        refused = await _refused(_call(client, "hello"))
        assert refused.code == -31429 and refused.data["retryAfterMs"] == 1000  # type: ignore[index]
        clock.advance(1.0)
        assert await _call(client, "hello") == "hi"
        await _refused(_call(client, "hello"))
    errors = [m["error"] for m in tap.received if "error" in m]
    assert [error["code"] for error in errors] == [-31429, -31429]
    assert errors[0]["message"].startswith("Too many requests: at most 1 a second (bursts of 2) per caller")


async def _call(client: Any, name: str, arguments: dict[str, Any] | None = None) -> str:
    result = await client.request("tools/call", {"name": name, "arguments": arguments or {}})
    return str(result["content"][0]["text"])


@bounded
async def test_rate_limit_keeps_a_bucket_per_principal() -> None:
    clock = FakeClock()
    gateway = _gateway()
    gateway.add_middleware(RateLimit(rate=1, burst=1, clock=clock))

    def as_principal(name: str) -> Callable[[Any], Tap]:
        def wrap(transport: Any) -> Tap:
            tap = Tap(transport)
            tap.principal = name  # what an HTTP authenticator names the caller
            return tap

        return wrap

    async with (
        connected(gateway, "stateless", wrap_server=as_principal("alice")) as alice,
        connected(gateway, "stateless", wrap_server=as_principal("bob")) as bob,
    ):
        assert await _call(alice, "hello") == "hi"
        assert (await _refused(_call(alice, "hello"))).code == -31429
        assert await _call(bob, "hello") == "hi"  # alice's bucket is hers


@bounded
async def test_rate_limit_counts_an_anonymous_http_caller_by_address_across_requests() -> None:
    """Each stateless-era POST is a connection of its own: the bucket is the address's, and the
    refusal is a 429 with ``Retry-After`` and the -31429 body (what the HTTP host makes of it)."""
    clock = FakeClock()
    gateway = _gateway()
    gateway.add_middleware(RateLimit(rate=1, burst=2, clock=clock))
    app = gateway.http_app()
    transport = httpx2.ASGITransport(app=app, client=("192.0.2.7", 5555))
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        answers = []
        for number in range(3):
            message, headers = stateless("tools/call", {"name": "hello", "arguments": {}}, number)
            answers.append(await http.post("/mcp", json=message, headers={**auth_headers(None), **headers}))
    assert [answer.status_code for answer in answers] == [200, 200, 429]
    assert answers[2].headers["retry-after"] == "1"
    assert answers[2].json()["error"]["code"] == -31429 and answers[2].json()["error"]["data"]["retryAfterMs"] == 1000


# --------------------------------------------------------------------------- ToolFilter


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_tool_filter_hides_denied_tools_from_every_page_and_refuses_them_as_unknown(era: str) -> None:
    gateway = _gateway(page_size=3)
    gateway.add_middleware(ToolFilter(deny=["ev_s*", "ev_chatty"]))
    async with client_of(gateway, era) as (client, tap):
        names = {tool.name for tool in await client.list_tools()}
        assert "hello" in names and "ev_echo" in names
        assert not {"ev_sample", "ev_slow", "ev_chatty"} & names
        unknown = await _refused(client.call_tool("ev_nothing", {}))
        for denied in ("ev_slow", "ev_chatty"):
            refused = await _refused(client.call_tool(denied, {}))
            assert (refused.code, refused.message, refused.data) == (
                unknown.code,
                f"Unknown tool: {denied}",
                {"name": denied},
            )
    pages = answers_to(tap, "tools/list")
    assert len(pages) > 1 and all(len(page["tools"]) <= 3 for page in pages)


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_tool_filter_with_an_allow_list_shows_only_what_it_allows(era: str) -> None:
    gateway = _gateway()
    gateway.add_middleware(ToolFilter(allow=["hello", "ev_e*"]))
    async with client_of(gateway, era) as (client, _):
        assert {tool.name for tool in await client.list_tools()} == {"hello", "ev_echo"}
        assert (await _refused(client.call_tool("ev_ask", {}))).code == -32602


# --------------------------------------------------------------------------- ListCache


def _counting(counts: dict[str, int]) -> Any:
    async def count(call: Call, call_next: CallNext) -> Any:
        if call.method.endswith("/list"):
            counts[call.method] = counts.get(call.method, 0) + 1
        return await call_next(call)

    return count


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_list_cache_answers_again_until_a_list_changes_even_a_mount_s(era: str) -> None:
    clock = FakeClock()
    counts: dict[str, int] = {}
    gateway = _gateway()
    cache = ListCache(max_age=30, clock=clock)
    gateway.add_middleware(cache)
    gateway.add_middleware(_counting(counts))  # inside the cache: what reaches the server
    async with client_of(gateway, era) as (client, tap):
        first = await client.request("tools/list", cached=False)
        again = await client.request("tools/list", cached=False)
        assert counts["tools/list"] == 1 and cache.hits == 1
        assert again["tools"] == first["tools"]
        await client.request("prompts/list", cached=False)
        assert counts["prompts/list"] == 1
        assert text(await client.call_tool("ev_grow", {"name": "fresh"})) == "fresh"  # the mount's list changes
        grown = await client.request("tools/list", cached=False)
        assert counts["tools/list"] == 2 and "ev_fresh" in {tool["name"] for tool in grown["tools"]}
        gateway.add_tool(lambda: "new", name="newer")  # the gateway's own list changes
        assert "newer" in {tool["name"] for tool in (await client.request("tools/list", cached=False))["tools"]}
        assert counts["tools/list"] == 3
        await client.request("tools/list", cached=False)
        assert counts["tools/list"] == 3
        clock.advance(31)  # older than max_age
        await client.request("tools/list", cached=False)
        assert counts["tools/list"] == 4
    if era == "stateless":  # a page given again says how long it has left, not its first ttl
        pages = answers_to(tap, "tools/list")
        assert pages[0]["ttlMs"] <= 30_000 or pages[0]["ttlMs"] == pages[1]["ttlMs"]


@bounded
async def test_list_cache_keeps_each_principal_s_lists_apart() -> None:
    class PerCaller(ToolFilter):
        def permits(self, name: str, call: Call) -> bool:
            return call.principal == "alice" or not name.startswith("ev_")

    gateway = _gateway()
    gateway.add_middleware(ListCache())
    gateway.add_middleware(PerCaller())

    def as_principal(name: str) -> Callable[[Any], Tap]:
        def wrap(transport: Any) -> Tap:
            tap = Tap(transport)
            tap.principal = name
            return tap

        return wrap

    async with (
        connected(gateway, "handshake", wrap_server=as_principal("alice"), elicitation=person) as alice,
        connected(gateway, "handshake", wrap_server=as_principal("bob"), elicitation=person) as bob,
    ):
        assert "ev_echo" in {tool.name for tool in await alice.list_tools()}
        assert {tool.name for tool in await bob.list_tools()} == {"hello"}
        assert "ev_echo" in {tool.name for tool in await alice.list_tools()}


@bounded
async def test_list_cache_never_keeps_an_input_required_result() -> None:
    """A list whose answer asks the client first (stateless era): neither that answer nor the
    retry's is kept; the next plain request reaches the server again."""
    counts: dict[str, int] = {}
    asking = {"on": True}

    async def ask_first(call: Call, call_next: CallNext) -> Any:
        if call.method == "tools/list" and asking["on"] and "inputResponses" not in call.params:
            question = {"method": "elicitation/create", "params": {"message": "Why?", "requestedSchema": _SCHEMA}}
            return {"resultType": "input_required", "inputRequests": {"why": question}}
        return await call_next(call)

    gateway = _gateway()
    gateway.add_middleware(ListCache())
    gateway.add_middleware(ask_first)
    gateway.add_middleware(_counting(counts))
    async with client_of(gateway, "stateless") as (client, tap):
        await client.request("tools/list", cached=False)  # asked, answered, retried
        assert counts["tools/list"] == 1
        asking["on"] = False
        await client.request("tools/list", cached=False)
        assert counts["tools/list"] == 2  # the input_required answer was not kept
        await client.request("tools/list", cached=False)
        assert counts["tools/list"] == 2  # this one was
    assert next(r.get("resultType") for r in answers_to(tap, "tools/list")) == "input_required"


_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "happy": {"type": "boolean"}}}
