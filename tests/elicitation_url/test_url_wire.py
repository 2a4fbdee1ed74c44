"""URL-mode elicitation on the wire, both eras: what is sent, when, and to whom.

Handshake era: ``elicitation/create`` with ``elicitationId``, ``accept`` as mere
consent, ``notifications/elicitation/complete`` when the browser flow ends, and the
``-32042`` path with a bounded retry. Stateless era: no id, no notification, no
``-32042``: the MRTR loop and ``requestState``-only rounds until the flow is done.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from _url_harness import (
    BASE,
    ERAS,
    Browser,
    Person,
    code_in,
    connected,
    make_server,
    run,
    text_of,
)

from backchannel import Context, MissingCapability, RequestError, Server
from backchannel.client.inputs import InputHandlers
from backchannel.client.url_flow import UrlElicitation
from backchannel.server.url_elicitation import UrlElicitations
from backchannel.testing import within
from backchannel.types.errors import InvalidParams

COMPLETE = "notifications/elicitation/complete"


# ----------------------------------------------------------------------------- request path


def test_handshake_request_path_sends_an_id_and_announces_completion() -> None:
    server, flows, _ = make_server()
    person = Person()

    async def body() -> None:
        async with connected(server, "handshake", url_handler=person) as (client, recorder), Browser(flows) as browser:
            call = asyncio.create_task(client.call_tool("confirm"))
            request = await person.seen.get()
            (create,) = recorder.requests_received("elicitation/create")
            params = create["params"]
            assert params["mode"] == "url" and params["url"] == request.url
            assert params["elicitationId"] == request.elicitation_id
            assert request.server_name == "url-test" and request.host == "flows.test"
            assert request.url.startswith(f"{BASE}/elicit/")
            code = code_in(request.message)
            assert code not in request.url and code.replace("-", "") not in request.url
            await client.ping()  # two round trips: whatever the server did about the accept is done
            await client.ping()
            assert not call.done()  # accept is consent only: the tool waits for the browser
            done = await browser.complete(request)
            assert done.status_code == 200
            result = await call
            assert text_of(result) == "accept"
            (note,) = recorder.notifications_received(COMPLETE)
            assert note["params"] == {"elicitationId": request.elicitation_id}
            order = [m.get("method") or ("result" if "result" in m else "") for m in recorder.received]
            assert order.index(COMPLETE) < len(order) - 1 - order[::-1].index("result")
            assert client.inputs.url_flows.is_complete(request.elicitation_id)

    run(body)


def test_stateless_request_path_has_no_id_no_notification_and_no_32042() -> None:
    server, flows, _ = make_server()
    person = Person()

    async def body() -> None:
        async with connected(server, "stateless", url_handler=person) as (client, recorder), Browser(flows) as browser:
            call = asyncio.create_task(client.call_tool("confirm"))
            request = await person.seen.get()
            assert request.elicitation_id is None and "elicitationId" not in request.params
            await browser.complete(request)
            assert text_of(await call) == "accept"
        first = recorder.results()[0]
        assert first["resultType"] == "input_required"
        ((key, asked),) = first["inputRequests"].items()
        assert asked["method"] == "elicitation/create" and asked["params"]["mode"] == "url"
        assert "requestState" in first
        retry = recorder.requests_written("tools/call")[1]["params"]
        assert retry["inputResponses"] == {key: {"action": "accept"}}
        assert retry["requestState"] == first["requestState"]
        text = recorder.all_text()
        assert "elicitationId" not in text and COMPLETE not in text and "-32042" not in text
        assert not recorder.errors()

    run(body)


def test_stateless_retry_answers_not_yet_with_state_only_rounds() -> None:
    server, flows, _ = make_server(poll_wait=0.05)
    person = Person()

    async def body() -> None:
        async with (
            connected(server, "stateless", url_handler=person, max_input_rounds=100) as (client, recorder),
            Browser(flows) as browser,
        ):
            call = asyncio.create_task(client.call_tool("confirm"))
            request = await person.seen.get()
            # The person is slow: the browser is opened only once the client has retried twice.
            await within(lambda: len(recorder.results()) >= 3, "three input_required rounds")
            await browser.complete(request)
            assert text_of(await call) == "accept"
        waiting = [r for r in recorder.results() if r.get("resultType") == "input_required"]
        assert len(waiting) >= 3
        assert all("inputRequests" not in r and r["requestState"] for r in waiting[1:])
        assert len(person.all) == 1  # the person was asked once

    run(body)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_end_the_flow(era: str, action: str) -> None:
    server, flows, _ = make_server()
    person = Person(action)

    async def body() -> None:
        async with connected(server, era, url_handler=person) as (client, recorder), Browser(flows) as browser:
            result = await client.call_tool("confirm")
            assert text_of(result) == action
            (request,) = person.all
            assert (await browser.open(request.url)).status_code == 404  # the link died with the flow
            assert not recorder.notifications_received(COMPLETE)

    run(body)


def test_an_oauth_style_flow_completes_through_the_callback_and_keeps_its_secrets() -> None:
    server, flows, grant = make_server()
    person = Person()

    async def body() -> None:
        async with (
            connected(server, "handshake", url_handler=person, principal="alice") as (client, recorder),
            Browser(flows) as browser,
        ):
            call = asyncio.create_task(client.call_tool("connect"))
            done = await browser.complete(await person.seen.get())
            assert done.status_code == 200 and "Done" in done.text
            assert text_of(await call) == "accept: connected"
            assert grant.connected == {"alice"} and grant.finished[0]["code"] == "granted"
            assert text_of(await client.call_tool("connect")) == "already connected"
            assert "never-sent" not in recorder.all_text()
            assert len(person.all) == 1

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_undeclared_url_mode_sends_nothing_and_is_32021(era: str) -> None:
    server, flows, _ = make_server()

    def form_only(params: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("nothing may be asked")

    async def body() -> None:
        async with connected(server, era, elicitation=form_only) as (client, recorder):
            assert client.capabilities["elicitation"] == {"form": {}}
            for tool in ("confirm", "gated"):
                with pytest.raises(RequestError) as caught:
                    await client.call_tool(tool)
                assert caught.value.code == -32021
                assert caught.value.data == {"requiredCapabilities": {"elicitation": {"url": {}}}}
            assert not recorder.requests_received("elicitation/create")
            assert all("inputRequests" not in r for r in recorder.results())
            assert not flows._flows  # no flow was even started

    run(body)


def test_the_client_refuses_an_undeclared_url_request_with_32602() -> None:
    handlers = InputHandlers(elicitation=lambda params: {"action": "decline"})
    params = {"mode": "url", "message": "m", "url": "https://example.com", "elicitationId": "e"}

    async def body() -> None:
        with pytest.raises(InvalidParams):
            await handlers.answer("elicitation/create", params)

    run(body)


def test_the_session_core_refuses_to_send_url_mode_to_a_form_only_client() -> None:
    server = Server("raw", "1.0")

    @server.tool()
    async def raw(ctx: Context) -> str:
        params = {"mode": "url", "message": "m", "url": "https://example.com", "elicitationId": "e"}
        try:
            await ctx.connection.request("elicitation/create", params)
        except MissingCapability:
            return "refused"
        return "sent"

    async def body() -> None:
        async with connected(server, "handshake", elicitation=lambda p: {"action": "cancel"}) as (client, recorder):
            assert text_of(await client.call_tool("raw")) == "refused"
            assert not recorder.requests_received("elicitation/create")

    run(body)


# ------------------------------------------------------------------ the client's view


def test_the_handler_sees_the_full_url_host_and_warnings() -> None:
    plain = UrlElicitation.from_params({"url": "https://github.com/login", "message": "m"}, "srv")
    assert plain.host == "github.com" and plain.warnings == () and plain.get("url") == plain.url
    assert plain["message"] == "m"
    tricky = UrlElicitation.from_params({"url": "http://user@xn--gthub-n4a.com:8443/a", "message": "m"}, "srv")
    assert tricky.host == "xn--gthub-n4a.com:8443"
    assert len(tricky.warnings) == 3  # punycode, user info, plain http
    loopback = UrlElicitation.from_params({"url": "http://127.0.0.1:9/x", "message": "m"}, "srv")
    assert loopback.warnings == ()
    for bad in ("javascript:alert(1)", "file:///etc/passwd", "https:///nohost", 42):
        with pytest.raises(InvalidParams):
            UrlElicitation.from_params({"url": bad, "message": "m"}, "srv")


def test_a_handler_answering_nonsense_is_an_error_to_the_server() -> None:
    server, _, _ = make_server()

    async def body() -> None:
        async with connected(server, "handshake", url_handler=lambda request: "maybe") as (client, recorder):
            with pytest.raises(RequestError) as caught:
                await client.call_tool("confirm")
            assert caught.value.code == -32602  # the server got -32602 for its request, and says so
            assert any(m.get("error", {}).get("code") == -32602 for m in recorder.sent)

    run(body)


def test_flows_are_bound_to_the_principal_across_stateless_retries() -> None:
    server, flows, _ = make_server()
    person = Person()

    async def body() -> None:
        async with connected(server, "stateless", url_handler=person, principal="alice") as (alice, recorder):
            call = asyncio.create_task(alice.call_tool("confirm"))
            await person.seen.get()
            state = recorder.results()[0]["requestState"]
            key = next(iter(recorder.results()[0]["inputRequests"]))
            call.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await call
        async with connected(server, "stateless", url_handler=person, principal="bob") as (bob, _):
            replay = {"name": "confirm", "requestState": state, "inputResponses": {key: {"action": "accept"}}}
            with pytest.raises(RequestError) as caught:
                await bob.request("tools/call", replay)
            assert caught.value.code == -32602 and "another user" in caught.value.message
        assert flows is server.url_elicitations

    run(body)


def test_manager_without_base_url_cannot_make_pages() -> None:
    flows = UrlElicitations()
    with pytest.raises(RuntimeError, match="public address"):
        flows.start("m")
    external = flows.start("m", url="https://pay.example/{elicitation_id}")
    assert external.url == f"https://pay.example/{external.id}" and external.code is None
    assert external.prompt == "m"
    assert flows.complete(external.id) and not flows.complete(external.id)
