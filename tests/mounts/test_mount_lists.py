"""Merged lists (issue #30: "Pagination and the client cache hints are merged correctly"): the
mounting server's own items first, then each mount's, paged with the mounting server's
``page_size`` (each page at most that long, every item once, the cursor the client holds is the
mounting server's); in the stateless era the merged page's ``ttlMs`` is the shortest of its parts'
and ``cacheScope`` is ``private`` when any part's is (2026-07-28 caching: a part that may not be
shared makes the whole unsharable; a part that expires sooner makes the whole expire then)."""

from __future__ import annotations

from typing import Any

import pytest

from backchannel import Server
from mounts._mounting import ERAS, KINDS, answers_to, bounded, client_of, mount_upstream


def _small(name: str, tools: int, **options: Any) -> Server:
    server = Server(name, **options)
    for number in range(tools):
        server.add_tool(lambda number=number: str(number), name=f"t{number}", description=f"tool {number}")
    return server


@pytest.mark.parametrize(("era", "kind"), [(era, kind) for era in ERAS for kind in KINDS])
@bounded
async def test_merged_pages_hold_at_most_page_size_items_and_every_item_once(era: str, kind: str) -> None:
    gateway = _small("gateway", 3, page_size=4)
    gateway.mount("a", _small("a", 5, page_size=2))  # a mount pages too: every page of it is read
    mount_upstream(gateway, kind)
    async with client_of(gateway, era) as (client, tap):
        names = [tool.name for tool in await client.list_tools()]
    pages = answers_to(tap, "tools/list")
    assert len(pages) >= 5 and all(len(page["tools"]) <= 4 for page in pages)
    assert all("nextCursor" in page for page in pages[:-1]) and "nextCursor" not in pages[-1]
    assert len(names) == len(set(names))
    assert names[:8] == ["t0", "t1", "t2", "a_t0", "a_t1", "a_t2", "a_t3", "a_t4"]  # own first, then in mount order
    assert {"ev_echo", "ev_ask", "ev_measure"} <= set(names[8:]) and all(n.startswith("ev_") for n in names[8:])


@pytest.mark.parametrize(
    ("own", "mounted", "expected"),
    [
        # (ttlMs, cacheScope) of the gateway, of each mount, and of the merged page.
        ((60_000, "public"), [(5_000, "private"), (20_000, "public")], (5_000, "private")),
        ((1_000, "private"), [(5_000, "public"), (20_000, "public")], (1_000, "private")),
        ((60_000, "public"), [(30_000, "public"), (45_000, "public")], (30_000, "public")),
    ],
)
@bounded
async def test_the_merged_page_keeps_the_shortest_ttl_and_private_over_public(
    own: tuple[int, str], mounted: list[tuple[int, str]], expected: tuple[int, str]
) -> None:
    gateway = _small("gateway", 1, cache_ttl_ms=own[0], cache_scope=own[1])
    for index, (ttl, scope) in enumerate(mounted):
        gateway.mount(f"m{index}", _small(f"m{index}", 1, cache_ttl_ms=ttl, cache_scope=scope))
    async with client_of(gateway, "stateless") as (client, tap):
        await client.request("tools/list", cached=False)
        await client.request("prompts/list", cached=False)
    for page in answers_to(tap, "tools/list") + answers_to(tap, "prompts/list"):
        assert (page["ttlMs"], page["cacheScope"]) == expected


@bounded
async def test_a_handshake_era_page_carries_no_cache_hints() -> None:
    gateway = _small("gateway", 1, cache_ttl_ms=1_000, cache_scope="private")
    gateway.mount("m", _small("m", 1, cache_ttl_ms=5_000))
    async with client_of(gateway, "handshake") as (client, tap):
        await client.list_tools()
    (page,) = answers_to(tap, "tools/list")
    assert "ttlMs" not in page and "cacheScope" not in page
