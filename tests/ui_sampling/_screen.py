"""``backchannel`` in a pseudo-terminal (``_pty.Screen``), its ``expect`` taking plain text by default
and answering the text it read on through."""

from __future__ import annotations

import re
from pathlib import Path

from _pty import ROOT, terminal_env
from _pty import Screen as _Screen

ESC = "\x1b"
#: Ctrl-U: prompt_toolkit empties the line before the cursor (the prefilled text, to type anew).
CLEAR_LINE = "\x15"


class Screen(_Screen):
    def __init__(self, *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> None:
        super().__init__(*args, env=terminal_env(**(env or {})), cwd=cwd, columns=220)

    def expect(self, pattern: str, *, literal: bool = True) -> str:  # type: ignore[override]
        """Wait for ``pattern`` (plain text unless ``literal`` is False) after what was read so far;
        the text from there to the end of the match."""
        start = self.pos
        super().expect(re.escape(pattern) if literal else pattern)
        return self.text[start : self.pos]
