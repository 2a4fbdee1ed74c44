"""An elicitation request shown as a form, and a URL-mode request shown as a consent question.

:class:`FormRenderer` turns ``elicitation/create`` params into questions asked
through an ``Ask`` function, so a test can fill a form from a script:

* the server's message and the form's title and description first;
* per field: title, required mark, description, a hint (format, range, length),
  numbered choices for pickers; defaults prefilled;
* an answer that does not fit is explained and asked again at once;
* then a summary and Accept / Decline / Cancel (or Edit to go round again);
* Esc, Ctrl-C or Ctrl-D at any question means Cancel.

The answer returned is the ``ElicitResult`` as a dict.
"""

from __future__ import annotations

__all__ = ["FormRenderer", "LinkConsent", "confirmation_code"]

import inspect
import re
import webbrowser
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..client.url_flow import UrlConsent, UrlElicitation, UrlFlowControls
from ..forms import FormSchemaError, apply_defaults, check_requested_schema, validate_content
from ..types.elicitation import UrlFlowWord
from ..types.errors import InvalidParams
from .fields import OMIT, fields_of
from .prompting import ask_field
from .questions import Ask, Cancelled, Question, ask_line

_ACTIONS = {
    "a": "accept",
    "accept": "accept",
    "y": "accept",
    "yes": "accept",
    "d": "decline",
    "decline": "decline",
    "n": "decline",
    "no": "decline",
    "c": "cancel",
    "cancel": "cancel",
    "e": "edit",
    "edit": "edit",
}


class FormRenderer:
    """Fills in form-mode elicitation requests by asking the person, field by field."""

    def __init__(self, console: Console, ask: Ask) -> None:
        self.console = console
        self.ask = ask

    async def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        return await self.run(params)

    async def run(self, params: dict[str, Any]) -> dict[str, Any]:
        """Ask the person for each field of ``params``'s form and return the elicitation result (``accept`` with the
        content, or ``cancel``); a form that cannot be shown raises ``InvalidParams``."""
        schema = params.get("requestedSchema")
        if schema is None:
            schema = {"type": "object", "properties": {}}
        try:
            check_requested_schema(schema)
        except FormSchemaError as exc:
            self.console.print(f"[red]The server sent a form that cannot be shown: {escape(str(exc))}[/]")
            raise InvalidParams(f"requestedSchema is not a valid form: {exc}") from None
        self._header(str(params.get("message") or ""), schema)
        try:
            return await self._fill(schema)
        except Cancelled:
            self.console.print("[yellow]Form cancelled.[/]")
            return {"action": "cancel"}

    def _header(self, message: str, schema: dict[str, Any]) -> None:
        body = Text(message)
        description = schema.get("description")
        if description:
            body.append("\n\n" + description, style="italic")
        title = schema.get("title") or "The server asks"
        self.console.print(Panel(body, title=escape(title), title_align="left", border_style="cyan", expand=False))
        if any(field.required for field in fields_of(schema)):
            self.console.print("[dim]Fields marked [/][red]*[/][dim] are required. Esc or Ctrl-C cancels.[/]")
        else:
            self.console.print("[dim]Esc or Ctrl-C cancels.[/]")

    async def _fill(self, schema: dict[str, Any]) -> dict[str, Any]:
        fields = fields_of(schema)
        content: dict[str, Any] = {}
        while True:
            for field in fields:
                prefill = field.to_text(content[field.name]) if field.name in content else None
                value = await ask_field(self.console, self.ask, field, prefill=prefill)
                if value is OMIT:
                    content.pop(field.name, None)
                else:
                    content[field.name] = value
            self._summary(schema, content)
            action = await self._action()
            if action == "edit":
                continue
            if action != "accept":
                self.console.print("[yellow]Form declined.[/]" if action == "decline" else "[yellow]Form cancelled.[/]")
                return {"action": action}
            answer = apply_defaults(schema, content)
            problems = validate_content(schema, answer)
            if not problems:
                self.console.print("[green]Form sent.[/]")
                return {"action": "accept", "content": answer}
            for problem in problems:  # pragma: no cover - each field was checked as it was entered
                self.console.print(f"[red]! {escape(problem)}[/]")

    def _summary(self, schema: dict[str, Any], content: dict[str, Any]) -> None:
        if not schema.get("properties"):
            return
        table = Table(show_header=False, box=None, padding=(0, 2, 0, 2))
        for field in fields_of(schema):
            if field.name in content:
                value = field.to_text(content[field.name])
                labels = dict(field.choices)
                if field.kind == "select" and labels.get(value, value) != value:
                    value = f"{labels[value]} ({value})"
                table.add_row(field.label, value)
            else:
                table.add_row(field.label, Text("(default)" if field.has_default else "(not given)", style="dim"))
        self.console.print(table)

    async def _action(self) -> str:
        question = Question(
            "[A]ccept / [D]ecline / [C]ancel / [E]dit: ", completions=("accept", "decline", "cancel", "edit")
        )
        while True:
            text = (await ask_line(self.ask, question)).strip().lower()
            if not text:
                return "accept"
            if text in _ACTIONS:
                return _ACTIONS[text]
            self.console.print("[red]! answer a (accept), d (decline), c (cancel) or e (edit)[/]")


class LinkConsent:
    """Answers URL-mode elicitation: shows where the link leads, opens it only if the person agrees.

    The server name, the message, the full URL, its host (prominent), any warnings
    (punycode, user info, plain http, raw IP) and the confirmation code the page will
    ask for are shown first; nothing is opened on decline or cancel, and the client
    never fetches the URL itself. ``opener`` None (``--no-browser``) prints the link
    instead of opening it. ``on_accept`` is told once the person agreed (the session
    then waits for the browser step with a spinner).

    With ``keys`` (the terminal can read keys while a request runs), a link whose server
    takes the person's words (``request.offers``) is followed: while the browser step
    runs, ``key("d")`` says done, ``key("c")`` cancel and ``key("f")`` asks for a fresh link.
    """

    def __init__(
        self,
        console: Console,
        ask: Ask,
        opener: Callable[[str], Any] | None = webbrowser.open,
        on_accept: Callable[[UrlElicitation], None] | None = None,
        *,
        keys: bool = False,
    ) -> None:
        self.console = console
        self.ask = ask
        self.opener = opener
        self.on_accept = on_accept
        self.keys = keys
        #: The controls of the link being waited for, while the person has a say over it.
        self.following: UrlFlowControls | None = None

    def key(self, char: str) -> bool:
        """A key pressed while a browser step runs; True when it was a word the server took."""
        word = _KEY_WORDS.get(char.lower())
        controls = self.following
        if word is None or controls is None or not controls.open:
            return False
        if not controls.say(word):
            self.console.print(f"[yellow]This link takes no {_WORD_NAMES[word]}.[/]")
            return False
        self.console.print(f"[cyan]{_SAID[word]}[/]")
        return True

    async def __call__(self, request: UrlElicitation | dict[str, Any]) -> dict[str, Any] | UrlConsent:
        if not isinstance(request, UrlElicitation):
            request = UrlElicitation.from_params(request, "the server")
        code = confirmation_code(request.message)
        message = request.message
        if code:  # the runtime's own wording of the code is replaced by the Code line below
            message = message.replace(_RUNTIME_CODE_NOTE.format(code=code), "").rstrip()
        body = Text()
        body.append(request.server_name or "The server", style="bold")
        body.append(" asks you to open a link.\n\n")
        body.append(message)
        body.append("\n\nSite: ")
        body.append(request.host or "(none)", style="bold reverse")
        body.append("\nURL:  ")
        body.append(request.url, style="underline")
        if code:
            body.append("\nCode: ")
            body.append(code, style="bold reverse")
            body.append("  (the page asks for it; never type a code someone else gave you)", style="dim")
        for warning in request.warnings:
            body.append(f"\nWarning: {warning}", style="bold red")
        self.console.print(Panel(body, title="Open a link?", title_align="left", border_style="yellow", expand=False))
        try:
            while True:
                question = Question("Open it in your browser? [y/N]: ", completions=("yes", "no"))
                text = (await ask_line(self.ask, question)).strip().lower()
                if text in ("", "n", "no"):
                    self.console.print("[yellow]Declined: the link was not opened.[/]")
                    return {"action": "decline"}
                if text in ("y", "yes"):
                    break
                self.console.print("[red]! answer y or n[/]")
        except Cancelled:
            self.console.print("[yellow]Cancelled: the link was not opened.[/]")
            return {"action": "cancel"}
        shown = escape(request.url)
        if self.opener is None:
            self.console.print(f"Open this link in your browser: {shown}", soft_wrap=True, highlight=False)
        else:
            try:
                outcome = self.opener(request.url)
                if inspect.isawaitable(outcome):
                    outcome = await outcome
                opened = bool(outcome)
            except Exception:
                opened = False
            if opened:
                self.console.print("Opened in your browser; finish there.")
            else:
                self.console.print(
                    f"Could not open a browser; open this link yourself: {shown}", soft_wrap=True, highlight=False
                )
        if code:
            self.console.print(f"The page asks for the confirmation code [bold]{escape(code)}[/].")
        controls = None
        if self.keys and request.offers:
            controls = self.following = UrlFlowControls()
            self.console.print(_keys_hint(request.offers))
        if self.on_accept is not None:
            self.on_accept(request)
        return {"action": "accept"} if controls is None else UrlConsent("accept", controls=controls)


_KEY_WORDS: dict[str, UrlFlowWord] = {"d": "done", "c": "cancel", "f": "fresh-link"}
_WORD_NAMES: dict[UrlFlowWord, str] = {"done": '"done"', "cancel": "cancel", "fresh-link": "fresh link"}
_KEY_HINTS: dict[UrlFlowWord, str] = {"done": "[bold]d[/] when you are done", "cancel": "[bold]c[/] to cancel"}
_SAID: dict[UrlFlowWord, str] = {
    "done": "You said you are done: the server checks the browser step.",
    "cancel": "Cancelled: the server is told.",
    "fresh-link": "Asking the server for a fresh link.",
}


def _keys_hint(offers: tuple[UrlFlowWord, ...]) -> str:
    hints = [_KEY_HINTS.get(word, "[bold]f[/] for a fresh link") for word in offers]
    return f"If the page never finishes, press {', '.join(hints)}."


#: How the runtime's confirmation pages word the code in the message (``UrlFlow.prompt``).
_RUNTIME_CODE_NOTE = (
    "\n\nConfirmation code: {code}. The page will ask for it; never type a code that someone else gave you."
)
_CODE = re.compile(r"confirmation code:?\s*([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)", re.IGNORECASE)


def confirmation_code(message: str) -> str | None:
    """The confirmation code a URL request's message carries for its page, if any."""
    found = _CODE.search(message)
    return found.group(1) if found else None
