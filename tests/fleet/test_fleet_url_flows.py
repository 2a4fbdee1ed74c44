"""URL-mode elicitation across a fleet of workers in one process (issue #14: "URL-mode flows (the
page, the code, the callback can each hit another worker)"), on both backends and in both eras.

A flow lives in the worker whose tool started it (its owner); its link's token and its OAuth
``state`` name that worker, and every other worker hands the owner its part: the pages (the
landing, the code's POST, the callback) and, in the stateless era, the retries' work on the flow.
Here the balancer sends each of those to a worker other than the owner (``Steered.avoid``),
and the flow's handler only succeeds where its verifier is kept: in the owner.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2
import pytest
from _url_fleet import Browser, HeldPerson, Speaker, Tap, UrlFleet, code_in, token_of, url_fleet

from backchannel import Client, Server
from backchannel.server.url_elicitation.ask import NOT_FINISHED
from backchannel.state.memory import MemoryState
from backchannel.state.shared import SharedState
from backchannel.testing import run, within

ERAS = ["handshake", "stateless"]


def _text(result: object) -> str:
    return "".join(getattr(block, "text", "") for block in getattr(result, "content", []))


@contextlib.asynccontextmanager
async def _client(fleet: UrlFleet, era: str, person: Any) -> AsyncIterator[tuple[Client, Tap]]:
    tap = Tap()
    http = httpx2.AsyncClient(transport=tap, timeout=httpx2.Timeout(30, read=None))
    try:
        async with Client.http(fleet.url, httpx_client=http, era=era, url_elicitation=person) as client:
            yield client, tap
    finally:
        await http.aclose()


@pytest.mark.parametrize("era", ERAS)
def test_the_page_the_code_and_the_callback_each_on_another_worker_than_the_flows_owner(
    era: str, new_state: Callable[[], SharedState]
) -> None:
    person = HeldPerson()

    async def body() -> None:
        async with (
            url_fleet(new_state) as fleet,
            _client(fleet, era, person) as (client, tap),
            Browser(fleet.base) as browser,
        ):
            call = asyncio.create_task(client.call_tool("connect"))
            request = await person.seen.get()
            owner = fleet.owner(request.url)
            assert fleet.workers[owner].ran == ["connect"]  # the first round ran, and the flow lives, here
            fleet.balancer.avoid = {owner}
            since = len(fleet.balancer.paths)

            # The POST goes to the owner with its headers: the owner's origin check still holds.
            forged = await browser.confirm(request.url, code_in(request.message), origin="http://elsewhere.test")
            assert forged.status_code == 403 and "Refused" in forged.text
            landing = await browser.open(request.url)
            assert landing.status_code == 200 and "Connect your account." in landing.text
            confirmed = await browser.confirm(request.url, code_in(request.message))
            assert confirmed.status_code == 303, confirmed.text
            assert confirmed.headers["set-cookie"].startswith("bcflow_")  # the owner's cookie, passed on
            done = await browser.provider_grants(confirmed.headers["location"])
            assert done.status_code == 200 and 'id="done"' in done.text

            steps = fleet.served(since)
            assert [method for _, method, _ in steps] == ["POST", "GET", "POST", "GET"]
            assert steps[3][2].startswith("/elicit/callback?state=" + fleet.apps[owner].state.worker_id + ".")
            landing_on, posted_on, callback_on = (worker for worker, _, _ in steps[1:])
            assert owner not in {landing_on, posted_on, callback_on}
            assert len({landing_on, posted_on, callback_on}) == 3
            # The handler ran where its verifier is, and nowhere else.
            owner_name = fleet.workers[owner].name
            assert [step for step, _ in fleet.grants[owner_name].log] == ["begin", "finish"]
            assert all(not grant.log for name, grant in fleet.grants.items() if name != owner_name)

            person.release.set()
            result = _text(await call)
            if era == "handshake":
                assert result == f"accept@{owner_name}"  # the tool waited in the owner
                assert b"notifications/elicitation/complete" in bytes(tap.wire)
            else:
                retried_on = fleet.posts(b"requestState")
                assert retried_on and owner not in retried_on  # the retry's worker asked the owner
                assert result.startswith("accept@") and result != f"accept@{owner_name}"

    run(body, timeout=30)


def test_stateless_retries_on_other_workers_wait_on_the_owner_until_the_browser_is_done(
    new_state: Callable[[], SharedState],
) -> None:
    async def body() -> None:
        async with url_fleet(new_state, 3, poll_wait=0.2) as fleet, Browser(fleet.base) as browser:
            person = Speaker()  # consents at once: the client retries while the browser step runs
            async with _client(fleet, "stateless", person) as (client, _):
                call = asyncio.create_task(client.call_tool("connect"))
                request, _ = await person.next(call)
                owner = fleet.owner(request.url)
                fleet.balancer.avoid = {owner}
                # Each retry lands on another worker, which asks the owner: "not yet" after poll_wait.
                await within(lambda: len(fleet.posts(b"requestState")) >= 3, "three retries answered 'not yet'")
                assert not call.done() and owner not in fleet.posts(b"requestState")
                landing = await browser.open(request.url)
                assert landing.status_code == 200
                confirmed = await browser.confirm(request.url, code_in(request.message))
                done = await browser.provider_grants(confirmed.headers["location"])
                assert done.status_code == 200
                result = _text(await call)
                assert result.startswith("accept@") and result != f"accept@{fleet.workers[owner].name}"

    run(body, timeout=30)


@pytest.mark.parametrize("era", ERAS)
def test_the_persons_words_on_another_worker_reach_the_flow(era: str, new_state: Callable[[], SharedState]) -> None:
    async def body() -> None:
        person = Speaker()
        async with url_fleet(new_state, 3) as fleet, _client(fleet, era, person) as (client, _):
            call = asyncio.create_task(client.call_tool("connect"))
            first, controls = await person.next(call)
            owner = fleet.owner(first.url)
            fleet.balancer.avoid = {owner}

            assert controls.fresh_link()
            fresh, controls = await person.next(call)
            assert fresh.url != first.url and fleet.owner(fresh.url) == owner  # made by the owner
            assert code_in(fresh.message) != code_in(first.message)

            assert controls.done()
            again, controls = await person.next(call)
            assert again.message.startswith(NOT_FINISHED) and again.url == fresh.url

            assert controls.cancel()
            assert _text(await call).startswith("cancel@")
            said_on = fleet.posts(b'"said"')
            assert len(said_on) == 3 and owner not in said_on

    run(body, timeout=30)


@pytest.mark.parametrize("era", ERAS)
def test_when_the_owner_is_gone_the_page_says_so_and_a_stateless_retry_ends_in_cancel(
    era: str, new_state: Callable[[], SharedState], caplog: pytest.LogCaptureFixture
) -> None:
    person = HeldPerson()

    async def body() -> None:
        async with (
            url_fleet(new_state, 3) as fleet,
            _client(fleet, era, person) as (client, _),
            Browser(fleet.base) as browser,
        ):
            call = asyncio.create_task(client.call_tool("connect"))
            request = await person.seen.get()
            owner = fleet.owner(request.url)
            fleet.balancer.avoid = {owner}
            await fleet.apps[owner].aclose()  # the owner stops: its flows die with it

            page = await browser.open(request.url)
            assert page.status_code == 410 and "Sign-in stopped" in page.text
            assert "ask again" in page.text
            callback = await browser.http.get(
                f"{fleet.base}/elicit/callback", params={"state": token_of(request.url), "code": "x"}
            )
            assert callback.status_code == 410

            person.release.set()
            if era == "stateless":
                with caplog.at_level(logging.WARNING, "backchannel.url_elicitation"):
                    result = _text(await call)
                assert result.startswith("cancel@") and result != f"cancel@{fleet.workers[owner].name}"
                assert any("worker running it is gone" in r.getMessage() for r in caplog.records)
            else:
                call.cancel()  # the call ran in the owner; how its stream ends is the fleet's fault tests' part
                with contextlib.suppress(BaseException):
                    await call

    run(body, timeout=30)


def test_a_server_alone_names_its_links_as_before_and_loads_no_fleet_part() -> None:
    async def body() -> None:
        server = Server("alone", state=MemoryState())
        await server.start_sharing()
        assert server.sharing.calls is None and server.url_elicitations is None
        from backchannel.server.url_elicitation import UrlElicitations

        flows = UrlElicitations("http://pages.test")
        flow = flows.start("m")
        assert "." not in token_of(flow.url) and flows.worker is None

    run(body)
