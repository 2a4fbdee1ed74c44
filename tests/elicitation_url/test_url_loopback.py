"""URL elicitation with no configuration: the runtime serves the out-of-band page itself.

A stdio server has no HTTP app, so its first URL flow starts a loopback-only side
listener (uvicorn, in the server's own loop, on 127.0.0.1 and a free port), imported and
started only then, and stopped when the server's run ends. A server run with
``run_http(host, port)`` serves the pages from that address instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2 as httpx
import pytest
from _url_harness import ERAS, Person, code_in, run, text_of

from _subprocesses import other_local_address
from backchannel import Client, Context, Server
from backchannel.client.url_flow import UrlElicitation
from backchannel.http_host.run_http import http_base as _http_base
from backchannel.server.url_elicitation import UrlElicitations
from backchannel.testing import free_port, port_accepts, running_process
from backchannel.transports.memory import memory_pair

PEER = Path(__file__).resolve().parents[1] / "peers" / "backchannel_server.py"
TESTS_DIR = PEER.parents[1]


def listening_on(port: int) -> set[str]:
    """The local addresses with a TCP socket listening on ``port`` (``ss -ltn``)."""
    out = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True, check=True).stdout
    return {line.split()[3].rsplit(":", 1)[0] for line in out.splitlines() if line.strip()}


def accepts(host: str, port: int) -> bool:
    """Whether ``host:port`` takes a TCP connection (a second's bound: a refused one is quick)."""
    return port_accepts(port, host, timeout=1.0)


async def finish_in_browser(request: UrlElicitation) -> httpx.Response:
    """The person: open the page, type the code the client showed, follow to the end."""
    async with httpx.AsyncClient(follow_redirects=True, timeout=10) as browser:
        landing = await browser.get(request.url)
        assert landing.status_code == 200, landing.text
        assert 'name="code"' in landing.text
        done = await browser.post(request.url, data={"code": code_in(request.message)})
        assert done.status_code == 200, done.text
        return done


def _pages(result: Any) -> dict[str, Any]:
    assert result.structured_content is not None, result
    return dict(result.structured_content)


@pytest.mark.parametrize("era", ERAS)
def test_stdio_server_serves_the_page_on_a_loopback_side_listener(era: str) -> None:
    person = Person()
    seen: dict[str, Any] = {}

    async def body() -> None:
        client = Client.stdio(
            sys.executable, [str(PEER), "--url-elicitation"], cwd=TESTS_DIR, era=era, url_elicitation=person
        )
        async with client:
            before = _pages(await client.call_tool("url_pages"))
            assert before == {"base_url": None, "listening": False, "http_stack": []}  # nothing until a flow

            call = asyncio.create_task(client.call_tool("url_confirm"))
            request = await person.seen.get()
            parts = urlsplit(request.url)
            assert (parts.scheme, parts.hostname) == ("http", "127.0.0.1") and parts.port
            assert parts.path.startswith("/elicit/")
            assert request.warnings == ()  # plain http is fine on loopback
            port = seen["port"] = parts.port
            assert listening_on(port) == {"127.0.0.1"}
            other = other_local_address()
            if other is not None:
                assert not accepts(other, port)
            await client.list_tools()  # two round trips (no ping in the stateless era): the accept is handled
            await client.list_tools()
            assert not call.done()
            done = await finish_in_browser(request)
            assert "Done" in done.text
            assert text_of(await call) == "accept"

            # The same listener serves a flow with a handler: page, redirect, callback, done.
            call = asyncio.create_task(client.call_tool("url_connect"))
            request = await person.seen.get()
            assert urlsplit(request.url).port == port
            done = await finish_in_browser(request)
            assert str(done.url).startswith(f"http://127.0.0.1:{port}/elicit/callback?")
            assert text_of(await call) == "accept: connected"

            after = _pages(await client.call_tool("url_pages"))
            assert after["base_url"] == f"http://127.0.0.1:{port}" and after["listening"] is True
            assert after["http_stack"] == ["backchannel.http_host.h1.connection"]  # run_http's own server, no more
            process = client.transport.process  # type: ignore[attr-defined]
        assert process.returncode == 0  # the server ended on its own once stdin closed
        assert not accepts("127.0.0.1", port)
        assert listening_on(port) == set()

    run(body, timeout=60)


def test_the_listener_stops_when_the_run_ends_and_its_flows_are_cancelled() -> None:
    server = Server("loopback-test")
    person = Person()
    outcomes: list[str] = []

    @server.tool()
    async def confirm(ctx: Context) -> str:
        outcome = (await ctx.elicit_url("Confirm in your browser.")).action
        outcomes.append(outcome)
        return outcome

    async def body() -> None:
        client_side, server_side = memory_pair()
        serving = asyncio.create_task(server.serve(server_side))
        async with Client(client_side, era="handshake", url_elicitation=person) as client:
            call = asyncio.create_task(client.call_tool("confirm"))
            first = await person.seen.get()
            await finish_in_browser(first)
            assert text_of(await call) == "accept"
            flows = server.url_elicitations
            assert flows is not None and flows.listening
            port = urlsplit(first.url).port
            assert port is not None and accepts("127.0.0.1", port)
            # a second flow is left open in the browser when the client goes away
            pending = asyncio.create_task(client.call_tool("confirm"))
            second = await person.seen.get()
            assert urlsplit(second.url).port == port  # one listener for every flow
        pending.cancel()
        await server_side.close()
        await serving
        assert not flows.listening and flows.base_url is None
        assert not accepts("127.0.0.1", port)
        (flow,) = [f for f in flows._flows.values() if f.url == second.url]
        assert flow.status == "failed" and flow.outcome == "cancel"

    run(body, timeout=30)


def test_the_listener_outlives_a_connection_while_another_is_open() -> None:
    server = Server("loopback-test")
    person = Person()

    @server.tool()
    async def confirm(ctx: Context) -> str:
        return (await ctx.elicit_url("Confirm in your browser.")).action

    async def body() -> None:
        one_client, one_server = memory_pair()
        two_client, two_server = memory_pair()
        serving = [asyncio.create_task(server.serve(t)) for t in (one_server, two_server)]
        async with Client(two_client, era="handshake", url_elicitation=person) as staying:
            async with Client(one_client, era="handshake", url_elicitation=person) as leaving:
                call = asyncio.create_task(leaving.call_tool("confirm"))
                await finish_in_browser(await person.seen.get())
                assert text_of(await call) == "accept"
            await one_server.close()
            await serving[0]
            flows = server.url_elicitations
            assert flows is not None and flows.listening  # the other connection may still need it
            call = asyncio.create_task(staying.call_tool("confirm"))
            await finish_in_browser(await person.seen.get())
            assert text_of(await call) == "accept"
        await two_server.close()
        await serving[1]
        assert not flows.listening

    run(body, timeout=30)


def test_the_side_listener_answers_only_to_loopback_host_names() -> None:
    """DNS rebinding: a page elsewhere points its own name at 127.0.0.1 and reaches the
    listener from the person's browser. Only loopback names in ``Host`` get through."""
    flows = UrlElicitations()

    async def body() -> None:
        base = await flows.serve_pages()
        try:
            port = urlsplit(base).port
            flow = flows.start("Confirm in your browser.")
            assert flow.code is not None
            async with httpx.AsyncClient(timeout=10) as browser:
                for host in ("attacker.test", f"attacker.test:{port}", f"127.0.0.1.attacker.test:{port}", "10.0.0.1"):
                    for response in (
                        await browser.get(flow.url, headers={"host": host}),
                        await browser.post(flow.url, data={"code": flow.code}, headers={"host": host}),
                    ):
                        assert response.status_code == 403, (host, response.text)
                        error = response.json()["error"]
                        assert error["code"] == -32600 and "Host" in error["message"]
                assert flow.status == "pending"  # the right code under a foreign name never reached the page
                for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "localhost"):
                    page = await browser.get(flow.url, headers={"host": host})
                    assert page.status_code == 200 and 'name="code"' in page.text
                done = await browser.post(flow.url, data={"code": flow.code}, headers={"host": f"localhost:{port}"})
                assert done.status_code == 200 and flow.status == "complete"
        finally:
            await flows.stop_pages()

    run(body, timeout=30)


def test_a_stdio_server_without_url_flows_never_imports_uvicorn() -> None:
    code = (
        "import asyncio, sys\n"
        "from backchannel import Client, Server\n"
        "from backchannel.transports.memory import memory_pair\n"
        "server = Server('x')\n"
        "server.add_tool(lambda text: text, name='echo')\n"
        "async def main():\n"
        "    a, b = memory_pair()\n"
        "    serving = asyncio.create_task(server.serve(b))\n"
        "    async with Client(a) as client:\n"
        "        await client.call_tool('echo', {'text': 'hi'})\n"
        "    await b.close(); await serving\n"
        "asyncio.run(main())\n"
        "print('uvicorn' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------------ run_http


@contextlib.contextmanager
def http_peer(port: int) -> Iterator[str]:
    argv = [sys.executable, str(PEER), "--url-elicitation", "--http", str(port)]
    with running_process(argv, port=port, cwd=TESTS_DIR):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.mark.parametrize("era", ERAS)
def test_run_http_serves_the_pages_from_its_own_address(era: str) -> None:
    person = Person()
    port = free_port()

    async def body(endpoint: str) -> None:
        async with Client.http(endpoint, era=era, url_elicitation=person) as client:
            pages = _pages(await client.call_tool("url_pages"))
            assert pages["base_url"] == f"http://127.0.0.1:{port}" and pages["listening"] is False
            call = asyncio.create_task(client.call_tool("url_connect"))
            request = await person.seen.get()
            assert request.url.startswith(f"http://127.0.0.1:{port}/elicit/")
            await finish_in_browser(request)
            assert text_of(await call) == "accept: connected"
            assert _pages(await client.call_tool("url_pages"))["listening"] is False  # no side listener

    with http_peer(port) as endpoint:
        run(lambda: body(endpoint), timeout=60)


def test_http_base_for_run_http() -> None:
    assert _http_base("127.0.0.1", 8000) == "http://127.0.0.1:8000"
    assert _http_base("0.0.0.0", 8000) == "http://127.0.0.1:8000"
    assert _http_base("::", 9) == "http://[::1]:9"
    assert _http_base("::1", 9) == "http://[::1]:9"
    assert _http_base("mcp.example.com", 443) == "http://mcp.example.com:443"
