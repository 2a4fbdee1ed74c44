"""Tokens and registrations belong to the authorization server that issued them (2026-07-28
authorization-server-discovery.mdx, client-registration.mdx "Authorization Server Binding").

The same MCP endpoint is served first behind one oidc-provider, then behind another. The next run
of the client, with the tokens kept from the first, is refused; it reads the metadata again, sees
the new issuer, registers there and logs in there. Nothing the first server issued (its refresh
token, its client id) is ever sent to the second, and the store keeps each under its own issuer."""

from __future__ import annotations

from typing import Any

import pytest
from _auth_harness import authorization_server, jwt_auth, scoped_server
from _client_harness import FollowingBrowser, Tap, free_port, provider_config, serving_at

from backchannel import Client
from backchannel.client.oauth import MemoryTokenStore, OAuth, TokenSet
from backchannel.testing import run

pytestmark = pytest.mark.interop


def test_a_new_authorization_server_gets_a_new_registration_and_never_the_old_tokens(oidc: Any) -> None:
    browser, store, authorization = FollowingBrowser(), MemoryTokenStore(), Tap()
    port = free_port()

    async def body() -> None:
        async with (
            serving_at(scoped_server(), jwt_auth(oidc.issuer, oidc.jwks_uri), port) as url,
            Client.http(url, auth=OAuth(browser, store=store), era="stateless") as client,
        ):
            assert (await client.call_tool("whoami", {})).content[0].text.startswith(oidc.issuer)  # type: ignore[union-attr]
        first = TokenSet.from_dict(await store.get(f"tokens {oidc.issuer} {url}") or {})
        first_client = (await store.get(f"client {oidc.issuer}") or {}).get("client_id")
        assert first is not None and first.refresh_token and first_client

        with authorization_server(provider_config()) as other:
            async with (
                serving_at(scoped_server(), jwt_auth(other.issuer, other.jwks_uri), port),
                authorization.client() as as_http,
            ):
                auth = OAuth(browser, store=store, http_client=as_http)
                async with Client.http(url, auth=auth, era="stateless") as client:
                    whoami = (await client.call_tool("whoami", {})).content[0].text  # type: ignore[union-attr]
                    assert whoami.startswith(f"{other.issuer}#alice#")
            sent = b"".join(e.url.encode() + repr(e.headers).encode() + e.body for e in authorization.exchanges)
            assert first.refresh_token.encode() not in sent and first.access_token.encode() not in sent
            assert first_client.encode() not in sent
            # The old server is not even asked (a refresh there would be pointless, and is not done).
            assert not any(e.url.startswith(oidc.issuer + "/") for e in authorization.exchanges)
            assert any(e.url.startswith(other.issuer + "/") and "/reg" in e.url for e in authorization.exchanges)
            second = TokenSet.from_dict(await store.get(f"tokens {other.issuer} {url}") or {})
            assert second is not None and second.issuer == other.issuer
            assert (await store.get(f"client {other.issuer}") or {}).get("client_id") not in (None, first_client)
            assert (await store.get(f"endpoint {url}") or {}).get("issuer") == other.issuer

    run(body, timeout=90)
