"""The TerminalSession controller against real servers in-process: commands in, rendered output out, in both eras."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _ui_harness import captured_console, demo_server, driven, run, text, ui_server
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from backchannel.ui import Cancelled, Question, TerminalSession, scripted
from backchannel.ui.completion import argument_completer, partial_template
from backchannel.ui.terminal import _QuestionCompleter

ERAS = ["handshake", "stateless"]
PNG = b"\x89PNG\r\n\x1a\n not really a png"


@pytest.mark.parametrize("era", ERAS)
def test_lists_and_calls_on_the_demo_server(era: str) -> None:
    async def main() -> None:
        async with driven(demo_server(), era) as ui:
            assert f"Connected to demo 0.1.0 ({era} era" in ui.output
            assert "A demo server: arithmetic" in ui.output
            out = await ui.do("tools")
            assert "5 tools" in out and "slow_count" in out and "deploy_to_production" in out and "a*, b=1" in out
            out = await ui.do("call add a=2 b=40")
            assert any("result" in line and "42" in line for line in out.splitlines())
            out = await ui.do("call add", "2", "")  # asked field by field; b left to its default
            assert any("result" in line and "3" in line for line in out.splitlines())
            out = await ui.do('call weather {"city": "Oslo", "unit": "F"}')
            assert "Oslo" in out and "57.2" in out
            out = await ui.do("call weather city=' '")
            assert "weather failed:" in out and "Tell me which city." in out
            out = await ui.do("prompts")
            assert "code_review" in out and "code*, language" in out
            out = await ui.do("prompt code_review", "print(1)", "")
            assert "user:" in out and "Please review this python code" in out
            out = await ui.do("prompt code_review code=x language=rust")
            assert "review this rust code" in out
            out = await ui.do("resources")
            assert "demo://readme" in out and "text/markdown" in out
            out = await ui.do("templates")
            assert "demo://cities/{name}" in out
            out = await ui.do("read demo://cities/Porto")
            assert '"name": "Porto"' in out
            out = await ui.do("info")
            assert "capabilities" in out and "tools" in out

    run(main())


def test_progress_is_shown_on_a_plain_console() -> None:
    async def main() -> None:
        async with driven(demo_server(), "handshake") as ui:
            out = await ui.do("call slow_count to=3")
            assert "slow_count 1/3: counted 1" in out
            assert "slow_count 3/3: counted 3" in out
            assert out.rstrip().endswith("counted to 3")

    run(main())


def test_progress_is_a_bar_on_a_terminal() -> None:
    async def main() -> None:
        async with driven(demo_server(), "handshake") as ui:
            ui.session.console = console = captured_console()
            console._force_terminal = True  # a terminal: rich draws live bars
            ui.session.renderer.console = ui.session.progress.console = console
            await ui.do("call slow_count to=3")
            assert ui.session.progress.bar is None  # put away when the call ended
            assert "counted to 3" in text(console)

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_an_elicitation_is_rendered_as_a_form_and_answered(era: str) -> None:
    async def main() -> None:
        async with driven(ui_server(), era) as ui:
            answers = ["Ada", "nope", "ada@example.com", "12", "36", "<default>", "2", "rust", "a"]
            out = await ui.do("call signup", *answers)
            assert "Please sign up for the service." in out
            assert "! email: not a valid e-mail address" in out
            assert "! age: must be at least 18" in out
            assert "welcome Ada <ada@example.com> age 36 plan pro topics ['rust']" in out
            out = await ui.do("call signup", "Ada", Cancelled())  # Esc at the second field
            assert "Form cancelled." in out and "signup cancel" in out

    run(main())


def test_declining_and_cancelling_a_form_reach_the_server() -> None:
    async def main() -> None:
        async with driven(ui_server(), "stateless") as ui:
            out = await ui.do("call confirm", "yes", "d")
            assert "confirm decline None" in out
            out = await ui.do("call confirm", Cancelled())
            assert "Form cancelled." in out and "confirm cancel None" in out
            out = await ui.do("call confirm", KeyboardInterrupt())
            assert "confirm cancel None" in out
            out = await ui.do("call confirm", "no", "")
            assert "confirm accept {'sure': False}" in out

    run(main())


def test_images_are_saved_and_their_path_shown(tmp_path: Path) -> None:
    async def main() -> str:
        async with driven(ui_server(), "handshake", save_dir=tmp_path) as ui:
            return await ui.do("call picture")

    out = run(main())
    assert "here is a picture" in out
    (saved,) = tmp_path.iterdir()
    assert saved.read_bytes() == PNG and saved.suffix == ".png"
    assert f"saved to {saved}" in out


@pytest.mark.parametrize("era", ERAS)
def test_log_messages_are_shown_and_the_level_switches(era: str) -> None:
    async def main() -> None:
        async with driven(ui_server(), era, log_level="debug") as ui:
            out = await ui.do("call chatty")
            assert "[debug] a debug line" in out and "[warning] a warning line" in out
            out = await ui.do("log warning")
            assert "Log level set to warning." in out
            out = await ui.do("call chatty")
            assert "[warning] a warning line" in out and "info line" not in out
            out = await ui.do("loglevel")
            assert "Log level: warning" in out
            out = await ui.do("loglevel loud")
            assert "unknown level 'loud'" in out
            out = await ui.do("logs")
            assert out.count("[warning] a warning line") == 2 and "[debug] a debug line" in out
            out = await ui.do("logs warning")
            assert "debug" not in out

    run(main())


def test_a_log_message_with_a_logger_and_data() -> None:
    session = TerminalSession(captured_console(), scripted([]))
    session.on_log({"level": "error", "logger": "db", "data": {"code": 7}})
    session.log_level = "critical"
    session.on_log({"level": "error", "data": "hidden"})
    assert text(session.console) == '[error] db: {"code": 7}\n'
    assert len(session.logs) == 2


@pytest.mark.parametrize("era", ERAS)
def test_ctrl_c_cancels_the_running_call_and_the_session_goes_on(era: str) -> None:
    @contextlib.contextmanager
    def press_ctrl_c_soon(task: asyncio.Future[Any]) -> Iterator[None]:
        handle = asyncio.get_running_loop().call_later(0.3, task.cancel)
        try:
            yield
        finally:
            handle.cancel()

    async def main() -> None:
        async with driven(ui_server(), era) as ui:
            ui.session.interrupts = press_ctrl_c_soon
            out = await ui.do("call slow steps=100")
            assert "Interrupted: the request was cancelled." in out
            assert "finished" not in out
            out = await ui.do("call slow steps=1")
            assert "finished" in out

    run(main())


def test_roots_are_offered_to_the_server(tmp_path: Path) -> None:
    async def main() -> None:
        async with driven(ui_server(), "handshake", roots=[str(tmp_path)]) as ui:
            out = await ui.do("roots")
            assert tmp_path.as_uri() in out
            out = await ui.do("call roots")
            assert tmp_path.as_uri() in out

    run(main())


def test_mistakes_are_explained_and_the_session_goes_on() -> None:
    async def main() -> None:
        async with driven(demo_server(), "handshake") as ui:
            assert "no tool named 'nope' (tools: add, weather, slow_count, haiku, deploy_to_production)" in await ui.do(
                "call nope"
            )
            assert "no prompt named 'nope'" in await ui.do("prompt nope")
            assert "a: 'x' is not a whole number" in await ui.do("call add a=x")
            assert "Resource not found: demo://nothing" in await ui.do("read demo://nothing")
            assert "Cancelled." in await ui.do("call add", Cancelled())
            assert "help" in await ui.do("help")
            assert await ui.session.execute("quit") is False

    run(main())


def test_the_connection_ending_ends_the_session() -> None:
    async def main() -> None:
        async with driven(demo_server(), "handshake") as ui:
            await ui.session._client().aclose()
            assert await ui.session.execute("tools") is False
            assert "closed" in ui.output

    run(main())


def test_prompt_arguments_complete_through_the_server() -> None:
    class FakeCompletion:
        values = ["python", "pascal"]

    class FakeClient:
        server_capabilities = {"completions": {}}
        calls: list[tuple[Any, ...]] = []

        async def complete(self, ref: Any, argument: Any, context: Any = None) -> FakeCompletion:
            self.calls.append((ref, argument, context))
            return FakeCompletion()

    session = TerminalSession(captured_console(), scripted([]))
    session.client = FakeClient()  # type: ignore[assignment]
    complete = argument_completer(session.client, "code_review", "language", {"code": "x"})
    assert complete is not None
    assert run(complete("p")) == ["python", "pascal"]
    assert FakeClient.calls == [({"type": "ref/prompt", "name": "code_review"}, ("language", "p"), {"code": "x"})]

    # In the terminal, Tab offers the question's own choices and then the server's.
    question = Question("language: ", completions=["perl"], complete=complete)

    async def offered(typed: str) -> list[str]:
        completer = _QuestionCompleter(question)
        return [c.text async for c in completer.get_completions_async(Document(typed), CompleteEvent())]

    assert run(offered("p")) == ["perl", "python", "pascal"]
    FakeClient.server_capabilities = {}
    assert argument_completer(session.client, "code_review", "language", {}) is None


def test_choices_complete_each_item_of_a_multi_select() -> None:
    completer = _QuestionCompleter(Question("topics: ", completions=["python", "rust", "go"], separator=","))
    found = list(completer.get_completions(Document("python, r"), CompleteEvent()))
    assert [(c.text, c.start_position) for c in found] == [("rust", -1)]


def test_progress_waits_while_a_question_is_on_screen() -> None:
    from backchannel.protocol.events import ProgressReceived

    session = TerminalSession(captured_console(), scripted([]))
    event = ProgressReceived(request_id=1, token=1, progress=1, total=2, message=None)
    session.progress.asking = 1
    session._on_progress("job")(event)
    assert text(session.console) == ""
    session.progress.asking = 0
    session._on_progress("job")(event)
    assert text(session.console) == "job 1/2\n"


@pytest.mark.parametrize("era", ERAS)
def test_roots_are_added_and_removed_at_run_time(era: str, tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()

    async def main() -> None:
        async with driven(ui_server(), era, roots=[str(first)]) as ui:
            assert first.as_uri() in await ui.do("call roots")  # (the handshake era caches them now)
            out = await ui.do(f"roots add {second}")
            told = "the server was told they changed" if era == "handshake" else "the server sees them"
            assert "Roots changed: now 2 roots" in out and told in out and second.as_uri() in out
            out = await ui.do("call roots")
            assert first.as_uri() in out and second.as_uri() in out
            out = await ui.do(f"roots remove {first}")
            assert "now 1 root;" in out
            out = await ui.do("call roots")
            assert second.as_uri() in out and first.as_uri() not in out
            assert "The roots did not change." in await ui.do(f"roots add {second}")
            assert "no such file or directory" in await ui.do(f"roots add {tmp_path / 'nope'}")
            assert "is not one of the roots" in await ui.do(f"roots remove {first}")
            assert "usage: roots remove PATH" in await ui.do("roots remove")
            assert "usage: roots [add PATH" in await ui.do("roots shuffle")

    run(main())


def test_a_session_without_roots_can_add_one(tmp_path: Path) -> None:
    async def main() -> None:
        async with driven(ui_server(), "handshake") as ui:
            assert "No roots are offered" in await ui.do("roots")
            assert "[]" in await ui.do("call roots")  # declared, with none yet
            await ui.do(f"roots add {tmp_path}")
            assert tmp_path.as_uri() in await ui.do("call roots")

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_template_variables_complete_through_the_server_with_context(era: str) -> None:
    async def main() -> None:
        async with driven(ui_server(), era) as ui:
            complete = ui.session.complete_line
            assert await complete("read fil") == ["files://"]  # the template's literal start
            assert await complete("read files://") == [
                "files://",
                "files://backchannel/",
                "files://backstage/",
                "files://other/",
            ]
            assert await complete("read files://back") == ["files://backchannel/", "files://backstage/"]
            # The name's completer sees the project typed before it (context.arguments).
            assert await complete("read files://backchannel/") == [
                "files://backchannel/README.md",
                "files://backchannel/pyproject.toml",
            ]
            assert await complete("read files://other/n") == ["files://other/notes.txt"]
            assert await complete("read files://nosuch/") == []
            assert await complete("read demo://x") == []
            assert await complete("call ") == ["signup", "confirm", "picture", "chatty", "slow", "roots", "link"]
            # read with a template asks its variables, with the same completion.
            out = await ui.do("read files://{project}/{name}", "backstage", "app.yaml")
            assert "Reading files://backstage/app.yaml" in out and "the file app.yaml of backstage" in out
            project, name = ui.asked[-2:]
            assert project.complete is not None and name.complete is not None
            assert await project.complete("oth") == ["other"]
            assert await name.complete("") == ["app.yaml"]  # the project answered before is the context

    run(main())


def test_where_a_typed_uri_stands_in_a_template() -> None:

    assert partial_template("files://{project}/{name}", "files://ba") == ("project", "ba", {}, "files://", "/")
    assert partial_template("files://{project}/{name}", "files://a%20b/c") == (
        "name",
        "c",
        {"project": "a b"},
        "files://a%20b/",
        "",
    )
    assert partial_template("files://{project}/{name}", "files:/") is None  # still in the literal
    assert partial_template("files://{project}/{name}", "other://x") is None
    assert partial_template("files://{project}/{name}", "files://a/b/c") is None  # {name} is one segment
    assert partial_template("docs://{+path}", "docs://a/b") == ("path", "a/b", {}, "docs://", "")
    assert partial_template("q://x{?page}", "q://x?page=1") is None  # not a simple template


@pytest.mark.parametrize("era", ERAS)
def test_a_url_request_is_consented_then_waited_for(era: str) -> None:
    opened: list[str] = []

    async def main() -> None:
        async with driven(ui_server(), era, opener=lambda url: opened.append(url) or True) as ui:
            out = await ui.do("call link after=0.5", "y")
            assert "uitest asks you to open a link." in out and "Site: auth.example.com" in out
            assert "Opened in your browser; finish there." in out
            assert "Waiting for the browser step (Ctrl-C cancels) ..." in out
            assert ("The browser step is done." in out) == (era == "handshake")  # only that era notifies
            assert "link accept" in out
            assert opened and opened[0].startswith("https://auth.example.com/connect/")
            out = await ui.do("call link after=5", "n")
            assert "Declined: the link was not opened." in out and "link decline" in out and len(opened) == 1

    run(main())


def test_with_no_browser_the_link_is_printed() -> None:
    async def main() -> None:
        async with driven(ui_server(), "handshake", opener=None) as ui:
            out = await ui.do("call link after=0.2", "yes")
            assert "Open this link in your browser: https://auth.example.com/connect/" in out
            assert "link accept" in out

    run(main())


def test_the_browser_wait_is_a_spinner_on_a_terminal() -> None:
    async def main() -> None:
        async with driven(ui_server(), "handshake", opener=None) as ui:
            ui.session.console = console = captured_console()
            console._force_terminal = True
            ui.session.renderer.console = ui.session.forms.console = ui.session.link_consent.console = console
            ui.session.progress.console = console
            spinners: list[Any] = []
            start = ui.session.progress.start

            def watch(label: str, total: float | None) -> None:
                start(label, total)
                spinners.append((label, total, ui.session.progress.bar))

            ui.session.progress.start = watch  # type: ignore[method-assign]
            await ui.do("call link after=0.5", "y")
            assert spinners[0][:2] == ("Waiting for the browser step (Ctrl-C cancels)", None)
            assert ui.session.progress.bar is None  # put away when the call ended
            assert "The browser step is done." in text(console) and "link accept" in text(console)

    run(main())
