"""Every check of ``backchannel check``, and the line of the specification each one tests.

``CHECKS`` is the one table: a check's id, its group, what it asks in a few words, and the
rule it tests in each revision that states it (``Rule``: revision, file under the
specification's ``docs/`` folder, or ``schema/schema.ts``, line, section, keyword). A check run
at a revision names that revision's rule; a check that holds in every era names the newest
handshake-era one first. ``tests/check/test_spec_lines.py`` reads each cited line in the
specification's text and holds the keyword and the section to it.

Where no sentence of the specification says a thing outright (a server standing after a load),
the check names the promise the load would break (``ping`` answered promptly), and
``docs/check.md`` says so.
"""

from __future__ import annotations

__all__ = ["CHECKS", "GROUPS", "CheckSpec", "Rule", "spec_of"]

from dataclasses import dataclass

#: The groups, in the order the report shows them, with their titles.
GROUPS: dict[str, str] = {
    "eras": "Eras and versions",
    "second-layer": "Second layer, server side",
    "robustness": "Lifecycle and robustness",
    "fleet": "Fleet (--fleet N)",
    "auth": "Authorization",
    "conformance": "The conformance harness's server scenarios (--with-conformance)",
}

_OLD = "2025-11-25"
_NEW = "2026-07-28"


@dataclass(frozen=True, slots=True)
class Rule:
    """One sentence of the specification: where it is and what it says, in our words."""

    revision: str
    file: str  # under the revision's docs/ folder, or schema/schema.ts
    line: int
    section: str
    keyword: str  # MUST, SHOULD, ... as the line writes it; "" where the line states a shape
    text: str
    checklist: str = ""  # the CHAPTER-FEATURES.md id, where the rule has one

    def cited(self) -> str:
        """``2025-11-25 basic/utilities/progress.mdx:53 (Progress Flow), MUST``."""
        keyword = f", {self.keyword}" if self.keyword else ""
        listed = f" [{self.checklist}]" if self.checklist else ""
        return f"{self.revision} {self.file}:{self.line} ({self.section}){keyword}{listed}"

    def as_json(self) -> dict[str, object]:
        return {
            "revision": self.revision,
            "file": self.file,
            "line": self.line,
            "section": self.section,
            "keyword": self.keyword,
            "rule": self.text,
            "checklist": self.checklist or None,
        }


@dataclass(frozen=True, slots=True)
class CheckSpec:
    """A check: its id, group, title, and the rules it tests (one per revision at most)."""

    id: str
    group: str
    title: str
    rules: tuple[Rule, ...]

    def rule_for(self, revision: str | None) -> Rule:
        """The rule as ``revision`` states it; the first one listed where it states none."""
        for rule in self.rules:
            if rule.revision == revision:
                return rule
        return self.rules[0]


def _r(revision: str, where: str, section: str, keyword: str, text: str, checklist: str = "") -> Rule:
    file, _, line = where.rpartition(":")
    return Rule(revision, file, int(line), section, keyword, text, checklist)


# -- rules that several checks cite ---------------------------------------------------------------

_JSONRPC = (
    _r(_OLD, "basic/index.mdx:27", "Messages", "MUST", "every message follows JSON-RPC 2.0 (its error codes included)"),
    _r(_NEW, "basic/index.mdx:111", "Error Codes", "", "MCP uses the standard JSON-RPC 2.0 error codes"),
)
_ERROR_ID = (
    _r(
        _OLD, "basic/index.mdx:89", "Error Responses", "MUST", "an error carries the request's id, null when unreadable"
    ),
    _r(
        _NEW,
        "basic/index.mdx:103",
        "Error Responses",
        "MUST",
        "an error carries the request's id, null when unreadable",
    ),
)
_PING = _r(_OLD, "basic/utilities/ping.mdx:29", "Behavior Requirements", "MUST", "ping is answered promptly, empty")
_ONLY_NEGOTIATED = _r(
    _OLD, "basic/lifecycle.mdx:220", "Operation", "", "only capabilities that were negotiated are used", "LC-21"
)
_ELICIT_MODES = (
    _r(
        _OLD,
        "client/elicitation.mdx:77",
        "Capabilities",
        "MUST NOT",
        "no elicitation in a mode the client did not declare",
        "EL-09",
    ),
    _r(
        _NEW,
        "client/elicitation.mdx:81",
        "Capabilities",
        "MUST NOT",
        "no elicitation in a mode the client did not declare",
    ),
)
_RESPONSE_ACTIONS = (
    _r(
        _OLD,
        "client/elicitation.mdx:532",
        "Response Actions",
        "",
        "the answer is one of three actions: accept, decline, cancel",
    ),
    _r(
        _NEW,
        "client/elicitation.mdx:436",
        "Response Actions",
        "",
        "the answer is one of three actions: accept, decline, cancel",
    ),
)
_CANCEL_RECEIVER = (
    _r(
        _OLD,
        "basic/utilities/cancellation.mdx:37",
        "Behavior Requirements",
        "SHOULD",
        "the receiver stops, frees, and sends no response",
        "CN-08 CN-10",
    ),
    _r(
        _NEW,
        "basic/transports/stdio.mdx:78",
        "Cancellation",
        "MUST",
        "stdio: the server sends no further message for a cancelled request",
    ),
)
_LOG_RULES = (
    _r(
        _OLD,
        "server/utilities/logging.mdx:117",
        "Implementation Considerations",
        "SHOULD",
        "rate-limit log messages",
        "LG-07",
    ),
    _r(_NEW, "server/utilities/logging.mdx:109", "Implementation Considerations", "SHOULD", "rate-limit log messages"),
)

CHECKS: dict[str, CheckSpec] = {}


def _check(id: str, group: str, title: str, *rules: Rule) -> None:
    CHECKS[id] = CheckSpec(id, group, title, rules)


# -- Eras and versions -----------------------------------------------------------------------------

_check(
    "eras.discover",
    "eras",
    "server/discover answers with versions, capabilities and identity",
    _r(_NEW, "server/discover.mdx:8", "Discovery", "MUST", "servers implement server/discover"),
)
_check(
    "eras.initialize",
    "eras",
    "initialize answers with a version, capabilities and serverInfo",
    _r(
        _OLD,
        "basic/lifecycle.mdx:98",
        "Initialization",
        "MUST",
        "the server answers initialize with its capabilities and information",
        "LC-03",
    ),
)
_check(
    "eras.initialize-refusal",
    "eras",
    "a stateless-only server names its versions when refusing initialize",
    _r(
        _NEW,
        "basic/versioning.mdx:154",
        "Backward Compatibility with Initialization-Based Versions",
        "SHOULD",
        "name the supported versions in any error to initialize",
    ),
)
_check(
    "eras.version-echo",
    "eras",
    "each handshake revision asked for is answered as itself, or with one the server then accepts",
    _r(
        _OLD,
        "basic/lifecycle.mdx:170",
        "Version Negotiation",
        "MUST",
        "a supported version is answered with the same version",
        "LC-09",
    ),
)
_check(
    "eras.counter-offer",
    "eras",
    "an unknown version gets the newest version the server supports",
    _r(
        _OLD,
        "basic/lifecycle.mdx:171",
        "Version Negotiation",
        "MUST",
        "otherwise another version it supports, the latest (SHOULD)",
        "LC-10 LC-11",
    ),
)
_check(
    "eras.unsupported-version",
    "eras",
    "an unknown version is refused with -32022, listing the supported ones",
    _r(
        _NEW,
        "basic/versioning.mdx:50",
        "Protocol Version Negotiation",
        "MUST",
        "UnsupportedProtocolVersionError with data.supported",
    ),
)
_check(
    "eras.unsupported-version-http",
    "eras",
    "over HTTP, that refusal is a 400",
    _r(
        _NEW,
        "basic/transports/streamable-http.mdx:265",
        "Protocol Version Header",
        "MUST",
        "400 Bad Request and UnsupportedProtocolVersionError",
    ),
)
_check(
    "eras.version-header",
    "eras",
    "over HTTP, an invalid MCP-Protocol-Version header is a 400",
    _r(
        _OLD,
        "basic/transports.mdx:280",
        "Protocol Version Header",
        "MUST",
        "an invalid or unsupported MCP-Protocol-Version gets 400",
        "LC-19",
    ),
)
_check(
    "eras.result-type",
    "eras",
    "stateless-era results carry resultType",
    _r(_NEW, "basic/index.mdx:73", "Result Responses", "MUST", "every result includes resultType"),
)
_check("eras.ping", "eras", "ping is answered at once with an empty result", _PING)

# -- Second layer, server side ---------------------------------------------------------------------

_check(
    "elicitation.gate",
    "second-layer",
    "no form is asked of a client that declared no elicitation",
    *_ELICIT_MODES,
    _ONLY_NEGOTIATED,
)
_check(
    "elicitation.shape",
    "second-layer",
    "elicitation/create carries a message and a flat requestedSchema",
    _r(
        _OLD,
        "client/elicitation.mdx:103",
        "Form Mode Elicitation Requests",
        "MUST",
        "form mode: mode form or absent, with requestedSchema",
        "EL-10 EL-13",
    ),
    _r(
        _NEW,
        "client/elicitation.mdx:108",
        "Form Mode Elicitation Requests",
        "MUST",
        "form mode: mode form or absent, with requestedSchema",
    ),
)
_check(
    "elicitation.no-secrets",
    "second-layer",
    "no form asks for a password, token or key",
    _r(
        _OLD,
        "client/elicitation.mdx:30",
        "User Interaction Model",
        "MUST NOT",
        "form mode never asks for secrets",
        "EL-01",
    ),
    _r(_NEW, "client/elicitation.mdx:30", "User Interaction Model", "MUST NOT", "form mode never asks for secrets"),
)
_check("elicitation.accept", "second-layer", "an accepted form ends the call with an answer", *_RESPONSE_ACTIONS)
_check(
    "elicitation.decline", "second-layer", "a declined form ends the call and is not asked again", *_RESPONSE_ACTIONS
)
_check(
    "elicitation.cancel", "second-layer", "a cancelled form ends the call and is not asked again", *_RESPONSE_ACTIONS
)
_check(
    "elicitation.validation",
    "second-layer",
    "an answer that breaks the requested schema is not taken as valid",
    _r(
        _OLD,
        "client/elicitation.mdx:749",
        "Form Mode Security",
        "SHOULD",
        "servers validate received data against the schema",
        "EL-62",
    ),
    _r(
        _NEW,
        "client/elicitation.mdx:639",
        "Form Mode Security",
        "SHOULD",
        "servers validate received data against the schema",
    ),
)
_check("url.gate", "second-layer", "no URL is asked of a client that declared only forms", *_ELICIT_MODES)
_check(
    "url.shape",
    "second-layer",
    "a URL request carries mode url, a message, a valid url (and an elicitationId in 2025-11-25)",
    _r(
        _OLD,
        "client/elicitation.mdx:340",
        "URL Mode Elicitation Requests",
        "MUST",
        "mode url, message, url, elicitationId; url valid",
        "EL-15 EL-16",
    ),
    _r(
        _NEW,
        "client/elicitation.mdx:332",
        "URL Mode Elicitation Requests",
        "MUST",
        "mode url, message, url (no elicitationId in 2026-07-28)",
    ),
)
_check(
    "roots.gate",
    "second-layer",
    "no roots/list to a client that declared no roots",
    _r(
        _OLD,
        "client/roots.mdx:184",
        "Implementation Guidelines",
        "SHOULD",
        "servers check for the roots capability before use",
        "RT-17",
    ),
    _r(
        _NEW,
        "client/roots.mdx:156",
        "Implementation Guidelines",
        "SHOULD",
        "servers check for the roots capability before use",
    ),
)
_check("sampling.gate", "second-layer", "no sampling request to a client that declared no sampling", _ONLY_NEGOTIATED)
_check(
    "sampling.shape",
    "second-layer",
    "sampling/createMessage carries messages and maxTokens",
    _r(_OLD, "schema/schema.ts:1605", "CreateMessageRequestParams", "", "maxTokens is required"),
    _r(_NEW, "schema/schema.ts:2135", "CreateMessageRequestParams", "", "maxTokens is required"),
)
_check(
    "completion.declared",
    "second-layer",
    "completion/complete is answered only by a server that declares completions",
    _r(
        _OLD,
        "server/utilities/completion.mdx:26",
        "Capabilities",
        "MUST",
        "servers that support completions declare the capability",
        "CP-01",
    ),
    _r(
        _NEW,
        "server/utilities/completion.mdx:35",
        "Capabilities",
        "MUST",
        "servers that support completions declare the capability",
    ),
)
_check(
    "completion.cap",
    "second-layer",
    "at most 100 values per answer",
    _r(
        _OLD, "server/utilities/completion.mdx:135", "Completion Results", "", "maximum 100 items per response", "CP-03"
    ),
    _r(_NEW, "server/utilities/completion.mdx:146", "Completion Results", "", "maximum 100 items per response"),
)
_check(
    "completion.total",
    "second-layer",
    "total and hasMore agree with the values",
    _r(
        _OLD,
        "server/utilities/completion.mdx:136",
        "Completion Results",
        "",
        "optional total of matches, and whether more exist",
    ),
    _r(
        _NEW,
        "server/utilities/completion.mdx:147",
        "Completion Results",
        "",
        "optional total of matches, and whether more exist",
    ),
)
_check(
    "completion.errors",
    "second-layer",
    "an unknown prompt is -32602",
    _r(_OLD, "server/utilities/completion.mdx:175", "Error Handling", "SHOULD", "invalid prompt name: -32602", "CP-05"),
    _r(_NEW, "server/utilities/completion.mdx:187", "Error Handling", "SHOULD", "invalid prompt name: -32602"),
)
_check(
    "progress.token",
    "second-layer",
    "progress names only the token of the request that asked",
    _r(
        _OLD,
        "basic/utilities/progress.mdx:60",
        "Behavior Requirements",
        "MUST",
        "only tokens of active requests",
        "PG-08",
    ),
    _r(_NEW, "basic/patterns/progress.mdx:60", "Behavior Requirements", "MUST", "only tokens of active requests"),
)
_check(
    "progress.unasked",
    "second-layer",
    "no progress for a request that sent no token",
    _r(
        _OLD,
        "basic/utilities/progress.mdx:60",
        "Behavior Requirements",
        "MUST",
        "only tokens provided in an active request",
        "PG-08",
    ),
    _r(
        _NEW,
        "basic/patterns/progress.mdx:60",
        "Behavior Requirements",
        "MUST",
        "only tokens provided in an active request",
    ),
)
_check(
    "progress.monotonic",
    "second-layer",
    "progress increases with every notification",
    _r(
        _OLD,
        "basic/utilities/progress.mdx:53",
        "Progress Flow",
        "MUST",
        "progress increases with each notification",
        "PG-05",
    ),
    _r(_NEW, "basic/patterns/progress.mdx:53", "Progress Flow", "MUST", "progress increases with each notification"),
)
_check(
    "progress.after-answer",
    "second-layer",
    "no progress after the answer",
    _r(
        _OLD,
        "basic/utilities/progress.mdx:94",
        "Implementation Notes",
        "MUST",
        "progress notifications stop after completion",
        "PG-18",
    ),
    _r(
        _NEW,
        "basic/patterns/progress.mdx:90",
        "Implementation Notes",
        "MUST",
        "progress notifications stop after completion",
    ),
)
_check("cancel.no-answer", "second-layer", "a cancelled request gets no answer", *_CANCEL_RECEIVER)
_check("cancel.stops", "second-layer", "a cancelled request's work stops (its progress stops)", *_CANCEL_RECEIVER)
_check(
    "cancel.goes-on",
    "second-layer",
    "after a cancellation the server goes on answering",
    _r(
        _OLD,
        "basic/utilities/cancellation.mdx:53",
        "Timing Considerations",
        "MUST",
        "both parties handle the races gracefully",
        "CN-13",
    ),
    _r(
        _NEW,
        "basic/patterns/cancellation.mdx:89",
        "Timing Considerations",
        "MUST",
        "both parties handle the races gracefully",
    ),
)
_check(
    "cancel.unknown",
    "second-layer",
    "a cancellation of an unknown request is ignored",
    _r(
        _OLD,
        "basic/utilities/cancellation.mdx:77",
        "Error Handling",
        "SHOULD",
        "invalid cancellations are ignored",
        "CN-16",
    ),
    _r(_NEW, "basic/patterns/cancellation.mdx:113", "Error Handling", "SHOULD", "invalid cancellations are ignored"),
)
_check(
    "cancel.initialize",
    "second-layer",
    "initialize is answered even when a cancellation follows it",
    _r(
        _OLD,
        "basic/utilities/cancellation.mdx:35",
        "Behavior Requirements",
        "MUST NOT",
        "initialize cannot be cancelled (so it is answered)",
        "CN-03 CN-11",
    ),
)
_check(
    "logging.declared",
    "second-layer",
    "log messages come only from a server that declares logging",
    _r(
        _OLD,
        "server/utilities/logging.mdx:19",
        "Capabilities",
        "MUST",
        "servers that emit log messages declare logging",
        "LG-01",
    ),
    _r(
        _NEW,
        "server/utilities/logging.mdx:32",
        "Capabilities",
        "MUST",
        "servers that emit log messages declare logging",
    ),
)
_check(
    "logging.set-level",
    "second-layer",
    "logging/setLevel is accepted",
    _r(
        _OLD,
        "server/utilities/logging.mdx:49",
        "Setting Log Level",
        "MAY",
        "clients may send logging/setLevel",
        "LG-02",
    ),
)
_check(
    "logging.bad-level",
    "second-layer",
    "an unknown log level is -32602",
    _r(_OLD, "server/utilities/logging.mdx:110", "Error Handling", "SHOULD", "invalid log level: -32602", "LG-05"),
    _r(
        _NEW,
        "server/utilities/logging.mdx:101",
        "Error Handling",
        "SHOULD",
        "an unrecognised logLevel is rejected with -32602",
    ),
)
_check(
    "logging.levels",
    "second-layer",
    "no log message below the level asked for",
    _r(
        _OLD,
        "schema/schema.ts:1509",
        "SetLevelRequestParams",
        "",
        "the server sends logs at this level and higher",
        "LG-03",
    ),
    _r(
        _NEW,
        "server/utilities/logging.mdx:66",
        "Per-request log level",
        "MAY",
        "messages at or above the requested level",
    ),
)
_check(
    "logging.unasked",
    "second-layer",
    "no log message for a request that asked for none",
    _r(
        _NEW,
        "server/utilities/logging.mdx:63",
        "Per-request log level",
        "MUST NOT",
        "no notifications/message without logLevel",
    ),
)
_check("logging.rate", "second-layer", "log messages are rate-limited", *_LOG_RULES)
_check(
    "logging.secrets",
    "second-layer",
    "no bearer token, password or key in a log message",
    _r(
        _OLD,
        "server/utilities/logging.mdx:131",
        "Security",
        "MUST NOT",
        "log messages never hold credentials or secrets",
        "LG-15",
    ),
    _r(
        _NEW,
        "server/utilities/logging.mdx:123",
        "Security",
        "MUST NOT",
        "log messages never hold credentials or secrets",
    ),
)

# -- Lifecycle and robustness ----------------------------------------------------------------------

_check(
    "robustness.stdout",
    "robustness",
    "everything on stdout is an MCP message",
    _r(_OLD, "basic/transports.mdx:33", "stdio", "MUST NOT", "nothing on stdout that is not a valid MCP message"),
    _r(_NEW, "basic/transports/stdio.mdx:18", "stdio", "MUST NOT", "nothing on stdout that is not a valid MCP message"),
)
_check(
    "robustness.capabilities",
    "robustness",
    "every feature the server answers for is declared",
    _r(
        _OLD,
        "architecture/index.mdx:165",
        "Capability Negotiation",
        "",
        "implemented server features are advertised",
        "LC-23",
    ),
)
_check("robustness.parse-error", "robustness", "a line that is not JSON gets -32700 (id null)", *_JSONRPC, *_ERROR_ID)
_check("robustness.invalid-request", "robustness", "JSON that is no request gets -32600", *_JSONRPC)
_check(
    "robustness.unknown-method",
    "robustness",
    "an unknown method gets -32601",
    *_JSONRPC,
    _r(
        _NEW,
        "basic/transports/streamable-http.mdx:271",
        "Protocol Version Header",
        "MUST",
        "HTTP: unknown method is 404 and -32601",
    ),
)
_check("robustness.invalid-params", "robustness", "params of the wrong shape get -32602, not -32603", *_JSONRPC)
_check(
    "robustness.oversized",
    "robustness",
    "an oversized message is answered (or refused) and the server still answers",
    *_JSONRPC,
    _PING,
)
_check(
    "robustness.deep", "robustness", "a deeply nested message is refused and the server still answers", *_JSONRPC, _PING
)
_check(
    "robustness.fuzz",
    "robustness",
    "fuzzed frames: each request answered once, the server still answers",
    *_JSONRPC,
    _PING,
)
_check(
    "robustness.fuzz-errors",
    "robustness",
    "fuzzed frames: no internal error (-32603, HTTP 5xx) for bad input",
    *_JSONRPC,
)
_check(
    "robustness.dead-client",
    "robustness",
    "a client gone mid-question: the server exits when its stdin closes",
    _r(_NEW, "basic/transports/stdio.mdx:102", "Shutdown", "SHOULD", "servers exit promptly when stdin closes"),
)
_check(
    "http.origin",
    "robustness",
    "a foreign Origin gets 403",
    _r(_OLD, "basic/transports.mdx:79", "Security Warning", "MUST", "a present, invalid Origin gets HTTP 403"),
    _r(
        _NEW,
        "basic/transports/streamable-http.mdx:60",
        "Security & Endpoint",
        "MUST",
        "a present, invalid Origin gets HTTP 403",
    ),
)
_check(
    "http.host",
    "robustness",
    "a loopback server refuses a foreign Host (DNS rebinding)",
    _r(
        _OLD,
        "basic/transports.mdx:84",
        "Security Warning",
        "",
        "without these protections, DNS rebinding reaches local servers",
    ),
    _r(
        _NEW,
        "basic/transports/streamable-http.mdx:67",
        "Security & Endpoint",
        "",
        "without these protections, DNS rebinding reaches local servers",
    ),
)
_check(
    "http.unknown-session",
    "robustness",
    "a session id the server does not hold gets 404",
    _r(_OLD, "basic/transports.mdx:211", "Session Management", "MUST", "a terminated session's id gets 404 Not Found"),
)
_check("http.slow-body", "robustness", "slow request bodies do not stall other clients", _PING)
_check("http.sessions", "robustness", "many open sessions: a new client is still answered (or refused clearly)", _PING)

# -- Fleet -------------------------------------------------------------------------------------------

_ANY_CONNECTION = _r(
    _NEW, "basic/index.mdx:196", "Statelessness", "SHOULD NOT", "servers do not require the same connection or process"
)
_check(
    "fleet.sessions",
    "fleet",
    "concurrent sessions, each request on a fresh connection, are all answered",
    _r(
        _OLD,
        "basic/transports.mdx:207",
        "Session Management",
        "MUST",
        "the session is the MCP-Session-Id header on every request",
    ),
    _ANY_CONNECTION,
)
_check(
    "fleet.answer-elsewhere",
    "fleet",
    "the answer to a question, posted on a fresh connection, reaches the call",
    _r(_OLD, "basic/transports.mdx:88", "Sending Messages to the Server", "MUST", "every client message is a new POST"),
    _ANY_CONNECTION,
)
_check(
    "fleet.resume-elsewhere",
    "fleet",
    "a broken stream resumes on a fresh connection (GET with Last-Event-ID)",
    _r(
        _OLD, "basic/transports.mdx:181", "Resumability and Redelivery", "MAY", "the server replays after Last-Event-ID"
    ),
)

# -- Authorization -----------------------------------------------------------------------------------

_AUTH_STATUS = (
    _r(
        _OLD,
        "basic/authorization.mdx:487",
        "Error Handling",
        "MUST",
        "401 when authorization is required or the token invalid",
    ),
    _r(
        _NEW,
        "basic/authorization/index.mdx:317",
        "Error Handling",
        "MUST",
        "401 when authorization is required or the token invalid",
    ),
)
_check(
    "auth.challenge",
    "auth",
    "a request without a token gets 401 with a Bearer challenge naming the metadata",
    *_AUTH_STATUS,
    _r(
        _OLD,
        "basic/authorization.mdx:93",
        "Protected Resource Metadata Discovery Requirements",
        "MUST",
        "resource_metadata in the 401's WWW-Authenticate, or the metadata at a well-known URI",
    ),
)
_check(
    "auth.metadata",
    "auth",
    "the protected-resource metadata names this server and an authorization server",
    _r(
        _OLD,
        "basic/authorization.mdx:80",
        "Authorization Server Location",
        "MUST",
        "RFC 9728 metadata with authorization_servers",
    ),
    _r(_NEW, "basic/authorization/index.mdx:73", "Overview", "MUST", "MCP servers implement RFC 9728 metadata"),
)
_check(
    "auth.invalid-token",
    "auth",
    "a token the server never issued gets 401",
    _r(_OLD, "basic/authorization.mdx:475", "Token Handling", "MUST", "invalid or expired tokens get 401"),
    _r(_NEW, "basic/authorization/index.mdx:289", "Token Handling", "MUST", "invalid or expired tokens get 401"),
)
_check(
    "auth.audience",
    "auth",
    "a token issued for another resource gets 401 (--foreign-token-env)",
    _r(_OLD, "basic/authorization.mdx:471", "Token Handling", "MUST", "tokens issued for this server as audience only"),
    _r(
        _NEW,
        "basic/authorization/index.mdx:285",
        "Token Handling",
        "MUST",
        "tokens issued for this server as audience only",
    ),
)
_check(
    "auth.scope",
    "auth",
    "a token without the scopes gets 403 insufficient_scope (--weak-token-env)",
    _r(
        _OLD,
        "basic/authorization.mdx:505",
        "Runtime Insufficient Scope Errors",
        "SHOULD",
        "403 with error=insufficient_scope",
    ),
    _r(
        _NEW,
        "basic/authorization/index.mdx:335",
        "Runtime Insufficient Scope Errors",
        "SHOULD",
        "403 with error=insufficient_scope",
    ),
)


# -- Tasks (2025-11-25 capabilities.tasks) -----------------------------------------------------------

_TASKS = "basic/utilities/tasks.mdx"
_check(
    "tasks.create",
    "second-layer",
    "a task-augmented tools/call gets a CreateTaskResult, the task working",
    _r(_OLD, f"{_TASKS}:463", "Result Retrieval", "MUST", "an accepted task-augmented request gets a CreateTaskResult"),
)
_check(
    "tasks.status",
    "second-layer",
    "tasks/get shows the task's status move only along the legal paths, to a terminal one",
    _r(_OLD, f"{_TASKS}:404", "Task Status Lifecycle", "MUST", "tasks move only along the valid paths"),
)
_check(
    "tasks.fields",
    "second-layer",
    "every task answer carries createdAt, lastUpdatedAt and ttl",
    _r(_OLD, f"{_TASKS}:454", "TTL and Resource Management", "MUST", "createdAt in all task responses"),
)
_check(
    "tasks.result",
    "second-layer",
    "tasks/result of a finished task returns the tool's result, tied to the task",
    _r(_OLD, f"{_TASKS}:464", "Result Retrieval", "MUST", "tasks/result returns the underlying request's result"),
)
_check(
    "tasks.cancel",
    "second-layer",
    "tasks/cancel leaves the task cancelled, and it stays cancelled",
    _r(_OLD, f"{_TASKS}:495", "Task Cancellation", "MUST", "a cancelled task is cancelled before the answer"),
)
_check(
    "tasks.cancel-terminal",
    "second-layer",
    "tasks/cancel of a finished task gets -32602",
    _r(_OLD, f"{_TASKS}:494", "Task Cancellation", "MUST", "cancelling a terminal task is -32602"),
)


def spec_of(check_id: str, revision: str | None = None) -> Rule:
    """The rule check ``check_id`` tests at ``revision``."""
    return CHECKS[check_id].rule_for(revision)
