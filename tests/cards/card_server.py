"""``python card_server.py PORT``: a server that publishes its Server Card, over Streamable HTTP
on 127.0.0.1:PORT (``/mcp``; the card at ``/mcp/server-card``, the catalog at
``/.well-known/ai-catalog.json``), for tests/cards."""

from __future__ import annotations

import sys

from backchannel import Server
from backchannel.types.server_card import ServerCard

server = Server("weather", "2.1.0", title="Weather", website_url="https://weather.example")
CARD = ServerCard(
    name="com.example/weather",
    description="Forecasts for any city",
    repository={"url": "https://github.com/example/weather", "source": "github"},
)


@server.tool()
def forecast(city: str) -> str:
    """Tomorrow's weather in ``city``."""
    return f"sun in {city}"


if __name__ == "__main__":
    server.run_http(port=int(sys.argv[1]), card=CARD)
