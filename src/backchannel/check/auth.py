"""Authorization (Streamable HTTP): what a protected server says to a request without a token,
with a token it never issued, with a token for another resource, with too few scopes.

Each request goes by plain HTTP with no login and no ``Authorization`` of the person's (their
other ``--header`` pairs still go): the check sees the server's first word, its status and its
``WWW-Authenticate``. A server that answers without a token asks for no authorization: every
check here is then ``n/a``. The audience and scope checks need tokens the person supplies, by
the names of the environment variables holding them (``--foreign-token-env``, a token the same
authorization server issued for another resource; ``--weak-token-env``, one for this server
without the scopes it needs), so that no token is written on a command line.
"""

from __future__ import annotations

__all__ = ["CHECKS", "challenge_params"]

import re
from typing import Any
from urllib.parse import urlsplit

from ..types.versions import Era
from .outcome import shown
from .raw_http import RawAnswer, headers_for, post
from .run import Run, checks
from .wire import Wire

_CHECKS = ("auth.challenge", "auth.metadata", "auth.invalid-token", "auth.audience", "auth.scope")
_NOT_A_TOKEN = "backchannel-check-not-a-token"


def challenge_params(header: str) -> dict[str, str]:
    """The parameters of a ``Bearer`` challenge (``resource_metadata``, ``error``, ``scope``, ...)."""
    return {name.lower(): value for name, value in re.findall(r'([A-Za-z_]+)="([^"]*)"', header)}


@checks("auth.challenge")
async def authorization(run: Run) -> None:
    if run.target.kind != "http" or run.target.url is None:
        return
    spoken = run.eras_spoken()
    era: Era = spoken[0] if spoken else "handshake"
    record = run.wire(era)
    await record.close()  # only its record is used: every request goes by plain HTTP
    bare = await _ask(run, record, None, "no Authorization")
    if bare.status is not None and 200 <= bare.status < 300:
        for check in _CHECKS:
            run.not_applicable(check, "the server answered without a token: it asks for no authorization", era=era)
        return
    challenge = bare.headers.get("www-authenticate", "")
    params = challenge_params(challenge)
    metadata, where = await _metadata(run, record, params.get("resource_metadata"))
    _challenge_verdict(run, era, record, bare, challenge, params, metadata is not None)
    _metadata_verdict(run, era, record, metadata, where)
    invalid = await _ask(run, record, _NOT_A_TOKEN, "a token the server never issued")
    if invalid.status == 401:
        run.add("auth.invalid-token", "pass", "a token it never issued got 401", era=era)
    else:
        run.add("auth.invalid-token", "fail", f"a token it never issued got {invalid.said()}", era=era, wire=record)
    supplied = (  # the check, the person's token, what it is, what the check is without it
        (
            "auth.audience",
            run.options.foreign_token,
            "a token issued for another resource",
            "no token for another resource (--foreign-token-env NAME)",
            _audience_verdict,
        ),
        (
            "auth.scope",
            run.options.weak_token,
            "a token without the scopes",
            "no token without the scopes (--weak-token-env NAME)",
            _scope_verdict,
        ),
    )
    for check, token, what, missing, verdict in supplied:
        if token is None:
            run.not_applicable(check, missing, era=era)
        else:
            verdict(run, era, record, await _ask(run, record, token, what))


async def _ask(run: Run, record: Wire, token: str | None, what: str) -> RawAnswer:
    """The introduction of ``record``'s era by plain HTTP with ``token`` (None: none at all)."""
    assert run.target.url is not None
    message = record.introduction()
    headers = headers_for(message)
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    import httpx2

    kept = {name: value for name, value in run.target.headers.items() if name.lower() != "authorization"}
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(run.options.timeout), headers=kept) as http:
        answer = await post(http, run.target.url, message, headers, run.options.timeout)
    record.sent_elsewhere(message, f"plain HTTP, {what}")
    said = answer.said()
    if answer.headers.get("www-authenticate"):
        said += f"; WWW-Authenticate: {answer.headers['www-authenticate']}"
    record.note(f"answered: {said}")
    return answer


async def _metadata(run: Run, record: Wire, named: str | None) -> tuple[dict[str, Any] | None, str]:
    """The protected-resource metadata: where the challenge says, else at the well-known URIs."""
    import httpx2

    assert run.target.url is not None
    parts = urlsplit(run.target.url)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    candidates = [named] if named else []
    candidates += [
        f"{origin}/.well-known/oauth-protected-resource{path}",
        f"{origin}/.well-known/oauth-protected-resource",
    ]
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(run.options.timeout)) as http:
        for url in dict.fromkeys(candidates):
            try:
                response = await http.get(url, headers={"accept": "application/json"})
            except httpx2.HTTPError as exc:
                record.note(f"GET {url}: {type(exc).__name__}: {exc}")
                continue
            record.note(f"GET {url}: HTTP {response.status_code} {shown(response.text, 400)}")
            if response.status_code == 200:
                try:
                    document = response.json()
                except ValueError:
                    continue
                if isinstance(document, dict):
                    return document, url
    return None, ""


def _challenge_verdict(
    run: Run, era: Era, record: Wire, bare: RawAnswer, challenge: str, params: dict[str, str], found: bool
) -> None:
    if bare.status != 401:
        run.add("auth.challenge", "fail", f"a request without a token got {bare.said()}, not 401", era=era, wire=record)
    elif not challenge.lower().startswith("bearer"):
        run.add(
            "auth.challenge",
            "fail",
            f"401 without a Bearer challenge (WWW-Authenticate: {challenge!r})",
            era=era,
            wire=record,
        )
    elif "resource_metadata" not in params and not found:
        run.add(
            "auth.challenge",
            "fail",
            "401 naming no resource_metadata, and no metadata at the well-known URIs",
            era=era,
            wire=record,
        )
    else:
        named = "naming its metadata" if "resource_metadata" in params else "(the metadata at its well-known URI)"
        run.add("auth.challenge", "pass", f"401 with a Bearer challenge {named}", era=era)


def _metadata_verdict(run: Run, era: Era, record: Wire, metadata: dict[str, Any] | None, where: str) -> None:
    assert run.target.url is not None
    if metadata is None:
        run.add(
            "auth.metadata",
            "fail",
            "no protected-resource metadata where the challenge or RFC 9728 says",
            era=era,
            wire=record,
        )
        return
    servers = metadata.get("authorization_servers")
    resource = metadata.get("resource")
    problems = []
    if not isinstance(servers, list) or not servers or not all(isinstance(s, str) for s in servers):
        problems.append("no authorization_servers (a non-empty list)")
    if not isinstance(resource, str) or not _names_target(resource, run.target.url):
        problems.append(f"resource {resource!r} does not name {run.target.url}")
    if problems:
        run.add("auth.metadata", "fail", f"{where}: {'; '.join(problems)}", era=era, wire=record)
    else:
        run.add("auth.metadata", "pass", f"{where}: resource {resource}, authorization servers {servers}", era=era)


def _names_target(resource: str, url: str) -> bool:
    """``resource`` is the target's URL or a prefix of its path on the same origin (RFC 8707's canonical form)."""
    ours, theirs = urlsplit(url), urlsplit(resource)
    if (ours.scheme.lower(), ours.netloc.lower()) != (theirs.scheme.lower(), theirs.netloc.lower()):
        return False
    return ours.path.rstrip("/").startswith(theirs.path.rstrip("/"))


def _audience_verdict(run: Run, era: Era, record: Wire, answer: RawAnswer) -> None:
    if answer.status == 401:
        run.add("auth.audience", "pass", "a token for another resource got 401", era=era)
    else:
        run.add("auth.audience", "fail", f"a token for another resource got {answer.said()}", era=era, wire=record)


def _scope_verdict(run: Run, era: Era, record: Wire, answer: RawAnswer) -> None:
    error = challenge_params(answer.headers.get("www-authenticate", "")).get("error")
    if answer.status == 403 and error == "insufficient_scope":
        run.add("auth.scope", "pass", "403 with error=insufficient_scope", era=era)
    else:
        run.add(
            "auth.scope",
            "fail",
            f"a token without the scopes got {answer.said()} (error={error!r})",
            era=era,
            wire=record,
        )


CHECKS = (authorization,)
