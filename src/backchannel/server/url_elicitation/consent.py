"""The person's say over a flow, the same in both eras: their answer to a link (consent or a
refusal), the words offered with it and what each does (``ask.py`` says how each era carries them)."""

from __future__ import annotations

__all__ = ["NOTES", "NOT_FINISHED", "NO_FRESH_LINK", "after_word", "consent", "offered"]

from collections.abc import Mapping
from typing import Any

from ...http_host.url_flows.flows import Action, FlowRegistry, UrlFlow
from ...types.elicitation import UrlFlowWord
from ...types.errors import InvalidParams

#: What the server says when the person said "done" but the flow did not complete.
NOT_FINISHED = (
    "You said you were done, but the browser step has not finished: this server has not seen it "
    "complete. Open the link again to finish it there, ask for a fresh link, or cancel."
)
#: What the server says when the person asked for a fresh link and the flow may have no more.
NO_FRESH_LINK = "No fresh link is left for this request: the link below is still the one to use, or cancel."
NOTES = {"not-finished": NOT_FINISHED, "no-fresh-link": NO_FRESH_LINK}


def offered(manager: FlowRegistry, flow: UrlFlow) -> tuple[UrlFlowWord, ...]:
    return ("done", "cancel", "fresh-link") if manager.can_reissue(flow) else ("done", "cancel")


def after_word(manager: FlowRegistry, flow: UrlFlow, word: UrlFlowWord) -> str | None:
    """Act on the person's ``done`` or ``fresh-link`` (``cancel`` is a refusal, see ``consent``):
    None when the flow is over or has a fresh link to send, else the note to ask again with."""
    if flow.done:
        return None
    if word == "fresh-link":
        return None if manager.reissue(flow) else "no-fresh-link"
    return "not-finished"


def consent(manager: FlowRegistry, flow: UrlFlow, answer: Mapping[str, Any]) -> Action | None:
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
