"""What the browser tests of MCP Apps share: headless Chromium (Debian's ``/usr/bin/chromium``,
driven by Playwright's sync API, launched once per module), ``backchannel connect --no-browser``
driven through a pipe, a stdio tap that records what reached a server, and the screenshot checks.

Without Chromium or Playwright the modules that import this skip, saying so
(``tests/peers/install-browser.sh`` installs Chromium).
"""

from __future__ import annotations

import io
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
HERE = Path(__file__).parent
TAP = HERE / "stdio_tap.py"
T = TypeVar("T")

if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
    pytest.skip(f"{CHROMIUM} is missing: run tests/peers/install-browser.sh (apt chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (the dev extra) is not installed")
Image = pytest.importorskip("PIL.Image", reason="Pillow (with matplotlib, the dev extra) is not installed")
ImageChops = pytest.importorskip("PIL.ImageChops")


def launch() -> Iterator[Any]:
    """A headless Chromium for one module; each test takes a fresh context (its own profile)."""
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def until(check: Callable[[], T | None], what: str, timeout: float = 30.0) -> T:
    """``check()``'s first truthy value, polled until ``timeout`` seconds pass (then fail saying ``what``)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.1)


class Connect:
    """``backchannel connect --no-browser -- COMMAND`` with its stdin and stdout through pipes."""

    def __init__(self, command: Sequence[str], *options: str) -> None:
        argv = [sys.executable, "-m", "backchannel", "connect", "--no-browser", *options, "--", *command]
        env = {**os.environ, "COLUMNS": "200"}
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        self.output = io.StringIO()
        self._chunks: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._chunks.put(line)

    def text(self) -> str:
        while not self._chunks.empty():
            self.output.write(self._chunks.get_nowait())
        return self.output.getvalue()

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def wait_for(self, pattern: str, timeout: float = 60.0, after: int = 0) -> re.Match[str]:
        """The first match of ``pattern`` in the output past character ``after``."""
        found = until(lambda: re.search(pattern, self.text()[after:]), f"{pattern!r} in the output", timeout)
        return found

    def quit(self, timeout: float = 30.0) -> int:
        if self.process.poll() is None:
            self.send("quit")
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
            raise AssertionError(f"connect did not quit in {timeout}s:\n{self.text()[-3000:]}") from None


def tapped(log: Path, command: Sequence[str]) -> list[str]:
    """``command`` run through the stdio tap, which appends each line the client sends it to ``log``."""
    return [sys.executable, str(TAP), str(log), "--", *command]


def received(log: Path, method: str, tool: str | None = None) -> int:
    """How many ``method`` requests (of ``tool``) reached the server, by the tap's log."""
    count = 0
    for line in log.read_text(encoding="utf-8").splitlines() if log.exists() else []:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("method") == method and (tool is None or (message.get("params") or {}).get("name") == tool):
            count += 1
    return count


def screenshot(locator: Any) -> Any:
    """The element as an RGB image."""
    return Image.open(io.BytesIO(locator.screenshot())).convert("RGB")


def assert_not_blank(image: Any) -> None:
    """Something is drawn: many colours, and no single colour over 97% of the pixels."""
    colours = image.getcolors(maxcolors=1 << 20) or []
    most = max(count for count, _ in colours) if colours else 0
    total = image.width * image.height
    assert len(colours) >= 8 and most < 0.97 * total, f"a blank frame: {len(colours)} colours, {most}/{total} one"


def changed_pixels(before: Any, after: Any) -> int:
    """How many pixels differ between two screenshots of one element (sizes cropped to the smaller)."""
    width, height = min(before.width, after.width), min(before.height, after.height)
    diff = ImageChops.difference(before.crop((0, 0, width, height)), after.crop((0, 0, width, height)))
    differing = diff.convert("L").point(lambda value: 255 if value else 0).histogram()[255]
    return int(differing) + abs(before.height - after.height) * width
