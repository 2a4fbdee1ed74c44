"""The person's say over a URL flow while it runs: "done", "cancel", "a fresh link".

The completion notification may never come: the tab was closed, the link was used up, the
code was mistyped too often. The spec asks clients for manual controls then (EL-24).
``UrlFlowControls`` is that control for a ``url_elicitation`` handler: make one, return it
with the consent (``UrlConsent("accept", controls=controls)``), and call ``done()``,
``cancel()`` or ``fresh_link()`` when the person says so. ``UrlElicitation.offers`` says
beforehand which words the link takes; how a word travels depends on where the link came
from (backchannel's ``_meta`` convention, ``types.elicitation.URL_FLOW_META``):

- handshake era, ``elicitation/create`` from a server that offered words: the client holds
  its answer until the person speaks, or the server reports the flow complete (then it
  answers ``accept``). "done" and "fresh-link" answer ``accept`` and "cancel" answers
  ``cancel``, the word in the answer's ``_meta``. A server that offered nothing is answered
  at once, as the spec describes, and no word is taken.
- stateless era, a server that offered words (in the ``InputRequiredResult``'s ``_meta``):
  the consent is answered at once and the client retries (the server may block a retry
  until the flow is done); a word withdraws the retry that waits and retries at once, the
  word and the question it is about in the request's ``_meta``.
- ``-32042``: the words are the client's own, nothing crosses the wire: "done" and
  "fresh-link" retry the call now (the server lists what is still needed, a fresh link
  included), "cancel" gives up (``UrlFlowIncomplete``).
"""

from __future__ import annotations

__all__ = ["ControlledAnswer", "UrlFlowControls", "UrlWords", "hold"]

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from ..types.elicitation import UrlFlowWord, url_flow_offer, url_flow_offers, url_flow_said
from ..types.mrtr import is_input_required


class UrlFlowControls:
    """What a person may say about a URL flow they agreed to, while it runs.

    Each of ``done()``, ``cancel()`` and ``fresh_link()`` answers True when the word was
    taken: the client then carries it to the server (see the module docstring). False
    when the word is not among ``offers`` or the flow is past the person's say: the
    server reported it complete, asked something new, or a word was said already. Use
    one per URL request; ``open`` tells a UI whether to keep offering the words.
    """

    def __init__(self) -> None:
        #: The words this flow takes, set when the client starts following it.
        self.offers: tuple[UrlFlowWord, ...] = ()
        #: The word the person said, once said.
        self.said: UrlFlowWord | None = None
        self._following = False
        self._closed = False
        self._spoke = asyncio.Event()

    @property
    def open(self) -> bool:
        """Whether a word said now would reach the server."""
        return self._following and not self._closed and self.said is None

    def done(self) -> bool:
        """The person says they finished in the browser: the server checks and says if not."""
        return self.say("done")

    def cancel(self) -> bool:
        """The person gives up: the tool sees ``cancel``."""
        return self.say("cancel")

    def fresh_link(self) -> bool:
        """The person needs another link for the same flow (new link, new code)."""
        return self.say("fresh-link")

    def say(self, word: UrlFlowWord) -> bool:
        if not self.open or word not in self.offers:
            return False
        self.said = word
        self._spoke.set()
        return True

    # -- the client's side -----------------------------------------------------------------

    def follow(self, offers: Iterable[UrlFlowWord]) -> None:
        """Start taking ``offers`` (none: the controls stay closed)."""
        self.offers = tuple(offers)
        self._following = bool(self.offers)

    def close(self) -> None:
        """Stop taking words: the flow is over, answered, or replaced by a new question."""
        self._closed = True

    async def spoken(self) -> UrlFlowWord:
        await self._spoke.wait()
        assert self.said is not None
        return self.said


class ControlledAnswer(dict[str, Any]):
    """A stateless-era consent (``{"action": "accept"}``) whose flow the person still has a
    say over: ``UrlWords`` finds it in a retry's ``inputResponses`` and follows ``controls``."""

    def __init__(self, controls: UrlFlowControls) -> None:
        super().__init__(action="accept")
        self.controls = controls


async def hold(controls: UrlFlowControls, completed: asyncio.Event) -> UrlFlowWord | None:
    """Wait for the person's word, or None once ``completed`` is set (the server reported the
    flow complete, which makes any word moot); the controls are closed after either."""
    spoken = asyncio.ensure_future(controls.spoken())
    finished = asyncio.ensure_future(completed.wait())
    try:
        await asyncio.wait({spoken, finished}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        spoken.cancel()
        finished.cancel()
        controls.close()
    return None if completed.is_set() else controls.said


Send = Callable[[dict[str, Any] | None], Awaitable[dict[str, Any]]]


class UrlWords:
    """Carries the person's word through the retries of one stateless-era request.

    ``answer_input_rounds`` passes each question's params through ``asked`` (so the handler
    sees what the server offered for it) and sends each retry through ``send``.
    """

    def __init__(self) -> None:
        self._controls: UrlFlowControls | None = None
        self._question: str | None = None

    @staticmethod
    def asked(result: dict[str, Any], key: str, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` of the question ``key``, with the words the server offered for it (in the
        result's ``_meta``) where ``UrlElicitation`` reads them."""
        offers = url_flow_offers(result.get("_meta"), key)
        if not offers or params.get("mode") != "url":
            return params
        meta = params.get("_meta")
        return {**params, "_meta": {**(meta if isinstance(meta, dict) else {}), **url_flow_offer(offers)}}

    async def send(self, send: Send, retry: dict[str, Any]) -> dict[str, Any]:
        """``await send(retry)``; when the person speaks meanwhile, that retry is withdrawn and
        another carries their word at once."""
        plain = self._follow(retry)
        controls = self._controls
        try:
            if controls is not None and controls.open:
                result = await _unless_spoken(send, plain, controls)
                if result is not None:
                    return self._seen(result)
            if controls is not None and controls.said is not None:
                word, question = controls.said, self._question
                self._stop()
                meta = plain.get("_meta")
                said = {**(meta if isinstance(meta, dict) else {}), **url_flow_said(word, question)}
                return self._seen(await send({**plain, "_meta": said}))
            return self._seen(await send(plain))
        except BaseException:
            self._stop()
            raise

    def _follow(self, retry: dict[str, Any]) -> dict[str, Any]:
        """The retry as plain JSON; a consent with controls in it is followed from now on."""
        responses = retry.get("inputResponses")
        if not isinstance(responses, dict):
            return retry
        plain: dict[str, Any] = {}
        for key, answer in responses.items():
            if isinstance(answer, ControlledAnswer):
                self._stop()  # a new link was asked: the word about the old one is moot
                self._controls, self._question = answer.controls, key
                answer = dict(answer)
            plain[key] = answer
        return {**retry, "inputResponses": plain}

    def _seen(self, result: dict[str, Any]) -> dict[str, Any]:
        if not is_input_required(result):
            self._stop()  # the request is answered: the flow is past anyone's say
        return result

    def _stop(self) -> None:
        if self._controls is not None:
            self._controls.close()
        self._controls = self._question = None


async def _unless_spoken(send: Send, params: dict[str, Any], controls: UrlFlowControls) -> dict[str, Any] | None:
    """The answer to this retry, or None when the person spoke first (the retry is withdrawn)."""
    attempt = asyncio.ensure_future(send(params))
    spoken = asyncio.ensure_future(controls.spoken())
    try:
        await asyncio.wait({attempt, spoken}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        attempt.cancel()
        raise
    finally:
        spoken.cancel()
    if attempt.done():
        return attempt.result()
    attempt.cancel()  # cancelled on the wire: the server stops waiting for the browser there
    await asyncio.wait({attempt})
    return None
