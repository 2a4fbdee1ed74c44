"""Shared pieces for the terminal-client tests: a captured console, a session wired to an in-process server."""

from __future__ import annotations

import contextlib
import io
from collections.abc import AsyncIterator, Coroutine, Iterable
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console

from backchannel import Server
from backchannel.cli.loader import load_server
from backchannel.testing import connected
from backchannel.testing import run as kit_run
from backchannel.ui import Question, Session, scripted

ROOT = Path(__file__).resolve().parents[2]
DEMO_SERVER = ROOT / "examples" / "demo_server.py"
UI_SERVER = Path(__file__).resolve().parent / "ui_server.py"
T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T], timeout: float = 30) -> T:
    """The kit's ``run``, with the longer bound a terminal session needs."""
    return kit_run(coro, timeout)


def captured_console(width: int = 120) -> Console:
    """A console that records into a string: read it with ``text(console)``."""
    return Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False, highlight=False)


def text(console: Console) -> str:
    file = console.file
    assert isinstance(file, io.StringIO)
    return file.getvalue()


def demo_server() -> Server:
    return load_server(str(DEMO_SERVER))


def ui_server() -> Server:
    return load_server(str(UI_SERVER))


class Driven:
    """A session, its console, the questions asked, and more answers to feed."""

    def __init__(self, session: Session, asked: list[Question], answers: list[str | BaseException]) -> None:
        self.session = session
        self.asked = asked
        self._answers = answers

    @property
    def output(self) -> str:
        return text(self.session.console)

    def answer(self, *answers: str | BaseException) -> None:
        self._answers.extend(answers)

    async def do(self, line: str, *answers: str | BaseException) -> str:
        """Run a command line (feeding ``answers`` to its questions); the output it printed."""
        self.answer(*answers)
        before = len(self.output)
        keep_going = await self.session.execute(line)
        assert keep_going, f"{line!r} ended the session"
        return self.output[before:]


@contextlib.asynccontextmanager
async def driven(
    server: Server,
    era: str = "handshake",
    *,
    answers: Iterable[str | BaseException] = (),
    save_dir: Path | None = None,
    roots: Iterable[str] = (),
    log_level: str | None = None,
    **session_options: Any,
) -> AsyncIterator[Driven]:
    """A ``Session`` connected to ``server`` in-process, answering questions from a script."""
    queue: list[str | BaseException] = list(answers)
    asked: list[Question] = []
    ask = scripted(queue, asked)
    session = Session(captured_console(), ask, save_dir=save_dir, roots=list(roots), **session_options)
    async with connected(server, era, **session.client_options()) as client:  # type: ignore[arg-type]
        await session.start(client, log_level=log_level)
        yield Driven(session, asked, queue)


def sign_in_through_the_page(url: str, code: str, login: str = "octocat") -> str:
    """What the person does in their browser for a URL request of the demo's deploy story:
    open the page, type the confirmation code, sign in to the "GitHub" stand-in and allow.
    One cookie jar throughout, as a browser has; the title of the last page."""
    import re

    import httpx2 as httpx

    with httpx.Client(follow_redirects=True, timeout=10) as browser:
        page = browser.get(url)
        assert page.status_code == 200 and "Confirm it is you" in page.text, page.text
        signed = browser.post(url, data={"code": code})  # -> 303 to the provider's sign-in page
        assert signed.status_code == 200 and "Sign in to GitHub" in signed.text, signed.text
        done = browser.post(str(signed.url), data={"login": login, "password": f"{login}-pass", "decision": "allow"})
        title = re.search(r"<h1[^>]*>(.*?)</h1>", done.text)
        return title.group(1) if title else done.text
