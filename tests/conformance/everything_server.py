"""The "everything" fixture server for the conformance harness's server scenarios.

    python tests/conformance/everything_server.py --port N [--redis URL [--workers W]]

serves ``server.http_app(path="/mcp")`` under uvicorn on ``http://127.0.0.1:N/mcp``.
With ``--redis`` it serves through ``Server.run_http(redis=URL, workers=W)`` instead: one
worker (or W forked on the port) of a fleet whose sessions, streams and reverse channel
live in that Redis, so several of these processes behind a load balancer are one server
(``run.py --fleet``).

The harness calls fixed names (tools ``test_*``, prompts ``test_*``, resources
``test://...``; the skills scenarios read whatever ``skills/list`` gives: ``skills/`` here and one
skill made in code); each expected payload is spelled out in the harness's scenario
descriptions (``@modelcontextprotocol/conformance``). Everything here uses only
backchannel's public server API.

Features backchannel does not have yet are still registered under the name and
schema the harness expects, and fail honestly with a ``ToolError`` naming the
issue that will add them (see ``expected-failures.yml``):

* several input requests in one ``InputRequiredResult`` (elicitation, sampling and roots
  together), issues #4 and #5

Elicitation (issue #4) is real: ``ctx.elicit`` sends ``elicitation/create`` in the
handshake era and returns an ``InputRequiredResult`` in the stateless era, from the
same tool code (the ``test_input_required_result_*`` tools name their questions
with ``key=`` because the harness looks for fixed ``inputRequests`` keys).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from everything_payloads import (
    ENUMS_FORM,
    JSON_SCHEMA_2020_12,
    NO_ARGUMENTS,
    PNG,
    WAV,
    X_MCP_HEADER_SCHEMA,
    ColorForm,
    ConfirmForm,
    ContactForm,
    DefaultsForm,
    NameForm,
    PromptContextForm,
    outcome,
    resource_block,
    sampled_text,
)
from tasks_fixture import add_task_tools

from backchannel import Audio, Context, Image, MCPError, Server, ToolError
from backchannel.server.elicitation import Elicited

#: The folder skills (``Server.add_skills``): one folder each, with its SKILL.md.
SKILLS = Path(__file__).resolve().parent / "skills"

# -------------------------------------------------------------------------- server


def build_server() -> Server:
    server = Server("backchannel-conformance-everything", "0.1.0")

    # -- content shapes ------------------------------------------------------------

    @server.tool(description="Returns one text block")
    def test_simple_text() -> str:
        return "This is a simple text response for testing."

    @server.tool(description="Returns a 1x1 red PNG image")
    def test_image_content() -> Any:
        return Image(PNG, "image/png")

    @server.tool(description="Returns a short WAV clip")
    def test_audio_content() -> Any:
        return Audio(WAV, "audio/wav")

    @server.tool(description="Returns an embedded text resource")
    def test_embedded_resource() -> Any:
        return resource_block("test://embedded-resource", "text/plain", "This is an embedded resource content.")

    @server.tool(description="Returns text, an image and an embedded resource")
    def test_multiple_content_types() -> Any:
        return [
            "Multiple content types test:",
            Image(PNG, "image/png"),
            resource_block("test://mixed-content-resource", "application/json", '{"test":"data","value":123}'),
        ]

    @server.tool(description="Always fails with isError: true")
    def test_error_handling() -> str:
        raise ToolError("This tool intentionally returns an error for testing")

    @server.tool(
        description="Tool with JSON Schema 2020-12 features",
        input_schema=JSON_SCHEMA_2020_12,
    )
    def json_schema_2020_12_tool() -> str:
        return "ok"

    # -- logging and progress --------------------------------------------------------

    @server.tool(description="Sends three info log messages while it runs")
    async def test_tool_with_logging(ctx: Context) -> str:
        await ctx.info("Tool execution started")
        await asyncio.sleep(0.05)
        await ctx.info("Tool processing data")
        await asyncio.sleep(0.05)
        await ctx.info("Tool execution completed")
        return "Tool with logging executed successfully"

    @server.tool(description="Logs at info level; sends nothing when the request asked for no logs")
    async def test_logging_tool(ctx: Context) -> str:
        await ctx.info("test_logging_tool ran")
        return "logging tool done"

    @server.tool(description="Reports progress 0, 50 and 100 of 100")
    async def test_tool_with_progress(ctx: Context) -> str:
        await ctx.report_progress(0, 100)
        await asyncio.sleep(0.05)
        await ctx.report_progress(50, 100)
        await asyncio.sleep(0.05)
        await ctx.report_progress(100, 100)
        return "Tool with progress executed successfully"

    # -- server -> client requests (not implemented yet) -----------------------------

    @server.tool(description="Asks the client for an LLM completion (sampling/createMessage)")
    async def test_sampling(prompt: str, ctx: Context) -> str:
        return f"LLM response: {sampled_text(await ctx.sample(prompt, max_tokens=100))}"

    @server.tool(description="Asks the user for a username and email (elicitation/create)", elicits=[ContactForm])
    async def test_elicitation(message: str, ctx: Context) -> str:
        return f"User response: {outcome(await ctx.elicit(message, ContactForm))}"

    @server.tool(
        description="Elicitation whose schema has defaults for every primitive type (SEP-1034)",
        elicits=[DefaultsForm],
    )
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        answer = await ctx.elicit("Please review the defaults", DefaultsForm)
        return f"Elicitation completed: {outcome(answer)}"

    @server.tool(description="Elicitation with every enum variant (SEP-1330)", elicits=[ENUMS_FORM])
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        answer = await ctx.elicit("Please choose", ENUMS_FORM)
        return f"Elicitation completed: {outcome(answer)}"

    @server.tool(
        description="Elicits while the response streams; must never send a request on the stream",
        elicits=[ConfirmForm],
    )
    async def test_streaming_elicitation(ctx: Context) -> str:
        answer = await ctx.elicit("Please confirm", ConfirmForm)
        return f"Elicitation completed: {outcome(answer)}"

    @server.tool(description="Needs the client's sampling capability")
    async def test_missing_capability(ctx: Context) -> str:
        # ctx.sample raises MissingCapability (-32021) when the client did not declare sampling.
        return f"LLM response: {sampled_text(await ctx.sample('Say hello', max_tokens=10))}"

    # -- SEP-2322 input-required results (2026-07-28; not implemented yet) ----------

    @server.tool(description="SEP-2322 InputRequiredResult round trip: sampling", input_schema=NO_ARGUMENTS)
    async def test_input_required_result_sampling(ctx: Context) -> str:
        answer = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
        return f"LLM response: {sampled_text(answer)}"

    @server.tool(description="SEP-2322 InputRequiredResult round trip: list roots", input_schema=NO_ARGUMENTS)
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        roots = await ctx.list_roots(key="client_roots")
        return "Roots: " + ", ".join(f"{root.name or 'unnamed'} ({root.uri})" for root in roots)

    @server.tool(
        description="SEP-2322: elicitation, sampling and roots/list asked in one round", input_schema=NO_ARGUMENTS
    )
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        name, sampled, roots = await ctx.gather(
            ctx.elicit("What is your name?", {"type": "object", "properties": {"name": {"type": "string"}}}),
            ctx.sample(["Say hello"], max_tokens=50),
            ctx.list_roots(),
        )
        person = name.data["name"] if name.accepted else "unknown"
        return f"name={person}; sampled={sampled.content.text}; roots={len(roots.items)}"

    _add_input_required_elicitation(server)
    add_task_tools(server)  # the tasks-* scenarios (issue #15); before test_dynamic_tool, which must stay last

    # -- skills (SEP-2640: the sep-2640-skills-* scenarios) ---------------------------
    # A folder skill first (the directory scenario reads the first listed, and wants a subfolder),
    # then one made in code.
    server.add_skills(SKILLS)

    @server.skill(files={"references/CONVENTIONS.md": "# Conventions\n\nfeat:, fix:, docs: prefixes.\n"})
    def git_workflow() -> str:
        """Follow this team's Git conventions for branching and commits."""
        return "# Git workflow\n\nBranch from main, one topic a branch; see `references/CONVENTIONS.md`.\n"

    # -- HTTP transport specifics ----------------------------------------------------

    @server.tool(description="Closes the SSE stream mid-call so the client must reconnect (SEP-1699)")
    async def test_reconnection(ctx: Context) -> str:
        ctx.close_sse_stream()
        await asyncio.sleep(0.3)  # the answer comes after the close: the client fetches it with Last-Event-ID
        return "Reconnection test completed"

    @server.tool(
        description="Has a parameter mirrored into an Mcp-Param header (SEP-2243 x-mcp-header)",
        input_schema=X_MCP_HEADER_SCHEMA,
    )
    def test_x_mcp_header() -> str:
        return "headers matched the body"

    # -- list changes ----------------------------------------------------------------

    def test_dynamic_tool() -> str:
        return "dynamic"

    def test_dynamic_prompt() -> str:
        return "dynamic"

    @server.tool(description="Changes the tool list (removes and re-adds test_dynamic_tool)")
    def test_trigger_tool_change() -> str:
        server.remove_tool("test_dynamic_tool")
        server.add_tool(test_dynamic_tool, description="Comes and goes with test_trigger_tool_change")
        return "tool list changed"

    @server.tool(description="Changes the prompt list (removes and re-adds test_dynamic_prompt)")
    def test_trigger_prompt_change() -> str:
        server.remove_prompt("test_dynamic_prompt")
        server.add_prompt(test_dynamic_prompt, description="Comes and goes with test_trigger_prompt_change")
        return "prompt list changed"

    server.add_tool(test_dynamic_tool, description="Comes and goes with test_trigger_tool_change")

    # -- prompts ---------------------------------------------------------------------

    @server.prompt(description="A prompt without arguments")
    def test_simple_prompt() -> str:
        return "This is a simple prompt for testing."

    # completion-complete asks for arg1 completions of "test" (any well-formed answer passes)
    @server.prompt(
        description="A prompt with two required arguments",
        completers={"arg1": ["test", "testing", "test-value", "paris", "park", "party"]},
    )
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.prompt(description="A prompt embedding the resource it is given")
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[Any]:
        return [
            resource_block(resourceUri, "text/plain", "Embedded resource content for testing."),
            "Please process the embedded resource above.",
        ]

    @server.prompt(description="A prompt with an image")
    def test_prompt_with_image() -> list[Any]:
        return [Image(PNG, "image/png"), "Please analyze the image above."]

    @server.prompt(description="SEP-2322 InputRequiredResult on prompts/get")
    async def test_input_required_result_prompt(ctx: Context) -> str:
        answer = await ctx.elicit("What context should the prompt use?", PromptContextForm, key="user_context")
        if answer.data is None:
            raise MCPError(f"the prompt needs a context; the user chose {answer.action}")
        return f"Use this context: {answer.data['context']}"

    server.add_prompt(test_dynamic_prompt, description="Comes and goes with test_trigger_prompt_change")

    # -- resources -------------------------------------------------------------------

    @server.resource(
        "test://static-text", name="static-text", description="A static text resource", mime_type="text/plain"
    )
    def static_text() -> str:
        return "This is the content of the static text resource."

    @server.resource(
        "test://static-binary",
        name="static-binary",
        description="A static binary resource (PNG)",
        mime_type="image/png",
    )
    def static_binary() -> bytes:
        return PNG

    @server.resource(
        "test://watched-resource",
        name="watched-resource",
        description="A resource to subscribe to",
        mime_type="text/plain",
    )
    def watched_resource() -> str:
        return "Watched resource content"

    @server.resource(
        "test://template/{id}/data", name="template-data", description="Data for an id", mime_type="application/json"
    )
    def template_data(id: str) -> str:
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"}, separators=(",", ":"))

    return server


def _add_input_required_elicitation(server: Server) -> None:
    """SEP-2322 (2026-07-28): tools whose questions become ``InputRequiredResult`` rounds."""

    @server.tool(description="SEP-2322 InputRequiredResult round trip: elicitation", elicits=[NameForm])
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        answer = await ctx.elicit("What is your name?", NameForm, key="user_name")
        return f"Hello, {answer.data['name']}!" if answer.data is not None else f"No name ({answer.action})"

    @server.tool(description="SEP-2322 InputRequiredResult round trip: request state", elicits=[ConfirmForm])
    async def test_input_required_result_request_state(ctx: Context) -> str:
        # Round 1's answer comes back inside the sealed requestState; reaching here means it verified.
        answer = await ctx.elicit("Please confirm", ConfirmForm, key="confirm")
        return f"state-ok: {outcome(answer)}"

    @server.tool(description="SEP-2322 InputRequiredResult round trip: two rounds", elicits=[NameForm, ColorForm])
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        name = await ctx.elicit("Step 1: What is your name?", NameForm, key="step1")
        color = await ctx.elicit("Step 2: What is your favorite color?", ColorForm, key="step2")
        return f"step1: {outcome(name)}; step2: {outcome(color)}"

    @server.tool(description="SEP-2322 InputRequiredResult round trip: tampered state", elicits=[ConfirmForm])
    async def test_input_required_result_tampered_state(ctx: Context) -> str:
        answer = await ctx.elicit("Please confirm", ConfirmForm, key="confirm")
        return f"state verified: {outcome(answer)}"

    @server.tool(description="SEP-2322: asks only what the client declared", elicits=[NameForm])
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        async def by_sampling() -> Elicited[Any]:
            # No elicitation capability: fall back to asking the client's model, if it has one.
            if not ctx.client_supports("sampling"):
                return Elicited("cancel")
            question = {"role": "user", "content": {"type": "text", "text": "Suggest a name"}}
            reply = await ctx.request_input(
                "sampling/createMessage",
                {"messages": [question], "maxTokens": 50},
                "sampling",
                key="suggested_name",
            )
            return Elicited("accept", {"name": (reply.get("content") or {}).get("text", "")})

        answer = await ctx.elicit("What is your name?", NameForm, key="user_name", fallback=by_sampling)
        return f"capabilities respected: {outcome(answer)}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, required=True, help="TCP port on 127.0.0.1")
    parser.add_argument("--redis", metavar="URL", help="share sessions with other workers through this Redis")
    parser.add_argument("--workers", type=int, default=1, help="processes forked on the port (needs --redis)")
    args = parser.parse_args(argv)
    if args.workers != 1 and args.redis is None:
        parser.error("--workers needs --redis: the workers share their sessions there")

    if args.redis is not None:
        build_server().run_http("127.0.0.1", args.port, "/mcp", redis=args.redis, workers=args.workers)
        return

    import uvicorn

    app = build_server().http_app(path="/mcp")
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
