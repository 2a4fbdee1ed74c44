"""A server for the ``watch`` terminal test: ``notes://today`` holds what ``write`` last wrote."""

from __future__ import annotations

from backchannel import Server

server = Server("watched", "1.0")
notes = {"today": "nothing yet"}


@server.resource("notes://today")
def today() -> str:
    """Today's note."""
    return notes["today"]


@server.tool()
def write(text: str) -> str:
    """Write today's note; whoever watches notes://today hears of it."""
    notes["today"] = text
    server.notify_resource_updated("notes://today")
    return f"wrote {len(text)} characters"


if __name__ == "__main__":
    server.run()
