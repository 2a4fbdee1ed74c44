"""What a burst of keystrokes costs in completion requests: at most one in flight, one per pause.

    python benchmarks/completion_burst.py                      # both eras, the default plans
    python benchmarks/completion_burst.py --keystrokes 60 --interval-ms 40 --server-ms 80

Types into a field the server completes (a prompt's argument) through the terminal client's own
question (``TerminalInput.ask``: prompt_toolkit, ``QuestionCompleter``, ``TypingCompleter``), with
a pipe for a keyboard, against this file's server (``serve``) in a subprocess over stdio. Plans:

* **burst**: N keystrokes, one every ``interval`` ms (faster than the 150 ms debounce), then a pause;
* **hesitant**: the same keystrokes, with a pause longer than the debounce after every 5th while
  the server takes ``server`` ms to answer, so that some requests are typed over and cancelled.

For each plan: keystrokes, requests the client sent, how many of those it cancelled, and the most
in flight at once, as the client counted them (requests handed to ``Client`` and not yet over)
and as the server saw them (completers running at once). The claim is the last two: never more
than one. Times are real but are not the claim; nothing here asserts a speed.

``serve`` is the server: a prompt ``pick(language)`` whose completer takes ``--delay-ms``, blocks
until cancelled for the values given with ``--hold``, and logs ``start TEXT N`` (N completers
running, this one included), ``cancelled TEXT`` and ``done TEXT`` to ``--log``; the tool
``stats`` returns (and resets) what the server counted.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backchannel import Server

if TYPE_CHECKING:
    from backchannel.ui.completion import TypingCompleter

HERE = Path(__file__).resolve()
WORDS = [
    "python",
    "pytorch",
    "pyside",
    "pydantic",
    "pytest",
    "go",
    "rust",
    "ruby",
    "perl",
    "php",
    "haskell",
    "kotlin",
    "javascript",
    "typescript",
]
#: The keystrokes typed: a long word, so a burst has somewhere to go.
TEXT = "pythonistas-" * 10

# ------------------------------------------------------------------------------------------ server


def make_server(log: Path | None = None, hold: Sequence[str] = (), delay: float = 0.0) -> Server:
    """The server ``serve`` runs (a test may serve it in process)."""
    server = Server("burst")
    held = set(hold)
    counted = {"received": 0, "cancelled": 0, "running": 0, "max_running": 0}
    out = log.open("a", buffering=1) if log is not None else None

    def note(line: str) -> None:
        if out is not None:
            out.write(line + "\n")

    async def languages(value: str) -> list[str]:
        counted["received"] += 1
        counted["running"] += 1
        counted["max_running"] = max(counted["max_running"], counted["running"])
        note(f"start {value} {counted['running']}")
        try:
            if value in held:
                await asyncio.Event().wait()  # only a cancellation ends it
            await asyncio.sleep(delay)
        except asyncio.CancelledError:
            counted["cancelled"] += 1
            note(f"cancelled {value}")
            raise
        finally:
            counted["running"] -= 1
        note(f"done {value}")
        return [word for word in WORDS if word.startswith(value)]

    def pick(language: str) -> str:
        """Pick a language."""
        return f"Use {language}."

    server.add_prompt(pick, completers={"language": languages})

    @server.tool()
    def stats() -> dict[str, int]:
        """What the server counted since the last call."""
        found = dict(counted)
        counted.update(received=0, cancelled=0, max_running=counted["running"])
        return found

    return server


# ------------------------------------------------------------------------------------------ client


@dataclass
class Counts:
    keystrokes: int
    sent: int
    cancelled: int
    max_in_flight: int
    server_received: int
    server_cancelled: int
    server_max_running: int


Plan = Sequence[tuple[str, float]]  # (keys to send, seconds to wait after them)


def burst_plan(keystrokes: int, interval: float, settle: float) -> Plan:
    keys = TEXT[:keystrokes]
    return [(key, interval) for key in keys[:-1]] + [(keys[-1], settle)]


def hesitant_plan(keystrokes: int, interval: float, settle: float, every: int = 5) -> Plan:
    keys = TEXT[:keystrokes]
    return [(key, settle if (i + 1) % every == 0 else interval) for i, key in enumerate(keys)]


async def type_plan(
    client: Any,
    plan: Plan,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    pause: Callable[[float], Awaitable[object]] | None = None,
    debounce: float | None = None,
    bound: float = 30.0,
) -> Counts:
    """Type ``plan`` into the ``pick`` prompt's question, then Enter; what it cost.

    ``clock``, ``sleep`` and ``debounce`` (default ``DEBOUNCE``) go to the field's
    ``TypingCompleter``; ``pause(seconds)`` waits between keystrokes (default ``sleep``): a test
    passes a fake clock's, which moves time on. Each keystroke is waited for until the field has
    seen it, and a pause past the debounce until its request has gone out (or was not needed),
    each within ``bound`` seconds, so that what is counted does not depend on the machine's speed."""
    from prompt_toolkit.application.current import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from backchannel.ui.completion import DEBOUNCE, TypingCompleter, server_fetch
    from backchannel.ui.questions import Question
    from backchannel.ui.terminal import TerminalInput

    fetch = server_fetch(client, {"type": "ref/prompt", "name": "pick"}, "language", {})
    assert fetch is not None, "the server offers no completions"
    typing = TypingCompleter(fetch, delay=DEBOUNCE if debounce is None else debounce, clock=clock, sleep=sleep)
    pause = pause or sleep
    typed = ""
    with create_pipe_input() as keyboard, create_app_session(input=keyboard, output=DummyOutput()):
        asking = asyncio.ensure_future(TerminalInput().ask(Question("language: ", complete=typing)))
        for keys, wait in plan:
            keyboard.send_text(keys)
            typed += keys
            await _until(_shows(typing, typed), bound, f"the field to show {typed!r}")
            await pause(wait)
            if wait >= typing.delay:
                await _until(_asked(typing, typed), bound, f"the request for {typed!r}")
        await _until(lambda: typing.answered(typed) and typing.in_flight == 0, bound, "the last answer")
        keyboard.send_text("\r")
        answer = await asyncio.wait_for(asking, bound)
    assert answer == typed, (answer, typed)
    server = (await client.call_tool("stats", {})).structured_content
    return Counts(
        keystrokes=len(typed),
        sent=typing.sent,
        cancelled=typing.cancelled,
        max_in_flight=typing.max_in_flight,
        server_received=server["received"],
        server_cancelled=server["cancelled"],
        server_max_running=server["max_running"],
    )


def _shows(typing: TypingCompleter, text: str) -> Callable[[], bool]:
    return lambda: typing.text == text


def _asked(typing: TypingCompleter, text: str) -> Callable[[], bool]:
    """The request for ``text`` has gone out, or was not needed (answered already)."""
    return lambda: typing.in_flight > 0 or typing.answered(text)


async def _until(condition: Callable[[], bool], bound: float, what: str) -> None:
    deadline = time.monotonic() + bound
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} within {bound} s")
        await asyncio.sleep(0.002)


def server_command(*, log: Path | None = None, hold: Sequence[str] = (), delay_ms: float = 0.0) -> list[str]:
    """The command that runs this file's server."""
    command = [sys.executable, str(HERE), "serve", "--delay-ms", str(delay_ms)]
    if log is not None:
        command += ["--log", str(log)]
    for value in hold:
        command += ["--hold", value]
    return command


async def measure(
    era: str, keystrokes: int, interval: float, server_ms: float, debounce: float
) -> list[tuple[str, Counts, float]]:
    from backchannel import Client

    command = server_command(delay_ms=server_ms)
    settle = debounce + 0.1 + server_ms / 1000  # past the debounce, and the answer back
    rows = []
    async with Client.stdio(command[0], command[1:], era=era) as client:
        for name, plan in (
            ("burst", burst_plan(keystrokes, interval, settle)),
            ("hesitant", hesitant_plan(keystrokes, interval, server_ms / 2000 + debounce)),
        ):
            started = time.monotonic()
            counts = await type_plan(client, plan, debounce=debounce)
            rows.append((name, counts, time.monotonic() - started))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command")
    serving = sub.add_parser("serve", help="run the server on stdio")
    serving.add_argument("--log", type=Path)
    serving.add_argument("--hold", action="append", default=[])
    serving.add_argument("--delay-ms", type=float, default=0.0)
    parser.add_argument("--keystrokes", type=int, default=40)
    parser.add_argument("--interval-ms", type=float, default=30.0, help="between keystrokes (default 30)")
    parser.add_argument("--server-ms", type=float, default=120.0, help="the completer's time (default 120)")
    parser.add_argument("--debounce-ms", type=float, default=150.0, help="the client's debounce (default 150)")
    parser.add_argument("--era", choices=("handshake", "stateless"), action="append")
    args = parser.parse_args(argv)
    if args.command == "serve":
        make_server(args.log, args.hold, args.delay_ms / 1000).run()
        return 0
    keystrokes = max(1, min(args.keystrokes, len(TEXT)))
    worst = 0
    print(
        f"{keystrokes} keystrokes, one every {args.interval_ms:g} ms; the server answers in {args.server_ms:g} ms; "
        f"debounce {args.debounce_ms:g} ms"
    )
    print(
        f"{'era':<10} {'plan':<9} {'keys':>5} {'sent':>5} {'cancelled':>9} {'max in flight (client/server)':>30}  time"
    )
    for era in args.era or ("handshake", "stateless"):
        for name, counts, took in asyncio.run(
            measure(era, keystrokes, args.interval_ms / 1000, args.server_ms, args.debounce_ms / 1000)
        ):
            worst = max(worst, counts.max_in_flight, counts.server_max_running)
            in_flight = f"{counts.max_in_flight} / {counts.server_max_running}"
            print(
                f"{era:<10} {name:<9} {counts.keystrokes:>5} {counts.sent:>5} {counts.cancelled:>9} "
                f"{in_flight:>30}  {took:.1f} s"
            )
    print(f"most completion requests in flight at once: {worst} ({'ok' if worst <= 1 else 'MORE THAN ONE'})")
    return 0 if worst <= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
