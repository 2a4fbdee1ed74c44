"""A person with a say over URL flows, for the tests of the words "done", "cancel", "fresh link"."""

from __future__ import annotations

__all__ = ["KEY", "Speaker", "words_said"]

import asyncio
from typing import Any

from backchannel.client.url_flow import UrlConsent, UrlElicitation, UrlFlowControls
from backchannel.testing import Tap, within

KEY = "dev.backchannel/url-flow"


class Speaker:
    """A person with a say: consents to each link, keeps its controls, hands both to the test."""

    def __init__(self) -> None:
        self.seen: asyncio.Queue[tuple[UrlElicitation, UrlFlowControls]] = asyncio.Queue()
        self.all: list[UrlElicitation] = []

    async def __call__(self, request: UrlElicitation) -> UrlConsent:
        controls = UrlFlowControls()
        self.all.append(request)
        self.seen.put_nowait((request, controls))
        return UrlConsent("accept", controls=controls)

    async def next(self, call: asyncio.Task[Any]) -> tuple[UrlElicitation, UrlFlowControls]:
        """The next link, once the client follows its controls; fails if the call ends instead."""
        waiting = asyncio.ensure_future(self.seen.get())
        await asyncio.wait({waiting, call}, return_when=asyncio.FIRST_COMPLETED)
        if not waiting.done():
            waiting.cancel()
            raise AssertionError(f"the call ended instead of asking again: {call.result()!r}")
        request, controls = waiting.result()
        await within(lambda: controls.open or call.done(), "the client following the link's controls")
        return request, controls


def words_said(recorder: Tap, era: str) -> list[dict[str, Any]]:
    """Each word the client carried, as the ``_meta`` entry it wrote."""
    if era == "handshake":
        answers = [m["result"] for m in recorder.written if "result" in m]
        return [a["_meta"][KEY] for a in answers if KEY in a.get("_meta", {})]
    retries = [m["params"] for m in recorder.requests_written("tools/call")]
    return [p["_meta"][KEY] for p in retries if KEY in p.get("_meta", {})]
