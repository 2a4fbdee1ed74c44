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
(``types.elicitation.URL_FLOW_META``, docs/conventions.md), the words the person may say
while the flow runs: ``done``, ``cancel`` and, while the flow may have one, ``fresh-link``.
A client that offers them holds its handshake-era answer until the person speaks (so the
server also watches the flow while it waits for that answer), or, in the stateless era,
retries with the word in its request's ``_meta``. ``cancel`` ends the flow (the tool sees
``cancel``); ``fresh-link`` sends a fresh link for the same flow, in the same call;
``done`` is checked against the flow: when it has not completed, the same link is asked
again with a note saying so. A client that knows none of this answers as the spec says and
nothing changes for it.
"""

from __future__ import annotations

__all__ = ["elicit_url", "url_elicitation_required"]

import asyncio
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ...protocol.capabilities import require
from ...types.elicitation import UrlFlowWord, url_flow_heard, url_flow_offer
from ...types.errors import InvalidParams, MissingCapability, RequestTimeout, UrlElicitationRequired
from ..elicitation import Elicited
from ..mrtr import InputRequired, Round
from .flows import Action, UrlFlow, UrlFlowHandler

if TYPE_CHECKING:
    from ..context import Context
    from .pages import UrlElicitations

#: What the server says when the person said "done" but the flow did not complete.
NOT_FINISHED = (
    "You said you were done, but the browser step has not finished: this server has not seen it "
    "complete. Open the link again to finish it there, ask for a fresh link, or cancel."
)
#: What the server says when the person asked for a fresh link and the flow may have no more.
NO_FRESH_LINK = "No fresh link is left for this request: the link below is still the one to use, or cancel."
_NOTES = {"not-finished": NOT_FINISHED, "no-fresh-link": NO_FRESH_LINK}


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


def _offered(manager: UrlElicitations, flow: UrlFlow) -> tuple[UrlFlowWord, ...]:
    return ("done", "cancel", "fresh-link") if manager.can_reissue(flow) else ("done", "cancel")


def _after_word(manager: UrlElicitations, flow: UrlFlow, word: UrlFlowWord) -> str | None:
    """Act on the person's ``done`` or ``fresh-link`` (``cancel`` is a refusal, see ``_consent``):
    None when the flow is over or has a fresh link to send, else the note to ask again with."""
    if flow.done:
        return None
    if word == "fresh-link":
        return None if manager.reissue(flow) else "no-fresh-link"
    return "not-finished"


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
        params = flow.elicitation(with_id=True, note=_NOTES.get(note or ""))
        params["_meta"] = url_flow_offer(_offered(manager, flow))
        answer = await _answer_unless_changed(ctx, manager, flow, params, left)
        if answer is not None:
            refused = _consent(manager, flow, answer)
            if refused is not None:
                return refused
            word, _ = url_flow_heard(answer.get("_meta"))
            if word is not None:
                note = _after_word(manager, flow, word)
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


def _consent(manager: UrlElicitations, flow: UrlFlow, answer: Mapping[str, Any]) -> Action | None:
    """The person's answer to a link: None to go on (accept), else the refusal, which ends the
    flow; a flow that ended first keeps its outcome (the person spoke as the browser finished)."""
    action = answer.get("action")
    if action in ("decline", "cancel"):
        if flow.done:
            return None
        manager.fail(flow, action)
        return "decline" if action == "decline" else "cancel"
    if action != "accept":
        raise InvalidParams(f"elicitation answer has an unknown action {action!r}")
    return None


class _Asked:
    """How often a stateless-era flow was asked, for which link, and with which note: kept
    in the sealed ``requestState`` beside the flow's id. The first time is asked under the
    round's own key, each later time under a key of its own (``key#2``...), so an answer
    sealed for one asking never stands for a later one."""

    def __init__(self, round_: Round, key: str) -> None:
        self.round, self.key = round_, key
        kept = round_.memo.get(f"{key}#asked")
        times, link, note = kept if isinstance(kept, list) and len(kept) == 3 else (1, None, None)
        self.times: int = times if isinstance(times, int) else 1
        self.link: int | None = link if isinstance(link, int) else None
        self.note: str | None = note if isinstance(note, str) else None

    @property
    def question(self) -> str:
        return self.key if self.times <= 1 else f"{self.key}#{self.times}"

    def ask(self, manager: UrlElicitations, flow: UrlFlow) -> InputRequired:
        """The ``InputRequired`` asking the flow's current link (with the note, if any)."""
        params = flow.elicitation(with_id=False, note=_NOTES.get(self.note or ""))
        request = {"method": "elicitation/create", "params": params}
        return InputRequired(self.question, request, meta=url_flow_offer(_offered(manager, flow), self.question))

    def again(self, manager: UrlElicitations, flow: UrlFlow, note: str | None) -> InputRequired:
        """Ask once more, under a new key: a fresh link, or the same one with ``note``."""
        return self.first(manager, flow, self.times + 1, note)

    def first(self, manager: UrlElicitations, flow: UrlFlow, times: int = 1, note: str | None = None) -> InputRequired:
        """Ask the flow's current link for the ``times``-th time, and remember that it was."""
        self.times, self.link, self.note = times, flow.links, note
        self.round.memo[f"{self.key}#asked"] = [self.times, self.link, self.note]
        return self.ask(manager, flow)

    def replaced(self, flow: UrlFlow) -> bool:
        """Whether the flow got a fresh link since it was last asked (someone else's reissue)."""
        return self.link is not None and flow.links != self.link and not flow.done


def _word_for(ctx: Context, question: str) -> UrlFlowWord | None:
    """The person's word carried by this retry (its ``_meta``), if it is about ``question``."""
    word, about = url_flow_heard(ctx.request.params.get("_meta"))
    return word if about == question else None


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
    asked = _Asked(round_, key)
    if flow is None:
        if flow_id is not None:
            return Elicited("cancel")  # the flow expired (or lives on another worker)
        flow = manager.start(message, owner=ctx.principal, handler=handler, url=url)
        round_.memo[key] = flow.id
        raise asked.first(manager, flow)
    if flow.owner != ctx.principal:
        raise InvalidParams("this requestState belongs to another user's flow")
    if asked.replaced(flow):
        raise asked.again(manager, flow, None)
    answer = round_.answer(asked.question)
    if answer is None:
        raise asked.ask(manager, flow)
    word = _word_for(ctx, asked.question)
    refused = _consent(manager, flow, {"action": "cancel"} if word == "cancel" else answer)
    if refused is not None:
        return Elicited(refused)
    if word is not None:
        note = _after_word(manager, flow, word)
        if flow.done:
            return Elicited(flow.outcome or "cancel")
        raise asked.again(manager, flow, note)
    sent = flow.links
    if not flow.done:
        await manager.wait(flow, manager.poll_wait, link=sent)  # the spec lets a retry block until done
    used_up = not flow.done and flow.links == sent and flow.spent
    if used_up and not manager.reissue(flow):
        await manager.wait(flow, manager.poll_wait)  # no fresh link left: the flow waits out its time
    if not flow.done and flow.links != sent:
        raise asked.again(manager, flow, None)
    if flow.done:
        return Elicited(flow.outcome or "cancel")
    raise InputRequired(key, None)  # not yet: a requestState-only result, retried by the client
