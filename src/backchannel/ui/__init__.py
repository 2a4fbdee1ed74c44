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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .commands import Command, CommandError, parse_arguments, parse_command
    from .form_prompt import FormRenderer, LinkConsent
    from .questions import Ask, Cancelled, Question, scripted
    from .render import Renderer
    from .session import TerminalSession

    #: The old name of ``TerminalSession`` (``backchannel.protocol`` has the ``Session``).
    Session = TerminalSession

#: Each public name's module and its name there, loaded at its first use: a command that needs one
#: module of the terminal client (``backchannel logout``: ``login.py``) loads no more of it.
_EXPORTS: dict[str, tuple[str, str]] = {
    "Ask": ("questions", "Ask"),
    "Cancelled": ("questions", "Cancelled"),
    "Command": ("commands", "Command"),
    "CommandError": ("commands", "CommandError"),
    "FormRenderer": ("form_prompt", "FormRenderer"),
    "LinkConsent": ("form_prompt", "LinkConsent"),
    "Question": ("questions", "Question"),
    "Renderer": ("render", "Renderer"),
    "Session": ("session", "TerminalSession"),  # the old name of ``TerminalSession``
    "TerminalSession": ("session", "TerminalSession"),
    "parse_arguments": ("commands", "parse_arguments"),
    "parse_command": ("commands", "parse_command"),
    "scripted": ("questions", "scripted"),
}


def __getattr__(name: str) -> Any:
    found = _EXPORTS.get(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{found[0]}", __name__), found[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)
