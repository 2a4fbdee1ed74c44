"""The client the conformance harness spawns for its client scenarios.

    python tests/conformance/client.py <server-url>

The harness sets ``MCP_CONFORMANCE_SCENARIO`` (what to do),
``MCP_CONFORMANCE_PROTOCOL_VERSION`` (the wire it expects) and, for some
scenarios, ``MCP_CONFORMANCE_CONTEXT`` (JSON). Each scenario's mock server
records what the client sends; this script only has to do what the scenario
asks, with ``backchannel.client.Client`` over Streamable HTTP. It exits 0 when
every step completed, 1 otherwise (the harness judges by its own checks).

Authorization scenarios (``auth/*``) connect with ``backchannel.client.oauth.OAuth``: the
harness's authorization server answers the authorization request with a redirect at once, so
the "browser" here only reads where it points (``FollowRedirect``). Credentials the scenario
hands over arrive in ``MCP_CONFORMANCE_CONTEXT`` (``client_id``, ``client_secret``, a private
key, a workload JWT, an IdP's ID token); the grant follows the scenario's name.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import traceback
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx2

from backchannel import Client
from backchannel.client.oauth import (
    AuthorizationFailed,
    ClientCredentials,
    EnterpriseManaged,
    Grant,
    OAuth,
    WorkloadIdentity,
)
from backchannel.skills import SkillVerificationError
from backchannel.types.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS

CLIENT_NAME = "backchannel-conformance-client"
CLIENT_VERSION = "0.1.0"
#: The client ID metadata document URL the harness's CIMD scenario expects (it never fetches it).
CIMD_URL = "https://conformance-test.local/client-metadata.json"
SETTLE_SECONDS = 1.0
PROBE_TIMEOUT = 30.0
OVERALL_TIMEOUT = float(os.environ.get("BACKCHANNEL_CONFORMANCE_CLIENT_TIMEOUT", "90"))

Scenario = Callable[[str], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(*names: str) -> Callable[[Scenario], Scenario]:
    def register(fn: Scenario) -> Scenario:
        for name in names:
            SCENARIOS[name] = fn
        return fn

    return register


def era_for(version: str | None) -> str:
    """The era to ask ``Client`` for, from the wire the harness expects."""
    if version in HANDSHAKE_VERSIONS:
        return "handshake"
    if version in STATELESS_VERSIONS:
        return "stateless"
    return "auto"


def connect(url: str, **options: Any) -> Client:
    era = era_for(os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION"))
    # The harness starts some fifty clients at once on two cores: the first answer can take longer
    # than the 3 s that era detection gives a silent server, and the era is known here anyway.
    options.setdefault("probe_timeout", PROBE_TIMEOUT)
    return Client.http(url, era=era, name=CLIENT_NAME, version=CLIENT_VERSION, **options)


def context() -> dict[str, Any]:
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    if not raw:
        return {}
    value = json.loads(raw)
    return value if isinstance(value, dict) else {}


def log(message: str) -> None:
    print(f"[conformance-client] {message}", file=sys.stderr, flush=True)


class Steps:
    """Runs independent steps of one scenario, keeps going after a failure, remembers it."""

    def __init__(self) -> None:
        self.failed: list[str] = []

    async def run(self, label: str, step: Awaitable[Any]) -> Any:
        try:
            result = await step
        except Exception as exc:
            log(f"{label}: FAILED: {type(exc).__name__}: {exc}")
            self.failed.append(label)
            return None
        log(f"{label}: ok")
        return result

    def check(self) -> None:
        if self.failed:
            raise RuntimeError(f"steps failed: {', '.join(self.failed)}")


def placeholder_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Some value of the declared type for each required property of an input schema."""
    samples: dict[str, Any] = {
        "string": "x",
        "integer": 1,
        "number": 1,
        "boolean": True,
        "object": {},
        "array": [],
        "null": None,
    }
    properties = schema.get("properties") or {}
    arguments: dict[str, Any] = {}
    for name in schema.get("required") or []:
        kind = (properties.get(name) or {}).get("type", "string")
        arguments[name] = samples.get(kind if isinstance(kind, str) else "string", "x")
    return arguments


# ----------------------------------------------------------------------- scenarios


@scenario("initialize")
async def initialize(url: str) -> None:
    async with connect(url) as client:
        log(f"connected: era={client.era} version={client.protocol_version} server={client.server_info}")
        await client.list_tools()


@scenario("tools_call")
async def tools_call(url: str) -> None:
    async with connect(url) as client:
        tools = await client.list_tools()
        log(f"tools: {[tool.name for tool in tools]}")
        result = await client.call_tool("add_numbers", {"a": 5, "b": 3})
        log(f"add_numbers: {result.content}")


def accept_as_is(params: dict[str, Any]) -> dict[str, Any]:
    """A person who accepts the form without typing anything: the client fills the defaults."""
    log(f"elicitation: {params.get('message')!r}")
    return {"action": "accept", "content": {}}


def confirm(params: dict[str, Any]) -> dict[str, Any]:
    log(f"elicitation: {params.get('message')!r}")
    return {"action": "accept", "content": {"confirmed": True}}


@scenario("elicitation-sep1034-client-defaults")
async def elicitation_defaults(url: str) -> None:
    # The server elicits mid-call; the client fills in the schema's defaults (SEP-1034)
    # before it sends the accept.
    async with connect(url, elicitation=accept_as_is) as client:
        await client.list_tools()
        # The mock sends elicitation/create unrelated to the call, so it travels on the GET
        # stream, which the TypeScript server drops messages for until it is open: let the
        # client's background GET be established first (as in sse-retry).
        await asyncio.sleep(SETTLE_SECONDS)
        result = await client.call_tool("test_client_elicitation_defaults", {})
        log(f"test_client_elicitation_defaults: {result.content}")


@scenario("sse-retry")
async def sse_retry(url: str) -> None:
    # The server closes the tools/call SSE stream after a priming event (retry: 500);
    # the transport must wait that long and resume with GET + Last-Event-ID.
    async with connect(url) as client:
        await client.list_tools()
        # The mock counts every GET as the reconnection. The client opens its standalone GET
        # stream in the background once `notifications/initialized` is acknowledged; let it be
        # established first, or a late one races the tools/call and reads as a reconnection made
        # before the stream even closed.
        await asyncio.sleep(SETTLE_SECONDS)
        result = await client.call_tool("test_reconnection", {}, timeout=30)
        log(f"test_reconnection: {result.content}")


@scenario("request-metadata")
async def request_metadata(url: str) -> None:
    # The server refuses the first request with UnsupportedProtocolVersion; the client must
    # retry with a version from error.data.supported, and carry _meta + headers throughout.
    async with connect(url) as client:
        await client.list_tools()


@scenario("sep-2322-client-request-state")
async def request_state(url: str) -> None:
    # The mock answers with InputRequiredResults asking elicitation/create; the client answers
    # them and retries with a new id, echoing requestState exactly (or omitting it when none came).
    steps = Steps()
    async with connect(url, elicitation=confirm) as client:
        await client.list_tools()
        for name in ("test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"):
            await steps.run(name, client.call_tool(name, {}))
    steps.check()


@scenario("http-standard-headers")
async def standard_headers(url: str) -> None:
    steps = Steps()
    async with connect(url) as client:
        tools = await steps.run("tools/list", client.list_tools()) or []
        for tool in tools:
            await steps.run(f"tools/call {tool.name}", client.call_tool(tool.name, {}))
        resources = await steps.run("resources/list", client.list_resources()) or []
        for resource in resources:
            await steps.run(f"resources/read {resource.uri}", client.read_resource(resource.uri))
        prompts = await steps.run("prompts/list", client.list_prompts()) or []
        for prompt in prompts:
            await steps.run(f"prompts/get {prompt.name}", client.get_prompt(prompt.name))
    steps.check()


@scenario("http-custom-headers")
async def custom_headers(url: str) -> None:
    calls = context().get("toolCalls") or []
    steps = Steps()
    async with connect(url) as client:
        await client.list_tools()  # the client learns which parameters carry x-mcp-header
        for call in calls:
            await steps.run(f"tools/call {call['name']}", client.call_tool(call["name"], call.get("arguments") or {}))
    steps.check()


@scenario("http-invalid-tool-headers")
async def invalid_tool_headers(url: str) -> None:
    # A conforming client leaves tools with a malformed x-mcp-header out of what it offers;
    # call every tool the client kept, so any it failed to exclude shows up at the server.
    steps = Steps()
    async with connect(url) as client:
        tools = await client.list_tools()
        for tool in tools:
            arguments = placeholder_arguments(tool.input_schema)
            await steps.run(f"tools/call {tool.name}", client.call_tool(tool.name, arguments))
    steps.check()


@scenario("json-schema-ref-no-deref")
async def ref_no_deref(url: str) -> None:
    async with connect(url) as client:
        tools = await client.list_tools()
        log(f"tools: {[tool.name for tool in tools]}")


@scenario("json-schema-2020-12-preservation")
async def schema_preservation(url: str) -> None:
    async with connect(url) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        focal = tools["json_schema_2020_12_tool"]
        await client.call_tool("json_schema_echo", {"schema": focal.input_schema})


@scenario("sep-2640-client-no-prefetch")
async def skills_no_prefetch(url: str) -> None:
    # A host lists skills and reads none of their files until it loads one (SEP-2640, Lazy Retrieval).
    async with connect(url) as client:
        log(f"skills: {[skill.uri for skill in await client.list_skills()]}")


@scenario("sep-2640-client-verify-digest", "sep-2640-client-verify-size", "sep-2640-client-verify-frontmatter")
async def skills_verify(url: str) -> None:
    # Load the first skill as a host does: its SKILL.md, checked against the entry, then the other
    # files it lists. The harness serves a SKILL.md that fails the check (its digest, its size or its
    # front matter): read_skill_file refuses it, so the skill is not loaded and nothing more is read.
    async with connect(url) as client:
        skill = (await client.list_skills())[0]
        try:
            await client.read_skill_file(skill)
        except SkillVerificationError as exc:
            log(f"{skill.uri} not loaded: {exc.reason}: {exc}")
            return
        for resource in skill.resources if isinstance(skill.resources, list) else []:
            await client.read_skill_file(skill, resource.uri)


# ------------------------------------------------------------------ authorization


class FollowRedirect:
    """The person's browser, for an authorization server that redirects back at once: the
    redirect URI is never visited, its query is read off the ``Location`` header."""

    redirect_uri = "http://localhost:3000/callback"

    async def authorize(self, url: str) -> Mapping[str, str]:
        async with httpx2.AsyncClient(timeout=30) as http:
            response = await http.get(url, follow_redirects=False)
        location = response.headers.get("location")
        if not response.is_redirect or not location:
            raise AuthorizationFailed(f"the authorization endpoint answered HTTP {response.status_code}, no redirect")
        log(f"authorization redirect: {location}")
        return dict(parse_qsl(urlsplit(location).query, keep_blank_values=True))


def grant_for(scenario_name: str, given: dict[str, Any]) -> Grant | None:
    """The grant a machine-to-machine scenario asks for; None: a person logs in (authorization code)."""
    if scenario_name == "auth/client-credentials-jwt":
        return ClientCredentials(
            given["client_id"], private_key=given["private_key_pem"], algorithm=given.get("signing_algorithm", "ES256")
        )
    if scenario_name == "auth/client-credentials-basic":
        return ClientCredentials(given["client_id"], given["client_secret"])
    if scenario_name == "auth/wif-jwt-bearer":
        return WorkloadIdentity(given["valid_jwt"], client_id=given.get("client_id"))
    if scenario_name == "auth/enterprise-managed-authorization":
        return EnterpriseManaged(
            id_token=given["idp_id_token"],
            idp_token_endpoint=given["idp_token_endpoint"],
            idp_issuer=given.get("idp_issuer"),
            idp_client_id=given.get("idp_client_id"),
            client_id=given["client_id"],
            client_secret=given.get("client_secret"),
        )
    return None


async def authorized(url: str) -> None:
    """Every ``auth/*`` scenario: log in as the scenario says, list the tools, call one."""
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    given = context()
    grant = grant_for(name, given)
    if grant is not None:
        auth = OAuth(grant=grant)
    else:
        auth = OAuth(
            FollowRedirect(),
            client_id=given.get("client_id"),
            client_secret=given.get("client_secret"),
            client_metadata_url=CIMD_URL,
            client_name=CLIENT_NAME,
        )
    async with connect(url, auth=auth) as client:
        tools = await client.list_tools()
        log(f"tools: {[tool.name for tool in tools]}")
        if tools:
            result = await client.call_tool(tools[0].name, {})
            log(f"{tools[0].name}: {result.content}")


# ---------------------------------------------------------------------------- main


async def _main(scenario_name: str, url: str) -> None:
    run = authorized if scenario_name.startswith("auth/") else SCENARIOS[scenario_name]
    async with asyncio.timeout(OVERALL_TIMEOUT):
        await run(url)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: client.py <server-url>  (scenario in MCP_CONFORMANCE_SCENARIO)", file=sys.stderr)
        return 2
    url = argv[1]
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if name not in SCENARIOS and not name.startswith("auth/"):
        log(f"unknown scenario {name!r}; known: {', '.join(sorted(SCENARIOS))}")
        return 1
    log(f"scenario={name} url={url} protocol={os.environ.get('MCP_CONFORMANCE_PROTOCOL_VERSION')}")
    try:
        asyncio.run(_main(name, url))
    except Exception:
        log(f"{name}: failed")
        traceback.print_exc()
        return 1
    log(f"{name}: done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
