"""Server log messages (``notifications/message``) as the terminal shows them: one coloured line each."""

from __future__ import annotations

__all__ = ["LEVEL_STYLES", "log_line", "severity"]

import json
from typing import Any

from rich.text import Text

from ..types.logging import LOG_LEVEL_RANK

#: The rich style of each level's tag.
LEVEL_STYLES = {
    "debug": "dim",
    "info": "blue",
    "notice": "cyan",
    "warning": "yellow",
    "error": "red",
    "critical": "bold red",
    "alert": "bold red",
    "emergency": "bold white on red",
}


def severity(level: Any) -> int:
    """``level``'s rank (0 = debug); anything that is not a level counts as debug."""
    return LOG_LEVEL_RANK.get(level, 0) if isinstance(level, str) else 0


def log_line(params: dict[str, Any]) -> Text:
    """``[level] logger: data``, the data as text or JSON."""
    level = str(params.get("level", "info"))
    data = params.get("data")
    text = Text(f"[{level}]", style=LEVEL_STYLES.get(level, ""))
    if params.get("logger"):
        text.append(f" {params['logger']}:", style="dim")
    text.append(" " + (data if isinstance(data, str) else json.dumps(data)))
    return text
