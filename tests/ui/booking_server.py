"""A restaurant with one form, for the terminal tests of choice fields and remembered declines:

    backchannel run tests/ui/booking_server.py

``book_table`` asks when and where to sit (a choice with a default); a decline is remembered,
as ``ctx.elicit`` does, so the next call answers at once."""

from __future__ import annotations

from backchannel import Context, Server

server = Server("restaurant", "1.0")

FORM = {
    "type": "object",
    "properties": {
        "time": {"type": "string", "title": "Time", "default": "19:00"},
        "seating": {
            "type": "string",
            "title": "Seating",
            "oneOf": [
                {"const": "indoor", "title": "Indoor"},
                {"const": "terrace", "title": "Terrace"},
                {"const": "bar", "title": "At the bar"},
            ],
            "default": "indoor",
        },
    },
    "required": ["time", "seating"],
}


@server.tool()
async def book_table(ctx: Context) -> str:
    """Book a table for tonight."""
    answer = await ctx.elicit("Book a table for tonight?", FORM)
    if not answer.accepted:
        return f"No booking ({answer.action})."
    return f"Booked a table at {answer.data['time']}, seating: {answer.data['seating']}."


if __name__ == "__main__":
    server.run()
