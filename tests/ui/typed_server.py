"""A server for the terminal tests of typed prompt arguments and template variables, and of
the wording of counted hints: an ``int`` template variable, an ``int`` prompt argument, and
text fields bounded to one character."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from backchannel import Server

server = Server("typed", "1.0")


@server.resource("items://{n}")
def item(n: int) -> str:
    return f"item number {n}, doubled {2 * n}"


@server.prompt()
def countdown(start: int, word: str = "go") -> str:
    """Count down from ``start``."""
    return " ".join(str(i) for i in range(start, 0, -1)) + f" {word}!"


@server.tool()
def initial(
    letter: Annotated[str, Field(min_length=1, max_length=1)], note: Annotated[str, Field(min_length=1)]
) -> str:
    """One letter and a note."""
    return f"{letter}: {note}"


if __name__ == "__main__":
    server.run()
