"""``backchannel call``'s answers to ``sampling/createMessage``: the answers file, or a model.

With ``--sampling-endpoint`` or ``--sampling-command`` every sampling request goes to that
model (:mod:`.sampling_models`), and a note on stderr says so. Otherwise the answers file
answers it, picked the way a form's answer is: a key found in the request's texts (its
system prompt and messages), ``"*"`` for any other, or the next item of a list. An answer is

* the reply's text (a string), or a ``CreateMessageResult`` object (``{"content": ...}``;
  ``role`` and ``model`` may be left out), which may use the tools the request offered;
* ``"decline"`` (or ``"cancel"``, or ``{"action": "decline"}``): the request is refused.

A refused request is answered with error -1, "User rejected sampling request"; in the
stateless era nothing is sent and the call ends with that error. No answer at all refuses
too, with a note. An answer that is not a valid result, or a model that fails, is never
sent: the request is refused (or, for a model, failed), and the exit status is 2.
"""

from __future__ import annotations

__all__ = ["BatchSampler", "request_text"]

from collections.abc import Callable
from typing import Any

from ..protocol.sampling import SamplingProblem, check_result
from .sampling import SamplingFailed, SamplingRefused
from .sampling_models import ModelFailed, SamplingModel

#: The ``model`` of a reply the answers file gave.
ANSWERS_FILE = "answers-file"
_REFUSALS = ("decline", "cancel")


def request_text(params: dict[str, Any]) -> str:
    """What an answers-file key is looked for in: the system prompt and every text of the messages."""
    texts = [str(params.get("systemPrompt") or "")]
    for message in params.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else [content]:
            if isinstance(block, dict) and block.get("type") == "text":
                texts.append(str(block.get("text", "")))
    return "\n".join(text for text in texts if text)


class BatchSampler:
    """The ``sampling`` handler of ``call``: ``model`` when given, else ``pick`` (the answers file's)."""

    def __init__(
        self,
        pick: Callable[[str], tuple[bool, Any]],
        problems: list[str],
        note: Callable[[str], None],
        model: SamplingModel | None = None,
    ) -> None:
        self.pick = pick
        #: Shared with the answers file: any entry makes the exit status 2.
        self.problems = problems
        self.note = note
        self.model = model

    async def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        offered = bool(params.get("tools"))
        text = request_text(params)
        shown = text if len(text) <= 80 else text[:77] + "..."
        if self.model is not None:
            try:
                result = await self.model.complete(params)
                check_result(result, tools_offered=offered, what="its answer")
            except (ModelFailed, SamplingProblem) as exc:
                self.problems.append(f"no reply to the sampling request {shown!r} from {self.model.label}: {exc}")
                raise SamplingFailed from None
            self.note(f"the sampling request {shown!r} was answered by {self.model.label}")
            return result
        found, answer = self.pick(text)
        if not found:
            self.note(f"no answer for the sampling request {shown!r}: refused")
            raise SamplingRefused
        if answer in _REFUSALS or (isinstance(answer, dict) and answer.get("action") in _REFUSALS):
            raise SamplingRefused
        try:
            result = _result(answer)
            check_result(result, tools_offered=offered, what="the answer")
        except SamplingProblem as exc:
            self.problems.append(f"the answer to the sampling request {shown!r} is not a reply: {exc}")
            raise SamplingRefused from None
        return result


def _result(answer: Any) -> dict[str, Any]:
    if isinstance(answer, str):
        text = {"type": "text", "text": answer}
        return {"role": "assistant", "content": text, "model": ANSWERS_FILE, "stopReason": "endTurn"}
    if isinstance(answer, dict) and "content" in answer and "action" not in answer:
        return {"role": "assistant", "model": ANSWERS_FILE, **answer}
    raise SamplingProblem("the answer", ["give the reply's text, a result object with content, or decline"])
