"""``Server``'s grouped options, its flat keywords, its clock, and the forwarding methods' signatures."""

from __future__ import annotations

import inspect
import time

import pytest

from backchannel import Context, Server
from backchannel.server.options import ListOptions, LogOptions, StateOptions, TimeoutOptions
from backchannel.server.state import MemoryStore
from backchannel.types.errors import InvalidParams


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_the_common_case_is_one_line() -> None:
    server = Server("notes", "1.0.0")
    assert server.info == {"name": "notes", "version": "1.0.0"}
    assert server.options.lists == ListOptions() and server.options.logs == LogOptions()
    assert isinstance(server.state, MemoryStore)


def test_groups_and_flat_keywords_set_the_same_fields() -> None:
    grouped = Server(
        "a",
        lists=ListOptions(page_size=5, cache_scope="public"),
        logs=LogOptions(level="warning", rate=1.0),
        state=StateOptions(ttl=30.0, once_limit=3, decline_ttl=9.0),
        timeouts=TimeoutOptions(elicitation=7.0, finish_grace=0.5),
    )
    flat = Server(
        "a",
        page_size=5,
        cache_scope="public",
        log_level="warning",
        log_rate=1.0,
        state_ttl=30.0,
        once_limit=3,
        decline_ttl=9.0,
        elicitation_timeout=7.0,
        finish_grace=0.5,
    )
    assert grouped.options == flat.options
    assert (flat.page_size, flat.default_log_level, flat.state_sealer.ttl) == (5, "warning", 30.0)
    assert (flat.elicitation_timeout, flat.finish_grace, flat.once_limit, flat.decline_ttl) == (7.0, 0.5, 3, 9.0)


def test_a_flat_keyword_wins_over_its_group_and_a_bare_store_still_works() -> None:
    store = MemoryStore()
    server = Server("a", lists=ListOptions(page_size=5), page_size=7, state=store)
    assert server.page_size == 7 and server.state is store


def test_bad_settings_are_refused_where_they_are_given() -> None:
    with pytest.raises(ValueError, match="page_size"):
        Server("a", page_size=0)
    with pytest.raises(ValueError, match="log level"):
        LogOptions(level="loud")
    with pytest.raises(TypeError, match="nonsense"):
        Server("a", nonsense=1)  # type: ignore[call-arg]


def test_the_clock_drives_sealed_state_and_the_default_store() -> None:
    clock = Clock()
    server = Server("a", clock=clock, state_ttl=60.0)
    sealed = server.state_sealer.seal({"x": 1}, "binding")
    assert server.state_sealer.open(sealed, "binding") == {"x": 1}
    clock.now += 61
    with pytest.raises(InvalidParams, match="expired"):
        server.state_sealer.open(sealed, "binding")

    async def kept() -> object:
        await server.state.put("k", {"v": 1}, ttl=10.0)
        before = await server.state.get("k")
        clock.now += 11
        return before, await server.state.get("k")

    import asyncio

    assert asyncio.run(kept()) == ({"v": 1}, None)


def test_without_a_clock_real_time_is_used() -> None:
    server = Server("a")
    assert server.clock is None
    assert abs(server.state_sealer.now() - time.time()) < 5  # wall clock: shared by every worker


def test_forwarded_methods_keep_one_signature_for_users() -> None:
    elicit = inspect.signature(Context.elicit)
    assert list(elicit.parameters)[:3] == ["ctx", "message", "schema"]
    assert "decline_key" in elicit.parameters and Context.elicit.__doc__
    assert "max_tokens" in inspect.signature(Context.sample).parameters
    assert "refresh" in inspect.signature(Context.list_roots).parameters
    assert "via" in inspect.signature(Context.elicit_url).parameters
    server = Server("a")
    add_tool = inspect.signature(server.add_tool)
    assert next(iter(add_tool.parameters)) == "fn" and "elicits" in add_tool.parameters
    assert server.add_tool.__doc__ and "inputSchema" in server.add_tool.__doc__
