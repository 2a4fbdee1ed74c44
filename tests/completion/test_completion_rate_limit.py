"""``completion/complete`` is rate limited per caller (CP-10 SHOULD, CP-16 MUST), with a clear error.

Who counts as one caller: the connection in the handshake era (a stdio process, an HTTP session);
in the stateless era the authenticated principal, the connection over stdio and memory (one client
each), and all anonymous HTTP callers together (``server/completion_request.py`` says why). Time is
a ``FakeClock``: the buckets refill only when a test moves it on.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Annotated, Any

import httpx2 as httpx
import pytest
from _completion_harness import ERAS, connected, prompt_ref, run

from backchannel import Client, Server
from backchannel.http_host.authenticator import BearerTokens
from backchannel.runtime.ratelimit import KeyedBuckets
from backchannel.server.completion import Complete
from backchannel.server.options import CompletionOptions
from backchannel.testing import FakeClock
from backchannel.types.errors import RATE_LIMITED, RequestError

LANGUAGES = ["python", "pytorch", "go", "rust"]
BASE = "http://127.0.0.1"


def languages_server(clock: FakeClock, **options: Any) -> Server:
    server = Server("limits", clock=clock, **options)

    @server.prompt()
    def code_review(language: Annotated[str, Complete(LANGUAGES)]) -> str:
        return f"review {language}"

    return server


async def ask(client: Client) -> list[str]:
    return (await client.complete(prompt_ref("code_review"), ("language", "py"))).values


async def refused(client: Client) -> RequestError:
    with pytest.raises(RequestError) as caught:
        await ask(client)
    return caught.value


@pytest.mark.parametrize("era", ERAS)
def test_past_the_limit_a_connection_gets_a_clear_error_and_may_go_on_later(era: str) -> None:
    """CP-10, CP-16: a burst, then -31429 naming the limit and when to retry; the bucket refills."""
    clock = FakeClock()
    server = languages_server(clock, completion_rate=4, completion_burst=3)

    async def body() -> None:
        async with connected(server, era) as client:
            for _ in range(3):
                assert await ask(client) == ["python", "pytorch"]
            error = await refused(client)
            assert error.code == RATE_LIMITED == -31429
            assert error.message == (
                "completion/complete is limited to 4 requests a second (bursts of 3) per connection; "
                "try again in 250 ms"
            )
            assert error.data == {"retryAfterMs": 250, "rate": 4, "burst": 3, "per": "connection"}
            assert (await client.list_prompts())[0].name == "code_review"  # nothing else is limited
            clock.advance(0.25)
            assert await ask(client) == ["python", "pytorch"]
            await refused(client)
            # Another connection to the same server has a bucket of its own.
            async with connected(server, era) as other:
                for _ in range(3):
                    await ask(other)
                await refused(other)

    run(body)


def test_the_code_is_outside_the_range_the_spec_reserves() -> None:
    """2026-07-28 basic/index.mdx: new codes SHOULD be allocated outside -32768..-32000."""
    assert not -32768 <= RATE_LIMITED <= -32000


@pytest.mark.parametrize("era", ERAS)
def test_the_default_never_stops_a_person_typing(era: str) -> None:
    """40 at once (a client that asks on every keystroke of a fast burst), then 10 a second for
    30 s: all answered. Typing is 3 to 8 keystrokes a second, and ours asks once per pause."""
    clock = FakeClock()
    server = languages_server(clock)
    assert server.options.completions == CompletionOptions(rate=20.0, burst=40)

    async def body() -> None:
        async with connected(server, era) as client:
            for _ in range(40):
                await ask(client)
            clock.advance(2.0)
            for _ in range(300):
                clock.advance(0.1)
                await ask(client)

    run(body)


def test_the_limit_is_set_or_turned_off_by_keyword() -> None:
    clock = FakeClock()
    server = languages_server(clock, completion_rate=None)
    assert server.options.completions == CompletionOptions(rate=None, burst=40)

    async def body() -> None:
        async with connected(server, "handshake") as client:
            for _ in range(200):
                await ask(client)

    run(body)
    with pytest.raises(ValueError, match="completion rate"):
        Server("x", completion_rate=0)
    with pytest.raises(ValueError, match="completion burst"):
        Server("x", completion_burst=0)


# ---------------------------------------------------------------------------------------- over HTTP


@contextlib.asynccontextmanager
async def http_client(app: Any, era: str, token: str | None = None) -> AsyncIterator[Client]:
    headers = {"authorization": f"Bearer {token}"} if token else None
    raw = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE, timeout=10)
    async with raw, Client.http(f"{BASE}/mcp", headers=headers, httpx_client=raw, era=era, name="t") as client:
        assert client.era == era
        yield client


def test_stateless_http_counts_per_principal_not_per_request() -> None:
    """Every stateless-era POST is a connection of its own: the bucket is the principal's."""
    clock = FakeClock()
    server = languages_server(clock, completion_rate=2, completion_burst=3)
    app = server.http_app(authenticator=BearerTokens({"tok-a": "alice", "tok-b": "bob"}))

    async def body() -> None:
        async with http_client(app, "stateless", "tok-a") as alice, http_client(app, "stateless", "tok-b") as bob:
            for _ in range(3):
                await ask(alice)
            error = await refused(alice)
            assert error.code == RATE_LIMITED
            assert error.data == {"retryAfterMs": 500, "rate": 2, "burst": 3, "per": "principal"}
            assert await ask(bob) == ["python", "pytorch"]  # her limit is not his
            clock.advance(0.5)
            await ask(alice)
            await refused(alice)
        # A new client of hers is still her: the bucket follows the principal.
        async with http_client(app, "stateless", "tok-a") as again:
            await refused(again)
        await app.aclose()

    run(body)


def test_anonymous_stateless_http_callers_share_one_bucket() -> None:
    clock = FakeClock()
    server = languages_server(clock, completion_rate=2, completion_burst=3)
    app = server.http_app()

    async def body() -> None:
        async with http_client(app, "stateless") as one, http_client(app, "stateless") as two:
            await ask(one)
            await ask(two)
            await ask(one)
            error = await refused(two)
            assert error.data["per"] == "anonymous HTTP caller (all of them together)"
            await refused(one)
        await app.aclose()

    run(body)


def test_handshake_http_sessions_each_have_their_own_bucket() -> None:
    """The same principal over two handshake-era sessions: two connections, two buckets."""
    clock = FakeClock()
    server = languages_server(clock, completion_rate=2, completion_burst=2)
    app = server.http_app(authenticator=BearerTokens({"tok-a": "alice"}))

    async def body() -> None:
        async with http_client(app, "handshake", "tok-a") as first, http_client(app, "handshake", "tok-a") as second:
            await ask(first)
            await ask(first)
            assert (await refused(first)).data["per"] == "connection"
            await ask(second)
            await ask(second)
            await refused(second)
        await app.aclose()

    run(body)


# ------------------------------------------------------------------------------ the bucket table


def test_buckets_of_callers_gone_quiet_are_forgotten() -> None:
    """A long-lived server sees many connections and principals: full buckets are swept."""
    clock = FakeClock()
    buckets = KeyedBuckets(10.0, 5, clock=clock)
    for key in range(64):
        assert buckets.allow(key)
    assert len(buckets) == 64
    clock.advance(1.0)  # every bucket has refilled: each is as good as new
    buckets.allow("busy")
    assert len(buckets) == 1
    for _ in range(5):
        buckets.allow("busy")
    assert not buckets.allow("busy")  # what is still in use is kept, and still counts
    assert buckets.bucket("busy").retry_after() == pytest.approx(0.1)


def test_over_stateless_http_the_refusal_is_a_429_with_retry_after() -> None:
    """On the wire: HTTP's own status for "too many requests", and when to come back."""
    clock = FakeClock()
    app = languages_server(clock, completion_rate=2, completion_burst=1).http_app()
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    params = {"ref": prompt_ref("code_review"), "argument": {"name": "language", "value": "py"}}
    message = {"jsonrpc": "2.0", "id": 1, "method": "completion/complete", "params": {**params, "_meta": meta}}
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "completion/complete",
    }

    async def body() -> None:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as raw:
            first = await raw.post("/mcp", json=message, headers=headers)
            assert first.status_code == 200
            second = await raw.post("/mcp", json=message, headers=headers)
            assert second.status_code == 429
            assert second.headers["retry-after"] == "1"  # 500 ms, in whole seconds, rounded up
            assert second.json()["error"]["code"] == RATE_LIMITED
        await app.aclose()

    run(body)
