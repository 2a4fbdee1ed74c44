"""Names of the ``_meta`` keys the protocol reserves, and of backchannel's own (``dev.backchannel/``)."""

from __future__ import annotations

__all__ = [
    "ARGUMENT_SCHEMA",
    "CLIENT_CAPABILITIES",
    "CLIENT_INFO",
    "FORGET_DECLINES",
    "LOG_LEVEL",
    "PROGRESS_TOKEN",
    "PROTOCOL_VERSION",
    "REMEMBERED_DECLINE",
    "SERVER_INFO",
    "SUBSCRIPTION_ID",
]

PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
PROGRESS_TOKEN = "progressToken"

#: backchannel's own key, not the protocol's: on a prompt or resource template, the JSON Schema of
#: its arguments (``{"type": "object", "properties": ...}``), sent when one is not plain text, so a
#: client can ask for an ``int`` as a number. The values still travel as strings; others ignore it.
ARGUMENT_SCHEMA = "dev.backchannel/argumentSchema"

#: backchannel's own, on a result (``tools/call``, ``prompts/get``, ``resources/read``): the handler
#: asked a form the caller had declined before, and that remembered decline answered it without
#: asking (``ctx.elicit``'s decline memory). The value is the list of those forms' messages.
REMEMBERED_DECLINE = "dev.backchannel/rememberedDecline"
#: backchannel's own, on a request: ``true`` asks the forms of this request again, forgetting any
#: decline remembered for them (what ``ctx.forget_decline()`` does from inside). Others ignore it.
FORGET_DECLINES = "dev.backchannel/forgetDeclines"
