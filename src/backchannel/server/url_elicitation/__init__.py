"""URL-mode elicitation: send the person to a web page, learn when they are done, and
make sure the person who finishes is the one who was asked.

``await ctx.elicit_url(message, flow=handler)`` works in both eras:

- Handshake era (2025-11-25): an ``elicitation/create`` with ``mode: "url"`` and an
  ``elicitationId``; the client's ``accept`` is only consent, so the call then waits
  (bounded) for the browser flow, and when the flow completes the server sends
  ``notifications/elicitation/complete`` to the connection that asked. With
  ``via="error"`` the tool call is answered with ``-32042`` (``URLElicitationRequiredError``,
  ``data.elicitations``) instead; the client runs the flow and retries the call, and
  the tool decides from its own state (a stored token, say) that it can go on.
- Stateless era (2026-07-28): no ``elicitationId``, no notification, no ``-32042``.
  The first round returns an ``InputRequiredResult`` with the URL request; the flow's id
  rides in the sealed ``requestState``. On each retry the server looks the flow up:
  done, the handler goes on; not yet, it waits up to ``poll_wait`` and otherwise answers
  with a ``requestState``-only ``InputRequiredResult`` that the client retries.

Who may finish a flow (the phishing rule, EL-63..65)
-----------------------------------------------------
A URL that someone forwards must be useless to whoever it is forwarded to:

1. **The URL is a one-time, unguessable, expiring token.** ``{base}/elicit/{token}``:
   256 random bits, kept only as a hash, valid for ``ttl`` seconds, bound to the flow
   (and so to the MCP principal, the connection and the request that asked). It names
   no user and grants nothing by itself: it is not pre-authenticated (EL-46, EL-47).
2. **A confirmation code proves the browser belongs to the person at the client.**
   The code (8 digits) is shown by the client with the message and never appears in
   the URL; the page asks for it before anything happens, refusing wrong codes. After
   ``code_attempts`` misses that *link* is used up, never the flow: someone who holds
   only the URL can neither go on nor end the owner's flow. The server then gives the
   flow a fresh link (new token, new code; the old link stays dead) and sends it to
   the person who asked, in the same call, at most ``fresh_links`` times per flow
   (``ask.py`` says how in each era); past that the flow waits out its own time. A
   fresh link reaches only the owner's client, and each link has its own code and its
   own ``code_attempts``, so a link holder gains nothing from it. The page warns never
   to type a code that someone else supplied. The owner can also ask for a fresh link
   themselves, or say "done" or "cancel", when the browser step never completes (a
   ``_meta`` convention, docs/protocol-conventions.md; ``ask.py`` says how in each era).
3. **The browser that proved the code is bound by a cookie set before the redirect.**
   The first correct code uses the token up: the page sets an HttpOnly, SameSite=Lax
   cookie holding a per-flow secret (its hash is kept with the flow), then redirects
   to the third party with a one-time ``state``. The return (``/elicit/callback``) is
   accepted only with that ``state`` *and* that cookie, so an authorization URL or a
   callback forwarded to another browser is refused, and the token cannot be claimed
   again from anywhere else.
4. **Optionally, the browser's own login is compared with the MCP principal.** Where
   the server has a web login (the MCP authorization server's session cookie, say),
   pass ``identify``: the page then refuses any browser whose principal differs from
   the flow's owner before it even asks for the code. This is the spec's recommended
   check and the strongest; 1-3 hold where no such login exists (stdio, local tools).

POSTs must come from the page itself (``Origin``/``Sec-Fetch-Site``), so another site
cannot make a victim's browser submit a code it learnt. Pages are sent with
``Referrer-Policy: no-referrer`` so the token never leaks to the third party, and with
``Cache-Control: no-store``. Flows are bound to ``ctx.principal`` when the transport
authenticates (never to a session id alone); a stateless-era retry from another
principal is refused. What the third party hands back (tokens) stays with the
server's ``UrlFlowHandler``; nothing but the URL, the message and the id ever crosses
the MCP channel.

The pages need no setup: with no ``base_url`` the first flow serves them on a side
listener bound to ``127.0.0.1`` (a free port, uvicorn in the same loop, imported only
then), stopped when ``Server.serve``/``run_stdio`` ends (or the HTTP app shuts down).

A flow lives in the memory of the worker whose tool started it. In a fleet of workers
(``--redis``) its link and its OAuth ``state`` name that worker, and whichever worker a page
request or a stateless-era retry reaches hands it to that one (``fleet.py``): no routing
needed in front of the fleet. A flow whose worker stopped ends with it.

The package: ``flows.py`` keeps the flows and their links, ``pages.py`` is the ASGI app
(and its loopback listener; ``markup.py`` the pages' frame), ``ask.py`` is the handler's side
(``ctx.elicit_url``; the stateless era's rounds in ``rounds.py``, the person's say in
``consent.py``), ``fleet.py`` what the workers of a fleet hand each other.
"""

from __future__ import annotations

__all__ = [
    "UrlElicitations",
    "UrlFlow",
    "UrlFlowHandler",
    "elicit_url",
    "url_elicitation_required",
]

from typing import TYPE_CHECKING, Any

from .flows import UrlFlow, UrlFlowHandler

if TYPE_CHECKING:
    from .ask import elicit_url, url_elicitation_required
    from .pages import UrlElicitations


def __getattr__(name: str) -> Any:
    # The pages are an ASGI app with HTML: loaded on first use, as a stdio server that never
    # sends anyone to a page should not pay for them at start.
    if name == "UrlElicitations":
        from .pages import UrlElicitations

        globals()["UrlElicitations"] = UrlElicitations
        return UrlElicitations
    if name in ("elicit_url", "url_elicitation_required"):  # (loaded by ctx.elicit_url, as ``pages`` is)
        from . import ask

        globals()[name] = found = getattr(ask, name)
        return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
