"""The auth step of the HTTP app, in the few calls ``http_host/app.py`` makes.

``serve_metadata`` answers the protected-resource metadata's URLs; ``admit`` runs the
authenticator (a ``ResourceAuth``, or a plain ``Authenticator`` such as ``BearerTokens``) and
sets ``CURRENT_PRINCIPAL`` for the rest of the request; ``check_scopes`` refuses a request
whose tool, prompt or resource needs scopes the caller's token does not grant; ``posted_message``
is the whole check of a POSTed body (size, JSON, envelope, scopes) that both the Streamable HTTP
endpoint and the 2024-11-05 SSE endpoint make. Each refusal is a ``Rejection`` with its
challenge and a JSON-RPC error body.
"""

from __future__ import annotations

__all__ = ["ResourceAuth", "admit", "anonymous", "check_scopes", "posted_message", "refusal", "serve_metadata"]

from collections.abc import Callable, Collection, Mapping
from typing import Any

from ..auth.principal import CURRENT_PRINCIPAL
from ..auth.resource import ResourceAuth
from ..framing import http as H
from ..framing.rejection import Rejection, valid_id
from ..state.store import StateStore
from ..types.errors import AuthError, InternalError, InvalidRequest
from .asgi import Scope, Send, send_bytes
from .authenticator import Authenticator

_METADATA_HEADERS = {
    "content-type": "application/json",
    "access-control-allow-origin": "*",  # a public document that browser-based clients fetch
    "cache-control": "max-age=300",
}


async def serve_metadata(auth: ResourceAuth | None, scope: Scope, send: Send) -> bool:
    """Answer the request if it asks for ``auth``'s protected-resource metadata (GET or HEAD);
    False when it is not for the metadata."""
    if auth is None or not auth.serves(scope.get("path", "")):
        return False
    if scope.get("method") not in ("GET", "HEAD"):
        await send_bytes(send, 405, b"", {"allow": "GET, HEAD"})
        return True
    body = auth.metadata_body()
    await send_bytes(send, 200, body if scope["method"] == "GET" else b"", _METADATA_HEADERS)
    return True


def refusal(auth: ResourceAuth, error: AuthError, request_id: Any = None) -> Rejection:
    """The response refusing a request with ``error``: its status, challenge and a JSON-RPC body."""
    body = InternalError(error.description) if error.status >= 500 else InvalidRequest(error.description)
    return Rejection(error.status, body, {"content-type": "application/json", **auth.challenge(error)}, request_id)


def anonymous() -> None:
    """``admit`` without an authenticator, in the caller's turn: no principal (set for the request)."""
    CURRENT_PRINCIPAL.set(None)  # set for every request, so no earlier request's caller lingers


async def admit(
    authenticator: ResourceAuth | Authenticator | None, scope: Scope, headers: dict[str, str], state: StateStore
) -> str | Rejection | None:
    """Who is calling: the principal's key (None without an authenticator), or the ``Rejection`` to send."""
    CURRENT_PRINCIPAL.set(None)  # set for every request, so no earlier request's caller lingers
    if authenticator is None:
        return None
    if isinstance(authenticator, ResourceAuth):
        try:
            urls = authenticator.urls_for(scope, headers)
            principal = await authenticator.admit(scope["method"], urls, headers, state)
        except AuthError as error:
            return refusal(authenticator, error)
        CURRENT_PRINCIPAL.set(principal)
        return principal.key
    key = await authenticator(headers)
    if key is None:
        return Rejection(401, InvalidRequest("authentication required"), {"www-authenticate": "Bearer"})
    return key


def check_scopes(
    auth: ResourceAuth | None, required_scopes: Callable[[str, Any], Collection[str]], message: dict[str, Any]
) -> Rejection | None:
    """The 403 for a request (``message``) whose tool, prompt or resource needs scopes the caller's
    token does not grant; ``required_scopes(method, params)`` says which it needs (the server's)."""
    if auth is None:
        return None
    needed = required_scopes(message["method"], message.get("params"))
    if not needed:
        return None
    try:
        auth.require(CURRENT_PRINCIPAL.get(), needed)
    except AuthError as error:
        return refusal(auth, error, valid_id(message.get("id")))
    return None


def posted_message(
    headers: Mapping[str, str],
    body: bytes | None,
    *,
    max_bytes: int,
    auth: ResourceAuth | None,
    required_scopes: Callable[[str, Any], Collection[str]],
) -> tuple[dict[str, Any], str] | Rejection:
    """The JSON-RPC message a POST carried and its kind (request, notification or response), or
    the ``Rejection`` to send instead: 413 for a ``body`` of ``None`` (past ``max_bytes``), the
    framing's 4xx for a body that is no message, and ``check_scopes``' 403 for a request."""
    if body is None:
        return Rejection(413, InvalidRequest(f"Payload Too Large: the body exceeds {max_bytes} bytes"))
    parsed = H.parse_post_body(headers, body, max_bytes=max_bytes)
    if isinstance(parsed, Rejection):
        return parsed
    kind = H.classify_message(parsed)
    if isinstance(kind, Rejection):
        return kind
    if kind == "request" and (refused := check_scopes(auth, required_scopes, parsed)):
        return refused
    return parsed, kind
