"""The official example app servers (npm ``@modelcontextprotocol/server-basic-vanillajs`` and
``server-system-monitor`` 2.0.3, whose views are built on ``@modelcontextprotocol/ext-apps``'
``App``: the package's app side) rendered by ``backchannel connect``'s apps page in headless
Chromium. Each step is checked in the app's DOM (inside the sandbox proxy's inner frame) and
from a screenshot of its frame: not blank, and changed by the app's own tool call, which the
stdio tap shows reached the server. Quitting ``connect`` tears the app down and ends the page.

Also here: our probe app (``apps_server.py``) posts malformed messages and forbidden calls, and
gets a JSON-RPC error for each while the page and the app go on working.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _apps_browser import Connect, assert_not_blank, changed_pixels, launch, received, screenshot, tapped, until

from peers.paths import NODE22, NODE_MODULES

pytestmark = pytest.mark.interop

VANILLA = NODE_MODULES / "@modelcontextprotocol" / "server-basic-vanillajs" / "dist" / "index.js"
MONITOR = NODE_MODULES / "@modelcontextprotocol" / "server-system-monitor" / "dist" / "index.js"
OUR_SERVER = [sys.executable, "-m", "backchannel", "run", str(Path(__file__).with_name("apps_server.py"))]
PAGE = r"open its page in a browser: (http://127\.0\.0\.1:\d+/[A-Za-z0-9_-]+/)"
ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"

for entry in (VANILLA, MONITOR):
    if not entry.is_file():
        pytest.skip(f"{entry} is missing: run tests/peers/install.sh", allow_module_level=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    try:
        yield context.new_page()
    finally:
        context.close()


def _app(page: Any) -> Any:
    """The app's document: the inner frame of the (one) sandbox proxy."""
    return page.frame_locator("section.view iframe").frame_locator("iframe")


def _end(connect: Connect, page: Any) -> None:
    """``quit``: the app is asked to tear down, its frame goes, the page says the session ended."""
    assert connect.quit() == 0
    until(lambda: page.locator("#state").get_attribute("data-state") == "ended", "the page to say the session ended")
    assert page.locator("section.view").get_attribute("data-status") == "closed"


def test_basic_vanillajs_shows_the_result_and_its_button_calls_the_server(page: Any, tmp_path: Path) -> None:
    log = tmp_path / "to-server.jsonl"
    connect = Connect(tapped(log, [str(NODE22), str(VANILLA), "--stdio"]))
    try:
        connect.wait_for(r"Connected to Basic MCP App Server")
        connect.send("call get-time")
        url = connect.wait_for(PAGE).group(1)
        printed = connect.wait_for(rf"│ time\s+│ ({ISO})").group(1)  # the terminal's rendering of the result
        page.goto(url)
        app = _app(page)
        shown = until(lambda: re.fullmatch(ISO, app.locator("#server-time").inner_text()), "the app to show a time")
        assert shown.group(0) == printed  # the app shows the tool's result: the call the terminal made
        frame = page.locator("section.view iframe")
        until(lambda: frame.evaluate("e => e.style.height") not in ("", "320px"), "the app's size-changed")
        before = screenshot(frame)
        assert_not_blank(before)
        assert received(log, "tools/call", "get-time") == 1

        app.locator("#get-time-btn").click()
        until(lambda: app.locator("#server-time").inner_text() != printed, "the button's result")
        after_click = app.locator("#server-time").inner_text()
        assert re.fullmatch(ISO, after_click) and after_click > printed
        assert received(log, "tools/call", "get-time") == 2  # the app's call reached the server
        after = screenshot(frame)
        assert_not_blank(after)
        assert changed_pixels(before, after) > 30
        assert page.locator("section.view").get_attribute("data-status") == "done"
        _end(connect, page)
    finally:
        connect.quit()


def test_system_monitor_polls_an_app_only_tool_through_the_session(page: Any, tmp_path: Path) -> None:
    log = tmp_path / "to-server.jsonl"
    connect = Connect(tapped(log, [str(NODE22), str(MONITOR), "--stdio"]))
    try:
        connect.wait_for(r"Connected to System Monitor Server")
        connect.send("call get-system-info")
        url = connect.wait_for(PAGE).group(1)
        hostname = connect.wait_for(r'"hostname": "([^"]+)"').group(1)  # the terminal's rendering of the result
        page.goto(url)
        app = _app(page)
        until(lambda: app.locator("#info-hostname").inner_text() == hostname, "the app to show the hostname")
        button = app.locator("#poll-toggle-btn")
        until(lambda: button.inner_text() == "Stop", "the app to start polling")  # it polls once it has the result
        until(lambda: received(log, "tools/call", "poll-system-stats") >= 1, "a poll to reach the server")
        button.click()  # Stop
        until(lambda: app.locator("#status-text").inner_text() == "Stopped", "the polling to stop")
        frame = page.locator("section.view iframe")
        stopped = screenshot(frame)
        assert_not_blank(stopped)
        polls = received(log, "tools/call", "poll-system-stats")

        button.click()  # Start: poll-system-stats (visibility ["app"]) through connect's session
        polled = lambda: received(log, "tools/call", "poll-system-stats") >= polls + 2  # noqa: E731
        until(polled, "the app's polls to reach the server")
        until(lambda: re.fullmatch(r"\d\d:\d\d:\d\d", app.locator("#status-text").inner_text()), "a poll's time shown")
        assert button.inner_text() == "Stop"
        polling = screenshot(frame)
        assert_not_blank(polling)
        assert changed_pixels(stopped, polling) > 30
        _end(connect, page)
    finally:
        connect.quit()


def test_a_misbehaving_app_gets_json_rpc_errors_and_the_page_stays_up(page: Any, tmp_path: Path) -> None:
    connect = Connect(OUR_SERVER)
    try:
        connect.wait_for(r"Connected to apps-test")
        connect.send("call probe")
        url = connect.wait_for(PAGE).group(1)
        page.goto(url)
        app = _app(page)
        until(lambda: app.locator("#alive").inner_text() == "secret ran 0 times", "the probe to finish", 60)
        codes = {item.get_attribute("data-id"): item.get_attribute("data-code") for item in app.locator("li").all()}
        expected = {
            "old": "-32600",  # jsonrpc "1.0"
            "early": "-32600",  # a request before ui/initialize
            "init": "ok",
            "unknown": "-32601",
            "params": "-32602",
            "secret": "-32602",  # visibility ["model"]: refused, never sent (it ran 0 times)
            "missing": "-32602",
            "link": "-32602",  # javascript: is no link to open
            "huge": "-32603",  # past the page's 4 MiB: the page answers that backchannel refused it
            "runs": "ok",
        }
        assert {key: codes.get(key) for key in expected} == expected
        nulls = sorted(code for key, code in codes.items() if key and key.startswith("null-"))
        assert nulls == ["-32600", "-32600", "-32700"]  # a string, an object id, a BigInt id (not JSON)
        assert "the app may not call 'secret'" in connect.wait_for(r"refused: .*secret.*").group(0)
        # The declared CSP, first in the app's document: a fetch to an undeclared origin is refused.
        body = app.locator("body")
        policy = body.get_attribute("data-policy") or ""
        assert "connect-src https://api.example.com;" in policy and "default-src 'none'" in policy
        until(lambda: body.get_attribute("data-fetch") == "refused", "the undeclared fetch to be refused")
        assert (body.get_attribute("data-violated") or "").startswith("connect-src http://127.0.0.1:9")
        # Sandboxed twice: the proxy (another origin than the page) and the app's frame inside it.
        proxy = page.locator("section.view iframe")
        assert proxy.get_attribute("sandbox") == "allow-scripts allow-same-origin allow-forms"
        assert proxy.get_attribute("src").split("/")[2] != url.split("/")[2]
        inner = page.frame_locator("section.view iframe").locator("iframe")
        assert inner.get_attribute("sandbox") == "allow-scripts allow-same-origin allow-forms"
        assert page.locator("#state").get_attribute("data-state") == "connected"

        connect.send("call clock")  # the page stays up: the next app is shown and works
        until(lambda: page.locator("section.view").count() == 2, "a second app on the page")
        clock = page.frame_locator("section.view:first-child iframe").frame_locator("iframe")
        until(lambda: clock.locator("body").get_attribute("data-result") == "shown", "the clock to show its result")
        clock.locator("#tick").click()
        until(lambda: clock.locator("#status").inner_text() == "ticked", "the tick")
        assert clock.locator("#count").inner_text() == "1"
    finally:
        assert connect.quit() == 0
