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

The flows themselves (their links, codes and lifetimes), the pages the person is sent to and
who may finish a flow (the phishing rule, EL-63..65) are ``http_host/url_flows/``: this package
imports them. Here: ``ask.py`` is the handler's side (``ctx.elicit_url``; the stateless era's
rounds in ``rounds.py``, the person's say in ``consent.py``).
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

from ...http_host.url_flows.flows import UrlFlow, UrlFlowHandler

if TYPE_CHECKING:
    from ...http_host.url_flows.pages import UrlElicitations
    from .ask import elicit_url, url_elicitation_required


def __getattr__(name: str) -> Any:
    # The pages are an ASGI app with HTML: loaded on first use, as a stdio server that never
    # sends anyone to a page should not pay for them at start.
    if name == "UrlElicitations":
        from ...http_host.url_flows.pages import UrlElicitations

        globals()["UrlElicitations"] = UrlElicitations
        return UrlElicitations
    if name in ("elicit_url", "url_elicitation_required"):  # (loaded by ctx.elicit_url, as ``pages`` is)
        from . import ask

        globals()[name] = found = getattr(ask, name)
        return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
