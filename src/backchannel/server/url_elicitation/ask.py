"""The handler's side of URL elicitation: ``ctx.elicit_url`` and the ``-32042`` error.

Both eras send the person the flow's link over MCP and wait (bounded) for the browser.
When wrong codes use a link up, the flow is not over: the server gives it a fresh link
(``FlowRegistry.reissue``) and sends that to the person who asked, in the same call, as
long as the flow may have one; a fresh link the server's own code asks for (``reissue``
from a tool or a support page, say) is sent the same way. Handshake era:
``elicitation/create`` again, with the same ``elicitationId`` (it is the same elicitation:
one completion notification ends it) and the new URL and code. Stateless era: the next
retry is answered with an ``InputRequiredResult`` asking the fresh link under a key of its
own, so the person's consent to it is an answer of its own.

The person is never stranded (the spec's manual controls): each link offers, in ``_meta``
(``types.elicitation.URL_FLOW_META``, docs/protocol-conventions.md), the words the person may say
while the flow runs: ``done``, ``cancel`` and, while the flow may have one, ``fresh-link``.
A client that offers them holds its handshake-era answer until the person speaks (so the
server also watches the flow while it waits for that answer), or, in the stateless era,
retries with the word in its request's ``_meta``. ``cancel`` ends the flow (the tool sees
``cancel``); ``fresh-link`` sends a fresh link for the same flow, in the same call;
``done`` is checked against the flow: when it has not completed, the same link is asked
again with a note saying so. A client that knows none of this answers as the spec says and
nothing changes for it.

The handshake era is here; the stateless era's rounds are in ``rounds.py``, and what the person
may say, and what each answer does, in ``consent.py`` (the same in both eras).
"""

from __future__ import annotations

__all__ = ["NOT_FINISHED", "NO_FRESH_LINK", "elicit_url", "url_elicitation_required"]

import asyncio
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ...http_host.url_flows.flows import Action, UrlFlow, UrlFlowHandler
from ...protocol.capabilities import require
from ...types.elicitation import url_flow_heard, url_flow_offer
from ...types.errors import RequestTimeout, UrlElicitationRequired
from ..elicitation import Elicited
from .consent import NO_FRESH_LINK, NOT_FINISHED, NOTES, after_word, consent, offered
from .rounds import stateless_round

if TYPE_CHECKING:
    from ...http_host.url_flows.pages import UrlElicitations
    from ..context import Context


def url_elicitation_required(
    elicitations: Iterable[UrlFlow | Mapping[str, Any]],
    message: str = "This request needs you to complete a step in your browser first.",
) -> UrlElicitationRequired:
    """The ``-32042`` error (handshake era) listing the URL elicitations to finish before a retry.

    Each is a ``UrlFlow`` or ready ``elicitation/create`` params; all must be URL mode
    with an ``elicitationId`` (EL-27, EL-28)."""
    listed: list[dict[str, Any]] = []
    for item in elicitations:
        params = item.elicitation(with_id=True) if isinstance(item, UrlFlow) else dict(item)
        if params.get("mode") != "url" or not params.get("elicitationId") or not params.get("url"):
            raise ValueError("-32042 lists only URL-mode elicitations with an elicitationId and a url")
        listed.append(params)
    if not listed:
        raise ValueError("-32042 must list at least one elicitation")
    return UrlElicitationRequired(message, data={"elicitations": listed})


async def elicit_url(
    ctx: Context,
    message: str,
    url: str | None = None,
    *,
    flow: UrlFlowHandler | None = None,
    timeout: float | None = None,
    via: str = "request",
) -> Elicited[None]:
    """``ctx.elicit_url``: run a URL flow; ``accept`` once it completed, else ``decline``/``cancel``.

    ``flow`` runs after the confirmation page (OAuth, say); ``url`` sends the person
    to a page of your own instead, which must call ``complete(elicitation_id)``.
    ``timeout`` bounds the whole wait in the handshake era, fresh links included
    (default: the server's ``elicitation_timeout``). ``via="error"`` answers a
    handshake-era call with ``-32042`` (the client retries it once the flow is done,
    and a retry after a used-up link starts a new flow); in the stateless era both ways
    are the same MRTR rounds. Raises ``MissingCapability`` (-32021) when the client did
    not declare ``elicitation.url``: nothing is sent then.
    """
    if via not in ("request", "error"):
        raise ValueError(f"via must be 'request' or 'error', not {via!r}")
    if flow is not None and url is not None:
        raise ValueError("give either url (your own page) or flow (the confirmation page and a handler), not both")
    require(ctx.client_capabilities, "elicitation.url")
    # The pages (and their HTML and ASGI helpers) load when a tool first sends someone to
    # one, not when every server starts.
    from ...http_host.url_flows.pages import UrlElicitations

    manager = UrlElicitations.of(ctx.server)
    if url is None:
        await manager.serve_pages()  # no address configured: a loopback side listener, started once
    if ctx.era == "stateless":
        return await stateless_round(ctx, manager, message, url, flow)
    owner = ctx.principal
    if via == "error":
        started = manager.start(message, owner=owner, handler=flow, url=url, connection=ctx.connection)
        raise url_elicitation_required([started])
    started = manager.start(
        message, owner=owner, handler=flow, url=url, connection=ctx.connection, related=ctx.request_id
    )
    wait = ctx.server.elicitation_timeout if timeout is None else timeout
    try:
        refused = await _handshake_rounds(ctx, manager, started, wait)
    except RequestTimeout:
        manager.fail(started, "cancel")
        return Elicited("cancel")
    except BaseException:
        manager.fail(started, "cancel")
        raise
    if refused is not None:
        return Elicited(refused)
    if not started.done:
        manager.fail(started, "cancel")
    return Elicited(started.outcome or "cancel")


async def _handshake_rounds(ctx: Context, manager: UrlElicitations, flow: UrlFlow, wait: float | None) -> Action | None:
    """Send the link and wait for the browser, again with each fresh link or after each word
    of the person's, all within ``wait``; the person's ``decline``/``cancel``, or None once
    waiting is over."""
    loop = asyncio.get_running_loop()
    deadline = None if wait is None else loop.time() + wait

    def left() -> float | None:
        return None if deadline is None else max(0.0, deadline - loop.time())

    note: str | None = None
    while True:
        sent = flow.links
        params = flow.elicitation(with_id=True, note=NOTES.get(note or ""))
        params["_meta"] = url_flow_offer(offered(manager, flow))
        answer = await _answer_unless_changed(ctx, manager, flow, params, left)
        if answer is not None:
            refused = consent(manager, flow, answer)
            if refused is not None:
                return refused
            word, _ = url_flow_heard(answer.get("_meta"))
            if word is not None:
                note = after_word(manager, flow, word)
                if flow.done:
                    return None
                continue
            await manager.wait(flow, left(), link=sent)  # accept is only consent: now the browser part
        note = None
        if flow.done:
            return None
        if flow.links == sent:  # not replaced by someone else's reissue: used up, or out of time
            if not flow.spent:
                return None
            if not manager.reissue(flow):
                await manager.wait(flow, left())  # no fresh link left: the flow waits out its time
                return None


async def _answer_unless_changed(
    ctx: Context,
    manager: UrlElicitations,
    flow: UrlFlow,
    params: dict[str, Any],
    left: Callable[[], float | None],
) -> Mapping[str, Any] | None:
    """The person's answer to ``params``; None when the flow moved first (completed, its link
    used up or replaced, or out of time): then the question is withdrawn (cancelled on the
    wire). That happens to a client that holds its answer while the person is in the
    browser, to carry their word; others answer at once, before the flow can move."""
    sent = flow.links
    asking = asyncio.ensure_future(ctx.request_input("elicitation/create", params, "elicitation.url", timeout=left()))
    moved = asyncio.ensure_future(manager.wait(flow, left(), link=sent))
    try:
        await asyncio.wait({asking, moved}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        moved.cancel()
        if not asking.done():
            asking.cancel()
    if not asking.cancelled() and asking.done():
        return asking.result()
    await asyncio.wait({asking})  # the withdrawal is on the wire before anything else is asked
    return None
