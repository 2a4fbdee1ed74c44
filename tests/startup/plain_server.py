"""A stdio server of plain tools, as a user writes one; ``loaded`` says which heavy modules it holds.

python tests/startup/plain_server.py
"""

from __future__ import annotations

import sys
from typing import Annotated, TypedDict

import msgspec  # (not json: whether the server loads json is one of the questions)

from backchannel.server import Context, Server
from backchannel.server.completion import Complete

#: What a stdio server of plain tools never needs: the validation library (until a call needs
#: converting or refusing), the HTTP stack, the client, the terminal UI, package metadata scans.
HEAVY = (
    "pydantic",
    "pydantic_core",
    "httpx2",
    "httpx",
    "uvicorn",
    "httptools",
    "prompt_toolkit",
    "rich",
    "opentelemetry",
    "importlib.metadata",
    "backchannel.client",
    "backchannel.ui",
    "backchannel.http_host",
    "backchannel.transports.http",
)

#: What a plain stdio server loads only when it first needs it (``docs/performance.md``, idle memory):
#: OpenSSL's hashes and ``secrets`` (sealing, tasks, fleets, forms), pathlib and urllib.parse (roots),
#: json (refusals), the log redactor's second pass, resources and URI templates, tasks' records and
#: runners, URL elicitation, auth, sampling, multi-part progress, fleet calls, HTML, and composition
#: (mounts, transforms and visibility rules, middleware's chain: ``backchannel.composition``).
LAZY = (
    "hashlib",
    "hmac",
    "secrets",
    "random",
    "pathlib",
    "urllib.parse",
    "ipaddress",
    "json",
    "html",
    "backchannel.redaction.key_values",
    "backchannel.server.resources",
    "backchannel.types.uri_template",
    "backchannel.server.tasks.records",
    "backchannel.server.tasks.runner",
    "backchannel.server.tasks.relay",
    "backchannel.server.tasks.store",
    "backchannel.server.url_elicitation",
    "backchannel.auth",
    "backchannel.server.sampling",
    "backchannel.protocol.sampling",
    "backchannel.progress.stages",
    "backchannel.progress.parts",
    "backchannel.state.calls",
    "backchannel.composition",
)

server = Server("plain", "1.0.0")


class Name(TypedDict):
    name: str


@server.tool(structured_output=False)
def echo(text: str) -> str:
    """Answer the text back."""
    return text


@server.tool(structured_output=False)
def scale(value: float, times: int = 2, exact: bool = False) -> str:
    return str(value * times if exact else round(value * times))


@server.tool(structured_output=False)
async def ask(ctx: Context) -> str:
    """Ask the person for a name (a form of one text field)."""
    answer = await ctx.elicit("What is your name?", Name)
    return f"hello {answer.data['name']}" if answer.accepted and answer.data else answer.action


@server.tool(structured_output=False)
async def loaded(ctx: Context) -> str:
    """The heavy modules this process has imported."""
    return msgspec.json.encode(sorted(name for name in HEAVY if name in sys.modules)).decode()


@server.tool(structured_output=False)
def lazy_loaded() -> str:
    """The modules of ``LAZY`` this process has imported."""
    return msgspec.json.encode(sorted(name for name in LAZY if name in sys.modules)).decode()


@server.prompt()
def greet(word: Annotated[str, Complete(["alpha", "beta"])]) -> str:
    return f"Say {word}."


if __name__ == "__main__":
    server.run()
