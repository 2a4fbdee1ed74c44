"""``RateLimit``: a token bucket per caller; a request over the limit is refused with -31429."""

from __future__ import annotations

__all__ = ["RateLimit"]

import math
import time
from collections.abc import Callable, Collection, Hashable
from typing import Any

from ..composition.middleware import Call, CallNext
from ..runtime.ratelimit import KeyedBuckets
from ..types.errors import RateLimited
from .calls import caller_key

#: What is never counted: the requests that open a session or ask whether the server is there.
EXEMPT = frozenset(("initialize", "server/discover", "ping"))


class RateLimit:
    """Middleware: at most ``rate`` requests a second from each caller on average, in bursts of
    up to ``burst`` (default: ``rate``, at least 1).

    A caller is who ``key(call)`` names (default ``caller_key``: the principal, else the
    handshake-era session, else the address of an anonymous HTTP caller, else the connection);
    a key of None is not limited. Every request received counts (a stateless-era retry too)
    except the methods in ``exempt``. A request over the limit is answered with ``RateLimited``
    (-31429, as the server's completion limit answers) whose ``data.retryAfterMs`` says when the
    next one will be let through; over stateless-era HTTP the answer is a 429 with
    ``Retry-After``. The buckets live in this process: N workers each allow the rate; an idle
    caller's bucket is forgotten once full (``KeyedBuckets``)."""

    def __init__(
        self,
        rate: float,
        burst: float | None = None,
        *,
        key: Callable[[Call], Hashable | None] = caller_key,
        exempt: Collection[str] = EXEMPT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.buckets = KeyedBuckets(rate, max(1.0, rate) if burst is None else burst, clock=clock)
        self.key = key
        self.exempt = frozenset(exempt)

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        if call.kind == "request" and call.direction == "received" and call.method not in self.exempt:
            caller = self.key(call)
            if caller is not None:
                bucket = self.buckets.bucket(caller)
                if not bucket.allow():
                    wait_ms = max(1, math.ceil(bucket.retry_after() * 1000))
                    rate, burst = self.buckets.rate, self.buckets.burst
                    raise RateLimited(
                        f"Too many requests: at most {rate:g} a second (bursts of {burst:g}) per caller; "
                        f"try again in {wait_ms} ms",
                        data={"retryAfterMs": wait_ms, "rate": rate, "burst": burst},
                    )
        return await call_next(call)
