"""The terminal client a person uses: ``backchannel connect`` and ``backchannel demo``.

The logic runs without a terminal: :class:`TerminalSession` turns command lines into
requests and prints results to a rich ``Console``; :class:`FormRenderer` fills
elicitation forms through an ``Ask`` function (see :func:`scripted` for tests).
:mod:`backchannel.ui.terminal` adds prompt_toolkit input and Ctrl-C handling.
"""

from __future__ import annotations

__all__ = [
    "Ask",
    "Cancelled",
    "Command",
    "CommandError",
    "FormRenderer",
    "LinkConsent",
    "Question",
    "Renderer",
    "Session",
    "TerminalSession",
    "parse_arguments",
    "parse_command",
    "scripted",
]

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .commands import Command, CommandError, parse_arguments, parse_command
    from .form_prompt import FormRenderer, LinkConsent
    from .questions import Ask, Cancelled, Question, scripted
    from .render import Renderer
    from .session import TerminalSession

    #: The old name of ``TerminalSession`` (``backchannel.protocol`` has the ``Session``).
    Session = TerminalSession

#: Each public name's module (and its name there, where it differs), loaded at its first use: a
#: command that needs one module of the terminal client (``backchannel logout``: ``login.py``)
#: loads no more of it.
_EXPORTS: dict[str, str | tuple[str, str]] = {
    "Ask": "questions",
    "Cancelled": "questions",
    "Command": "commands",
    "CommandError": "commands",
    "FormRenderer": "form_prompt",
    "LinkConsent": "form_prompt",
    "Question": "questions",
    "Renderer": "render",
    "Session": ("session", "TerminalSession"),  # the old name of ``TerminalSession``
    "TerminalSession": "session",
    "parse_arguments": "commands",
    "parse_command": "commands",
    "scripted": "questions",
}


__getattr__ = lazy_names(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return list(__all__)
