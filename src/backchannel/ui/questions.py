"""How the UI asks the person one line of input, with no terminal in sight.

Everything that needs an answer (tool arguments, form fields, the final
Accept / Decline / Cancel) builds a :class:`Question` and hands it to an
``Ask`` function. The terminal layer answers with prompt_toolkit; tests answer
from a script. An ``Ask`` raises :class:`Cancelled` (or ``KeyboardInterrupt`` /
``EOFError``, which mean the same) when the person presses Esc or Ctrl-C.
"""

from __future__ import annotations

__all__ = ["Ask", "Cancelled", "Question", "ask_line", "scripted"]

import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field


class Cancelled(Exception):
    """The person gave up on the question (Esc, Ctrl-C or Ctrl-D)."""


#: Dynamic completions: the text typed so far → the values to offer.
Completer = Callable[[str], Awaitable[list[str]]]


@dataclass(frozen=True)
class Question:
    """One line of input.

    ``prompt`` is shown before the cursor; ``default`` is prefilled, editable
    text; ``completions`` are offered on Tab (``separator`` set means a list of
    several, each completed on its own); ``complete`` asks someone else (the
    server's ``completion/complete``) for more.
    """

    prompt: str
    default: str = ""
    completions: Sequence[str] = field(default_factory=tuple)
    separator: str | None = None
    complete: Completer | None = None


#: Answers a question with the text the person entered (the final buffer, prefill included).
Ask = Callable[[Question], Awaitable[str] | str]


async def ask_line(ask: Ask, question: Question) -> str:
    """Ask and await; Ctrl-C (``KeyboardInterrupt``) and Ctrl-D (``EOFError``) become ``Cancelled``."""
    try:
        answer = ask(question)
        if inspect.isawaitable(answer):
            answer = await answer
    except (KeyboardInterrupt, EOFError):
        raise Cancelled from None
    return answer


def scripted(answers: Iterable[str | BaseException], asked: list[Question] | None = None) -> Ask:
    """An ``Ask`` that plays ``answers`` in order (an exception in the list is raised).

    The string ``"<default>"`` stands for pressing Enter on the prefilled text.
    Each question is appended to ``asked`` when given. Running out raises
    ``AssertionError``, so a flow that asks more than expected fails visibly.
    A list is consumed in place, so answers appended to it later are played too.
    """
    queue = answers if isinstance(answers, list) else list(answers)

    def ask(question: Question) -> str:
        if asked is not None:
            asked.append(question)
        if not queue:
            raise AssertionError(f"no scripted answer left for {question.prompt!r}")
        answer = queue.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return question.default if answer == "<default>" else answer

    return ask
