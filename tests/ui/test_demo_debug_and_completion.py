"""``backchannel demo``: ``log debug`` shows more, and Tab completes the template's variable (issue #18, item 7).

Before, the demo never logged at debug level, so ``log debug`` changed nothing on screen, and
its template ``demo://cities/{name}`` had no completer, so README's "Tab completes a template's
variables" did nothing there. The demo's deploy story now says at debug level what it found
in the roots and, for each build step, the command it stands for; the template completes city
names through the server (``completion/complete``).
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest
from _ui_harness import demo_server, driven, run, sign_in_through_the_page
from test_ui_story import workspace
from test_ui_terminal import Term, finish, start, terms  # noqa: F401 - terms is a fixture


def decline_the_form(child: Term) -> None:
    child.expect(r"branch\*:")
    child.sendline()
    child.expect(r"environment\* \[production\]:")
    child.sendline()
    child.expect(r"\[A\]ccept")
    child.sendline("d")
    child.expect(r"Nothing was deployed \(decline\)\.")
    child.expect("demo>")


def test_log_debug_shows_what_the_deploy_found(terms: list[Term], tmp_path: Path) -> None:  # noqa: F811
    child = start(terms, "demo", cwd=workspace(tmp_path), columns=120)
    child.expect("demo>")
    mark = child.mark()
    child.sendline("call deploy_to_production")
    decline_the_form(child)
    assert "[debug]" not in child.since(mark)  # info, the default: no debug lines
    child.sendline("log debug")
    child.expect("Log level set to debug.")
    child.expect("demo>")
    child.sendline("call deploy_to_production")
    child.expect(r"\[debug\] deploy: 1 root offered; workspace shop, branch main \(its \.git/HEAD\)")
    decline_the_form(child)
    finish(child)


def test_tab_completes_the_demo_template(terms: list[Term]) -> None:  # noqa: F811
    child = start(terms, "demo")
    child.expect("demo>")
    child.sendline("read demo://cities/{name}")
    child.expect(r"name\*:")
    # (prompt_toolkit draws only what Tab adds to the line: "sbon" after "Li".)
    child.send("Li\t")
    child.expect("sbon")
    child.sendline()
    child.expect("Reading demo://cities/Lisbon")
    child.expect('"country": "Portugal"')
    child.expect("demo>")
    # A name the demo does not know still reads: completion offers, it does not restrict.
    child.sendline("read demo://cities/Porto")
    child.expect('"country": "unknown"')
    finish(child)


def test_each_build_step_says_its_command_at_debug(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = demo_server()
    monkeypatch.setattr(sys.modules["deploy_demo"], "PACE", 0.0)  # the build's pauses, not its words

    async def main() -> str:
        opened: asyncio.Queue[str] = asyncio.Queue()

        def browser(url: str) -> bool:
            opened.put_nowait(url)
            return True

        roots = [str(workspace(tmp_path))]
        async with driven(server, "handshake", roots=roots, log_level="debug", opener=browser) as ui:
            call = asyncio.create_task(ui.do("call deploy_to_production", "<default>", "<default>", "a", "y"))
            url = await opened.get()
            code = re.search(r"confirmation code (\d{4}-\d{4})", ui.output)
            assert code is not None
            assert await asyncio.to_thread(sign_in_through_the_page, url, code.group(1)) == "Done"
            return await call

    out = run(main(), 60)
    for line in (
        "[debug] deploy: 1 root offered; workspace shop, branch main (its .git/HEAD)",
        "[info] deploy: check out main ...",
        "[debug] deploy: $ git checkout main",
        "[debug] deploy: $ pytest -q",
        "[debug] deploy: $ kubectl set image deployment/web web=registry.example.com/release:main -n production",
        "[info] deploy: switch production to the new release ...",
    ):
        assert line in out, line
    assert out.index("$ git checkout main") < out.index("install the dependencies ...")  # under its own step
