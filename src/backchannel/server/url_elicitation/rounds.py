"""The stateless era's URL flow (2026-07-28): MRTR rounds around a flow that lives in one worker.

The first round starts the flow where the tool runs and answers with an ``InputRequiredResult``
asking its link; the flow's id (and, in a fleet, its owner's worker id) rides in the sealed
``requestState``. Each retry runs the round's *step* on the flow's owner (``flow_step``: here,
or through ``url.step`` from another worker of a fleet): it checks the person's answer and word,
waits (bounded) for the browser, and returns a small JSON outcome that the retry's own worker
turns into the round's result: finished with an action, ask (a fresh link, or the same one with
a note), or not yet (a ``requestState``-only result the client retries).
"""

from __future__ import annotations

__all__ = ["flow_step", "stateless_round"]

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...http_host.url_flows.flows import UrlFlow, UrlFlowHandler
from ...types.elicitation import URL_FLOW_WORDS, url_flow_heard, url_flow_offer
from ...types.errors import InvalidParams, MissingCapability
from ..elicitation import Elicited
from ..mrtr import InputRequired, Round
from .consent import NOTES, after_word, consent, offered

if TYPE_CHECKING:
    from ...http_host.url_flows.pages import UrlElicitations
    from ..context import Context

logger = logging.getLogger("backchannel.url_elicitation")

Outcome = dict[str, Any]


@dataclass
class _Asked:
    """How often a flow was asked, for which link, and with which note: kept in the sealed
    ``requestState`` (``<key>#asked``) beside the flow's id. The first time is asked under the
    round's own key, each later time under a key of its own (``key#2``...), so an answer sealed
    for one asking never stands for a later one."""

    key: str
    times: int = 1
    link: int | None = None
    note: str | None = None

    @classmethod
    def kept(cls, key: str, kept: Any) -> _Asked:
        times, link, note = kept if isinstance(kept, list) and len(kept) == 3 else (1, None, None)
        return cls(
            key,
            times if isinstance(times, int) else 1,
            link if isinstance(link, int) else None,
            note if isinstance(note, str) else None,
        )

    @property
    def question(self) -> str:
        return self.key if self.times <= 1 else f"{self.key}#{self.times}"

    def ask(self, manager: UrlElicitations, flow: UrlFlow, *, remember: bool = False) -> Outcome:
        """Ask the flow's current link (with the note, if any); ``remember`` what was asked."""
        params = flow.elicitation(with_id=False, note=NOTES.get(self.note or ""))
        meta = url_flow_offer(offered(manager, flow), self.question)
        asked = [self.times, self.link, self.note] if remember else None
        return {"k": "ask", "question": self.question, "params": params, "meta": meta, "asked": asked}

    def again(self, manager: UrlElicitations, flow: UrlFlow, note: str | None) -> Outcome:
        """Ask once more, under a new key: a fresh link, or the same one with ``note``."""
        return self.first(manager, flow, self.times + 1, note)

    def first(self, manager: UrlElicitations, flow: UrlFlow, times: int = 1, note: str | None = None) -> Outcome:
        """Ask the flow's current link for the ``times``-th time, and remember that it was."""
        self.times, self.link, self.note = times, flow.links, note
        return self.ask(manager, flow, remember=True)

    def replaced(self, flow: UrlFlow) -> bool:
        """Whether the flow got a fresh link since it was last asked (someone else's reissue)."""
        return self.link is not None and flow.links != self.link and not flow.done


def _done(action: str | None) -> Outcome:
    return {"k": "done", "action": action or "cancel"}


async def stateless_round(
    ctx: Context, manager: UrlElicitations, message: str, url: str | None, handler: UrlFlowHandler | None
) -> Elicited[None]:
    round_ = ctx.round
    if round_ is None:
        raise MissingCapability(
            "elicitation.url", f"{ctx.request.method} cannot ask the client anything in the stateless era"
        )
    key = round_.next_key("elicitation/create")
    flow_id = round_.memo.get(key)
    if flow_id is None:
        flow = manager.start(message, owner=ctx.principal, handler=handler, url=url)
        round_.memo[key] = flow.id
        if manager.worker is not None:  # a fleet: a retry on another worker finds the flow's owner
            round_.memo[f"{key}#owner"] = manager.worker
        return _result(round_, key, None, _Asked(key).first(manager, flow))
    if not isinstance(flow_id, str):
        return Elicited("cancel")
    kept = round_.memo.get(f"{key}#asked")
    question = _Asked.kept(key, kept).question
    # Read, not yet taken: a step that finds the flow's link replaced leaves it unused.
    answer = round_.answers[question] if question in round_.answers else round_.responses.get(question)
    word, about = url_flow_heard(ctx.request.params.get("_meta"))
    step = {
        "flow": flow_id,
        "key": key,
        "principal": ctx.principal,
        "asked": kept,
        "answer": answer,
        "word": word if about == question else None,
    }
    owner = round_.memo.get(f"{key}#owner")
    if not isinstance(owner, str) or owner == manager.worker:
        return _result(round_, key, question, await flow_step(manager, step))
    if manager.calls is None:
        return Elicited("cancel")  # sealed by a fleet this server is not part of: the flow is not here
    from ...http_host.url_flows.fleet import STEP, call_owner
    from ...state.calls import WorkerGone  # a fleet's part, loaded by a fleet only

    try:
        outcome = await call_owner(manager.calls, owner, STEP, step, timeout=2 * manager.poll_wait + 5.0)
    except WorkerGone as exc:
        logger.warning("URL flow %s ended: the worker running it is gone (%s)", flow_id, exc.message)
        return Elicited("cancel")
    return _result(round_, key, question, outcome)


def _result(round_: Round, key: str, question: str | None, outcome: Outcome) -> Elicited[None]:
    """The round's result for a step's ``outcome`` (``Elicited``, or ``InputRequired`` raised);
    the answer to ``question`` the step read is sealed for the rounds to come."""
    kind = outcome.get("k")
    if kind == "invalid":
        raise InvalidParams(str(outcome.get("message")))
    if question is not None and not outcome.get("unread"):
        round_.answer(question)
    if kind == "done":
        action = outcome.get("action")
        return Elicited(action if action in ("accept", "decline") else "cancel")
    if kind != "ask":
        raise InputRequired(key, None)  # not yet: a requestState-only result, retried by the client
    if outcome.get("asked") is not None:
        round_.memo[f"{key}#asked"] = outcome["asked"]
    request = {"method": "elicitation/create", "params": outcome["params"]}
    raise InputRequired(outcome["question"], request, meta=outcome["meta"])


async def flow_step(manager: UrlElicitations, step: Any) -> Outcome:
    """One retry's work on its flow, in the flow's owner (``step``: JSON data from
    ``stateless_round``, possibly from another worker; the outcome goes back the same way)."""
    flow = manager.get(step["flow"])
    if flow is None:
        return _done("cancel")  # the flow expired
    if flow.owner != step.get("principal"):
        return {"k": "invalid", "message": "this requestState belongs to another user's flow"}
    asked = _Asked.kept(step["key"], step.get("asked"))
    if asked.replaced(flow):
        return {**asked.again(manager, flow, None), "unread": True}
    answer = step.get("answer")
    if not isinstance(answer, dict):
        return asked.ask(manager, flow)
    word = next((w for w in URL_FLOW_WORDS if w == step.get("word")), None)
    try:
        refused = consent(manager, flow, {"action": "cancel"} if word == "cancel" else answer)
    except InvalidParams as exc:
        return {"k": "invalid", "message": exc.message}
    if refused is not None:
        return _done(refused)
    if word is not None:
        note = after_word(manager, flow, word)
        return _done(flow.outcome) if flow.done else asked.again(manager, flow, note)
    sent = flow.links
    if not flow.done:
        await manager.wait(flow, manager.poll_wait, link=sent)  # the spec lets a retry block until done
    used_up = not flow.done and flow.links == sent and flow.spent
    if used_up and not manager.reissue(flow):
        await manager.wait(flow, manager.poll_wait)  # no fresh link left: the flow waits out its time
    if not flow.done and flow.links != sent:
        return asked.again(manager, flow, None)
    return _done(flow.outcome) if flow.done else {"k": "wait"}
