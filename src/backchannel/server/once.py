"""``ctx.once`` in the stateless era: work a handler must not repeat across its re-runs.

A stateless-era handler runs again from the top on every retry (``mrtr.py``), and a client may
replay an older ``requestState``. ``run_once`` runs the work once per request and name: the
first run claims a key in the server's ``StateStore`` and keeps the result there for as long as
any state that can replay it is valid (a state never outlives those results); every re-run and
replay reads it back. Results are bounded per caller (a bucket) and for all callers together
(the pool ``ALL_ONCE``), apart from tasks' own budgets, so neither can fill the store for the
other. A retry whose request began before the store lost its data is refused
(``state/generation.py``): never a second run.
"""

from __future__ import annotations

__all__ = ["ALL_ONCE", "StateLost", "run_once"]

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

import msgspec

from ..state.sealer import StateSealer
from ..types.errors import InvalidParams
from .mrtr import InputRequired, Round
from .state import StateStore, StoreFull

_encode = msgspec.json.Encoder(order="sorted").encode
_decode = msgspec.json.decode
T = TypeVar("T")
#: The pool that counts every ``ctx.once`` result kept, whoever's.
ALL_ONCE = "once:{all}"


class StateLost(InvalidParams):
    """A ``requestState`` relies on ``ctx.once`` results the state store no longer holds (-32602):
    the work is not run again; the client starts the request anew."""


_ONCE_GRACE = 5.0  # a once result outlives the last state that can replay it by this much (clock skew)
_ONCE_WAIT = 10.0  # how long a replay waits for the same work running elsewhere before "retry later"


async def _check_generation(store: StateStore, sealer: StateSealer, round_: Round) -> None:
    """Refuse a retry whose request began before the store lost its data (``StateLost``)."""
    generation = await sealer.generation.now(store)  # a shared store's read each time: Redis may be back empty
    if round_.first:  # nothing sealed yet: the request begins in the store's generation of now
        round_.begin_in(generation)
    elif round_.generation != generation:
        raise StateLost(
            "requestState dates from before the server's state store lost its data (a restart without "
            "persistence?): whether ctx.once work already ran cannot be told, so nothing was run; start the "
            "request again"
        )


async def run_once(
    store: StateStore,
    sealer: StateSealer,
    round_: Round,
    name: str,
    work: Callable[[], Awaitable[T] | T],
    *,
    bucket: str,
    limit: int,
    limit_total: int = 50_000,
    who: str = "this caller",
) -> T:
    """``ctx.once`` in the stateless era: run ``work`` once per request lineage and ``name``.

    The first run claims the key in ``store`` (atomic set-if-absent, counted in the
    caller's ``bucket`` of at most ``limit`` keys, and in the pool of every caller's
    results, ``ALL_ONCE``, of at most ``limit_total``) and stores the result; every re-run
    and replay reads it back and extends its life to that of the state it will seal.
    A full bucket or pool raises ``StoreFull`` (-32603) naming which (``who`` names the
    bucket's owner), never a second run; a retry whose request began before the store lost
    its data raises ``StateLost`` (-32602). A result that is not JSON data raises ``TypeError`` here, on
    this run and on every replay, without running ``work`` again. When ``work`` raises,
    nothing is kept and a retry runs it.
    """
    await _check_generation(store, sealer, round_)
    # In the caller's bucket's slot (it carries a hash tag): one Redis Cluster node for both.
    key = f"{bucket}:{round_.memo['lineage']}:{name}" if bucket else f"once:{round_.memo['lineage']}:{name}"
    ttl = sealer.ttl + _ONCE_GRACE
    waited = 0.0
    pause = 0.005
    while True:
        added = await store.add(key, {"pending": True}, ttl=ttl, bucket=bucket, limit=limit)
        if added == "full":
            if await store.full():
                raise StoreFull(
                    "the server's state store is full (its own bound of keys): a limit of the server, not of "
                    "this caller; nothing was run: retry later",
                    data={"scope": "server"},
                )
            raise StoreFull(
                f"the server's exactly-once store is full for this caller: {who} may keep {limit} ctx.once results "
                f"(each until the requestState that can replay it expires, at most {sealer.ttl:g} s); nothing was "
                "run: retry when earlier requests have finished or expired",
                data={"limit": limit, "scope": "caller", "retryAfterSeconds": sealer.ttl},
            )
        if added == "added":
            if round_.relies_on(name):
                # This request's states say the result was kept, and it is gone (evicted, lost).
                await store.delete(key)
                raise StateLost(
                    f"the result of ctx.once({name!r}) this requestState relies on is gone from the server's state "
                    "store, so nothing was run again; start the request again"
                )
            if await store.claim(ALL_ONCE, key, ttl=ttl, limit=limit_total) == "full":
                await store.delete(key)
                raise StoreFull(
                    f"the server keeps {limit_total} ctx.once results, the most it keeps for all callers together: "
                    f"a limit of the server, not of this caller; nothing was run: retry later (results expire "
                    f"within {sealer.ttl:g} s)",
                    data={"limit": limit_total, "scope": "server", "retryAfterSeconds": sealer.ttl},
                )
            break
        held = await store.get(key)
        if held is None:
            continue  # the work failed and was released meanwhile: claim it afresh
        if held.get("pending"):
            # The same work runs for a concurrent replay (here or on another worker).
            if waited >= _ONCE_WAIT:
                raise InputRequired(f"once:{name}", None)  # not yet: the client retries with its state
            await asyncio.sleep(pause)
            waited += pause
            pause = min(pause * 2, 0.25)
            continue
        await _keep(store, key, held, ttl, limit_total)
        round_.keep_until(name, sealer.now() + sealer.ttl)
        return cast(T, _kept(name, held))
    try:
        outcome = work()
        result = await outcome if inspect.isawaitable(outcome) else outcome
    except BaseException:
        await store.delete(key)
        await store.release(ALL_ONCE, key)
        raise
    held = _to_keep(result)
    await _keep(store, key, held, ttl, limit_total)
    round_.keep_until(name, sealer.now() + sealer.ttl)
    return cast(T, _kept(name, held))


async def _keep(store: StateStore, key: str, held: dict[str, Any], ttl: float, limit_total: int) -> None:
    """Keep a result ``ttl`` seconds from now, counted that long among every caller's (a
    result kept already is never refused for a full pool: it is only counted again)."""
    await store.put(key, held, ttl=ttl)
    await store.claim(ALL_ONCE, key, ttl=ttl, limit=limit_total)


def _to_keep(result: Any) -> dict[str, Any]:
    """What the store keeps for a result: the value when it is JSON data (and reads back
    equal, so a replay returns what the first run returned), otherwise the refusal."""
    try:
        copy = _decode(_encode(result))
        same = bool(copy == result)  # a tuple, dataclass or NaN reads back different
    except (TypeError, ValueError, msgspec.EncodeError):
        same = False
    if not same:
        return {"notJson": type(result).__name__}
    return {"value": copy}


def _kept(name: str, held: dict[str, Any]) -> Any:
    if "notJson" in held:
        raise TypeError(
            f"ctx.once({name!r}) returned a {held['notJson']}, which the exactly-once store cannot keep; "
            "return JSON data (dict, list, str, int, float, bool or None) and rebuild objects from it. "
            "The work ran once and is not run again for this request."
        )
    return held.get("value")
