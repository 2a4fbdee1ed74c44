"""The I/O-bound workload's three tools, as plain async functions: one body for every Python server.

``io_server.py`` (backchannel) and ``peers/fastmcp_io_server.py`` (FastMCP) register these same
functions, so the two servers differ only in the framework around them. The shape is TM Dev Lab's
v2 benchmark's, as its public description gives it (the code here is ours):

- ``search_products``: the API's ``GET /products/search`` and Redis ``ZREVRANGE bench:popular 0 9``,
  side by side;
- ``get_user_cart``: Redis ``HGETALL bench:cart:USER``, then the API's ``GET /products/ID`` of the
  cart's first item and Redis ``LRANGE bench:history:USER 0 4``, side by side;
- ``checkout``: the API's ``POST /cart/calculate`` and, side by side, one Redis pipeline
  (``INCR`` of a rate counter, ``RPUSH`` of the order to the history, ``ZINCRBY`` of the popularity).

The clients are made once per process, at the first call, in the worker's own event loop (the
fleet's workers are forked: a connection made before the fork would be shared by all of them), and
reused by every call: a client made per call is the classic mistake, a new TCP connection and pool
each time. Chosen for speed (``io_bench.py --profile-clients`` measures the alternatives):

- Redis: redis-py's asyncio client, which parses replies with hiredis when it is installed;
- HTTP: aiohttp's ``ClientSession``, its connections kept alive in one pool.

``IO_HTTP_CLIENT=httpx2`` and ``IO_REDIS_PARSER=python`` select the alternatives (the profile).
"""

from __future__ import annotations

__all__ = ["API_URL", "REDIS_URL", "Clients", "checkout", "get_user_cart", "search_products", "seed"]

import asyncio
import contextvars
import os
import time
from typing import Any

import orjson

API_URL = os.environ.get("IO_API_URL", "http://127.0.0.1:8100")
REDIS_URL = os.environ.get("IO_REDIS_URL", "redis://127.0.0.1:6379/0")
SERVER_TYPE = os.environ.get("IO_SERVER_TYPE", "python")
USERS = 1000


class Clients:
    """One Redis client and one HTTP client per process, made at the first call (``get``)."""

    _made: Clients | None = None

    def __init__(self) -> None:
        import redis.asyncio as aioredis

        kind = os.environ.get("IO_HTTP_CLIENT", "aiohttp")
        options: dict[str, Any] = {"max_connections": 128, "decode_responses": True}
        if os.environ.get("IO_REDIS_PARSER") == "python":
            from redis._parsers import _AsyncRESP2Parser

            options["parser_class"] = _AsyncRESP2Parser
        pool = aioredis.BlockingConnectionPool.from_url(REDIS_URL, timeout=10, **options)
        self.redis = aioredis.Redis(connection_pool=pool)
        self.kind = kind
        if kind == "httpx2":
            import httpx2

            limits = httpx2.Limits(max_connections=128, max_keepalive_connections=128)
            self.httpx = httpx2.AsyncClient(base_url=API_URL, limits=limits, timeout=10.0)
        else:
            import aiohttp

            connector = aiohttp.TCPConnector(limit=128, keepalive_timeout=60, ttl_dns_cache=None)
            self.aiohttp = aiohttp.ClientSession(API_URL, connector=connector, json_serialize=_dumps)

    @classmethod
    def get(cls) -> Clients:
        own = PER_CALL.get()
        if own is not None:  # the profile's "a client made per call"
            return own
        if cls._made is None:  # no await between the test and the assignment: one per process
            cls._made = cls()
        return cls._made

    async def close(self) -> None:
        await self.redis.aclose()
        await (self.httpx.aclose() if self.kind == "httpx2" else self.aiohttp.close())

    async def get_json(self, path: str, params: dict[str, str] | None = None) -> Any:
        if self.kind == "httpx2":
            response = await self.httpx.get(path, params=params)
            response.raise_for_status()
            return orjson.loads(response.content)
        async with self.aiohttp.get(path, params=params) as reply:
            reply.raise_for_status()
            return orjson.loads(await reply.read())

    async def post_json(self, path: str, body: Any) -> Any:
        data = orjson.dumps(body)
        headers = {"content-type": "application/json"}
        if self.kind == "httpx2":
            response = await self.httpx.post(path, content=data, headers=headers)
            response.raise_for_status()
            return orjson.loads(response.content)
        async with self.aiohttp.post(path, data=data, headers=headers) as reply:
            reply.raise_for_status()
            return orjson.loads(await reply.read())


PER_CALL: contextvars.ContextVar[Clients | None] = contextvars.ContextVar("PER_CALL", default=None)
"""Set by ``io_bench.py --profile-clients`` only: clients made for one call and closed after it."""


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


async def search_products(
    category: str = "Electronics", min_price: float = 50.0, max_price: float = 500.0, limit: int = 10
) -> str:
    """Search products by category and price range, merged with popularity data."""
    clients = Clients.get()
    params = {"category": category, "min_price": str(min_price), "max_price": str(max_price), "limit": str(limit)}
    found, popular = await asyncio.gather(
        clients.get_json("/products/search", params), clients.redis.zrevrange("bench:popular", 0, 9)
    )
    top = [int(member.split(":", 1)[1]) for member in popular]
    rank = {product_id: position + 1 for position, product_id in enumerate(top)}
    products = [
        {
            "id": p["id"],
            "sku": p["sku"],
            "name": p["name"],
            "price": p["price"],
            "rating": p["rating"],
            "popularity_rank": rank.get(p["id"], 0),
        }
        for p in found.get("products", [])
    ]
    answer = {
        "category": category,
        "total_found": found.get("total_found", 0),
        "products": products,
        "top10_popular_ids": top,
        "server_type": SERVER_TYPE,
    }
    return orjson.dumps(answer).decode()


async def get_user_cart(user_id: str = "user-00042") -> str:
    """Get a user's cart, the first item's product details and the five latest orders."""
    clients = Clients.get()
    cart = await clients.redis.hgetall(f"bench:cart:{user_id}")
    items = orjson.loads(cart.get("items", "[]"))
    first = items[0]["product_id"] if items else 1
    product, history = await asyncio.gather(
        clients.get_json(f"/products/{first}"), clients.redis.lrange(f"bench:history:{user_id}", 0, 4)
    )
    answer = {
        "user_id": user_id,
        "cart": {"items": items, "item_count": len(items), "estimated_total": float(cart.get("total", 0))},
        "first_product": {"id": product["id"], "name": product["name"], "price": product["price"]},
        "recent_history": [orjson.loads(entry) for entry in history],
        "server_type": SERVER_TYPE,
    }
    return orjson.dumps(answer).decode()


async def checkout(user_id: str = "user-00042", items: list[dict[str, int]] | None = None) -> str:
    """Check a cart out: the API prices it; Redis counts the user's rate, records the order, ranks the product."""
    clients = Clients.get()
    items = items if items is not None else [{"product_id": 42, "quantity": 2}, {"product_id": 1337, "quantity": 1}]
    number = int(user_id.rsplit("-", 1)[-1]) if user_id.rsplit("-", 1)[-1].isdigit() else 42
    now = int(time.time())
    order = orjson.dumps({"order_id": f"ORD-{user_id}-{now}", "items": items, "ts": now}).decode()
    product_id = items[0]["product_id"] if items else 1

    async def record() -> list[Any]:
        pipe = clients.redis.pipeline(transaction=False)
        pipe.incr(f"bench:ratelimit:user-{number % 100:05d}")
        pipe.rpush(f"bench:history:{user_id}", order)
        pipe.zincrby("bench:popular", 1, f"product:{product_id}")
        return await pipe.execute()  # type: ignore[no-any-return]

    priced, (rate, _, _) = await asyncio.gather(
        clients.post_json("/cart/calculate", {"user_id": user_id, "items": items}), record()
    )
    answer = {
        "order_id": priced.get("order_id"),
        "user_id": user_id,
        "total": priced.get("total", 0),
        "items_count": len(items),
        "rate_limit_count": rate,
        "status": "confirmed",
        "server_type": SERVER_TYPE,
    }
    return orjson.dumps(answer).decode()


def seed(url: str) -> None:
    """Flush the data keys and lay them out anew (before each server's turn): 1,000 users with a
    cart and five orders each, and 1,000 ranked products."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        stale = list(client.scan_iter("bench:*", count=1000))
        for start in range(0, len(stale), 1000):
            client.delete(*stale[start : start + 1000])
        pipe = client.pipeline(transaction=False)
        pipe.zadd("bench:popular", {f"product:{i}": (i * 7919) % 1000 for i in range(1, 1001)})
        for n in range(USERS):
            user = f"user-{n:05d}"
            items = [{"product_id": (n * 31) % 100000 + 1, "quantity": 1 + n % 3}, {"product_id": n + 1, "quantity": 1}]
            pipe.hset(f"bench:cart:{user}", mapping={"items": orjson.dumps(items).decode(), "total": str(10.0 + n)})
            orders = [orjson.dumps({"order_id": f"ORD-{user}-{k}", "items": items, "ts": k}).decode() for k in range(5)]
            pipe.rpush(f"bench:history:{user}", *orders)
        pipe.execute()
    finally:
        client.close()
