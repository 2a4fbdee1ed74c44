"""Handshake-era (2025-11-25) shapes, written from the schema, round-trip through the model."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from backchannel import types as T

ICON = {"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"], "theme": "dark"}


def round_trip(value: Any, typ: Any) -> Any:
    decoded = msgspec.convert(value, typ)
    assert msgspec.to_builtins(decoded) == value
    assert json.loads(msgspec.json.encode(decoded)) == value
    return decoded


def test_initialize_request_params() -> None:
    params = {
        "_meta": {"progressToken": 7},
        "protocolVersion": "2025-11-25",
        "capabilities": {
            "experimental": {"com.example/x": {"on": True}},
            "roots": {"listChanged": True},
            "sampling": {"context": {}, "tools": {}},
            "elicitation": {"form": {}, "url": {}},
            "tasks": {
                "list": {},
                "cancel": {},
                "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}},
            },
        },
        "clientInfo": {
            "name": "client",
            "title": "Client",
            "version": "1.0.0",
            "description": "A client",
            "websiteUrl": "https://example.com",
            "icons": [ICON],
        },
    }
    decoded = round_trip(params, T.InitializeRequestParams)
    assert decoded.protocol_version == "2025-11-25"
    assert decoded.meta == {"progressToken": 7}
    caps = decoded.capabilities
    assert caps.roots == T.RootsCapability(list_changed=True)
    assert caps.elicitation == T.ElicitationCapability(form={}, url={})
    assert caps.tasks is not None and caps.tasks.requests is not None
    assert caps.tasks.requests.sampling == T.SamplingTasksCapability(create_message={})
    assert caps.extensions is None
    assert decoded.client_info.website_url == "https://example.com"
    assert decoded.client_info.icons == [
        T.Icon(src="https://example.com/icon.png", mime_type="image/png", sizes=["48x48"], theme="dark")
    ]


def test_initialize_result() -> None:
    result = {
        "protocolVersion": "2025-11-25",
        "capabilities": {
            "logging": {},
            "completions": {},
            "prompts": {"listChanged": True},
            "resources": {"subscribe": True, "listChanged": False},
            "tools": {"listChanged": True},
            "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        },
        "serverInfo": {"name": "server", "version": "2.0"},
        "instructions": "Use the tools.",
    }
    decoded = round_trip(result, T.InitializeResult)
    assert decoded.result_type is None
    assert decoded.capabilities.resources == T.ResourcesCapability(subscribe=True, list_changed=False)
    assert decoded.capabilities.logging == {}
    assert decoded.capabilities.tasks is not None
    assert decoded.capabilities.tasks.requests == T.ServerTasksRequests(tools=T.ToolsTasksCapability(call={}))
    assert decoded.server_info == T.Implementation(name="server", version="2.0")


PROPERTIES: dict[str, tuple[dict[str, Any], Any]] = {
    "name": (
        {"type": "string", "title": "Name", "minLength": 1, "maxLength": 20, "default": "x"},
        T.StringSchema,
    ),
    "email": ({"type": "string", "format": "email"}, T.StringSchema),
    "age": ({"type": "integer", "minimum": 0, "maximum": 150, "default": 30}, T.NumberSchema),
    "ratio": ({"type": "number", "minimum": 0.5}, T.NumberSchema),
    "ok": ({"type": "boolean", "default": True}, T.BooleanSchema),
    "color": (
        {"type": "string", "enum": ["red", "green"], "default": "red"},
        T.UntitledSingleSelectEnumSchema,
    ),
    "titled": (
        {
            "type": "string",
            "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}],
            "default": "g",
        },
        T.TitledSingleSelectEnumSchema,
    ),
    "many": (
        {
            "type": "array",
            "minItems": 1,
            "maxItems": 2,
            "items": {"type": "string", "enum": ["a", "b", "c"]},
            "default": ["a"],
        },
        T.UntitledMultiSelectEnumSchema,
    ),
    "many_titled": (
        {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]}},
        T.TitledMultiSelectEnumSchema,
    ),
    "legacy": (
        {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]},
        T.LegacyTitledEnumSchema,
    ),
}


def test_elicitation_form_params_with_sep_1330_enums() -> None:
    params = {
        "_meta": {"progressToken": "p"},
        "task": {"ttl": 60000},
        "mode": "form",
        "message": "Tell me",
        "requestedSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {name: schema for name, (schema, _) in PROPERTIES.items()},
            "required": ["name", "color"],
        },
    }
    form = round_trip(params, T.ElicitRequestFormParams)
    assert form.task == T.TaskMetadata(ttl=60000)
    assert form.requested_schema.schema_ == "https://json-schema.org/draft/2020-12/schema"
    assert form.requested_schema.required == ["name", "color"]
    loose = round_trip(params, T.ElicitRequestParams)
    assert loose.effective_mode == "form"
    for name, (schema, typ) in PROPERTIES.items():
        assert form.requested_schema.properties[name] == schema
        round_trip(schema, typ)
    titled = msgspec.convert(PROPERTIES["many_titled"][0], T.TitledMultiSelectEnumSchema)
    assert titled.items.any_of[1] == T.EnumOption(const="b", title="B")
    legacy = msgspec.convert(PROPERTIES["legacy"][0], T.LegacyTitledEnumSchema)
    assert legacy.enum_names == ["Small", "Medium"]
    # Form mode may omit "mode"; the form struct still needs the schema.
    no_mode = {"message": "m", "requestedSchema": {"type": "object", "properties": {}}}
    assert round_trip(no_mode, T.ElicitRequestFormParams).mode is None
    with pytest.raises(msgspec.ValidationError, match="requestedSchema"):
        msgspec.convert({"message": "m"}, T.ElicitRequestFormParams)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"type": "string", "format": "phone"}, T.StringSchema)


def test_elicit_result_content_types() -> None:
    result = {
        "_meta": {"k": 1},
        "action": "accept",
        "content": {"name": "n", "age": 30, "ratio": 0.5, "ok": False, "many": ["a", "b"]},
    }
    decoded = round_trip(result, T.ElicitResult)
    assert decoded.content is not None
    assert decoded.content["ok"] is False
    assert decoded.content["age"] == 30 and type(decoded.content["age"]) is int
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"action": "maybe"}, T.ElicitResult)


def test_url_mode_elicitation_with_elicitation_id() -> None:
    params = {
        "mode": "url",
        "message": "Sign in",
        "elicitationId": "550e8400-e29b-41d4-a716-446655440000",
        "url": "https://mcp.example.com/connect?elicitationId=550e8400",
    }
    url = round_trip(params, T.ElicitRequestURLParams)
    assert url.elicitation_id == "550e8400-e29b-41d4-a716-446655440000"
    assert url.requested_schema is None
    loose = round_trip(params, T.ElicitRequestParams)
    assert loose.effective_mode == "url"
    assert loose.url == params["url"]
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"mode": "form", "message": "m", "url": "u"}, T.ElicitRequestURLParams)
    built = T.ElicitRequestURLParams(mode="url", message="Sign in", url="https://x", elicitation_id="e1")
    assert msgspec.to_builtins(built) == {
        "mode": "url",
        "message": "Sign in",
        "url": "https://x",
        "elicitationId": "e1",
    }
    done = round_trip({"elicitationId": "e1"}, T.ElicitationCompleteNotificationParams)
    assert done.elicitation_id == "e1"


def test_call_tool_result_with_every_content_block() -> None:
    annotations = {"audience": ["user", "assistant"], "priority": 0.5, "lastModified": "2025-01-12T15:00:58Z"}
    result = {
        "_meta": {"com.example/trace": "t"},
        "content": [
            {"type": "text", "text": "hello", "annotations": annotations, "_meta": {"a": 1}},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav", "annotations": {"priority": 1}},
            {
                "type": "resource_link",
                "uri": "file:///a.txt",
                "name": "a.txt",
                "title": "A",
                "description": "a file",
                "mimeType": "text/plain",
                "size": 12,
                "icons": [ICON],
                "annotations": annotations,
            },
            {"type": "resource", "resource": {"uri": "file:///b.txt", "mimeType": "text/plain", "text": "b"}},
            {"type": "resource", "resource": {"uri": "file:///c.bin", "blob": "AAEC"}, "_meta": {"m": True}},
        ],
        "structuredContent": {"answer": 42},
    }
    decoded = round_trip(result, T.CallToolResult)  # isError absent: False, its default
    kinds = [type(block) for block in decoded.content]
    assert kinds == [
        T.TextContent,
        T.ImageContent,
        T.AudioContent,
        T.ResourceLink,
        T.EmbeddedResource,
        T.EmbeddedResource,
    ]
    link = decoded.content[3]
    assert isinstance(link, T.ResourceLink) and isinstance(link, T.Resource)
    assert link.size == 12
    text_res, blob_res = decoded.content[4], decoded.content[5]
    assert isinstance(text_res, T.EmbeddedResource) and isinstance(blob_res, T.EmbeddedResource)
    assert text_res.resource.text == "b" and text_res.resource.blob is None
    assert blob_res.resource.blob == "AAEC" and blob_res.resource.text is None
    assert decoded.structured_content == {"answer": 42}
    assert decoded.is_error is False


def test_building_content_encodes_only_what_is_set() -> None:
    result = T.CallToolResult(
        content=[
            T.TextContent(text="x"),
            T.EmbeddedResource(resource=T.BlobResourceContents(uri="file:///y", blob="AA==")),
        ],
        structured_content=None,
    )
    assert msgspec.to_builtins(result) == {
        "content": [
            {"type": "text", "text": "x"},
            {"type": "resource", "resource": {"uri": "file:///y", "blob": "AA=="}},
        ],
        # null is a legitimate structuredContent in 2026-07-28 and is kept.
        "structuredContent": None,
    }
    assert msgspec.to_builtins(T.CallToolResult(content=[])) == {"content": []}


def test_unknown_fields_are_accepted_and_unknown_tags_rejected() -> None:
    block = msgspec.convert({"type": "text", "text": "x", "future": 1}, T.ContentBlock)
    assert block == T.TextContent(text="x")
    with pytest.raises(msgspec.ValidationError, match="video"):
        msgspec.convert({"type": "video", "data": "x"}, T.ContentBlock)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"content": [{"type": "tool_use", "id": "1", "name": "n", "input": {}}]}, T.CallToolResult)


def test_sampling_with_tools_and_task() -> None:
    params = {
        "_meta": {"progressToken": 3},
        "task": {"ttl": 1000},
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "weather?"}},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Paris"}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "toolUseId": "c1",
                        "content": [{"type": "text", "text": "18C"}],
                        "structuredContent": {"t": 18},
                        "isError": False,
                    }
                ],
            },
        ],
        "modelPreferences": {"hints": [{"name": "claude"}], "costPriority": 0.25},
        "systemPrompt": "Be brief.",
        "includeContext": "thisServer",
        "temperature": 0.5,
        "maxTokens": 200,
        "stopSequences": ["\n\n"],
        "metadata": {"k": "v"},
        "tools": [
            {
                "name": "get_weather",
                "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
                "execution": {"taskSupport": "optional"},
                "annotations": {"readOnlyHint": True, "openWorldHint": False},
            }
        ],
        "toolChoice": {"mode": "required"},
    }
    decoded = round_trip(params, T.CreateMessageRequestParams)
    assert decoded.include_context == "thisServer"
    assert decoded.tool_choice == T.ToolChoice(mode="required")
    assert decoded.tools is not None
    assert decoded.tools[0].execution == T.ToolExecution(task_support="optional")
    assert decoded.tools[0].annotations == T.ToolAnnotations(read_only_hint=True, open_world_hint=False)
    last = decoded.messages[2].content
    assert isinstance(last, list) and isinstance(last[0], T.ToolResultContent)
    assert last[0].tool_use_id == "c1"
    result = {"_meta": {}, "role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}
    assert round_trip(result, T.CreateMessageResult).stop_reason is None


def test_tasks() -> None:
    task = {
        "taskId": "t1",
        "status": "working",
        "statusMessage": "busy",
        "createdAt": "2025-11-25T10:00:00Z",
        "lastUpdatedAt": "2025-11-25T10:00:05Z",
        "ttl": None,
        "pollInterval": 500,
    }
    created = round_trip({"task": task}, T.CreateTaskResult)
    assert created.task.ttl is None
    assert round_trip({**task, "_meta": {"x": 1}}, T.GetTaskResult).poll_interval == 500
    assert round_trip({**task, "status": "completed"}, T.TaskStatusNotificationParams).status == "completed"
    assert round_trip({"tasks": [task], "nextCursor": "c"}, T.ListTasksResult).next_cursor == "c"
    # ttl is required (nullable), so it is always encoded.
    minimal = T.Task(task_id="t", status="failed", created_at="a", last_updated_at="b", ttl=None)
    assert msgspec.to_builtins(minimal) == {
        "taskId": "t",
        "status": "failed",
        "createdAt": "a",
        "lastUpdatedAt": "b",
        "ttl": None,
    }
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({**task, "status": "paused"}, T.Task)


def test_other_handshake_era_params() -> None:
    complete = {
        "ref": {"type": "ref/resource", "uri": "file:///{path}"},
        "argument": {"name": "path", "value": "sr"},
        "context": {"arguments": {"root": "/"}},
    }
    decoded = round_trip(complete, T.CompleteRequestParams)
    assert isinstance(decoded.ref, T.ResourceTemplateReference)
    assert decoded.ref.uri == "file:///{path}"
    prompt_ref = round_trip({"type": "ref/prompt", "name": "p", "title": "P"}, T.CompletionReference)
    assert prompt_ref == T.PromptReference(name="p", title="P")
    assert round_trip({"level": "warning"}, T.SetLevelRequestParams).level == "warning"
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"level": "verbose"}, T.SetLevelRequestParams)
    assert T.LOGGING_LEVELS.index("error") > T.LOGGING_LEVELS.index("warning")
    assert round_trip({"uri": "file:///a"}, T.SubscribeRequestParams).uri == "file:///a"
    cancelled = round_trip({"reason": "task"}, T.CancelledNotificationParams)
    assert cancelled.request_id is None
    progress = round_trip({"progressToken": 1, "progress": 0.5, "total": 2.0}, T.ProgressNotificationParams)
    assert progress.progress_token == 1
    roots = round_trip({"roots": [{"uri": "file:///r", "name": "r", "_meta": {"a": 1}}]}, T.ListRootsResult)
    assert roots.roots[0].meta == {"a": 1}
    tool = {
        "name": "t",
        "title": "T",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]},
        "icons": [ICON],
        "_meta": {"m": 1},
    }
    assert round_trip(tool, T.Tool).output_schema == tool["outputSchema"]
    template = {
        "uriTemplate": "file:///{p}",
        "name": "files",
        "icons": [ICON],
        "annotations": {"audience": ["user"]},
    }
    assert round_trip(template, T.ResourceTemplate).uri_template == "file:///{p}"
