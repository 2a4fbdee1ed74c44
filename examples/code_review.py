"""The chapter's ``code_review`` prompt with argument completion (``completion/complete``).

``language`` completes from a static list (indexed once); ``framework`` completes from
the frameworks of the language already chosen, which the client sends in
``context.arguments``. Run it on stdio with ``backchannel run examples/code_review.py``.
"""

from __future__ import annotations

from typing import Annotated

from backchannel import Server
from backchannel.server.completion import Complete

server = Server("code-review", "0.1.0", instructions="A code review prompt whose arguments complete as you type.")

LANGUAGES = ["python", "pytorch", "pyside", "javascript", "typescript", "rust", "go", "java", "kotlin", "swift"]

FRAMEWORKS: dict[str, list[str]] = {
    "python": ["flask", "django", "fastapi", "pyramid"],
    "javascript": ["react", "vue", "svelte", "express"],
    "typescript": ["react", "vue", "nest", "angular"],
    "rust": ["axum", "actix", "rocket"],
    "go": ["gin", "echo", "fiber"],
}


def frameworks(value: str, arguments: dict[str, str]) -> list[str]:
    """The frameworks of the chosen language that start with what was typed."""
    candidates = FRAMEWORKS.get(arguments.get("language", ""), [])
    return [name for name in candidates if name.startswith(value)]


@server.prompt(title="Code Review")
def code_review(
    language: Annotated[str, Complete(LANGUAGES), "Programming language"],
    framework: Annotated[str, Complete(frameworks), "Framework"] = "",
) -> str:
    """Review code written in a language and framework."""
    using = f"/{framework}" if framework else ""
    return f"Review this {language}{using} code."


if __name__ == "__main__":
    server.run()
