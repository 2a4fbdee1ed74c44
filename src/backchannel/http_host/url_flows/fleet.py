"""URL flows across a fleet of workers: each flow stays in its owner, the others hand it their part.

A flow lives in the worker whose tool started it (its owner): the flow, its handler's
``flow.data`` (an OAuth verifier, say), its code attempts, its browser binding. None of it is
copied. With a state that spans workers, each link's token and each OAuth ``state`` begin with
the owner's worker id and a ``.`` (``FlowRegistry.named``), and a stateless-era round keeps the
owner in its sealed memo (``server/url_elicitation/rounds.py``). Then:

- **Pages.** A page request (the landing, the code's POST, the third party's callback) that
  reaches another worker goes whole to the owner (``url.page``: method, path, query, headers,
  body), which runs its own pages on it; the response comes back and is sent on as it is. The
  pages check ``Origin`` against their base URL, which every worker of a fleet shares. Owner
  gone: a 410 page saying the sign-in's server process stopped and to ask again.
- **Stateless-era rounds.** A retry that reaches another worker runs the round's flow step on
  the owner (``url.step``: ``rounds.flow_step``) and turns its JSON outcome into the round's
  result. Owner gone: the flow died with it, the tool sees ``cancel``.
- **Handshake era.** Nothing more: the tool waits in the owner, whichever worker serves the page
  completes the owner's flow, and the completion notification leaves from the owner's session.

``Sharing.start`` (``server/sharing.py``) makes the worker's ``Calls``, answers ``url.page`` with
this package and ``url.step`` with ``rounds.flow_step``, and calls ``UrlElicitations.join_fleet``.
"""

from __future__ import annotations

__all__ = ["PAGE", "STEP", "call_owner", "forward_page", "owner_elsewhere", "owner_of", "serve_forwarded"]

import asyncio
import base64
import logging
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

from ...state.calls import Calls, WorkerGone
from ..asgi import Receive, Scope, Send, read_body, send_bytes
from .markup import send_page

logger = logging.getLogger("backchannel.url_elicitation")

#: The fleet calls this package answers.
PAGE = "url.page"
STEP = "url.step"
#: How often a worker waiting on an owner checks the owner's lease: a killed owner is noticed
#: within a lease and this, rather than at the call's timeout.
_LIVENESS_EVERY = 1.0
#: A page's round trip through the owner (its handler may call the third party: a token exchange).
_PAGE_TIMEOUT = 30.0
#: The largest body a forwarded page request carries (the pages' own forms are far smaller).
_BODY_LIMIT = 16 * 1024
_WORKER_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

App = Callable[[Scope, Receive, Send], Awaitable[None]]


def owner_of(name: str) -> str | None:
    """The worker a token or an OAuth ``state`` names (``<worker>.<secret>``), or None. Only what
    a worker id can be (URL-safe, short) is taken: it comes from a URL and names a channel."""
    worker, dot, secret = name.partition(".")
    return worker if dot and secret and _WORKER_ID.fullmatch(worker) else None


def owner_elsewhere(calls: Calls | None, worker: str | None, scope: Scope, rest: str | None) -> str | None:
    """The other worker that owns the flow this page request (``rest``: its path under the
    pages' prefix) is about, or None to serve it here (no fleet, this worker ``worker``, or no
    name). ``calls``: the pages' fleet calls, None outside a fleet."""
    if calls is None or not rest:
        return None
    if rest == "callback":
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        owner = owner_of(query.get("state", ""))
    else:
        owner = owner_of(rest) if "/" not in rest else None
    return owner if owner != worker else None


async def call_owner(calls: Calls, owner: str, op: str, args: Any, *, timeout: float) -> Any:
    """``calls.call(owner, op, args)``, raising ``WorkerGone`` as soon as the owner's lease
    lapses (a ``kill -9`` while it works on the call), not only at ``timeout``."""
    answer = asyncio.ensure_future(calls.call(owner, op, args, timeout=timeout))
    try:
        while True:
            done, _ = await asyncio.wait({answer}, timeout=_LIVENESS_EVERY)
            if done:
                return answer.result()
            if not await calls.state.alive(owner):
                raise WorkerGone(f"worker {owner} stopped before it answered")
    finally:
        if not answer.done():
            answer.cancel()


async def forward_page(calls: Calls, owner: str, path: str, scope: Scope, receive: Receive, send: Send) -> None:
    """Serve this page request through its flow's owner (``path``: relative to the app's root)."""
    body = await read_body(receive, _BODY_LIMIT)
    request = {
        "method": scope["method"],
        "path": path,
        "query": scope.get("query_string", b"").decode("latin-1"),
        "headers": [[name.decode("latin-1"), value.decode("latin-1")] for name, value in scope.get("headers", [])],
        "body": base64.b64encode(body or b"").decode("ascii"),
    }
    try:
        answer = await call_owner(calls, owner, PAGE, request, timeout=_PAGE_TIMEOUT)
    except WorkerGone as exc:
        logger.warning("URL flow page %s: its owner is gone (%s)", scope["method"], exc.message)
        await send_page(
            send,
            410,
            "Sign-in stopped",
            "<p>The server process that was running this sign-in has stopped, and the sign-in stopped "
            "with it. Go back to the application and ask again: it will give you a new link.</p>",
        )
        return
    logger.debug("URL flow page %s served by its owner %s", scope["method"], owner)
    headers = [
        (name.encode("latin-1"), value.encode("latin-1"))
        for name, value in answer["headers"]
        if name.lower() != "content-length"  # send_bytes sets it
    ]
    await send_bytes(send, int(answer["status"]), base64.b64decode(answer["body"]), headers)


async def serve_forwarded(app: App, request: Any) -> dict[str, Any]:
    """Run ``app`` (this worker's pages, serving here) on a request another worker forwarded,
    and return its response as JSON data: ``status``, ``headers``, ``body`` (base64)."""
    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request["method"],
        "scheme": "http",
        "path": request["path"],
        "raw_path": request["path"].encode("latin-1"),
        "root_path": "",
        "query_string": request["query"].encode("latin-1"),
        "headers": [(name.encode("latin-1"), value.encode("latin-1")) for name, value in request["headers"]],
    }
    messages = [{"type": "http.request", "body": base64.b64decode(request["body"]), "more_body": False}]

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    response: dict[str, Any] = {"status": 500, "headers": [], "body": b""}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            response["status"] = message["status"]
            response["headers"] = [[k.decode("latin-1"), v.decode("latin-1")] for k, v in message.get("headers", [])]
        elif message["type"] == "http.response.body":
            response["body"] += message.get("body", b"")

    await app(scope, receive, send)
    return {**response, "body": base64.b64encode(response["body"]).decode("ascii")}
