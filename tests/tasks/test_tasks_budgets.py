"""Tasks cannot fill the server's state store, and one caller cannot take everyone's tasks
(issue #26, items 4 and 5), on the wire against ``run_http``'s server.

Clients connect from several loopback addresses (127.0.0.1, 127.0.0.2, ...): over HTTP an
anonymous caller is its address. Budgets are configured small, as ``server.tasks`` attributes
(``Server(task_limit=...)`` and the rest set the same).

- A task's TTL is the server's at most (``task_ttl_max``, 1 hour): a longer one asked in
  2025-11-25 is cut, and the task reports the TTL it got (tasks.mdx §TTL and Resource
  Management: a receiver MAY override the requested ttl and MUST report the actual one).
- Anonymous callers get a budget per address (``anonymous_task_limit``), in both eras: one
  address filling its own does not refuse another; the sessions of one address share it.
- Principals get their own (``task_limit``), and all tasks together are bounded
  (``task_limit_total``) so that they never fill the store ``ctx.once`` results share: after a
  flood of tasks, another caller's ``ctx.once`` still runs. Each refusal names its cause.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from _tasks_server import tasks_server
from _wire import Session, Stateless

from backchannel import Context, Server
from backchannel.http_host.authenticator import BearerTokens
from backchannel.http_host.h1.serving import HttpServer
from backchannel.state import MemoryStore
from backchannel.testing import run, within

DAY_MS = 24 * 3600 * 1000
HOUR_MS = 3600 * 1000


def budget_server(**options: Any) -> Server:
    """``_tasks_server``'s tools, and ``stamp``: work done in ``ctx.once`` (no task)."""
    server = tasks_server(**options)

    @server.tool()
    async def stamp(ctx: Context) -> str:
        return str(await ctx.once("stamp", lambda: "stamped"))

    return server


@contextlib.asynccontextmanager
async def on_our_server(app: Any) -> AsyncIterator[int]:
    """``app`` on ``run_http``'s HTTP server on a free port of 127.0.0.1, in this loop."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    server = HttpServer(app, grace=1.0)
    task = asyncio.get_running_loop().create_task(server.serve(sock=sock, signals=False))
    try:
        await within(lambda: server.started or task.done(), "the server listening", timeout=10)
        if task.done():
            task.result()
        yield sock.getsockname()[1]
    finally:
        server.stop()
        await asyncio.wait_for(task, 10)
        sock.close()


@contextlib.asynccontextmanager
async def client_at(port: int, address: str) -> AsyncIterator[httpx2.AsyncClient]:
    """An HTTP client whose connections come from ``address`` (any of 127.0.0.0/8 reaches the server)."""
    transport = httpx2.AsyncHTTPTransport(local_address=address)
    async with httpx2.AsyncClient(transport=transport, timeout=10) as http:
        yield http


def url(port: int) -> str:
    return f"http://127.0.0.1:{port}/mcp"


def quick(text: str = "done") -> dict[str, Any]:
    return {"name": "quick", "arguments": {"text": text}}


def refusal(answer: dict[str, Any]) -> dict[str, Any]:
    assert "error" in answer, answer
    return answer["error"]  # type: ignore[no-any-return]


def test_a_longer_ttl_than_the_servers_is_cut_and_the_task_reports_the_one_it_got() -> None:
    async def body() -> None:
        server = budget_server()
        async with on_our_server(server.http_app()) as port, client_at(port, "127.0.0.1") as http:
            session = Session(http, url(port))
            await session.open()
            created = await session.call("tools/call", {**quick(), "task": {"ttl": DAY_MS}})
            assert created["task"]["ttl"] == HOUR_MS  # task_ttl_max: 1 hour by default
            got = await session.call("tasks/get", {"taskId": created["task"]["taskId"]})
            assert got["ttl"] == HOUR_MS
            shorter = await session.call("tools/call", {**quick(), "task": {"ttl": 60_000}})
            assert shorter["task"]["ttl"] == 60_000  # what a client asks below the bound, it gets
        configured = budget_server(task_ttl_max=120)
        async with on_our_server(configured.http_app()) as port, client_at(port, "127.0.0.1") as http:
            session = Session(http, url(port))
            await session.open()
            created = await session.call("tools/call", {**quick(), "task": {"ttl": DAY_MS}})
            assert created["task"]["ttl"] == 120_000
            untimed = await Stateless(http, url(port)).call("tools/call", quick())
            assert untimed["ttlMs"] == 120_000  # the default ttl is cut to the bound too

    run(body)


def test_the_budgets_are_server_settings_checked_where_they_are_given() -> None:
    server = Server(
        "budgets", task_ttl_max=120, task_limit=5, anonymous_task_limit=2, task_limit_total=9, once_limit_total=7
    )
    tasks = server.tasks
    assert (tasks.max_ttl, tasks.limit, tasks.anonymous_limit, tasks.limit_total) == (120, 5, 2, 9)
    assert server.options.state.once_limit_total == 7
    defaults = Server("defaults").tasks
    assert (defaults.ttl, defaults.max_ttl, defaults.limit, defaults.anonymous_limit, defaults.limit_total) == (
        3600,
        3600,
        1000,
        100,
        20_000,
    )
    bad = {"task_ttl_max": 0, "task_limit": 0, "anonymous_task_limit": -1, "task_limit_total": 0}
    for keyword, value in bad.items():
        with pytest.raises(ValueError, match=keyword):
            Server("bad", **{keyword: value})


def test_one_anonymous_address_filling_its_budget_does_not_lock_another_out() -> None:
    async def body() -> None:
        server = budget_server()
        server.tasks.limit = 3  # (the per-caller limit anonymous callers all shared before)
        server.tasks.anonymous_limit = 3
        async with (
            on_our_server(server.http_app()) as port,
            client_at(port, "127.0.0.1") as greedy_http,
            client_at(port, "127.0.0.2") as other_http,
        ):
            greedy = Stateless(greedy_http, url(port))
            other = Stateless(other_http, url(port))
            for _ in range(3):
                assert (await greedy.call("tools/call", quick()))["resultType"] == "task"
            refused = await greedy.send("tools/call", quick())
            # Another address has a budget of its own, in both eras.
            created = await other.call("tools/call", quick("other's"))
            done = await other.until(created["taskId"], lambda task: task["status"] == "completed")
            assert done["result"]["content"][0]["text"] == "other's"
            session = Session(other_http, url(port))
            await session.open()
            assert (await session.call("tools/call", {**quick(), "task": {}}))["task"]["status"] == "working"
            error = refusal(refused)
            assert error["code"] == -32603
            assert error["message"].startswith("too many tasks: anonymous callers from 127.0.0.1 may keep 3")
            assert error["data"] == {"limit": 3, "scope": "caller"}
            # The sessions of one address share its budget: a new session buys no more tasks.
            greedy_session = Session(greedy_http, url(port))
            await greedy_session.open()
            error = refusal(await greedy_session.send("tools/call", {**quick(), "task": {}}))
            assert "anonymous callers from 127.0.0.1 may keep 3" in error["message"]

    run(body)


def test_a_flood_of_tasks_leaves_room_for_ctx_once_and_each_refusal_names_its_cause() -> None:
    tokens = BearerTokens({f"tok-{name}": name for name in ("alice", "bob", "carol", "dave")})

    async def body() -> None:
        # A store of 12 keys: before, three callers' tasks filled it and ctx.once failed for a
        # fourth, "full for this caller". Now every task together may hold 8 of them.
        server = budget_server(state=MemoryStore(max_keys=12))
        server.tasks.limit = 4
        server.tasks.limit_total = 8
        async with on_our_server(server.http_app(authenticator=tokens)) as port, client_at(port, "127.0.0.1") as http:

            def caller(name: str) -> Stateless:
                return Stateless(http, url(port), authorization=f"Bearer tok-{name}")

            for name in ("alice", "bob"):
                for _ in range(4):
                    assert (await caller(name).call("tools/call", quick()))["resultType"] == "task"
            over_own = await caller("alice").send("tools/call", quick())
            over_all = [await caller("carol").send("tools/call", quick()) for _ in range(4)]
            # ctx.once has its own budget: tasks cannot take the store from it.
            stamped = await caller("dave").call("tools/call", {"name": "stamp", "arguments": {}})
            assert stamped["content"][0]["text"] == "stamped"
            error = refusal(over_own)
            assert error["message"].startswith("too many tasks: this caller may keep 4")
            assert error["data"] == {"limit": 4, "scope": "caller"}
            for answer in over_all:
                error = refusal(answer)
                assert error["code"] == -32603
                assert "the server holds 8 tasks" in error["message"]
                assert "a limit of the server, not of this caller" in error["message"]
                assert error["data"] == {"limit": 8, "scope": "server"}

    run(body)


def test_an_anonymous_flood_at_the_default_budget_is_capped_at_once_and_others_are_served() -> None:
    async def body() -> None:
        server = budget_server()
        limit = 100  # the default anonymous_task_limit
        async with (
            on_our_server(server.http_app()) as port,
            client_at(port, "127.0.0.1") as flood_http,
            client_at(port, "127.0.0.2") as other_http,
        ):
            flood = Stateless(flood_http, url(port))
            started = time.perf_counter()
            made = 0
            while "error" not in (answer := await flood.send("tools/call", quick())):
                made += 1
                assert made <= limit, "the budget did not hold"
            seconds = time.perf_counter() - started
            assert made == limit and answer["error"]["data"]["scope"] == "caller"
            print(f"\n{made} tasks from one address reached its budget in {seconds:.2f} s")
            other = Stateless(other_http, url(port))
            assert (await other.call("tools/call", quick()))["resultType"] == "task"
            stamped = await other.call("tools/call", {"name": "stamp", "arguments": {}})
            assert stamped["content"][0]["text"] == "stamped"
            flooded = await flood.call("tools/call", {"name": "stamp", "arguments": {}})
            assert flooded["content"][0]["text"] == "stamped"  # its ctx.once is not its tasks' budget

    run(body, timeout=60)
