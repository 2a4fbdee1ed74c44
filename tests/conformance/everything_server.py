"""The "everything" fixture server for the conformance harness's server scenarios.

    python tests/conformance/everything_server.py --port N

serves ``server.http_app(path="/mcp")`` under uvicorn on ``http://127.0.0.1:N/mcp``.

The harness calls fixed names (tools ``test_*``, prompts ``test_*``, resources
``test://...``); each expected payload is spelled out in the harness's scenario
descriptions (``@modelcontextprotocol/conformance``). Everything here uses only
backchannel's public server API.

Features backchannel does not have yet are still registered under the name and
schema the harness expects, and fail honestly with a ``ToolError`` naming the
issue that will add them (see ``expected-failures.yml``):

* elicitation (``ctx.elicit``), issue #4
* sampling, roots and completion, issue #5
* input-required results (SEP-2322 multi-round trips): #4, plus #5 for sampling/roots
* closing an SSE stream mid-call and ``x-mcp-header`` validation (HTTP transport), issue #3
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import struct
import wave
import zlib
from typing import Any

from backchannel import Audio, Context, Image, MCPError, MissingCapability, Server, ToolError

# --------------------------------------------------------------------------- media


def _png_1x1_red() -> bytes:
    """A valid 1x1 RGB PNG holding one red pixel."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # width, height, depth 8, truecolour
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # filter byte 0, then R G B
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def _wav_silence(milliseconds: int = 50, rate: int = 8000) -> bytes:
    """A valid mono 16-bit PCM WAV of silence."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"\x00\x00" * (rate * milliseconds // 1000))
    return buffer.getvalue()


PNG = _png_1x1_red()
WAV = _wav_silence()

JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

X_MCP_HEADER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {
            "type": "string",
            "description": "Mirrored into the Mcp-Param-Region header (SEP-2243)",
            "x-mcp-header": "Region",
        },
        "query": {"type": "string", "description": "Not mirrored into a header"},
    },
    "required": ["region"],
}

NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}


def _todo(feature: str, issue: str) -> str:
    return f"not implemented yet: {feature} (issue {issue})"


def _resource_block(uri: str, mime_type: str, text: str) -> dict[str, Any]:
    return {"type": "resource", "resource": {"uri": uri, "mimeType": mime_type, "text": text}}


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
        return _resource_block("test://embedded-resource", "text/plain", "This is an embedded resource content.")

    @server.tool(description="Returns text, an image and an embedded resource")
    def test_multiple_content_types() -> Any:
        return [
            "Multiple content types test:",
            Image(PNG, "image/png"),
            _resource_block("test://mixed-content-resource", "application/json", '{"test":"data","value":123}'),
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
    def test_sampling(prompt: str) -> str:
        raise ToolError(_todo("sampling (ctx.sample)", "5"))

    @server.tool(description="Asks the user for a username and email (elicitation/create)")
    def test_elicitation(message: str) -> str:
        raise ToolError(_todo("elicitation (ctx.elicit)", "4"))

    @server.tool(description="Elicitation whose schema has defaults for every primitive type (SEP-1034)")
    def test_elicitation_sep1034_defaults() -> str:
        raise ToolError(_todo("elicitation (ctx.elicit)", "4"))

    @server.tool(description="Elicitation with every enum variant (SEP-1330)")
    def test_elicitation_sep1330_enums() -> str:
        raise ToolError(_todo("elicitation (ctx.elicit)", "4"))

    @server.tool(description="Elicits while the response streams; must never send a request on the stream")
    def test_streaming_elicitation() -> str:
        raise ToolError(_todo("elicitation (ctx.elicit)", "4"))

    @server.tool(description="Needs the client's sampling capability")
    def test_missing_capability(ctx: Context) -> str:
        if not ctx.client_supports("sampling"):
            raise MissingCapability("sampling")
        raise ToolError(_todo("sampling (ctx.sample)", "5"))

    # -- SEP-2322 input-required results (2026-07-28; not implemented yet) ----------

    input_required = {
        "elicitation": "4",
        "sampling": "5",
        "list_roots": "5",
        "request_state": "4",
        "multiple_inputs": "4, #5",
        "multi_round": "4",
        "tampered_state": "4",
        "capabilities": "4",
    }
    for suffix, issue in input_required.items():
        server.add_tool(
            _raiser(_todo("input-required results (SEP-2322)", issue)),
            name=f"test_input_required_result_{suffix}",
            description=f"SEP-2322 InputRequiredResult round trip: {suffix.replace('_', ' ')}",
            input_schema=NO_ARGUMENTS,
        )

    # -- HTTP transport specifics ----------------------------------------------------

    @server.tool(description="Closes the SSE stream mid-call so the client must reconnect (SEP-1699)")
    def test_reconnection() -> str:
        raise ToolError(_todo("closing the SSE stream mid-call (HTTP transport)", "3"))

    @server.tool(
        description="Has a parameter mirrored into an Mcp-Param header (SEP-2243 x-mcp-header)",
        input_schema=X_MCP_HEADER_SCHEMA,
    )
    def test_x_mcp_header() -> str:
        raise ToolError(_todo("x-mcp-header parameters (HTTP transport)", "3"))

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

    @server.prompt(description="A prompt with two required arguments")
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.prompt(description="A prompt embedding the resource it is given")
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[Any]:
        return [
            _resource_block(resourceUri, "text/plain", "Embedded resource content for testing."),
            "Please process the embedded resource above.",
        ]

    @server.prompt(description="A prompt with an image")
    def test_prompt_with_image() -> list[Any]:
        return [Image(PNG, "image/png"), "Please analyze the image above."]

    @server.prompt(description="SEP-2322 InputRequiredResult on prompts/get")
    def test_input_required_result_prompt() -> str:
        raise MCPError(_todo("input-required results (SEP-2322)", "4"))

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


def _raiser(message: str) -> Any:
    def tool() -> str:
        raise ToolError(message)

    return tool


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, required=True, help="TCP port on 127.0.0.1")
    args = parser.parse_args(argv)

    import uvicorn

    app = build_server().http_app(path="/mcp")
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
