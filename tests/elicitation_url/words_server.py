"""A stdio server for the terminal tests of a URL flow's words: its pages are served on a
loopback side listener, and its one tool says how the flow ended."""

from __future__ import annotations

from backchannel import Context, Server

server = Server("words", "1.0")


@server.tool()
async def confirm(ctx: Context) -> str:
    """Send the person to the confirmation page; report how it ended."""
    outcome = await ctx.elicit_url("Confirm the transfer in your browser.")
    return f"confirm: {outcome.action}"


if __name__ == "__main__":
    server.run()
