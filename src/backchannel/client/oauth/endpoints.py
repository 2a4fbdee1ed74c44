"""What ``OAuth`` knows about each MCP endpoint, and how it is kept in the ``TokenStore``.

An endpoint (a URL without its query) has a resource identifier and, once its metadata was
read, an authorization server; its tokens are stored under that issuer and resource, so a
token is only ever found again for the server that issued it (``tokens <issuer> <resource>``),
and the endpoint's own record (``endpoint <url>``) says which issuer and resource to look under
on the next run.
"""

from __future__ import annotations

__all__ = ["Endpoint", "forget", "load", "save", "stored_tokens"]

from dataclasses import dataclass, field

from .metadata import ResourceMetadata, ServerMetadata, canonical_resource
from .signing import DpopKey
from .store import TokenStore
from .tokens import TokenSet


@dataclass(eq=False)
class Endpoint:
    """One MCP endpoint: its resource, its authorization server, the tokens for it."""

    url: str
    resource: str
    issuer: str | None = None
    metadata: ResourceMetadata | None = None
    server: ServerMetadata | None = None
    tokens: TokenSet | None = None
    #: The scopes asked for last: a step-up asks for these and the challenged ones.
    requested: tuple[str, ...] | None = None
    #: Whether new tokens are to be DPoP-bound (decided when the metadata is read).
    dpop: bool = False
    signer: DpopKey | None = field(default=None, repr=False)


async def stored_tokens(store: TokenStore, issuer: str, resource: str) -> TokenSet | None:
    """The tokens ``issuer`` gave for ``resource``, if any are kept."""
    value = await store.get(f"tokens {issuer} {resource}")
    tokens = TokenSet.from_dict(value) if value is not None else None
    return tokens if tokens is not None and tokens.issuer == issuer else None


async def load(store: TokenStore, url: str) -> Endpoint:
    """The endpoint at ``url`` as the store remembers it (a fresh one when it does not)."""
    key = canonical_resource(url)
    endpoint = Endpoint(url=key, resource=key)
    record = await store.get(f"endpoint {key}")
    if record is not None and isinstance(record.get("issuer"), str):
        endpoint.issuer = record["issuer"]
        endpoint.resource = str(record.get("resource") or key)
        requested = record.get("requested")
        endpoint.requested = tuple(str(s) for s in requested) if isinstance(requested, list) and requested else None
        endpoint.tokens = await stored_tokens(store, record["issuer"], endpoint.resource)
    return endpoint


async def save(store: TokenStore, endpoint: Endpoint) -> None:
    """Keep the endpoint's tokens under its issuer, and which issuer that is."""
    if endpoint.issuer is None:
        return
    tokens = endpoint.tokens
    await store.set(f"tokens {endpoint.issuer} {endpoint.resource}", tokens.to_dict() if tokens else None)
    record = {"issuer": endpoint.issuer, "resource": endpoint.resource, "requested": list(endpoint.requested or ())}
    await store.set(f"endpoint {endpoint.url}", record)


async def forget(store: TokenStore, endpoint: Endpoint) -> bool:
    """Drop the endpoint's tokens and record; False when nothing was kept."""
    kept = endpoint.tokens is not None or await store.get(f"endpoint {endpoint.url}") is not None
    endpoint.tokens = None
    if endpoint.issuer is not None:
        await store.set(f"tokens {endpoint.issuer} {endpoint.resource}", None)
    await store.set(f"endpoint {endpoint.url}", None)
    return kept
