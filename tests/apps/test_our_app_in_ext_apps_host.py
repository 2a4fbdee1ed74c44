"""An app served by our server, rendered by the official host side of MCP Apps: a page built on
``@modelcontextprotocol/ext-apps`` 2.0.4's ``AppBridge`` and ``PostMessageTransport`` with the
official TypeScript client (``@modelcontextprotocol/client`` 2.4.0), bundled for the browser by
esbuild once per module (``ext_apps_host/host.mjs``), in headless Chromium.

The client finds the clock tool's ``_meta.ui.resourceUri`` (with the package's own
``getToolUiResourceUri``), reads the resource over Streamable HTTP, and the bridge renders it:
the app shows the tool's result; its Tick button's ``tools/call`` of ``tick`` (an app-only tool)
goes through the bridge to our server, whose count the app then shows, and a client of ours
sees the same count on the server; the package's ``teardownResource`` reaches the app. Each step
is checked in the app's DOM and from a screenshot of its frame.
"""

from __future__ import annotations

import concurrent.futures
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _apps_browser import assert_not_blank, changed_pixels, launch, screenshot, until

from backchannel import Client
from backchannel.testing import free_port, run, running_process
from peers.paths import NODE_MODULES, TESTS_DIR

pytestmark = pytest.mark.interop

HERE = Path(__file__).parent
ESBUILD = NODE_MODULES / "@esbuild" / "linux-x64" / "bin" / "esbuild"
APP_BRIDGE = NODE_MODULES / "@modelcontextprotocol" / "ext-apps" / "dist" / "src" / "app-bridge.js"

for needed in (ESBUILD, APP_BRIDGE):
    if not needed.is_file():
        pytest.skip(f"{needed} is missing: run tests/peers/install.sh", allow_module_level=True)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The test host's bundle built, and its page and our MCP server on one origin: its URL."""
    bundle = tmp_path_factory.mktemp("ext-apps-host") / "host.js"
    entry = HERE / "ext_apps_host" / "host.mjs"
    build = [str(ESBUILD), str(entry), "--bundle", "--format=esm", "--platform=browser", f"--outfile={bundle}"]
    done = subprocess.run(build, cwd=TESTS_DIR, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    port = free_port()
    command = [sys.executable, str(HERE / "ext_apps_host" / "serve.py"), str(port), str(bundle)]
    with running_process(command, port=port, start_timeout=30):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


def _count_on_the_server(site: str) -> int:
    """The tick count our server holds, asked by a client of ours (in a thread of its own: Playwright's
    sync API keeps an event loop running in this one)."""

    async def main() -> int:
        async with Client.http(f"{site}/mcp", era="stateless") as client:
            return int((await client.call_tool("clock", {})).structured_content["count"])  # type: ignore[index]

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(run, main, 30).result()


def test_the_ext_apps_host_renders_our_app_and_its_tool_calls_reach_our_server(browser: Any, site: str) -> None:
    context = browser.new_context(viewport={"width": 900, "height": 700})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(f"{site}/")
        state = page.locator("#state")
        until(lambda: state.get_attribute("data-state") == "result sent", "the bridge to send the result")
        body = page.locator("body")
        assert body.get_attribute("data-uri") == "ui://clock/app.html"
        assert body.get_attribute("data-mime") == "text/html;profile=mcp-app"
        app = page.frame_locator("#app")
        sent = body.get_attribute("data-time")
        until(lambda: app.locator("#time").inner_text() == sent, "the app to show the tool's result")
        assert app.locator("body").get_attribute("data-host") == "ext-apps-test-host"
        assert app.locator("body").get_attribute("data-input") == "{}"
        until(lambda: body.get_attribute("data-resized") == "yes", "the app's size-changed")
        frame = page.locator("#app")
        before = screenshot(frame)
        assert_not_blank(before)
        count = _count_on_the_server(site)

        app.locator("#tick").click()
        until(lambda: app.locator("#status").inner_text() == "ticked", "the app's tools/call through the bridge")
        assert app.locator("#count").inner_text() == str(count + 1)
        assert _count_on_the_server(site) == count + 1  # it reached our server
        after = screenshot(frame)
        assert_not_blank(after)
        assert changed_pixels(before, after) > 30

        page.evaluate("window.teardown()")
        until(lambda: state.get_attribute("data-state") == "torn down", "the teardown's answer")
        assert app.locator("body").get_attribute("data-teardown") == "the test host is done"
        assert errors == []
    finally:
        context.close()
