"""A URL flow never strands the person (issue 18, chapter 18.9 Q2; EL-24 manual controls), on the wire.

When the completion never comes, the person says "done", "cancel" or "fresh link" through
``UrlFlowControls`` and the same tool call goes on. backchannel's ``_meta`` convention
(``dev.backchannel/url-flow``, docs/protocol-conventions.md) carries it in both eras:

- handshake era: the server offers the words in the ``elicitation/create`` params'
  ``_meta``; the client holds its answer until the person speaks (or the flow completes,
  and then the server withdraws its question), and the word rides in the answer's ``_meta``.
- stateless era: the offer rides in the ``InputRequiredResult``'s ``_meta`` under the
  question's key; the word rides in the retry's params ``_meta``, naming the question,
  and the retry that was waiting is withdrawn.

A server that offers nothing is answered at once, as before; a link holder gains nothing
(each fresh link is sent only to the owner's client, with its own code).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _url_harness import ERAS, Browser, Recorder, code_in, connected, make_server, run, text_of
from _words_harness import KEY, Speaker, words_said

from backchannel import Context, Server
from backchannel.client.url_flow import UrlFlowIncomplete
from backchannel.server.url_elicitation import UrlElicitations, UrlFlow
from backchannel.server.url_elicitation.ask import NO_FRESH_LINK, NOT_FINISHED

COMPLETE = "notifications/elicitation/complete"
ALL_WORDS = ["done", "cancel", "fresh-link"]


def only_flow(flows: UrlElicitations) -> UrlFlow:
    (flow,) = flows._flows.values()
    return flow


def links_asked(recorder: Recorder, era: str) -> list[dict[str, Any]]:
    """Every ``elicitation/create`` params the server sent, in order (both eras)."""
    if era == "handshake":
        return [m["params"] for m in recorder.requests_received("elicitation/create")]
    return [q["params"] for r in recorder.results() for q in (r.get("inputRequests") or {}).values()]


@pytest.mark.parametrize("era", ERAS)
def test_each_link_offers_the_words_and_the_client_follows_them(era: str) -> None:
    server, flows, _ = make_server()
    speaker = Speaker()

    async def body() -> None:
        async with connected(server, era, url_handler=speaker) as (client, recorder), Browser(flows) as browser:
            call = asyncio.create_task(client.call_tool("confirm"))
            request, controls = await speaker.next(call)
            assert request.offers == controls.offers == ("done", "cancel", "fresh-link")
            if era == "handshake":
                (asked,) = recorder.requests_received("elicitation/create")
                assert asked["params"]["_meta"] == {KEY: {"controls": ALL_WORDS}}
                assert [m for m in recorder.sent if "result" in m] == []  # held: the person has a say
            else:
                (first,) = recorder.results()
                ((question, asked),) = first["inputRequests"].items()
                assert first["_meta"][KEY] == {"controls": {question: ALL_WORDS}}
                assert "_meta" not in asked["params"]  # the 2026-07-28 URL params have no _meta
                assert recorder.requests_written("tools/call")[1]["params"]["inputResponses"] == {
                    question: {"action": "accept"}
                }
            assert (await browser.complete(request)).status_code == 200
            assert text_of(await call) == "accept"
            assert not controls.open and not controls.done()  # over: no word is taken any more
            assert words_said(recorder, era) == []
            if era == "handshake":
                # Completed while the answer was held: the server withdrew its question.
                (create,) = recorder.requests_received("elicitation/create")
                (withdrawn,) = recorder.notifications_received("notifications/cancelled")
                assert withdrawn["params"]["requestId"] == create["id"]
                assert recorder.notifications_received(COMPLETE)

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_done_before_the_browser_finished_is_answered_clearly_and_the_flow_stays_pending(era: str) -> None:
    server, flows, _ = make_server()
    speaker = Speaker()

    async def body() -> None:
        async with connected(server, era, url_handler=speaker) as (client, recorder), Browser(flows) as browser:
            call = asyncio.create_task(client.call_tool("confirm"))
            first, controls = await speaker.next(call)
            assert (await browser.open(first.url)).status_code == 200  # opened, never finished
            assert controls.done()
            again, _ = await speaker.next(call)
            assert again.message.startswith(NOT_FINISHED) and again.url == first.url
            assert code_in(again.message) == code_in(first.message)  # the same link, still usable
            flow = only_flow(flows)
            assert flow.status == "pending" and flow.links == 1 and not call.done()
            said = words_said(recorder, era)
            if era == "handshake":
                assert said == [{"said": "done"}]
                answers = [m["result"] for m in recorder.sent if "result" in m]
                assert answers == [{"action": "accept", "_meta": {KEY: {"said": "done"}}}]
            else:
                question, question_again = [next(iter(r["inputRequests"])) for r in recorder.results()]
                assert said == [{"said": "done", "question": question}] and question_again != question
            assert (await browser.complete(again)).status_code == 200
            assert text_of(await call) == "accept"

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_a_fresh_link_on_the_persons_word_within_the_same_call(era: str) -> None:
    server, flows, _ = make_server()
    speaker = Speaker()

    async def body() -> None:
        async with connected(server, era, url_handler=speaker) as (client, recorder), Browser(flows) as browser:
            call = asyncio.create_task(client.call_tool("confirm"))
            first, controls = await speaker.next(call)
            assert controls.fresh_link()
            fresh, _ = await speaker.next(call)
            assert fresh.url != first.url and code_in(fresh.message) != code_in(first.message)
            assert fresh.elicitation_id == first.elicitation_id  # the same flow (None in the stateless era)
            assert only_flow(flows).links == 2 and not call.done()
            assert (await browser.open(first.url)).status_code == 410  # the old link is dead
            assert (await browser.complete(fresh)).status_code == 200
            assert text_of(await call) == "accept"
            assert [p["url"] for p in links_asked(recorder, era)] == [first.url, fresh.url]
            # One call; in the stateless era its answered rounds: the link, the fresh link, the result
            # (a retry that was waiting when the person spoke is withdrawn, never answered).
            assert len(recorder.results()) == (1 if era == "handshake" else 3)
            (said,) = words_said(recorder, era)
            assert said["said"] == "fresh-link"

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_cancel_reaches_the_tool(era: str) -> None:
    server, flows, grant = make_server()
    speaker = Speaker()

    async def body() -> None:
        async with connected(server, era, url_handler=speaker, principal="alice") as (client, recorder):
            call = asyncio.create_task(client.call_tool("connect"))
            _, controls = await speaker.next(call)
            assert controls.cancel()
            assert text_of(await call) == "cancel: not connected"
            flow = only_flow(flows)
            assert flow.status == "failed" and flow.outcome == "cancel" and grant.connected == set()
            said = words_said(recorder, era)
            assert [entry["said"] for entry in said] == ["cancel"]
            if era == "handshake":
                assert [m["result"]["action"] for m in recorder.sent if "result" in m] == ["cancel"]

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_past_the_bound_a_fresh_link_is_no_longer_offered_and_asking_says_so(era: str) -> None:
    server, flows, _ = make_server(fresh_links=1)
    speaker = Speaker()

    async def body() -> None:
        async with connected(server, era, url_handler=speaker) as (client, _), Browser(flows) as browser:
            call = asyncio.create_task(client.call_tool("confirm"))
            _, controls = await speaker.next(call)
            assert controls.fresh_link()
            fresh, controls = await speaker.next(call)
            assert fresh.offers == ("done", "cancel")
            assert not controls.fresh_link() and controls.open  # not offered: nothing is sent
            # A client that asks anyway (the offer is advice) is told, and keeps the link it has.
            assert controls.say("done")
            again, controls = await speaker.next(call)
            assert again.url == fresh.url and again.message.startswith(NOT_FINISHED)
            assert NO_FRESH_LINK not in again.message
            assert (await browser.complete(again)).status_code == 200
            assert text_of(await call) == "accept"

    run(body)


def _bare_server() -> Server:
    """A server that asks for a URL the way the spec alone describes: no words offered."""
    server = Server("bare", "1.0")

    @server.tool()
    async def visit(ctx: Context) -> str:
        params = {"mode": "url", "message": "Visit the page.", "url": "https://pay.example/checkout"}
        if ctx.era == "handshake":
            params["elicitationId"] = "e-1"
        answer = await ctx.request_input("elicitation/create", params, "elicitation.url")
        return str(answer)

    return server


@pytest.mark.parametrize("era", ERAS)
def test_a_server_that_offers_nothing_is_answered_at_once_and_no_word_is_taken(era: str) -> None:
    speaker = Speaker()

    async def body() -> None:
        async with connected(_bare_server(), era, url_handler=speaker) as (client, recorder):
            result = await client.call_tool("visit")
            assert text_of(result) == "{'action': 'accept'}"
            (request, controls) = speaker.seen.get_nowait()
            assert request.offers == () and not controls.open
            assert not controls.done() and not controls.cancel() and not controls.fresh_link()
            assert words_said(recorder, era) == []

    run(body)


def test_the_32042_path_takes_the_words_on_the_clients_side() -> None:
    server, flows, grant = make_server()
    speaker = Speaker()

    async def body() -> None:
        async with (
            connected(server, "handshake", url_handler=speaker, principal="alice", url_wait=30) as (client, recorder),
            Browser(flows) as browser,
        ):
            # Fresh link: the call is retried at once (not after url_wait), and the server lists a new link.
            call = asyncio.create_task(client.call_tool("gated"))
            first, controls = await speaker.next(call)
            assert first.offers == ("done", "cancel", "fresh-link")
            assert controls.fresh_link()
            fresh, _ = await speaker.next(call)
            assert fresh.url != first.url and len(recorder.requests_written("tools/call")) == 2
            assert (await browser.complete(fresh)).status_code == 200
            assert text_of(await call) == "ready" and grant.connected == {"alice"}
            assert words_said(recorder, "handshake") == []  # nothing crossed the wire: the words are the client's

            grant.connected.clear()
            call = asyncio.create_task(client.call_tool("gated"))
            _, controls = await speaker.next(call)
            assert controls.cancel()
            with pytest.raises(UrlFlowIncomplete) as raised:
                await call
            assert raised.value.action == "cancel"

    run(body)
