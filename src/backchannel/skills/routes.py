"""The extension's three requests as method routes: ``SKILL_ROUTES``, which the server's route table takes in.

Each route has the shape of the server's others (the server, the request, its context) and reads
only what ``SkillServer`` names, so this module knows nothing of ``Server``. A server that
publishes no skill answers them -32601, as before the extension existed. In the stateless era
``skills/list`` and ``skills/get`` carry the server's list-caching hints (``ttlMs``,
``cacheScope``), which the extension makes required on them. ``resources/directory/read`` carries
them too, though the extension's ``ReadResourceDirectoryResult`` extends only ``PaginatedResult``
(not cacheable in 2026-07-28's schema): the official TypeScript client (``@modelcontextprotocol/
client`` 2.4.0) refuses a 2026-07-28 directory page without them, and a reader that does not
expect them ignores them.
"""

from __future__ import annotations

__all__ = ["SKILL_ROUTES", "SkillServer"]

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..types.errors import MethodNotFound

if TYPE_CHECKING:
    from ..protocol.events import RequestReceived
    from .catalog import SkillCatalog


class SkillServer(Protocol):
    """What the skills routes read of the server."""

    @property
    def skills(self) -> SkillCatalog: ...
    @property
    def page_size(self) -> int | None: ...
    @property
    def cache_ttl_ms(self) -> int: ...
    @property
    def cache_scope(self) -> str: ...


async def list_skills(server: SkillServer, request: RequestReceived, context: object) -> dict[str, Any]:
    entries, next_cursor = _catalog(server, request).page(request.params.get("cursor"), server.page_size)
    result: dict[str, Any] = {"skills": entries, **_cache_hints(server, request)}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


async def get_skill(server: SkillServer, request: RequestReceived, context: object) -> dict[str, Any]:
    entry = _catalog(server, request).entry(request.params.get("uri"))
    return {"skill": entry, **_cache_hints(server, request)}


async def read_directory(server: SkillServer, request: RequestReceived, context: object) -> dict[str, Any]:
    params = request.params
    children, next_cursor = _catalog(server, request).children(
        params.get("uri"), params.get("cursor"), server.page_size
    )
    result: dict[str, Any] = {"resources": children, **_cache_hints(server, request)}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


def _catalog(server: SkillServer, request: RequestReceived) -> SkillCatalog:
    catalog = server.skills
    if not catalog:
        raise MethodNotFound(f"Method not found: {request.method} (this server publishes no skills)")
    return catalog


def _cache_hints(server: SkillServer, request: RequestReceived) -> dict[str, Any]:
    if request.era != "stateless":
        return {}
    return {"ttlMs": server.cache_ttl_ms, "cacheScope": server.cache_scope}


#: Method -> route, for the server's ``ROUTES``.
SKILL_ROUTES: dict[str, Callable[[Any, RequestReceived, Any], Awaitable[dict[str, Any]]]] = {
    "skills/list": list_skills,
    "skills/get": get_skill,
    "resources/directory/read": read_directory,
}
