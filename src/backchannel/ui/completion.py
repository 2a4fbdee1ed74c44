"""What Tab offers at the command line: commands, the server's names, argument keys, and the
server's own completions (``completion/complete``) for prompt arguments and template variables.

A field the server completes (a prompt's argument, a template's variable) is completed as the
person types too, through a ``TypingCompleter``: keystrokes within ``DEBOUNCE`` seconds cost one
request, at most one request is in flight, and one that was typed over is cancelled on the wire.
"""

from __future__ import annotations

__all__ = [
    "DEBOUNCE",
    "QuestionCompleter",
    "TabSource",
    "TypingCompleter",
    "argument_completer",
    "complete_line",
    "completions",
    "partial_template",
    "server_fetch",
    "template_completer",
]

import asyncio
import math
import re
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol
from urllib.parse import quote, unquote

from prompt_toolkit.application.current import get_app
from prompt_toolkit.completion import CompleteEvent, Completion
from prompt_toolkit.completion import Completer as ToolkitCompleter
from prompt_toolkit.document import Document

from ..types.errors import MCPError
from ..types.logging import LOGGING_LEVELS
from .commands import ALIASES, COMMANDS
from .questions import Completer, Question
from .skill_view import skill_paths

if TYPE_CHECKING:
    from pathlib import Path

    from prompt_toolkit.buffer import Buffer

    from ..client.client import Client
    from ..types.prompts import Prompt
    from ..types.skills import Skill
    from ..types.tools import Tool

#: Seconds typing must pause before a field's completions are asked of the server. People type a
#: key every 100-300 ms within a word, and a pause of 150 ms is not yet felt as a wait.
DEBOUNCE = 0.15

_SIMPLE_VARIABLE = re.compile(r"\{(\+?)([A-Za-z0-9_]+)\}")


class TabSource(Protocol):
    """What Tab reads of the session it completes for (``TerminalSession`` has it all): the
    server's names by kind, the tools and prompts last listed, the roots, and the client once
    connected."""

    @property
    def names(self) -> Mapping[str, list[str]]: ...

    @property
    def tools(self) -> Mapping[str, Tool]: ...

    @property
    def prompts(self) -> Mapping[str, Prompt]: ...

    @property
    def roots(self) -> Sequence[Path]: ...

    @property
    def skills(self) -> Mapping[str, Skill]: ...

    @property
    def client(self) -> Client | None: ...


def completions(session: TabSource, text: str) -> list[str]:
    """What Tab offers for the word being typed at the end of ``text`` (the command line so far)."""
    words = text.split(" ")
    if len(words) == 1:
        return [name for name in COMMANDS if name.startswith(words[0].lower())]
    command = ALIASES.get(words[0].lower(), words[0].lower())
    current = words[-1]
    names = session.names
    options: list[str]
    if len(words) == 2:
        by_command: dict[str, list[str]] = {
            "call": names["tools"],
            "prompt": names["prompts"],
            "read": names["resources"] + [t.split("{", 1)[0] for t in names["templates"]],
            "watch": names["resources"],
            "skill": names.get("skills", []),
            "log": list(LOGGING_LEVELS),
            "logs": list(LOGGING_LEVELS),
            "roots": ["add", "remove"],
        }
        options = by_command.get(command, [])
    elif command == "call" and words[1] in session.tools:
        given = {word.partition("=")[0] for word in words[2:-1]}
        properties = session.tools[words[1]].input_schema.get("properties") or {}
        options = [f"{name}=" for name in properties if name not in given]
    elif command == "prompt" and words[1] in session.prompts:
        given = {word.partition("=")[0] for word in words[2:-1]}
        options = [f"{arg.name}=" for arg in session.prompts[words[1]].arguments or [] if arg.name not in given]
    elif command == "skill" and words[1] in session.skills and len(words) == 3:
        options = skill_paths(session.skills[words[1]])
    elif command == "roots" and words[1].lower() in ("remove", "rm") and len(words) == 3:
        options = [str(root) for root in session.roots]
    else:
        options = []
    return [option for option in dict.fromkeys(options) if option.startswith(current)]


async def complete_line(session: TabSource, text: str) -> list[str]:
    """``completions`` plus what the server offers (``completion/complete``) for the
    variable of a resource template being typed after ``read``: ``read demo://cities/Po``."""
    options = completions(session, text)
    words = text.split(" ")
    if len(words) == 2 and ALIASES.get(words[0].lower(), words[0].lower()) == "read" and session.client is not None:
        for option in await _template_values(session.client, session.names["templates"], words[1]):
            if option not in options:
                options.append(option)
    return options


async def _template_values(client: Client, templates: list[str], typed: str) -> list[str]:
    """Whole URIs for ``typed``: each template it is partway through, its variable completed by the server."""
    found: list[str] = []
    for template in templates:
        partial = partial_template(template, typed)
        if partial is None:
            continue
        name, value, context, before, after = partial
        complete = server_fetch(client, {"type": "ref/resource", "uri": template}, name, context)
        if complete is None:
            return []
        for item in await complete(value):
            found.append(before + quote(item, safe="") + after)
    return found


def server_fetch(client: Client, ref: dict[str, str], argument: str, context: dict[str, str]) -> Completer | None:
    """One ``completion/complete`` per call for one argument, if the server offers completions.

    ``context`` holds the arguments given so far: the server may narrow its answer with them.
    A failed request, a refusal (``RateLimited`` included) or no answer in 5 s offers nothing."""
    if "completions" not in (client.server_capabilities or {}):
        return None

    async def complete(value: str) -> list[str]:
        try:
            async with asyncio.timeout(5.0):
                found = await client.complete(ref, (argument, value), context or None)
        except (MCPError, TimeoutError):
            return []
        return [item for item in found.values if isinstance(item, str)]

    return complete


def argument_completer(client: Client, prompt: str, argument: str, context: dict[str, str]) -> TypingCompleter | None:
    """Server-side completion of a prompt argument, as the person types; None when the server offers none."""
    fetch = server_fetch(client, {"type": "ref/prompt", "name": prompt}, argument, context)
    return None if fetch is None else TypingCompleter(fetch)


def template_completer(client: Client, template: str, variable: str, context: dict[str, str]) -> TypingCompleter | None:
    """Server-side completion of a resource template's variable, as the person types; None when
    the server offers none."""
    fetch = server_fetch(client, {"type": "ref/resource", "uri": template}, variable, context)
    return None if fetch is None else TypingCompleter(fetch)


# -- as the person types ---------------------------------------------------------------------------


class TypingCompleter:
    """A field's completions from the server while a person types (the spec's client SHOULDs:
    debounce rapid completion requests, cache results).

    Tell it of each keystroke with ``typed(text)``; await it with the text, as a ``Completer``
    (prompt_toolkit does, after a pause or on Tab: see ``QuestionCompleter``). Then:

    * a request waits until typing has paused for ``delay`` seconds, so a burst of keystrokes
      costs one request, for the text at its end;
    * at most one ``completion/complete`` is in flight: the keystroke that makes a request stale
      cancels it (the ``Client`` cancels a request whose caller stops waiting:
      ``notifications/cancelled``, or in the stateless era over HTTP its stream closed), and the
      next is sent only once that one has finished;
    * the last answer is kept, so asking again for the same text costs nothing.

    A call whose text was typed over before its answer came gets ``[]``: prompt_toolkit then
    asks again for the new text. ``clock`` and ``sleep`` are for tests (a fake clock); ``sent``,
    ``cancelled`` and ``max_in_flight`` count what reached the client.
    """

    def __init__(
        self,
        fetch: Completer,
        *,
        delay: float = DEBOUNCE,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self._fetch = fetch
        self.delay = delay
        self._clock = clock
        self._sleep = sleep
        self._text: str | None = None  # the newest text seen
        self._generation = 0  # moves on with every change of it
        self._changed_at = -math.inf  # when a keystroke last changed it
        self._flight: tuple[str, asyncio.Task[list[str]]] | None = None
        self._answer: tuple[str, list[str]] | None = None
        #: Requests handed to the client; those cancelled after; the most in flight at once.
        self.sent = 0
        self.cancelled = 0
        self.in_flight = 0
        self.max_in_flight = 0

    @property
    def text(self) -> str | None:
        """The newest text seen (typed, or asked about)."""
        return self._text

    def answered(self, text: str) -> bool:
        """Whether the last answer is for ``text`` (asking again would cost nothing)."""
        return self._answer is not None and self._answer[0] == text

    def typed(self, text: str) -> None:
        """A keystroke left ``text`` in the field: a request for any other text is stale from now."""
        if text != self._text:
            self._changed_at = self._clock()
            self._move_to(text)

    async def quiet(self) -> None:
        """Return once typing has paused for ``delay`` seconds."""
        while (left := self._changed_at + self.delay - self._clock()) > 0:
            await self._sleep(left)

    async def __call__(self, text: str) -> list[str]:
        """The server's completions of ``text``; ``[]`` if it was typed over meanwhile."""
        if text != self._text:
            self._move_to(text)  # asked before any keystroke said so (Tab alone, a prefilled value): no wait
        if self._answer is not None and self._answer[0] == text:
            return list(self._answer[1])
        mine = self._generation
        await self.quiet()
        while mine == self._generation:
            if self._flight is None:
                task = asyncio.ensure_future(self._send(text))
                self._flight = (text, task)
                task.add_done_callback(self._landed)
                return await self._outcome(task)
            flying, task = self._flight
            if flying == text and not task.cancelling():
                return await self._outcome(task)  # asked twice (after a pause and on Tab): one request
            await asyncio.wait({task})  # stale, so cancelled already: its cancellation goes out first
            self._landed(task)
        return []

    def _move_to(self, text: str) -> None:
        self._text = text
        self._generation += 1
        if self._flight is not None and self._flight[0] != text:
            self._flight[1].cancel()

    async def _send(self, text: str) -> list[str]:
        # Counted here rather than where the task is made: a task cancelled before its first step
        # never reached the client.
        self.sent += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            values = await self._fetch(text)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.in_flight -= 1
        self._answer = (text, values)
        return values

    def _landed(self, task: asyncio.Task[list[str]]) -> None:
        if self._flight is not None and self._flight[1] is task:
            self._flight = None

    @staticmethod
    async def _outcome(task: asyncio.Task[list[str]]) -> list[str]:
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            task.cancel()  # whoever asked is gone (the question was answered): so is the need
            raise
        if task.cancelled() or task.exception() is not None:
            return []
        return list(task.result())


class QuestionCompleter(ToolkitCompleter):
    """prompt_toolkit's side of a ``Question``: its own choices, then the server's completions
    (``question.complete``) on Tab, and as the person types for a field the server completes."""

    def __init__(self, question: Question) -> None:
        self.question = question
        self._pause: asyncio.Task[None] | None = None

    def follow(self, buffer: Buffer) -> None:
        """Complete ``buffer`` as the person types, if the server completes this field; otherwise Tab only."""
        if isinstance(self.question.complete, TypingCompleter):
            buffer.on_text_changed += self._changed

    def _changed(self, buffer: Buffer) -> None:
        typing = self.question.complete
        assert isinstance(typing, TypingCompleter)
        typing.typed(self.word(buffer.document))
        if self._pause is None or self._pause.done():
            # A background task of the prompt's: it ends with the prompt.
            self._pause = get_app().create_background_task(self._after_pause(buffer, typing))

    @staticmethod
    async def _after_pause(buffer: Buffer, typing: TypingCompleter) -> None:
        await typing.quiet()
        buffer.start_completion()  # a no-op while prompt_toolkit's completer runs or shows its menu

    def word(self, document: Document) -> str:
        """The text being completed: the field's, or its last item's when it holds a list."""
        text = document.text_before_cursor
        if self.question.separator:
            text = text.split(self.question.separator)[-1]
        return text.lstrip()

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        word = self.word(document)
        for option in self.question.completions:
            if option.casefold().startswith(word.casefold()):
                yield Completion(option, start_position=-len(word))

    async def get_completions_async(
        self, document: Document, complete_event: CompleteEvent
    ) -> AsyncGenerator[Completion, None]:
        word = self.word(document)
        offered = set()
        for completion in self.get_completions(document, complete_event):
            offered.add(completion.text)
            yield completion
        if self.question.complete is not None:
            for value in await self.question.complete(word):
                if value not in offered:
                    yield Completion(value, start_position=-len(word))


def partial_template(template: str, typed: str) -> tuple[str, str, dict[str, str], str, str] | None:
    """Where ``typed`` stands in ``template`` when it is partway through one of its variables:
    ``(variable, its value so far, the variables before it, the text before the value,
    the literal text after the variable)``; None when it is not (or the template is not simple)."""
    parts = re.split(r"(\{[^}]*\})", template)
    position = 0
    context: dict[str, str] = {}
    for index, part in enumerate(parts):
        if not part:
            continue
        if not part.startswith("{"):
            if not typed.startswith(part, position):
                return None  # still typing the literal text (plain Tab completion covers it), or another URI
            position += len(part)
            continue
        simple = _SIMPLE_VARIABLE.fullmatch(part)
        if simple is None:
            return None
        reserved, name = simple.group(1) == "+", simple.group(2)
        after = parts[index + 1] if index + 1 < len(parts) else ""
        rest = typed[position:]
        stop = rest.find(after) if after else -1
        if stop > 0 and (reserved or "/" not in rest[:stop]):
            context[name] = unquote(rest[:stop])
            position += stop
            continue
        if not reserved and "/" in rest:
            return None
        return name, unquote(rest), context, typed[:position], after
    return None
