"""A link holder cannot close the owner's URL flow; the person gets a fresh link (issue 12, item 9).

Wrong confirmation codes use up a *link*, never the flow: someone who holds only the
URL can type ``code_attempts`` wrong codes and the owner's tool call goes on waiting.
The used-up link says so on its page. The server gives the flow a fresh link (new
token, new code, the old link dead) and sends it to the person who asked, in the same
call: in the handshake era ``elicitation/create`` again with the same
``elicitationId``; in the stateless era an ``InputRequiredResult`` asking the fresh
link under a key of its own. At most ``fresh_links`` fresh links per flow.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _url_harness import (
    ERAS,
    Browser,
    Person,
    ProviderGrant,
    Recorder,
    code_in,
    connected,
    make_server,
    run,
    text_of,
)

from backchannel.client.url_flow import UrlElicitation
from backchannel.server.url_elicitation import UrlElicitations, UrlFlow

COMPLETE = "notifications/elicitation/complete"
WRONG = "0000-0000"


async def burn(browser: Browser, url: str, attempts: int) -> None:
    """Someone holding only ``url`` types ``attempts`` wrong codes."""
    for left in range(attempts - 1, 0, -1):
        refused = await browser.confirm(url, WRONG)
        assert refused.status_code == 403 and f"{left} tr" in refused.text, refused.text
    closed = await browser.confirm(url, WRONG)
    assert closed.status_code == 410, closed.text
    assert "no longer works" in closed.text and "fresh link" in closed.text


async def next_link(person: Person, call: asyncio.Task[Any]) -> UrlElicitation:
    """The next link the owner's client shows, while the call is still running."""
    waiting = asyncio.ensure_future(person.seen.get())
    await asyncio.wait({waiting, call}, return_when=asyncio.FIRST_COMPLETED)
    if not waiting.done():
        waiting.cancel()
        raise AssertionError(f"the tool call ended instead of getting a fresh link: {call.result()!r}")
    return waiting.result()


def only_flow(flows: UrlElicitations) -> UrlFlow:
    (flow,) = flows._flows.values()
    return flow


def asked_urls(recorder: Recorder, era: str) -> list[tuple[str, str]]:
    """Each link the server sent, as (question key or elicitationId, url), in order."""
    if era == "handshake":
        return [
            (m["params"]["elicitationId"], m["params"]["url"]) for m in recorder.requests_received("elicitation/create")
        ]
    asked: list[tuple[str, str]] = []
    for result in recorder.results():
        for key, request in (result.get("inputRequests") or {}).items():
            assert request["method"] == "elicitation/create"
            asked.append((key, request["params"]["url"]))
    return asked


@pytest.mark.parametrize("era", ERAS)
def test_wrong_codes_use_up_the_link_not_the_flow_and_the_owner_finishes_with_a_fresh_link(era: str) -> None:
    server, flows, grant = make_server()
    person = Person()

    async def body() -> None:
        async with (
            connected(server, era, url_handler=person, principal="alice") as (client, recorder),
            Browser(flows) as holder,
            Browser(flows) as alice,
        ):
            call = asyncio.create_task(client.call_tool("connect"))
            first = await person.seen.get()
            await burn(holder, first.url, flows.code_attempts)

            # The owner's call goes on: no result, no decline or cancel, no completion; a fresh link instead.
            fresh = await next_link(person, call)
            assert not call.done() and recorder.notifications_received(COMPLETE) == []
            assert all(r.get("resultType") == "input_required" for r in recorder.results())
            flow = only_flow(flows)
            assert flow.status == "pending" and flow.outcome is None and flow.links == 2
            assert fresh.url != first.url and fresh.host == first.host
            assert code_in(fresh.message) != code_in(first.message)
            assert fresh.elicitation_id == first.elicitation_id  # the same elicitation (None in the stateless era)
            assert "fresh link" in fresh.message

            # The used-up link answers its page, to the holder and to the owner alike, even with a right code.
            for browser, code in ((holder, WRONG), (alice, code_in(first.message)), (holder, code_in(fresh.message))):
                page = await browser.open(first.url)
                assert page.status_code == 410 and "no longer works" in page.text
                refused = await browser.confirm(first.url, code)
                assert refused.status_code == 410 and 'id="code"' not in refused.text
            # The old code does not open the fresh link.
            mismatch = await alice.confirm(fresh.url, code_in(first.message))
            assert mismatch.status_code == 403 and "does not match" in mismatch.text

            done = await alice.complete(fresh)
            assert done.status_code == 200 and 'id="done"' in done.text
            assert text_of(await call) == "accept: connected"
            assert grant.connected == {"alice"}
            assert (await holder.open(first.url)).status_code == 404  # dead, and forgotten with the flow
            assert (await holder.open(fresh.url)).status_code == 404

            asked = asked_urls(recorder, era)
            assert [url for _, url in asked] == [first.url, fresh.url]
            if era == "handshake":
                assert asked[0][0] == asked[1][0] == first.elicitation_id
                (note,) = recorder.notifications_received(COMPLETE)
                assert note["params"] == {"elicitationId": first.elicitation_id}
                answers = [m["result"] for m in recorder.sent if "result" in m]
                assert answers == [{"action": "accept"}, {"action": "accept"}]
            else:
                assert asked[0][0] != asked[1][0]  # the consent to the fresh link is an answer of its own
                assert recorder.notifications_received(COMPLETE) == []

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_a_fresh_link_the_server_issues_reaches_the_person_within_the_same_call(era: str) -> None:
    server, flows, _ = make_server()
    person = Person()

    browser_step = asyncio.Event()
    wait = flows.wait

    async def spied_wait(flow: UrlFlow, timeout: float | None = None, *, link: int | None = None) -> bool:
        if link is not None:
            browser_step.set()  # the tool has the person's consent and waits for the browser
        return await wait(flow, timeout, link=link)

    flows.wait = spied_wait  # type: ignore[method-assign]

    async def body() -> None:
        async with connected(server, era, url_handler=person) as (client, recorder), Browser(flows) as alice:
            call = asyncio.create_task(client.call_tool("confirm"))
            first = await person.seen.get()
            await browser_step.wait()
            assert flows.reissue(only_flow(flows))  # e.g. the person closed the tab and asked for another
            fresh = await next_link(person, call)
            assert fresh.url != first.url and code_in(fresh.message) != code_in(first.message)
            assert (await alice.confirm(first.url, code_in(first.message))).status_code == 410
            assert (await alice.complete(fresh)).status_code == 200
            assert text_of(await call) == "accept"
            assert [url for _, url in asked_urls(recorder, era)] == [first.url, fresh.url]
            if era == "stateless":  # the retry that was waiting answered with the fresh link itself
                rounds = [sorted(r.get("inputRequests", {})) for r in recorder.results()]
                assert len(rounds) == 3 and all(rounds[:2]) and rounds[2] == []

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_fresh_links_are_bounded_and_past_the_bound_the_flow_is_still_the_owners(era: str) -> None:
    server, flows, _ = make_server(fresh_links=1, poll_wait=0.2)
    person = Person()

    async def body() -> None:
        async with (
            connected(server, era, url_handler=person, max_input_rounds=1000) as (client, recorder),
            Browser(flows) as holder,
        ):
            call = asyncio.create_task(client.call_tool("confirm"))
            first = await person.seen.get()
            await burn(holder, first.url, flows.code_attempts)
            fresh = await next_link(person, call)
            await burn(holder, fresh.url, flows.code_attempts)

            flow = only_flow(flows)
            # A round trip with the server after the tool woke up: had it sent a third link, it would be here.
            await client.ping()
            await client.ping()
            assert flow.spent and flow.links == 2 and not flows.reissue(flow)
            assert len(person.all) == 2 and len(asked_urls(recorder, era)) == 2
            assert not call.done() and flow.status == "pending"  # still the owner's: nobody ended it
            call.cancel()  # the owner gives up (the manual control); no wrong code could do it for them
            await asyncio.gather(call, return_exceptions=True)

    run(body)


def test_a_fresh_link_replaces_a_claimed_one_and_the_old_browser_loses_its_claim() -> None:
    flows = UrlElicitations("http://flows.test")
    grant = ProviderGrant(flows)
    flow = flows.start("Connect", owner="alice", handler=grant)

    async def body() -> None:
        async with Browser(flows) as first_browser, Browser(flows) as alice:
            old_url, old_code = flow.url, flow.code
            assert old_code is not None
            claimed = await first_browser.confirm(old_url, old_code)
            assert claimed.status_code == 303 and flow.status == "claimed"
            old_state = flow.state

            assert flows.reissue(flow)
            assert flow.url != old_url and flow.code != old_code and flow.status == "pending" and flow.state is None
            # The browser that held the old claim cannot go on with it: not the link, not the callback.
            assert (await first_browser.open(old_url)).status_code == 410
            back = await first_browser.http.get(f"{flows.callback_url}?state={old_state}&code=c")
            assert back.status_code == 400 and grant.connected == set()
            # Nor with the fresh link without its code: the claim and the tries start over for it.
            assert (await first_browser.open(flow.url)).status_code == 200
            assert flow.code is not None
            claimed = await alice.confirm(flow.url, flow.code)
            assert claimed.status_code == 303
            assert (await first_browser.open(flow.url)).status_code == 409
            done = await alice.http.get(f"{flows.callback_url}?state={flow.state}&code=c")
            assert done.status_code == 200 and flow.status == "complete" and grant.connected == {"alice"}

    run(body)


def test_reissue_is_refused_for_a_finished_flow_a_page_of_your_own_and_past_the_bound() -> None:
    flows = UrlElicitations("http://flows.test", fresh_links=2)
    own_page = flows.start("Pay", url="https://pay.example/{elicitation_id}")
    assert not flows.reissue(own_page) and own_page.links == 0

    flow = flows.start("Connect")
    urls = {flow.url}
    for _ in range(2):
        assert flows.reissue(flow)
        urls.add(flow.url)
    assert len(urls) == 3 and flow.links == 3
    assert not flows.reissue(flow) and flow.links == 3
    assert flows.complete(flow) and not flows.reissue(flow)

    with pytest.raises(ValueError):
        UrlElicitations(fresh_links=-1)
    with pytest.raises(ValueError):
        UrlElicitations(code_attempts=0)


def test_the_32042_path_keeps_the_flow_pending_when_its_link_is_used_up() -> None:
    flows = UrlElicitations("http://flows.test", code_attempts=2)
    flow = flows.start("Connect", owner="alice")

    async def body() -> None:
        async with Browser(flows) as holder:
            await burn(holder, flow.url, 2)
            assert flow.status == "pending" and flow.spent
            assert flow.code is not None
            assert (await holder.confirm(flow.url, flow.code)).status_code == 410  # even the right code is too late
            # The call that answered -32042 is over; the client's retry starts a new flow, and this one
            # ends at its own expiry. Completing it from the app still works until then.
            assert flows.complete(flow) and flow.outcome == "accept"

    run(body)
