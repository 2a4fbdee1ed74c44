"""``backchannel demo``: the chapter's deploy story in a pseudo-terminal, and the README's transcript of it.

The person's browser is played by the test: ``BROWSER`` names a script that writes the
URL it is asked to open to a file, and :func:`sign_in_through_the_page` opens it with
httpx, types the confirmation code shown in the terminal and signs in to the provider.
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from pathlib import Path

import pytest
from _ui_harness import ROOT, demo_server, driven, run, sign_in_through_the_page
from test_ui_terminal import Term, finish, start, terms  # noqa: F401 - terms is a fixture

README = ROOT / "README.md"
BOX = str.maketrans("", "", "│╭╮╰╯─┃┏┓┗┛━┡┩┣┫╇╋┳┻┼├┤┬┴└┘┌┐")


def fake_browser(tmp_path: Path) -> tuple[Path, Path]:
    """An executable that "opens" a URL by writing it to a file: (the program, the file)."""
    opened = tmp_path / "opened.txt"
    program = tmp_path / "fake-browser"
    program.write_text(
        f"#!{sys.executable}\nimport sys\nwith open({str(opened)!r}, 'a') as f:\n    f.write(sys.argv[1] + '\\n')\n"
    )
    program.chmod(0o755)
    return program, opened


def opened_url(opened: Path, count: int, timeout: float = 10) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = opened.read_text().split() if opened.exists() else []
        if len(lines) >= count:
            return lines[count - 1]
        time.sleep(0.05)
    raise AssertionError("the browser was not opened")


def workspace(tmp_path: Path) -> Path:
    """A checkout named shop, on the main branch: the root the demo reads."""
    shop = tmp_path / "shop"
    (shop / ".git").mkdir(parents=True)
    (shop / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return shop


def deploy(child: Term, opened: Path, count: int) -> None:
    """``call deploy_to_production`` up to the build: the form with its defaults, consent, the browser."""
    child.sendline("call deploy_to_production")
    child.expect(r"Deploy shop: which branch, to which environment\?")
    child.expect(r"branch\*:")
    child.sendline()  # main, prefilled from the workspace's git HEAD
    child.expect(r"environment\* \[production\]:")
    child.sendline()  # production, the default
    child.expect(r"\[A\]ccept / \[D\]ecline / \[C\]ancel / \[E\]dit:")
    child.sendline("a")
    child.expect("demo asks you to open a link.")
    child.expect(r"Open it in your browser\? \[y/N\]:")
    child.sendline("y")
    child.expect("Opened in your browser; finish there.")
    code = child.expect(r"The page asks for the confirmation code (\d{4}-\d{4})\.").group(1)
    child.expect("Waiting for the browser step")
    assert sign_in_through_the_page(opened_url(opened, count), code) == "Done"
    child.expect(r"\[info\] deploy: authorized by octocat")


def test_the_deploy_story(terms: list[Term], tmp_path: Path) -> None:  # noqa: F811 - the fixture
    program, opened = fake_browser(tmp_path)
    shop = workspace(tmp_path)
    child = start(terms, "demo", env={"BROWSER": str(program)}, cwd=shop, columns=100)
    child.expect("Connected to demo")
    child.expect("demo>")
    # Declining the form deploys nothing.
    child.sendline("call deploy_to_production")
    child.expect(r"branch\*:")
    child.sendline()
    child.expect(r"environment\* \[production\]:")
    child.sendline("2")  # the default is shown, not prefilled: 2 replaces it, and is Staging
    child.expect(r"Environment +Staging \(staging\)")  # the summary
    child.expect(r"\[A\]ccept")
    child.sendline("d")
    child.expect(r"Nothing was deployed \(decline\)\.")
    child.expect("demo>")
    # The whole story: roots, form, URL authorization, a build with progress and logs.
    deploy(child, opened, 1)
    child.expect(r"\[info\] deploy: check out main \.\.\.")
    child.expect(r"deploy_to_production: run the tests")  # the progress bar's label
    child.expect(r"\[info\] deploy: switch production to the new release \.\.\.")
    child.expect(r"\[notice\] deploy: production now runs shop-1")
    child.expect(r"Deployed shop \(main\) to production as shop-1, authorized by octocat\.")
    child.expect("demo>")
    # Ctrl-C during the build: cancelled on the wire, rolled back by the server, which says so.
    deploy(child, opened, 2)
    child.expect(r"\[info\] deploy: run the tests \.\.\.")
    child.send("\x03")
    child.expect("Interrupted: the request was cancelled.")
    child.expect(r"\[warning\] deploy: cancelled after 2 of 6 steps: rolling back")
    child.expect(r"\[info\] deploy: undone: install the dependencies")
    child.expect(r"\[info\] deploy: undone: check out main")
    child.expect(r"\[notice\] deploy: rolled back: production still runs the previous release")
    child.sendline("call add a=1 b=2")  # the session goes on
    child.expect(r"result\s*\S\s*3")
    child.expect("demo>")
    finish(child)
    (tmp_path / "screen.txt").write_text(child.screen)
    check_readme_transcript(child.screen)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_the_deploy_story_in_process(era: str, tmp_path: Path) -> None:
    shop = workspace(tmp_path)

    async def main() -> None:
        opened: asyncio.Queue[str] = asyncio.Queue()

        def browser(url: str) -> bool:
            opened.put_nowait(url)
            return True

        async with driven(demo_server(), era, roots=[str(shop)], log_level="info", opener=browser) as ui:
            call = asyncio.create_task(ui.do("call deploy_to_production", "x", "<default>", "a", "y"))
            url = await opened.get()
            code = re.search(r"confirmation code (\d{4}-\d{4})", ui.output)
            assert code is not None
            assert await asyncio.to_thread(sign_in_through_the_page, url, code.group(1), "hubot") == "Done"
            out = await call
            assert "Deploy shop: which branch" in out and "default main" in out
            assert "[info] deploy: authorized by hubot" in out
            assert "deploy_to_production 48/48: switch production to the new release" in out
            assert "Deployed shop (x) to production as shop-1, authorized by hubot." in out

    run(main(), 60)


def test_without_the_example_extras_the_story_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "github_connect", None)  # as if authlib or starlette were missing

    async def main() -> str:
        async with driven(demo_server(), "handshake") as ui:
            return await ui.do("call deploy_to_production", "x", "<default>", "a")

    out = run(main())
    assert "deploy_to_production failed:" in out and "pip install -e '.[examples]'" in out


def _normal(line: str) -> str:
    """A line as compared: no box drawing, no run of spaces, digits as 0, the page's token as T."""
    line = re.sub(r"/elicit/[A-Za-z0-9_-]+", "/elicit/T", line.translate(BOX))
    return re.sub(r"\d+", "0", " ".join(line.split()))


def readme_transcript() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## What a session looks like", 1)[1].split("\n## ", 1)[0]
    block = section.split("```text\n", 1)[1].split("```", 1)[0]
    return block.splitlines()


def check_readme_transcript(screen: str) -> None:
    """Every line of README's transcript (but the ``$`` command and ``...``) appears on screen, in order."""
    shown = [_normal(line) for line in screen.splitlines()]
    index = 0
    for line in readme_transcript():
        wanted = _normal(line)
        if not wanted or line.startswith("$ ") or wanted == "...":  # the command, and elided lines
            continue
        while index < len(shown) and wanted not in shown[index]:
            index += 1
        assert index < len(shown), f"README's transcript line {line!r} is not on the screen (in this order)"
        index += 1


def test_the_readme_transcript_is_checked_line_by_line() -> None:
    lines = readme_transcript()
    assert lines[0].startswith("$ ") and any("deploy_to_production" in line for line in lines)
    screen = "\n".join(line for line in lines if not line.startswith("$ ") and line != "...")
    check_readme_transcript(screen)  # the transcript fits itself
    try:
        check_readme_transcript(screen.replace("rolled back", "deployed anyway"))
    except AssertionError as exc:
        assert "rolled back" in str(exc)
    else:
        raise AssertionError("a line missing from the screen went unnoticed")
