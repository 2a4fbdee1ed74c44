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

from .commands import Command, CommandError, parse_arguments, parse_command
from .form_prompt import FormRenderer, LinkConsent
from .questions import Ask, Cancelled, Question, scripted
from .render import Renderer
from .session import TerminalSession

#: The old name of ``TerminalSession`` (``backchannel.protocol`` has the ``Session``).
Session = TerminalSession
