"""Who may finish a URL flow: the person who was asked, in the browser that proved it.

A forwarded URL without the code, a token used a second time or after it expired, a
forwarded authorization URL finished in another browser, a cross-site POST, a browser
logged in as someone else: all refused (EL-63..65).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import httpx2 as httpx
import pytest
from _url_harness import BASE, Browser, Person, ProviderGrant, code_in, connected, live, make_server, run, text_of

from backchannel import Client, Context, Server
from backchannel.http_host.authenticator import BearerTokens
from backchannel.server.url_elicitation import UrlElicitations


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _flows(**options: object) -> UrlElicitations:
    return UrlElicitations(BASE, **options)  # type: ignore[arg-type]


def test_the_url_names_nobody_and_grants_nothing() -> None:
    flows = _flows()
    flow = flows.start("Pay 10 EUR", owner="alice@example.com")
    assert "alice" not in flow.url and flow.code is not None and flow.code.replace("-", "") not in flow.url
    assert flow.code in flow.prompt and flow.code not in flow.message
    token = flow.url.rsplit("/", 1)[1]
    assert len(token) >= 43  # 256 bits

    async def body() -> None:
        async with Browser(flows) as browser:
            page = await browser.open(flow.url)
            assert page.status_code == 200 and "Pay 10 EUR" in page.text and flow.code not in page.text
            assert page.headers["referrer-policy"] == "no-referrer" and page.headers["cache-control"] == "no-store"
            assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
            assert not flow.done  # opening the page does nothing

    run(body)


def test_a_forwarded_url_without_the_code_is_refused() -> None:
    flows = _flows(code_attempts=3)
    flow = flows.start("Connect", owner="alice")

    async def body() -> None:
        async with Browser(flows) as someone_else:
            for left in (2, 1):
                refused = await someone_else.confirm(flow.url, "0000-0000")
                assert refused.status_code == 403 and f"{left} tr" in refused.text
                assert flow.status == "pending"
            closed = await someone_else.confirm(flow.url, "1111-1111")
            assert closed.status_code == 410 and "no longer works" in closed.text
            # The link is used up, not the owner's flow (issue 12, item 9).
            assert flow.status == "pending" and flow.outcome is None and flow.spent
            assert (await someone_else.confirm(flow.url, flow.code or "")).status_code == 410

    run(body)


def test_the_token_is_claimed_once_then_refused_elsewhere_and_dead_after_use() -> None:
    flows = _flows()
    grant = ProviderGrant(flows)
    flow = flows.start("Connect", owner="alice", handler=grant)

    async def body() -> None:
        async with Browser(flows) as alice, Browser(flows) as bob:
            assert flow.code is not None
            claimed = await alice.confirm(flow.url, flow.code.replace("-", " "))
            assert claimed.status_code == 303 and claimed.headers["location"].startswith("http://provider.test/")
            cookie = claimed.headers["set-cookie"]
            assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/elicit" in cookie
            assert flow.status == "claimed"
            # Bob got the URL and even the code: the link is used up for every other browser.
            assert (await bob.confirm(flow.url, flow.code)).status_code == 409
            assert (await bob.open(flow.url)).status_code == 409
            # Alice reloading goes on (a fresh state each time).
            again = await alice.open(flow.url)
            assert again.status_code == 303 and flow.state is not None and flow.state in again.headers["location"]
            done = await alice.http.get(f"{flows.callback_url}?state={flow.state}&code=c")
            assert done.status_code == 200 and flow.status == "complete"
            assert (await alice.open(flow.url)).status_code == 404  # a used token is dead
            assert (await alice.confirm(flow.url, flow.code)).status_code == 404

    run(body)


def test_a_forwarded_authorization_url_finished_in_another_browser_is_refused() -> None:
    flows = _flows()
    grant = ProviderGrant(flows)
    flow = flows.start("Connect", owner="alice", handler=grant)

    async def body() -> None:
        async with Browser(flows) as alice, Browser(flows) as bob:
            assert flow.code is not None
            await alice.confirm(flow.url, flow.code)
            state = flow.state
            # Alice forwards the authorization URL; Bob signs in at the provider; it returns to Bob's browser.
            refused = await bob.http.get(f"{flows.callback_url}?state={state}&code=bobs-code")
            assert refused.status_code == 403 and "another browser" in refused.text
            assert flow.status == "claimed" and grant.connected == set()
            forged = await bob.http.get(
                f"{flows.callback_url}?state={state}&code=x", headers={"cookie": "bcflow_x=guess"}
            )
            assert forged.status_code == 403
            done = await alice.http.get(f"{flows.callback_url}?state={state}&code=alices-code")
            assert done.status_code == 200 and grant.connected == {"alice"}
            replay = await alice.http.get(f"{flows.callback_url}?state={state}&code=alices-code")
            assert replay.status_code == 400  # a state works once

    run(body)


def test_a_cross_site_post_is_refused() -> None:
    flows = _flows()
    flow = flows.start("Connect", owner="alice")

    async def body() -> None:
        async with Browser(flows) as victim:
            assert flow.code is not None
            for headers in (
                {"origin": "http://evil.test"},
                {"sec-fetch-site": "cross-site"},
                {"origin": "null"},
                {"origin": "null", "sec-fetch-site": "same-site"},
            ):
                refused = await victim.confirm(flow.url, flow.code, **headers)
                assert refused.status_code == 403 and flow.status == "pending"
            same = await victim.confirm(flow.url, flow.code, origin="null", **{"sec-fetch-site": "same-origin"})
            assert same.status_code == 200 and flow.status == "complete"

    run(body)


def test_an_identity_hook_refuses_a_browser_logged_in_as_someone_else() -> None:
    async def identify(headers: Mapping[str, str]) -> str | None:
        cookie = headers.get("cookie", "")
        return cookie.split("login=", 1)[1].split(";")[0] if "login=" in cookie else None

    flows = _flows(identify=identify)
    flow = flows.start("Connect", owner="alice")

    async def body() -> None:
        async with Browser(flows, {"login": "bob"}) as bob, Browser(flows) as anonymous:
            assert flow.code is not None
            for browser in (bob, anonymous):
                page = await browser.open(flow.url)
                assert page.status_code == 403 and 'id="code"' not in page.text
                assert (await browser.confirm(flow.url, flow.code)).status_code == 403
            async with Browser(flows, {"login": "alice"}) as alice:
                assert (await alice.open(flow.url)).status_code == 200
                assert (await alice.confirm(flow.url, flow.code)).status_code == 200
            assert flow.status == "complete"

    run(body)


def test_an_expired_token_is_refused_and_cancels_the_flow() -> None:
    clock = Clock()
    flows = _flows(ttl=60, clock=clock)
    flow = flows.start("Connect", owner="alice")

    async def body() -> None:
        async with Browser(flows) as alice:
            clock.now += 61
            assert (await alice.open(flow.url)).status_code == 404
            assert (await alice.confirm(flow.url, flow.code or "")).status_code == 404
            assert flow.outcome == "cancel" and flows.get(flow.id) is None

    run(body)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_a_flow_nobody_finishes_times_out_as_cancel(era: str) -> None:
    server, flows, _ = make_server(ttl=0.3, poll_wait=0.1)
    person = Person()

    async def body() -> None:
        async with connected(server, era, url_handler=person, max_input_rounds=20) as (client, _):
            assert text_of(await client.call_tool("confirm")) == "cancel"
            async with Browser(flows) as late:
                assert (await late.open(person.all[0].url)).status_code == 404

    run(body)


def test_the_flow_of_a_cancelled_call_dies_with_it() -> None:
    server, flows, _ = make_server()
    person = Person()

    async def body() -> None:
        async with connected(server, "handshake", url_handler=person) as (client, _):
            call = asyncio.create_task(client.call_tool("confirm"))
            request = await person.seen.get()
            await asyncio.sleep(0.05)
            call.cancel()
            await asyncio.gather(call, return_exceptions=True)
            await asyncio.sleep(0.05)
            async with Browser(flows) as browser:
                assert (await browser.open(request.url)).status_code == 404

    run(body)


def test_the_flow_pages_are_served_beside_the_mcp_endpoint_with_the_principal_as_owner() -> None:
    server = Server("http-url", "1.0")
    flows = UrlElicitations()
    server.url_elicitations = flows

    @server.tool()
    async def confirm(ctx: Context) -> str:
        outcome = await ctx.elicit_url("Confirm")
        return f"{outcome.action} for {ctx.principal}"

    app = server.http_app(authenticator=BearerTokens({"t-alice": "alice"}))
    person = Person()

    async def body() -> None:
        async with live(app) as base:
            flows.base_url = base
            for era in ("handshake", "stateless"):
                bearer = {"authorization": "Bearer t-alice"}
                async with (
                    Client.http(f"{base}/mcp", headers=bearer, era=era, url_elicitation=person) as client,
                    httpx.AsyncClient() as browser,  # no bearer token: the pages are for browsers
                ):
                    call = asyncio.create_task(client.call_tool("confirm"))
                    request = await person.seen.get()
                    assert request.url.startswith(f"{base}/elicit/")
                    (flow,) = [f for f in flows._flows.values() if not f.done]
                    assert flow.owner == "alice"
                    assert (await browser.get(request.url)).status_code == 200
                    done = await browser.post(request.url, data={"code": code_in(request.message)})
                    assert done.status_code == 200
                    assert text_of(await call) == "accept for alice"
                    assert (await browser.get(f"{base}/elicit/nope")).status_code == 404

    run(body, timeout=30)
