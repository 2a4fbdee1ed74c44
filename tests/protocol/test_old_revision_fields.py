"""A session of an older revision gets only the fields its revision has, read on the wire.

Issue #27: a 2024-11-05 session received ``outputSchema``, ``structuredContent`` and the
``completions`` capability, which that revision lacks. The rule is a table,
``types/field_revisions.py`` (``(shape, field)`` -> the revisions that have it, as the
``(method, version)`` table is), read off each revision's ``schema.ts``. Here our client is
held to one revision (``Client(versions=(version,))``) and talks to ``old_revision_server.py``,
which uses every optional field there is, over stdio (a process) and over the deprecated
HTTP+SSE transport (``http_app(legacy_sse=True)`` on 127.0.0.1); a ``Tap`` under the client
keeps what crossed the wire. 2025-11-25, the control, gets every field.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from old_revision_server import build

from backchannel import Client
from backchannel.testing import run, serve_on_loopback
from backchannel.testing.tap import Tap
from backchannel.transports.http.legacy_sse_client import LegacySseClientTransport
from backchannel.transports.stdio import StdioClientTransport
from backchannel.types.field_revisions import FIELD_VERSIONS, for_revision, has_field, trims, versions_without
from backchannel.types.versions import VERSIONS

SERVER = Path(__file__).resolve().parent / "old_revision_server.py"
TRANSPORTS = ["stdio", "legacy-sse"]
#: The spec texts, in ``shared/`` beside the checkout (as CI lays it).
SHARED_SPEC = Path(__file__).resolve().parents[2].parent / "shared" / "spec"


@contextlib.asynccontextmanager
async def held_to(version: str, transport: str) -> AsyncIterator[tuple[Client, Tap]]:
    """Our client, speaking only ``version``, to the server over ``transport``; the tap under it."""
    if transport == "stdio":
        tap = Tap(StdioClientTransport(sys.executable, [str(SERVER)]))
        async with Client(tap, era="handshake", versions=(version,)) as client:
            yield client, tap
        return
    async with serve_on_loopback(build().http_app(legacy_sse=True)) as base:
        tap = Tap(LegacySseClientTransport(f"{base}/sse"))
        async with Client(tap, era="handshake", versions=(version,)) as client:
            yield client, tap


def session(version: str, transport: str) -> dict[str, Any]:
    """One session's answers, each as the wire had it, by what was asked."""

    async def body() -> dict[str, Any]:
        async with held_to(version, transport) as (client, tap):
            assert client.protocol_version == version
            asked = {
                "tools": ("tools/list", {}),
                "weather": ("tools/call", {"name": "weather", "arguments": {"city": "Oslo"}}),
                "made": ("tools/call", {"name": "made"}),
                "count": ("tools/call", {"name": "count", "arguments": {"steps": 2}, "_meta": {"progressToken": "p"}}),
                "prompts": ("prompts/list", {}),
                "resources": ("resources/list", {}),
                "templates": ("resources/templates/list", {}),
                "complete": (
                    "completion/complete",
                    {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "A"}},
                ),
            }
            ids: dict[str, Any] = {}
            for name, (method, params) in asked.items():
                before = len(tap.written)
                await client.request(method, params)
                ids[name] = next(m["id"] for m in tap.written[before:] if m.get("method") == method)
        seen: dict[str, Any] = {}
        for name, request_id in [("initialize", tap.requests_written("initialize")[0]["id"]), *ids.items()]:
            (response,) = tap.responses_received(request_id)
            seen[name] = response["result"]
        seen["progress"] = [m["params"] for m in tap.notifications_received("notifications/progress")]
        return seen

    return run(body, 60)


@pytest.fixture(scope="module", params=TRANSPORTS)
def old(request: pytest.FixtureRequest) -> dict[str, Any]:
    return session("2024-11-05", request.param)


def test_2024_11_05_capabilities_and_server_info_have_only_that_revisions_fields(old: dict[str, Any]) -> None:
    initialized = old["initialize"]
    assert initialized["protocolVersion"] == "2024-11-05"
    # 2024-11-05 ServerCapabilities: experimental, logging, prompts, resources, tools (completions: 2025-03-26).
    assert initialized["capabilities"] == {
        "logging": {},
        "tools": {"listChanged": True},
        "prompts": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
    }
    assert initialized["serverInfo"] == {"name": "rich", "version": "1.0.0"}  # no title, no websiteUrl


def test_2024_11_05_tools_have_no_output_schema_title_annotations_or_icons(old: dict[str, Any]) -> None:
    for tool in old["tools"]["tools"]:
        assert set(tool) <= {"name", "description", "inputSchema"}, tool
    weather = next(tool for tool in old["tools"]["tools"] if tool["name"] == "weather")
    assert weather["description"] == "The weather in a city."


def test_2024_11_05_results_have_no_structured_content_and_lose_nothing(old: dict[str, Any]) -> None:
    assert old["weather"] == {"content": [{"type": "text", "text": '{"city":"Oslo","temperature":14.0}'}]}
    # A result made by hand with only structuredContent: its JSON text stands in for it.
    assert old["made"] == {"content": [{"type": "text", "text": '{"made":"by hand"}'}]}


def test_2024_11_05_progress_has_no_message(old: dict[str, Any]) -> None:
    assert old["progress"] == [
        {"progressToken": "p", "progress": 1, "total": 2},
        {"progressToken": "p", "progress": 2, "total": 2},
    ]
    assert old["count"]["content"] == [{"type": "text", "text": "counted 2"}]


def test_2024_11_05_prompts_and_resources_have_no_title_icons_meta_or_last_modified(old: dict[str, Any]) -> None:
    (prompt,) = old["prompts"]["prompts"]
    assert set(prompt) <= {"name", "description", "arguments"}, prompt
    assert all(set(argument) <= {"name", "description", "required"} for argument in prompt["arguments"])
    (resource,) = old["resources"]["resources"]
    assert resource == {
        "uri": "demo://readme",
        "name": "readme",
        "annotations": {"audience": ["user"], "priority": 0.5},
    }
    (template,) = old["templates"]["resourceTemplates"]
    assert set(template) == {"uriTemplate", "name", "annotations"}
    assert template["annotations"] == {"audience": ["user"], "priority": 0.5}


def test_2024_11_05_still_has_completion_complete(old: dict[str, Any]) -> None:
    # The method is in 2024-11-05; only the capability that declares it came later.
    assert old["complete"]["completion"]["values"] == ["Ada", "Alan"]


def test_2025_03_26_has_annotations_completions_and_progress_messages_but_not_2025_06_18s_fields() -> None:
    seen = session("2025-03-26", "stdio")
    assert "completions" in seen["initialize"]["capabilities"]
    weather = next(tool for tool in seen["tools"]["tools"] if tool["name"] == "weather")
    assert set(weather) == {"name", "description", "inputSchema", "annotations"}
    assert "structuredContent" not in seen["weather"]
    assert [p.get("message") for p in seen["progress"]] == ["step 1 of 2", "step 2 of 2"]


def test_2025_11_25_the_control_gets_every_field() -> None:
    seen = session("2025-11-25", "stdio")
    initialized = seen["initialize"]
    assert "completions" in initialized["capabilities"]
    assert initialized["serverInfo"]["title"] == "Rich server"
    assert initialized["serverInfo"]["websiteUrl"] == "https://example.com"
    weather = next(tool for tool in seen["tools"]["tools"] if tool["name"] == "weather")
    assert {"title", "outputSchema", "annotations", "icons", "_meta"} <= set(weather)
    assert seen["weather"]["structuredContent"] == {"city": "Oslo", "temperature": 14.0}
    assert seen["made"] == {"content": [], "structuredContent": {"made": "by hand"}}
    assert [p.get("message") for p in seen["progress"]] == ["step 1 of 2", "step 2 of 2"]
    (prompt,) = seen["prompts"]["prompts"]
    assert {"title", "icons"} <= set(prompt)
    (resource,) = seen["resources"]["resources"]
    assert resource["annotations"]["lastModified"] == "2025-01-12T15:00:58Z" and resource["_meta"] == {"k": 1}


# -- the table ---------------------------------------------------------------------------------


def _schema_properties(version: str) -> dict[str, set[str]]:
    schema = json.loads((SHARED_SPEC / version / "schema" / "schema.json").read_text())
    definitions = schema.get("definitions") or schema.get("$defs")
    return {name: set(shape.get("properties", {})) for name, shape in definitions.items()}


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_the_table_agrees_with_the_schemas_we_have(version: str) -> None:
    """The shared spec holds the schemas of the two newest revisions: each row says of them what
    their schema says. (The older rows were read off the 2024-11-05 .. 2025-06-18 schema.ts.)"""
    if not (SHARED_SPEC / version / "schema" / "schema.json").is_file():
        pytest.skip(f"no {version} schema.json under {SHARED_SPEC}")
    properties = _schema_properties(version)
    for (shape, field), versions in FIELD_VERSIONS.items():
        if shape == "ProgressNotificationParams" and shape not in properties:
            continue
        assert (field in properties[shape]) is (version in versions), (shape, field)


def test_every_row_names_known_revisions_and_the_lookups_agree() -> None:
    for (shape, field), versions in FIELD_VERSIONS.items():
        assert versions and versions <= set(VERSIONS), (shape, field)
        assert versions_without(shape, field) == set(VERSIONS) - versions
        for version in VERSIONS:
            assert has_field(shape, field, version) is (version in versions)
            assert trims(shape, version) or version in versions
            trimmed = for_revision(shape, {field: 1, "name": "x"}, version)
            assert (field in trimmed) is (version in versions) and trimmed["name"] == "x"
    assert has_field("Tool", "outputSchema", None) and has_field("Tool", "outputSchema", "1999-01-01")
    definition = {"name": "x", "inputSchema": {}}
    assert for_revision("Tool", definition, "2024-11-05") is definition  # nothing to take out: no copy
    assert not trims("Tool", "2025-11-25") and not trims("Tool", None) and trims("Prompt", "2025-03-26")
