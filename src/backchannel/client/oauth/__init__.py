"""Connecting to a protected MCP server: the client side of MCP authorization (OAuth 2.1).

A person logs in in their browser::

    from backchannel import Client
    from backchannel.client.oauth import FileTokenStore, LoopbackBrowser, OAuth

    auth = OAuth(LoopbackBrowser(), store=FileTokenStore())
    async with Client.http("https://mcp.example.com/mcp", auth=auth) as client:
        ...

A program on its own behalf::

    OAuth(grant=ClientCredentials("my-client", "its-secret"))

A script, with the login a person made before (kept by ``FileTokenStore``), refreshed but never
made anew (``LoginNeeded`` when it would have to be)::

    OAuth(grant=KeptLogin(), store=FileTokenStore())

The first request the server refuses with 401 starts the login; everything it needs is found
from there. ``oauth.py`` says how requests are answered, ``grants.py`` the grants,
``registration.py`` who the client is at each server, ``metadata.py`` and ``discovery.py``
how servers are found and which documents are trusted, ``store.py`` where tokens are kept
(``filelock.py``: how processes sharing a store take turns).
"""

from __future__ import annotations

__all__ = [
    "AuthorizationCode",
    "AuthorizationDenied",
    "AuthorizationFailed",
    "ClientCredentials",
    "EnterpriseManaged",
    "FileTokenStore",
    "Grant",
    "GrantContext",
    "KeptLogin",
    "LoginNeeded",
    "LoopbackBrowser",
    "MemoryTokenStore",
    "MetadataRefused",
    "OAuth",
    "Redirect",
    "SharedTokenStore",
    "StoreLocked",
    "TokenRequestFailed",
    "TokenSet",
    "TokenStore",
    "WorkloadIdentity",
]

from typing import TYPE_CHECKING

from ..._lazy import lazy_names

if TYPE_CHECKING:
    from .browser import LoopbackBrowser, Redirect
    from .errors import (
        AuthorizationDenied,
        AuthorizationFailed,
        LoginNeeded,
        MetadataRefused,
        StoreLocked,
        TokenRequestFailed,
    )
    from .grants import (
        AuthorizationCode,
        ClientCredentials,
        EnterpriseManaged,
        Grant,
        GrantContext,
        KeptLogin,
        WorkloadIdentity,
    )
    from .oauth import OAuth
    from .store import FileTokenStore, MemoryTokenStore, SharedTokenStore, TokenStore
    from .tokens import TokenSet

#: Each public name's module: loaded at the first use of a name (``store.py`` alone loads no HTTP client).
_EXPORTS: dict[str, str] = {
    "AuthorizationCode": "grants",
    "AuthorizationDenied": "errors",
    "AuthorizationFailed": "errors",
    "ClientCredentials": "grants",
    "EnterpriseManaged": "grants",
    "FileTokenStore": "store",
    "Grant": "grants",
    "GrantContext": "grants",
    "KeptLogin": "grants",
    "LoginNeeded": "errors",
    "LoopbackBrowser": "browser",
    "MemoryTokenStore": "store",
    "MetadataRefused": "errors",
    "OAuth": "oauth",
    "Redirect": "browser",
    "SharedTokenStore": "store",
    "StoreLocked": "errors",
    "TokenRequestFailed": "errors",
    "TokenSet": "tokens",
    "TokenStore": "store",
    "WorkloadIdentity": "grants",
}


__getattr__ = lazy_names(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return list(__all__)
