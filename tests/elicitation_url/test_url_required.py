"""URL mode's ``-32042`` (URLElicitationRequiredError) on the wire: the error lists the flows, the client
finishes them and retries (after the completion notification, after the bounded wait, or when the person says
ready), retries are bounded, a decline is not retried, and the stateless era uses MRTR instead.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from _url_harness import (
    Browser,
    Person,
    connected,
    make_server,
    run,
    text_of,
)

from backchannel import Context, RequestError, Server
from backchannel.client.url_flow import UrlConsent, UrlElicitation, UrlFlowIncomplete
from backchannel.server.url_elicitation import url_elicitation_required

COMPLETE = "notifications/elicitation/complete"

# ----------------------------------------------------------------------------- -32042 path


def test_32042_lists_the_flow_and_the_client_retries_after_completion() -> None:
    server, flows, grant = make_server()
    person = Person()

    async def body() -> None:
        async with (
            connected(server, "handshake", url_handler=person, principal="alice") as (client, recorder),
            Browser(flows) as browser,
        ):
            call = asyncio.create_task(client.call_tool("gated"))
            request = await person.seen.get()
            (error,) = recorder.errors()
            assert error["code"] == -32042
            (listed,) = error["data"]["elicitations"]
            assert set(listed) == {"mode", "elicitationId", "url", "message"} and listed["mode"] == "url"
            assert listed["elicitationId"] == request.elicitation_id and listed["url"] == request.url
            assert len(recorder.requests_written("tools/call")) == 1  # no retry before the flow is done
            await browser.complete(request)
            assert text_of(await call) == "ready"
            (note,) = recorder.notifications_received(COMPLETE)
            assert note["params"]["elicitationId"] == request.elicitation_id
            assert len(recorder.requests_written("tools/call")) == 2
            assert grant.connected == {"alice"}

    run(body)


def test_via_error_in_the_stateless_era_uses_mrtr_instead() -> None:
    server, flows, _ = make_server()
    person = Person()

    async def body() -> None:
        async with connected(server, "stateless", url_handler=person) as (client, recorder), Browser(flows) as browser:
            call = asyncio.create_task(client.call_tool("gated"))
            await browser.complete(await person.seen.get())
            assert text_of(await call) == "ready"  # the re-run finds the tool's own state ready
            assert not recorder.errors() and "-32042" not in recorder.all_text()

    run(body)


def _prerequisite_server(always: bool = False) -> tuple[Server, list[int]]:
    """A tool like server-everything's error path: -32042 once (or always), never a notification."""
    server = Server("prereq", "1.0")
    calls: list[int] = []

    @server.tool()
    def prereq() -> str:
        calls.append(1)
        if always or len(calls) == 1:
            elicitation = {"mode": "url", "elicitationId": f"e-{len(calls)}", "url": "https://example.com/x"}
            raise url_elicitation_required([{**elicitation, "message": "Open this first."}])
        return "proceeded"

    return server, calls


def test_32042_without_a_notification_retries_after_the_bounded_wait() -> None:
    server, calls = _prerequisite_server()

    async def body() -> None:
        async with connected(server, "handshake", url_handler=Person(), url_wait=0.3) as (client, _):
            started = time.monotonic()
            assert text_of(await client.call_tool("prereq")) == "proceeded"
            assert time.monotonic() - started >= 0.3
            assert len(calls) == 2

    run(body)


def test_32042_ready_signal_is_the_manual_retry_control() -> None:
    server, _calls = _prerequisite_server()

    async def handler(request: UrlElicitation) -> UrlConsent:
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        ready.set_result(None)  # the person pressed "done"
        return UrlConsent("accept", ready)

    async def body() -> None:
        async with connected(server, "handshake", url_handler=handler, url_wait=30) as (client, _):
            started = time.monotonic()
            assert text_of(await client.call_tool("prereq")) == "proceeded"
            assert time.monotonic() - started < 5

    run(body)


def test_32042_retries_are_bounded() -> None:
    server, calls = _prerequisite_server(always=True)

    async def body() -> None:
        async with connected(server, "handshake", url_handler=Person(), url_wait=0.01, url_retries=2) as (client, _):
            with pytest.raises(UrlFlowIncomplete) as caught:
                await client.call_tool("prereq")
            assert caught.value.code == -32042 and caught.value.action == "cancel"
            assert len(calls) == 3

    run(body)


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_32042_declined_is_not_retried(action: str) -> None:
    server, _calls = _prerequisite_server()

    async def body() -> None:
        async with connected(server, "handshake", url_handler=Person(action)) as (client, recorder):
            with pytest.raises(UrlFlowIncomplete) as caught:
                await client.call_tool("prereq")
            assert caught.value.action == action
            assert len(recorder.requests_written("tools/call")) == 1

    run(body)


def test_32042_without_a_url_handler_surfaces_the_error() -> None:
    server, _calls = _prerequisite_server()

    async def body() -> None:
        async with connected(server, "handshake") as (client, _):
            with pytest.raises(RequestError) as caught:
                await client.call_tool("prereq")
            assert caught.value.code == -32042 and not isinstance(caught.value, UrlFlowIncomplete)

    run(body)


def test_url_elicitation_required_accepts_only_url_elicitations_with_ids() -> None:
    with pytest.raises(ValueError):
        url_elicitation_required([{"mode": "form", "message": "m"}])
    with pytest.raises(ValueError):
        url_elicitation_required([{"mode": "url", "url": "https://x", "message": "m"}])
    with pytest.raises(ValueError):
        url_elicitation_required([])
    error = url_elicitation_required([{"mode": "url", "url": "https://x", "message": "m", "elicitationId": "e"}])
    assert error.to_error()["code"] == -32042 and error.data["elicitations"][0]["elicitationId"] == "e"


def test_the_client_ignores_completion_of_unknown_ids() -> None:
    server = Server("noisy", "1.0")

    @server.tool()
    def noisy(ctx: Context) -> str:
        ctx.connection.notify(COMPLETE, {"elicitationId": "nobody-asked"})
        return "ok"

    async def body() -> None:
        async with connected(server, "handshake", url_handler=Person()) as (client, recorder):
            seen: list[str] = []
            client.inputs.url_flows.on_complete = seen.append
            assert text_of(await client.call_tool("noisy")) == "ok"
            assert recorder.notifications_received(COMPLETE) and seen == []
            assert not client.inputs.url_flows.is_complete("nobody-asked")
            assert text_of(await client.call_tool("noisy")) == "ok"  # the connection is fine

    run(body)


# --------------------------------------------------------------------- capabilities
