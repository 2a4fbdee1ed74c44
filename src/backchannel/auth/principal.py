"""Who is calling, as a verified access token says: issuer, subject, client, scopes.

The HTTP app admits a request (``resource.py``), then sets ``CURRENT_PRINCIPAL`` for the rest
of it: handlers running for that request (in its task, or in tasks it started) read it with
``current_principal()``. What sessions, ``requestState``, URL flows, tasks and decline memory
bind to is ``Principal.key``, a string, so the binding code that compares strings keeps
working whatever verified the token.
"""

from __future__ import annotations

__all__ = ["CURRENT_PRINCIPAL", "Principal", "TokenVerifier", "current_principal", "principal_key"]

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol


def _escaped(part: str) -> str:
    # '#' separates the parts: escaped (with '%' first) so two principals never share a key.
    return part.replace("%", "%25").replace("#", "%23")


def principal_key(issuer: str, subject: str, client_id: str | None = None) -> str:
    """``issuer#subject`` (``#client`` when the token names one): the string a principal is bound by."""
    key = f"{_escaped(issuer)}#{_escaped(subject)}"
    return f"{key}#{_escaped(client_id)}" if client_id else key


@dataclass(frozen=True, slots=True)
class Principal:
    """A caller whose access token was verified (``TokenVerifier.verify`` makes one).

    ``audiences`` are the token's ``aud`` values; ``expires_at``/``not_before`` are epoch
    seconds (None when the token says nothing); ``jkt`` is the RFC 7638 thumbprint of the
    key the token is bound to (DPoP ``cnf.jkt``), if any; ``claims`` the rest, as verified.
    """

    issuer: str
    subject: str
    client_id: str | None = None
    scopes: frozenset[str] = frozenset()
    audiences: tuple[str, ...] = ()
    expires_at: float | None = None
    not_before: float | None = None
    jkt: str | None = None
    claims: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def key(self) -> str:
        """What sessions, ``requestState``, URL flows, tasks and decline memory are bound to."""
        return principal_key(self.issuer, self.subject, self.client_id)

    def holds(self, scopes: frozenset[str] | set[str] | tuple[str, ...]) -> bool:
        """Whether this caller's token grants every one of ``scopes``."""
        return self.scopes.issuperset(scopes)


class TokenVerifier(Protocol):
    """Turns an access token into the ``Principal`` it names (``verifiers.py`` has three).

    Raise ``InvalidToken`` (401) for a token that is not genuine, and ``VerifierUnavailable``
    (503) when the authorization server could not be asked. Issuer, expiry and audience are
    checked afterwards by ``ResourceAuth``; a verifier only has to fill them in."""

    async def verify(self, token: str) -> Principal:
        """The caller ``token`` names; raise ``InvalidToken`` for a token that is not genuine,
        ``VerifierUnavailable`` when the authority could not be asked."""


#: The principal of the HTTP request being served, when a ``ResourceAuth`` admitted it.
CURRENT_PRINCIPAL: ContextVar[Principal | None] = ContextVar("backchannel_principal", default=None)


def current_principal() -> Principal | None:
    """The verified caller of the request being handled (issuer, subject, client id, scopes);
    None over stdio and memory, and over HTTP without ``ResourceAuth``."""
    return CURRENT_PRINCIPAL.get()
