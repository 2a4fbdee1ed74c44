"""The handler's side of URL elicitation: ``ctx.elicit_url`` and the ``-32042`` error.

Both eras send the person the flow's link over MCP and wait (bounded) for the browser.
When wrong codes use a link up, the flow is not over: the server gives it a fresh link
(``FlowRegistry.reissue``) and sends that to the person who asked, in the same call, as
long as the flow may have one; a fresh link the server's own code asks for (``reissue``
from a tool or a support page, say) is sent the same way. Handshake era: ``elicitation/create`` again, with the same
``elicitationId`` (it is the same elicitation: one completion notification ends it) and
the new URL and code. Stateless era: the next retry is answered with an
``InputRequiredResult`` asking the fresh link under a key of its own, so the person's
consent to it is an answer of its own.
"""

from __future__ import annotations

__all__ = ["elicit_url", "url_elicitation_required"]

import asyncio
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ...protocol.capabilities import require
from ...types.errors import InvalidParams, MissingCapability, RequestTimeout, UrlElicitationRequired
from ..elicitation import Elicited
from ..mrtr import InputRequired
from .flows import Action, UrlFlow, UrlFlowHandler

if TYPE_CHECKING:
    from ..context import Context
    from .pages import UrlElicitations


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
    from .pages import UrlElicitations

    manager = UrlElicitations.of(ctx.server)
    if url is None:
        await manager.serve_pages()  # no address configured: a loopback side listener, started once
    if ctx.era == "stateless":
        return await _stateless_round(ctx, manager, message, url, flow)
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
    """Send the link and wait for the browser, again with each fresh link, all within
    ``wait``; the person's ``decline``/``cancel``, or None once waiting is over."""
    loop = asyncio.get_running_loop()
    deadline = None if wait is None else loop.time() + wait

    def left() -> float | None:
        return None if deadline is None else max(0.0, deadline - loop.time())

    while True:
        sent = flow.links
        answer = await ctx.request_input(
            "elicitation/create", flow.elicitation(with_id=True), "elicitation.url", timeout=left()
        )
        refused = _consent(manager, flow, answer)
        if refused is not None:
            return refused
        await manager.wait(flow, left(), link=sent)  # accept is only consent: now the browser part
        if flow.done:
            return None
        if flow.links == sent:  # not replaced by someone else's reissue: used up, or out of time
            if not flow.spent:
                return None
            if not manager.reissue(flow):
                await manager.wait(flow, left())  # no fresh link left: the flow waits out its time
                return None


def _consent(manager: UrlElicitations, flow: UrlFlow, answer: Mapping[str, Any]) -> Action | None:
    """The person's answer to a link: None to go on (accept), else the refusal, which ends the flow."""
    action = answer.get("action")
    if action in ("decline", "cancel"):
        manager.fail(flow, action)
        return "decline" if action == "decline" else "cancel"
    if action != "accept":
        raise InvalidParams(f"elicitation answer has an unknown action {action!r}")
    return None


def _link_key(key: str, flow: UrlFlow) -> str:
    # The first link is asked under the round's own key; each fresh one under a key of its
    # own, so the consent sealed for an earlier link never stands for a later one.
    return key if flow.links <= 1 else f"{key}#{flow.links}"


async def _stateless_round(
    ctx: Context, manager: UrlElicitations, message: str, url: str | None, handler: UrlFlowHandler | None
) -> Elicited[None]:
    round_ = ctx.round
    if round_ is None:
        raise MissingCapability(
            "elicitation.url", f"{ctx.request.method} cannot ask the client anything in the stateless era"
        )
    key = round_.next_key("elicitation/create")
    flow_id = round_.memo.get(key)
    flow = manager.get(flow_id) if isinstance(flow_id, str) else None
    if flow is None:
        if flow_id is not None:
            return Elicited("cancel")  # the flow expired (or lives on another worker)
        flow = manager.start(message, owner=ctx.principal, handler=handler, url=url)
        round_.memo[key] = flow.id
        raise InputRequired(key, {"method": "elicitation/create", "params": flow.elicitation(with_id=False)})
    if flow.owner != ctx.principal:
        raise InvalidParams("this requestState belongs to another user's flow")
    asked = _link_key(key, flow)
    answer = round_.answer(asked)
    if answer is None:
        raise InputRequired(asked, {"method": "elicitation/create", "params": flow.elicitation(with_id=False)})
    refused = _consent(manager, flow, answer)
    if refused is not None:
        return Elicited(refused)
    sent = flow.links
    if not flow.done:
        await manager.wait(flow, manager.poll_wait, link=sent)  # the spec lets a retry block until done
    used_up = not flow.done and flow.links == sent and flow.spent
    if used_up and not manager.reissue(flow):
        await manager.wait(flow, manager.poll_wait)  # no fresh link left: the flow waits out its time
    if not flow.done and flow.links != sent:
        fresh = {"method": "elicitation/create", "params": flow.elicitation(with_id=False)}
        raise InputRequired(_link_key(key, flow), fresh)
    if flow.done:
        return Elicited(flow.outcome or "cancel")
    raise InputRequired(key, None)  # not yet: a requestState-only result, retried by the client
