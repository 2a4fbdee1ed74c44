"""A remembered decline says so, and can be forgotten (issue 27, item 7).

After a decline the same form is not shown again (``test_decline_memory.py``); the call is
answered at once. The result then carries ``_meta["dev.backchannel/rememberedDecline"]`` (our
own reverse-DNS prefix, as the spec's ``_meta`` key rules ask: 2026-07-28 basic/index.mdx,
"General fields: _meta") with the form's message, so the client can tell the person why nothing
was asked; a fresh answer carries no such key. ``ctx.forget_decline()`` inside the handler, or
``_meta["dev.backchannel/forgetDeclines"]: true`` on the client's request, shows the form again
and forgets the decline. Asserted on what crossed the wire, in both eras."""

from __future__ import annotations

from typing import Any

import pytest
from _elicit_wire import ERAS, Tap, run, session

from backchannel import Context, Server
from backchannel.types.meta import FORGET_DECLINES, REMEMBERED_DECLINE

FORM = {
    "type": "object",
    "properties": {"seating": {"type": "string", "enum": ["indoor", "terrace"], "default": "indoor"}},
}
QUESTION = "Book a table for 2?"


def restaurant() -> Server:
    server = Server("restaurant")

    @server.tool()
    async def book_table(ctx: Context, ask_again: bool = False) -> str:
        if ask_again:
            ctx.forget_decline()
        answer = await ctx.elicit(QUESTION, FORM)
        return f"Booked ({answer.data['seating']})." if answer.accepted else f"No booking ({answer.action})."

    return server


class Person:
    """Answers each form with the next action of ``actions``; counts the forms shown."""

    def __init__(self, *actions: str) -> None:
        self.actions = list(actions)
        self.shown = 0

    def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        self.shown += 1
        action = self.actions.pop(0)
        return {"action": action, "content": {"seating": "terrace"}} if action == "accept" else {"action": action}


def wire_results(tap: Tap) -> list[dict[str, Any]]:
    """The final answer the server sent to each ``tools/call`` (an MRTR round's is skipped)."""
    results = [tap.server_response_to(call["id"])["result"] for call in tap.requests_received("tools/call")]
    return [result for result in results if "inputRequests" not in result]


@pytest.mark.parametrize("era", ERAS)
def test_a_remembered_decline_says_so_and_a_fresh_answer_does_not(era: str) -> None:
    person = Person("decline")

    async def body() -> None:
        async with session(restaurant(), era, elicitation=person) as (client, tap):
            first = await client.call_tool("book_table")
            second = await client.call_tool("book_table")
            assert first.content[0].text == second.content[0].text == "No booking (decline)."  # type: ignore[union-attr]
            assert person.shown == 1
            fresh, remembered = wire_results(tap)
            assert REMEMBERED_DECLINE not in (fresh.get("_meta") or {})
            assert remembered["_meta"][REMEMBERED_DECLINE] == [QUESTION]
            assert second.meta is not None and second.meta[REMEMBERED_DECLINE] == [QUESTION]

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_the_clients_forget_flag_asks_again_and_forgets_the_decline(era: str) -> None:
    person = Person("decline", "accept")

    async def body() -> None:
        async with session(restaurant(), era, elicitation=person) as (client, tap):
            await client.call_tool("book_table")
            await client.call_tool("book_table")  # remembered: not asked
            assert person.shown == 1
            before = len(tap.requests_received("tools/call"))
            again = await client.call_tool("book_table", meta={FORGET_DECLINES: True})
            assert again.content[0].text == "Booked (terrace)."  # type: ignore[union-attr]
            assert person.shown == 2
            flags = [
                call["params"].get("_meta", {}).get(FORGET_DECLINES) for call in tap.requests_received("tools/call")
            ]
            assert set(flags[:before]) == {None} and set(flags[before:]) == {True}  # on the wire, in every round
            assert REMEMBERED_DECLINE not in (wire_results(tap)[-1].get("_meta") or {})

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_ctx_forget_decline_asks_again_and_a_new_decline_is_remembered_again(era: str) -> None:
    person = Person("decline", "decline")

    async def body() -> None:
        async with session(restaurant(), era, elicitation=person) as (client, tap):
            await client.call_tool("book_table")
            await client.call_tool("book_table")
            assert person.shown == 1
            await client.call_tool("book_table", {"ask_again": True})  # the handler forgets: asked
            assert person.shown == 2
            await client.call_tool("book_table")  # declined again, so remembered again
            assert person.shown == 2
            metas = [result.get("_meta") or {} for result in wire_results(tap)]
            assert [REMEMBERED_DECLINE in meta for meta in metas] == [False, True, False, True]

    run(body)
