"""The client's cache of results, as 2026-07-28 ``caching.mdx`` says.

What is cached: the results of ``server/discover``, the four lists, ``resources/read`` and the
skills extension's ``skills/list`` and ``skills/get`` (SEP-2640 makes both cacheable results),
by method and the parameters that change the answer (everything but ``_meta``: the
``cursor`` of a page, the ``uri`` of a read), fresh for the ``ttlMs`` the server gave
(absent, zero or negative: not cached at all). What never is: a result reached by
retrying a request with ``inputResponses`` or ``requestState`` (multi round-trip), which
depends on answers the key does not hold. What drops it: the notification that says it
changed (``notifications/tools/list_changed`` drops every page of ``tools/list``,
``notifications/resources/updated`` the reads of that URI), at once.

Where it lives: a ``ResultCache``, the one small interface a store implements (bytes under a
key, fresh for a while, in groups dropped together); ``MemoryCache`` is the in-process
default, one per client. One store may serve many clients: entries are keyed by the server
they came from and the revision spoken, and a ``cacheScope: "private"`` result is keyed by
the client's principal too, so it never reaches a client acting for someone else; a
``"public"`` one is shared by every client of that server. ``ClientCache`` is what the
``Client`` holds: keys, freshness, scope, and the race between a notification and an answer
already on its way.
"""

from __future__ import annotations

__all__ = [
    "CACHEABLE_METHODS",
    "MAX_TTL_SECONDS",
    "ClientCache",
    "MemoryCache",
    "ResultCache",
    "cache_groups_dropped_by",
    "server_identity",
]

import hashlib
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol, runtime_checkable

import msgspec

logger = logging.getLogger("backchannel.client")

#: The methods whose results carry caching hints (caching.mdx, "Cacheable Results").
CACHEABLE_METHODS = frozenset(
    (
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "skills/list",
        "skills/get",
    )
)
#: A longer ``ttlMs`` is cut to a day: a server's typo must not pin a result for weeks.
MAX_TTL_SECONDS = 24 * 60 * 60.0
#: Which lists each ``list_changed`` makes stale. Templates have no notification of their own,
#: so a change to the resources drops them too; nor have skills, whose files are resources.
_LISTS_DROPPED_BY = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list", "skills/list", "skills/get"),
}
_RETRY_FIELDS = ("inputResponses", "requestState")
_encode = msgspec.json.Encoder(order="sorted").encode
_decode = msgspec.json.Decoder(dict[str, Any]).decode


@runtime_checkable
class ResultCache(Protocol):
    """Where cached results live; implement it to keep them elsewhere (shared between clients,
    in Redis...). Keys and groups are opaque strings; values are encoded results.

    ``get`` answers only a value still fresh (None otherwise). ``put`` keeps ``value`` for
    ``ttl`` seconds, in ``group``; ``drop`` forgets every value of ``group`` at once. A store
    that fails (raises) costs a miss, never the request: the client logs it and goes to the server.
    """

    async def get(self, key: str) -> bytes | None:
        """The stored answer under ``key``, or ``None`` when there is none or its time is up."""

    async def put(self, key: str, value: bytes, *, ttl: float, group: str) -> None:
        """Keep ``value`` under ``key`` for ``ttl`` seconds, in ``group`` (what ``drop`` forgets together)."""

    async def drop(self, group: str) -> None:
        """Forget every answer kept in ``group``: called when the server says that list or resource changed."""


class CacheSettings(Protocol):
    """What ``ClientCache.for_transport`` reads of the client's ``CacheOptions``."""

    @property
    def store(self) -> ResultCache | Literal["memory"] | None: ...

    @property
    def principal(self) -> str | None: ...


class MemoryCache:
    """The in-process ``ResultCache``: at most ``max_entries`` values, the least recently used
    going first; ``clock`` (seconds, ``time.monotonic`` by default; a ``FakeClock`` in tests)
    decides freshness. Share one between clients by passing it to each (``Client(cache=...)``)."""

    def __init__(self, *, max_entries: int = 1024, clock: Callable[[], float] = time.monotonic) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, not {max_entries}")
        self._max = max_entries
        self._clock = clock
        self._values: OrderedDict[str, tuple[bytes, float, str]] = OrderedDict()
        self._groups: dict[str, set[str]] = {}

    def __len__(self) -> int:
        return len(self._values)

    async def get(self, key: str) -> bytes | None:
        """The stored answer under ``key``, or ``None`` when there is none or its time is up."""
        found = self._values.get(key)
        if found is None:
            return None
        value, expires, _ = found
        if self._clock() >= expires:  # fresh while now < received + ttl (caching.mdx)
            self._forget(key)
            return None
        self._values.move_to_end(key)
        return value

    async def put(self, key: str, value: bytes, *, ttl: float, group: str) -> None:
        """Keep ``value`` under ``key`` for ``ttl`` seconds, in ``group``; past ``max_entries``,
        the least recently used go."""
        self._forget(key)
        self._values[key] = (value, self._clock() + ttl, group)
        self._groups.setdefault(group, set()).add(key)
        while len(self._values) > self._max:
            self._forget(next(iter(self._values)))

    async def drop(self, group: str) -> None:
        """Forget every answer kept in ``group``."""
        for key in self._groups.pop(group, ()):
            self._values.pop(key, None)

    def _forget(self, key: str) -> None:
        found = self._values.pop(key, None)
        if found is not None:
            members = self._groups.get(found[2])
            if members is not None:
                members.discard(key)
                if not members:
                    del self._groups[found[2]]


def server_identity(transport: object) -> tuple[str | None, str | None]:
    """Who a transport reaches and as whom: (the server, a digest of the credentials it sends).

    The server is the URL (HTTP) or the command line (stdio); None for any other transport,
    whose entries are then this client's alone. The credentials are a static ``Authorization``
    header; None when there is none, or when an ``auth`` flow may change them mid-session.
    """
    url = getattr(transport, "url", None)
    if isinstance(url, str):
        headers = getattr(transport, "headers", None)
        authorization = headers.get("authorization") if isinstance(headers, Mapping) else None
        flows = (getattr(transport, "auth", None), getattr(getattr(transport, "http", None), "auth", None))
        if any(hasattr(flow, "auth_flow") for flow in flows) or not isinstance(authorization, str):
            return url, None  # an httpx ``Auth`` sets the credentials per request: unknown here
        return url, "token:" + hashlib.sha256(authorization.encode()).hexdigest()
    command = getattr(transport, "command", None)
    if isinstance(command, str):
        args, cwd = getattr(transport, "args", ()), getattr(transport, "cwd", None)
        return _encode(["stdio", command, list(args), str(cwd) if cwd is not None else None]).decode(), None
    return None, None


def cache_groups_dropped_by(method: str, params: Mapping[str, Any]) -> tuple[tuple[str, str | None], ...]:
    """The (method, uri) groups a notification makes stale (uri only for ``resources/read``)."""
    lists = _LISTS_DROPPED_BY.get(method)
    if lists is not None:
        return tuple((name, None) for name in lists)
    if method == "notifications/resources/updated" and isinstance(uri := params.get("uri"), str):
        return (("resources/read", uri),)
    return ()


class ClientCache:
    """The cache as one ``Client`` uses it; ``store`` None turns it off.

    ``server`` names the server in every key (None: a name of this client's own, so nothing
    is shared); ``principal`` keys its private results (None: one of this client's own, so
    they are never shared); ``version`` says which revision the client speaks now.
    """

    def __init__(
        self,
        store: ResultCache | None,
        *,
        server: str | None,
        principal: str | None,
        version: Callable[[], str | None],
    ) -> None:
        self.store = store
        self._server = server if server is not None else "client:" + secrets.token_hex(8)
        self._principal = principal if principal is not None else "client:" + secrets.token_hex(8)
        self._version = version
        #: Bumped by every drop: an answer sent for before it is not kept (it may predate the change).
        self._drops = 0
        self._warned = False

    @classmethod
    def for_transport(cls, transport: object, options: CacheSettings, version: Callable[[], str | None]) -> ClientCache:
        """The cache of a client on ``transport`` with ``options`` (a ``CacheOptions``): keyed by the
        server it reaches, private results by ``options.principal`` or else the credentials it sends."""
        server, credentials = server_identity(transport)
        principal = options.principal if options.principal is not None else credentials
        store = MemoryCache() if options.store == "memory" else options.store
        return cls(store, server=server, principal=principal, version=version)

    def stamp(self) -> int:
        """Before sending a request: hand the stamp to ``keep`` with its result."""
        return self._drops

    async def fresh(self, method: str, params: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """A fresh cached result for this request, or None (send it)."""
        if self.store is None or method not in CACHEABLE_METHODS or _retried(params):
            return None
        request = self._request_key(method, params)
        for scope in ("private", "public"):
            try:
                value = await self.store.get(self._key(scope, request))
                if value is not None:
                    return _decode(value)
            except Exception:  # a store that fails, or keeps what is no result of ours: a miss
                self._warn("reading")
                return None
        return None

    async def keep(self, method: str, params: Mapping[str, Any] | None, result: dict[str, Any], stamp: int) -> None:
        """Keep ``result`` while the server says it is fresh. Call it only with a result the
        request itself got, never one of a multi round-trip retry (caching.mdx, "Cache Key")."""
        if self.store is None or method not in CACHEABLE_METHODS or _retried(params) or stamp != self._drops:
            return
        ttl = _ttl_seconds(result)
        if ttl <= 0 or result.get("resultType", "complete") != "complete":
            return
        # Without a scope, the safe reading: private (shared with nobody else).
        scope = "public" if result.get("cacheScope") == "public" else "private"
        request = self._request_key(method, params)
        try:
            await self.store.put(self._key(scope, request), _encode(result), ttl=ttl, group=self._group(method, params))
        except Exception:
            self._warn("writing")

    async def drop(self, groups: tuple[tuple[str, str | None], ...]) -> None:
        """Forget every cached result of ``groups`` (from ``cache_groups_dropped_by``)."""
        if self.store is None or not groups:
            return
        self._drops += 1
        for method, uri in groups:
            try:
                await self.store.drop(self._group(method, {"uri": uri} if uri is not None else None))
            except Exception:
                self._warn("dropping from")

    async def forget_pages(self, method: str, params: Mapping[str, Any] | None) -> None:
        """A list request with a cursor failed: its cursor may be void, so every cached page
        of the list goes (caching.mdx, "Interaction with Pagination")."""
        if method in CACHEABLE_METHODS and method.endswith("/list") and params and "cursor" in params:
            await self.drop(((method, None),))

    def _request_key(self, method: str, params: Mapping[str, Any] | None) -> list[Any]:
        mattering = {k: v for k, v in (params or {}).items() if k != "_meta"}
        return [self._server, self._version(), method, mattering]

    def _key(self, scope: str, request: list[Any]) -> str:
        # A JSON array, so that no server name or principal can spell another key.
        return _encode([scope, self._principal if scope == "private" else None, *request]).decode()

    def _group(self, method: str, params: Mapping[str, Any] | None) -> str:
        uri = params.get("uri") if method == "resources/read" and params else None
        return _encode([self._server, method, uri]).decode()

    def _warn(self, doing: str) -> None:
        if not self._warned:  # once: a broken store must not flood the log with one line per request
            self._warned = True
            logger.warning("the result cache failed while %s it; going to the server instead", doing, exc_info=True)


def _retried(params: Mapping[str, Any] | None) -> bool:
    return params is not None and any(field in params for field in _RETRY_FIELDS)


def _ttl_seconds(result: Mapping[str, Any]) -> float:
    ttl = result.get("ttlMs")
    if isinstance(ttl, bool) or not isinstance(ttl, int | float):
        return 0.0  # absent: immediately stale (caching.mdx)
    return min(ttl / 1000, MAX_TTL_SECONDS)
