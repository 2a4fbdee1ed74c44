"""The URL flows of a server and the pages they send the person to: the browser's side of
URL-mode elicitation (``ctx.elicit_url``, whose side is ``server/url_elicitation/``).

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
   (``server/url_elicitation/ask.py`` says how in each era); past that the flow waits out
   its own time. A fresh link reaches only the owner's client, and each link has its own
   code and its own ``code_attempts``, so a link holder gains nothing from it. The page
   warns never to type a code that someone else supplied. The owner can also ask for a
   fresh link themselves, or say "done" or "cancel", when the browser step never completes
   (a ``_meta`` convention, docs/protocol-conventions.md; ``ask.py`` says how in each era).
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

The package: ``flows.py`` keeps the flows and their links (``FlowRegistry``), ``pages.py`` is the
ASGI app (``UrlElicitations``, and its loopback listener; ``markup.py`` the pages' frame),
``fleet.py`` what the workers of a fleet hand each other. It imports nothing of the server:
``UrlElicitations.of`` takes a server as a ``PagesOwner``. The public names stay importable from
``backchannel.server.url_elicitation``.
"""
