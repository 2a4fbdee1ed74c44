"""A server for the terminal-client tests: a form, a link, an image, logs, a slow job and a
resource template whose variables complete through the server."""

from __future__ import annotations

import asyncio

from backchannel import Context, Image, Server
from backchannel.server.url_elicitation import UrlElicitations

PNG = b"\x89PNG\r\n\x1a\n not really a png"

server = Server("uitest", "1.0")

SIGNUP = {
    "type": "object",
    "title": "Sign up",
    "description": "Tell us about you.",
    "properties": {
        "name": {"type": "string", "title": "Your name", "description": "as on your passport", "minLength": 2},
        "email": {"type": "string", "format": "email"},
        "age": {"type": "integer", "minimum": 18, "maximum": 120},
        "newsletter": {"type": "boolean", "title": "Newsletter", "default": True},
        "plan": {
            "type": "string",
            "oneOf": [{"const": "free", "title": "Free"}, {"const": "pro", "title": "Professional"}],
            "default": "free",
        },
        "topics": {"type": "array", "items": {"type": "string", "enum": ["python", "rust", "go"]}, "maxItems": 2},
    },
    "required": ["name", "email", "age"],
}


@server.tool()
async def signup(ctx: Context) -> str:
    """Ask the person to sign up with a form."""
    await ctx.info("signup started", logger="forms")
    answer = await ctx.elicit("Please sign up for the service.", SIGNUP)
    if not answer.accepted:
        return f"signup {answer.action}"
    data = answer.data
    return f"welcome {data['name']} <{data['email']}> age {data['age']} plan {data['plan']} topics {data.get('topics')}"


@server.tool()
async def confirm(ctx: Context) -> str:
    """A one-question yes/no form."""
    schema = {"type": "object", "properties": {"sure": {"type": "boolean"}}}
    # A confirmation: each call is its own decision, so a decline is not remembered.
    answer = await ctx.elicit("Delete everything?", schema, remember_decline=False)
    return f"confirm {answer.action} {answer.data}"


@server.tool()
def picture():  # type: ignore[no-untyped-def]  # no return type: no output schema
    """A tiny image."""
    return ["here is a picture", Image(PNG, "image/png")]


@server.tool()
async def chatty(ctx: Context) -> str:
    """Logs at three levels."""
    await ctx.debug("a debug line")
    await ctx.info("an info line")
    await ctx.warning("a warning line")
    return "done"


@server.tool()
async def slow(ctx: Context, steps: int = 100) -> str:
    """Slow work with progress, to be interrupted."""
    for step in range(steps):
        await ctx.report_progress(step + 1, steps, f"step {step + 1}")
        await asyncio.sleep(0.1)
    return "finished"


@server.tool()
async def roots(ctx: Context) -> list[str]:
    """The client's roots."""
    return [item.uri for item in await ctx.list_roots()]


@server.tool()
async def link(ctx: Context, after: float = 3.0) -> str:
    """A URL request whose page "completes" by itself ``after`` seconds (no browser needed)."""
    flows = UrlElicitations.of(ctx.server)

    async def finish_later() -> None:
        await asyncio.sleep(after)
        for flow in list(flows._flows.values()):
            flows.complete(flow)

    finisher = asyncio.create_task(finish_later())
    try:
        outcome = await ctx.elicit_url(
            "Connect your example account.", url="https://auth.example.com/connect/{elicitation_id}"
        )
    finally:
        finisher.cancel()
    return f"link {outcome.action}"


FILES = {"backchannel": ["README.md", "pyproject.toml"], "backstage": ["app.yaml"], "other": ["notes.txt"]}


def complete_name(value: str, arguments: dict[str, str]) -> list[str]:
    """File names of the project chosen so far (the request's context)."""
    return [name for name in FILES.get(arguments.get("project", ""), []) if name.startswith(value)]


@server.resource("files://{project}/{name}", completers={"project": list(FILES), "name": complete_name})
def project_file(project: str, name: str) -> str:
    return f"the file {name} of {project}"


if __name__ == "__main__":
    server.run()
