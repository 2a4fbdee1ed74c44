"""Asking for values field by field: tool arguments, prompt arguments, form fields.

Each field is shown with its title, a required mark, its description and a
hint (``whole number, 1 to 10``; ``e-mail address``; numbered choices), then
asked; an answer that does not fit is explained and asked again on the spot.
"""

from __future__ import annotations

__all__ = ["ask_arguments", "ask_field", "show_field"]

from typing import Any

from rich.console import Console
from rich.markup import escape

from .fields import OMIT, Field, fields_of
from .questions import Ask, Completer, Question, ask_line


def show_field(console: Console, field: Field) -> None:
    """The field's heading: label, required mark, hint, description and choices."""
    mark = " [red]*[/]" if field.required else ""
    name = f" [dim]({escape(field.name)})[/]" if field.label != field.name else ""
    console.print(f"[bold]{escape(field.label)}[/]{mark}{name}  [dim]{escape(field.hint())}[/]")
    if field.description:
        console.print(f"  [italic]{escape(field.description)}[/]")
    for number, (value, label) in enumerate(field.choices, 1):
        shown = escape(label) if label == value else f"{escape(label)} [dim]({escape(value)})[/]"
        console.print(f"  [cyan]{number})[/] {shown}")


#: Fields whose starting value is shown in brackets, not prefilled: what is typed replaces it whole,
#: and an empty answer takes it. (Prefilled, typing ``2`` after ``production`` made ``production2``.)
_BRACKETED = ("select", "multi", "boolean", "integer", "number")


def prompt_text(field: Field, shown: str = "") -> str:
    """``name*: ``, or ``name* [shown]: `` with the value an empty answer takes."""
    return f"{field.name}{'*' if field.required else ''}{f' [{shown}]' if shown else ''}: "


async def ask_field(
    console: Console, ask: Ask, field: Field, *, prefill: str | None = None, complete: Completer | None = None
) -> Any:
    """Ask until the answer fits; the value, or ``OMIT`` for an optional field left blank.

    ``prefill`` is the starting text (the field's default when None): editable text in a text
    or JSON field; for a choice, yes/no or number, shown in brackets and taken by an empty answer.
    Raises ``Cancelled`` when the person gives up.
    """
    show_field(console, field)
    start = field.default_text() if prefill is None else prefill
    bracketed = start if field.kind in _BRACKETED else ""
    question = Question(
        prompt_text(field, bracketed),
        default="" if bracketed else start,
        completions=field.completions(),
        separator="," if field.kind == "multi" else None,
        complete=complete,
    )
    while True:
        text = await ask_line(ask, question)
        if bracketed and not text.strip():
            text = bracketed
        try:
            value = field.parse(text)
        except ValueError as exc:
            problems = [str(exc)]
        else:
            problems = field.problems(value)
        if not problems:
            return value
        for problem in problems:
            console.print(f"  [red]! {escape(field.name)}: {escape(problem)}[/]")


async def ask_arguments(
    console: Console, ask: Ask, schema: Any, given: dict[str, Any] | None = None, *, prefill_defaults: bool = False
) -> dict[str, Any]:
    """Arguments for a tool: each property of ``schema`` asked in turn.

    With ``given`` (arguments typed on the command line) only the required fields
    still missing are asked. Optional fields left blank are left out, so the
    server applies its own defaults.
    """
    arguments = dict(given or {})
    for field in fields_of(schema):
        if field.name in arguments or (given and not field.required):
            continue
        value = await ask_field(console, ask, field, prefill=None if prefill_defaults else "")
        if value is not OMIT:
            arguments[field.name] = value
    return arguments
