"""``backchannel call``: one tool call with no person at the keyboard, for scripts and CI.

    backchannel call create_issue --args '{"summary": "Login page is blank"}' \\
        --answers answers.json --json -- python examples/issue_tracker.py

The server comes after ``--``, as ``backchannel connect`` takes it: a command and its
arguments (spawned, spoken to over stdio), or an ``http(s)://`` URL. The older form, the
server's command line in one argument before the tool (``call "python server.py" TOOL``,
split like a shell would), still works. The result is printed (``--json``: the
``CallToolResult`` as the wire has it, on one line, ``isError`` always present) and the
exit status says how it went:

* 0: the tool answered;
* 1: the tool answered with ``isError: true`` (arguments that fail the tool's
  ``inputSchema`` are answered this way by servers that follow 2025-11-25);
* 2: no answer: a protocol error (unknown tool, arguments that are not an object...),
  the server could not be reached, the call timed out, or the answers file does not
  fit a form; for a task, one that failed (its error is the answer);
* 3: the task was cancelled (by the server: ours are cancelled only when out of time, 2).
  With ``--json`` every failure is printed on stdout as ``{"error": {"code", "message",
  "data"?}}``, with ``"hint"`` beside it when there is advice: the server's error as it sent
  it; -32000 when the server could not be started or reached, or went away (a server
  process that exits says its exit status); -32001 when the call timed out.

An unknown tool is answered with the names closest to it ("did you mean").

A server that asks for a login (OAuth) gets the one ``backchannel connect URL`` keeps, its
token refreshed when it runs out, without a browser; with no login kept (or one that can no
longer be refreshed) ``call`` says in one line to run ``connect`` once, and exits with 2.
``--header NAME:VALUE`` (repeatable) adds a header to every request to an http(s):// server;
an ``Authorization`` header is sent as given, instead of the kept login.

A call the server runs as a task (2025-11-25 tasks, the 2026-07-28 tasks extension) is
followed to its end, each change of its status noted on stderr; out of time, it is cancelled
on the server (``tasks/cancel``) too. With ``--json`` a failed or cancelled task's error
object comes with ``"task": {"taskId", "status"}``.

The answers file (JSON) answers the server's questions (``elicitation/create``):

* an **object** keys answers by a piece of the question's message: the first key (in
  file order) found in the message gives the answer, ``"*"`` answers any other
  question; a keyed answer is used as often as it matches;
* a **list** answers the questions in the order they come, each item once.

Each answer is either the form's field values (that is *accept*; fields left out take
the form's defaults), or ``{"action": "accept", "content": {...}}``,
``{"action": "decline"}``, ``{"action": "cancel"}`` (or just the string
``"decline"``...). A question that no answer fits is cancelled, with a note on stderr;
content that does not fit the form is never sent: the question is cancelled and the
exit status is 2. URL-mode requests are matched the same way and declined unless
their answer is ``"accept"``: the link (and its confirmation code) is then printed on
stderr for someone to open, and the call waits for it.

    {"Where should": {"project_key": "WEB", "issue_type": "bug"}, "*": "decline"}
    [{"name": "Ada"}, {"action": "decline"}]

Sampling requests (``sampling/createMessage``) are answered from the same file, keyed by a
piece of their texts: the reply's text, a ``CreateMessageResult`` object, or ``"decline"``
(error -1 to the server; in the stateless era the call ends, status 2). With
``--sampling-endpoint URL --sampling-model M [--sampling-key-env NAME]`` (an OpenAI-compatible
chat-completions URL, the key read from the environment) or ``--sampling-command "CMD"`` (the
request as JSON on its stdin, the result on its stdout) that model answers them instead.
Sampling is declared only when one of these can answer.
"""

from __future__ import annotations

__all__ = ["Answers", "AnswersError", "run_call"]

import asyncio
import contextlib
import difflib
import json
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import msgspec
from rich.console import Console

from ..client.era_detection import HandshakeEraNeeded
from ..client.tasks import TaskCancelled, TaskFailed, ToolTask
from ..client.url_flow import UrlElicitation
from ..forms import apply_defaults, validate_content
from ..types.errors import INVALID_PARAMS, ConnectionClosed, MCPError, RequestError
from ..types.wording import counted
from .commands import CommandError, parse_arguments
from .form_prompt import confirmation_code
from .render import Renderer
from .sampling import SamplingFailed, SamplingRefused
from .sampling_answers import BatchSampler
from .sampling_models import SamplingModel
from .task_board import runs_as_task

_ACTIONS = ("accept", "decline", "cancel")
# The codes the official SDKs use for a connection that ended and for a request that timed out.
_CONNECTION_CLOSED = -32000
_REQUEST_TIMEOUT = -32001


class AnswersError(ValueError):
    """The answers file cannot be read or is not in the documented shape."""


class Answers:
    """Answers to the server's questions, from a file (see the module docstring)."""

    def __init__(self, data: Any = (), note: Callable[[str], None] | None = None) -> None:
        if isinstance(data, list | tuple):
            self._queue: list[Any] | None = list(data)
            self._keyed: dict[str, Any] = {}
        elif isinstance(data, dict):
            self._queue = None
            self._keyed = data
        else:
            raise AnswersError("the answers file must hold a JSON object (keyed by message) or a list (in order)")
        self.note = note or (lambda text: print(text, file=sys.stderr))
        #: Answers that did not fit their form: each made the question a cancel.
        self.problems: list[str] = []

    @classmethod
    def load(cls, path: str | Path, note: Callable[[str], None] | None = None) -> Answers:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise AnswersError(f"cannot read the answers file: {exc}") from None
        except ValueError as exc:
            raise AnswersError(f"the answers file {path} is not valid JSON: {exc}") from None
        return cls(data, note)

    def pick(self, message: str) -> tuple[bool, Any]:
        if self._queue is not None:
            return (True, self._queue.pop(0)) if self._queue else (False, None)
        for key, value in self._keyed.items():
            if key != "*" and key in message:
                return True, value
        return ("*" in self._keyed), self._keyed.get("*")

    async def form(self, params: dict[str, Any]) -> dict[str, Any]:
        """The ``elicitation/create`` handler for form mode."""
        message = str(params.get("message") or "")
        found, answer = self.pick(message)
        if not found:
            self.note(f"no answer for the question {message!r}: cancelled")
            return {"action": "cancel"}
        try:
            action, content = _read(answer)
        except AnswersError as exc:
            self.problems.append(f"{message!r}: {exc}")
            return {"action": "cancel"}
        if action != "accept":
            return {"action": action}
        schema = params.get("requestedSchema") or {"type": "object", "properties": {}}
        content = apply_defaults(schema, content)
        problems = validate_content(schema, content)
        if problems:
            self.problems.append(f"the answer to {message!r} does not fit the form: " + "; ".join(problems))
            return {"action": "cancel"}
        return {"action": "accept", "content": content}

    async def url(self, request: UrlElicitation) -> str:
        """The URL-mode handler: accept only when the file says so; the link goes to stderr."""
        found, answer = self.pick(request.message)
        action = answer if isinstance(answer, str) else answer.get("action") if isinstance(answer, dict) else None
        if not found or action != "accept":
            return "cancel" if action == "cancel" else "decline"
        code = confirmation_code(request.message)
        self.note(f"{request.server_name} asks to open {request.url} (site {request.host})")
        if code:
            self.note(f"the page asks for the confirmation code {code}")
        return "accept"


def _read(answer: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(answer, str):
        if answer not in _ACTIONS:
            raise AnswersError(f"unknown action {answer!r} (use accept, decline or cancel)")
        return answer, {}
    if not isinstance(answer, dict):
        raise AnswersError(f"an answer is an object of field values or an action, not {answer!r}")
    if answer.get("action") in _ACTIONS and set(answer) <= {"action", "content"}:
        content = answer.get("content") or {}
        if not isinstance(content, dict):
            raise AnswersError("content must be an object of field values")
        return answer["action"], content
    return "accept", answer


def split_target(target: str) -> list[str]:
    """The server: one ``http(s)://`` URL, or a command line split like a shell would."""
    if target.lower().startswith(("http://", "https://")):
        return [target]
    return shlex.split(target)


def run_call(
    target: Sequence[str],
    tool: str,
    *,
    arguments: str | None = None,
    answers: str | None = None,
    as_json: bool = False,
    era: str = "auto",
    roots: Sequence[str] = (),
    timeout: float | None = 300.0,
    log_level: str | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    sampling: SamplingModel | None = None,
    headers: Sequence[tuple[str, str]] | None = None,
) -> int:
    """Call ``tool`` on the server at ``target`` once; the exit status (0, 1 or 2, see above).
    ``headers`` go on every request to an http(s):// server."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr

    def note(text: str) -> None:
        print(f"backchannel call: {text}", file=err, flush=True)

    try:
        return asyncio.run(
            _call(
                target, tool, arguments, answers, as_json, era, roots, timeout, log_level, out, note, sampling, headers
            )
        )
    except KeyboardInterrupt:
        note("interrupted")
        return 130


async def _call(
    target: Sequence[str],
    tool: str,
    arguments: str | None,
    answers_path: str | None,
    as_json: bool,
    era: str,
    roots: Sequence[str],
    timeout: float | None,
    log_level: str | None,
    out: TextIO,
    note: Callable[[str], None],
    sampling: SamplingModel | None = None,
    headers: Sequence[tuple[str, str]] | None = None,
) -> int:
    from .terminal import is_url, make_client

    try:
        answers = Answers.load(answers_path, note) if answers_path else Answers((), note)
    except AnswersError as exc:
        note(str(exc))
        return 2

    def on_log(params: dict[str, Any]) -> None:
        data = params.get("data")
        shown = data if isinstance(data, str) else json.dumps(data)
        logger = f" {params['logger']}:" if params.get("logger") else ""
        note(f"[{params.get('level')}]{logger} {shown}")

    options: dict[str, Any] = {
        "elicitation": answers.form,
        "url_elicitation": answers.url,
        "sampling": BatchSampler(answers.pick, answers.problems, note, sampling) if answers_path or sampling else None,
        "sampling_tools": True,
        "roots": list(roots),
        "request_timeout": None,
        "era": era,
        "on_log": on_log if log_level else None,
        "log_level": log_level or None,  # asked for as it connects, the same way in either era
        "headers": headers,
    }
    login = None
    if is_url(target):
        from .login import kept_login

        options["auth"], login = kept_login()  # connect's login, refreshed; never a browser
    try:
        client = make_client(target, options)
    except ValueError as exc:
        note(str(exc))
        return 2

    hints: list[str] = []

    def failed(code: int, message: str, data: Any = None, *, ours: bool = True, task: Any = None) -> int:
        """Exit status 2; the error as JSON on stdout with ``--json``, and (always, when the
        failure is ``ours`` and not the server's answer) in words on stderr. A login that was
        needed and not kept is the one thing said, whatever failed for want of it."""
        if login is not None and login.needed:
            from .login import login_advice

            code, message, data, ours, task = _CONNECTION_CLOSED, login_advice(target[0]), None, True, None
            hints.clear()
        if as_json:
            error: dict[str, Any] = {"code": code, "message": message}
            if data is not None:
                error["data"] = data
            shown: dict[str, Any] = {"error": error} if task is None else {"error": error, "task": task}
            if hints:
                shown["hint"] = "; ".join(hints)
            print(json.dumps(shown), file=out, flush=True)
        if ours or not as_json:
            note(message if ours else f"error {code}: {message}")
        for hint in hints:
            note(hint)
        return 2

    try:
        async with client, asyncio.timeout(timeout):
            given = await _arguments(client, tool, arguments)
            result = await _call_tool(client, tool, given, hints, note)
    except TimeoutError:
        return failed(_REQUEST_TIMEOUT, f"no answer within {counted(timeout, 'second')}")
    except CommandError as exc:
        return failed(INVALID_PARAMS, str(exc))
    except (TaskFailed, TaskCancelled) as exc:
        task_status = {"taskId": exc.state.task_id, "status": exc.state.status}
        failed(exc.code, exc.message, exc.data, ours=False, task=task_status)
        return 3 if isinstance(exc, TaskCancelled) else 2
    except (SamplingRefused, SamplingFailed) as exc:  # the stateless era: our refusal ends our own call
        hints.extend(answers.problems)
        return failed(exc.code, str(exc))
    except HandshakeEraNeeded as exc:
        hints.append("this server cannot ask its questions in the stateless era: run again with --era handshake")
        return failed(exc.code, exc.message, exc.data, ours=False)
    except RequestError as exc:
        return failed(exc.code, exc.message, exc.data, ours=False)
    except ConnectionClosed as exc:  # a server process that exited says its status
        reason = exc.message.removeprefix("Connection closed: ")
        return failed(_CONNECTION_CLOSED, f"could not talk to the server: {reason}")
    except OSError as exc:
        return failed(_CONNECTION_CLOSED, f"could not talk to the server: {exc}")
    except MCPError as exc:
        return failed(exc.code, f"could not talk to the server: {type(exc).__name__}: {exc}")
    for hint in hints:
        note(hint)
    for problem in answers.problems:
        note(problem)
    if as_json:
        data = msgspec.to_builtins(result)
        data["isError"] = bool(result.is_error)  # always there, for scripts to read
        print(json.dumps(data, ensure_ascii=False), file=out, flush=True)
    else:
        Renderer(Console(file=out, soft_wrap=True)).tool_result(tool, result)
    if answers.problems:
        return 2
    return 1 if result.is_error else 0


async def _call_tool(
    client: Any, tool: str, given: dict[str, Any] | None, hints: list[str], note: Callable[[str], None]
) -> Any:
    """``tools/call``, or the task it becomes (followed, its status noted); when it fails (an
    error, or ``isError``) for a tool the server does not have, a "did you mean" goes to ``hints``."""
    try:
        if await runs_as_task(client, tool):
            result = await _followed(await client.start_task(tool, given), note)
        else:
            result = await client.call_tool(tool, given)
    except RequestError:
        hints.extend(await _unknown_tool(client, tool))
        raise
    if result.is_error:
        hints.extend(await _unknown_tool(client, tool))
    return result


async def _followed(task: ToolTask, note: Callable[[str], None]) -> Any:
    """The task's result; each new status on stderr. Cancelled (out of time), it is cancelled
    on the server as well, so that it does not run on with nobody waiting."""
    said: list[tuple[str, str | None]] = []

    def changed(task: ToolTask) -> None:
        now = (task.state.status, task.state.status_message)
        if task.task_id is not None and (not said or said[-1] != now):
            said.append(now)
            note(f"task {task.task_id}: {now[0]}" + (f": {now[1]}" if now[1] else ""))

    changed(task)
    task.watch(changed)
    try:
        return await task
    finally:
        if not task.done:
            with contextlib.suppress(MCPError):
                await asyncio.shield(task.cancel())


async def _unknown_tool(client: Any, tool: str) -> list[str]:
    """A "did you mean" when the server has no tool ``tool``; nothing when it has, or cannot say."""
    try:
        names = [item.name for item in await client.list_tools()]
    except MCPError:
        return []
    if tool in names:
        return []
    by_case = {name.casefold(): name for name in names}
    close = [by_case[name] for name in difflib.get_close_matches(tool.casefold(), list(by_case), n=3, cutoff=0.6)]
    if close:
        return [f"no tool named {tool!r}; did you mean {' or '.join(repr(name) for name in close)}?"]
    listed = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
    return [f"no tool named {tool!r}; the server's tools: {listed or 'none'}"]


async def _arguments(client: Any, tool: str, text: str | None) -> dict[str, Any] | None:
    """``--args``: a JSON object, or ``key=value`` words read as the tool's schema says."""
    if text is None or not text.strip():
        return None
    if text.lstrip().startswith("{"):
        return parse_arguments(text)
    schema = next((item.input_schema for item in await client.list_tools() if item.name == tool), None)
    return parse_arguments(text, schema)
