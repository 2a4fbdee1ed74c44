"""A stdio server for tests/telemetry/test_spans_wire.py: an OpenTelemetry SDK that writes this
process's spans to ``$SPANS_FILE`` (JSON lines), and a tool that elicits."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _otel import configure_file_export
from typing_extensions import TypedDict

from backchannel import Context, Server

configure_file_export(os.environ["SPANS_FILE"])


class Name(TypedDict):
    name: str


server = Server("stdio-spans")


@server.tool()
async def ask(ctx: Context) -> str:
    answer = await ctx.elicit("Your name?", Name)
    return f"{answer.action}:{answer.data}"


if __name__ == "__main__":
    server.run()
